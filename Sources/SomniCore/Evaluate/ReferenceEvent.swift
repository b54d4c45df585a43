import Foundation

/// One annotated (or found) event for scoring: a class and a time span in seconds.
public struct ReferenceEvent: Sendable, Equatable, Codable {
    public var eventClass: EventClass
    public var start: Double
    public var end: Double

    public init(eventClass: EventClass, start: Double, end: Double) {
        self.eventClass = eventClass; self.start = start; self.end = end
    }

    /// A found event from session.json, for scoring.
    public init(_ event: SessionEvent) {
        self.init(eventClass: event.eventClass, start: event.start, end: event.end)
    }

    public var duration: Double { end - start }
}

/// Reference annotations as CSV: `start,end,class`, seconds from the start of the recording.
///
/// An optional header line (`start,end,class`), blank lines, `#` comments and columns after the
/// class (an annotator's notes) are allowed. Class
/// names are the three `EventClass` raw values or one of `classAliases`; anything else is an error,
/// so a typo never silently drops events from the score.
///
/// Tab-separated lines are read too, because that is how annotations are usually made: Audacity's
/// exported label track (`start<TAB>end<TAB>label`, its `\`-lines of a spectral selection's
/// frequencies skipped) and DCASE's metadata (`onset<TAB>offset<TAB>event_label`, or a data
/// set's, with each line's file name first: see `parse`).
public enum ReferenceCSV {
    /// Accepted spellings, lower-cased, beside the raw values.
    public static let classAliases: [String: EventClass] = [
        "snoring": .snoring, "snore": .snoring, "snort": .snoring,
        "sleep_talk": .sleepTalk, "sleeptalk": .sleepTalk, "sleep-talk": .sleepTalk, "sleep talk": .sleepTalk,
        "speech": .sleepTalk, "talk": .sleepTalk,
        "cough": .cough, "coughing": .cough,
    ]

    /// The class a name stands for, through `classAliases`; nil when unknown.
    public static func eventClass(named name: String) -> EventClass? {
        classAliases[name.trimmingCharacters(in: .whitespaces).lowercased()]
    }

    /// The events of `text`; lines whose class is one of `ignoring` (any case) are left out, for
    /// an annotator's other labels ("door", "fan on"): named, so a typo still stops the score.
    ///
    /// DCASE's metadata for a whole data set puts each line's recording first
    /// (`filename<TAB>onset<TAB>offset<TAB>event_label`). Then the lines of `recording` are taken,
    /// matched by file name without folder or extension ("audio/night-3.wav" is the night of
    /// "night-3.flac"), or every line when the file names one recording only; then
    /// `namesAnother` is told that recording's name where it is not `recording`'s (a renamed
    /// file, or another night's reference).
    public static func parse(_ text: String, ignoring: Set<String> = [], recording: String? = nil,
                             namesAnother: (String) -> Void = { _ in }) throws -> [ReferenceEvent] {
        let ignored = Set(ignoring.map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        var events: [(recording: String?, event: ReferenceEvent)] = []
        // Whether each line names its recording first (DCASE's data-set metadata), told by the
        // header or the first line; otherwise columns after the class (an annotator's note) are
        // left alone.
        var fileFirst: Bool?
        var sawData = false
        for (offset, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let lineNumber = offset + 1
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("\\") { continue }
            let fields = line.split(separator: line.contains("\t") ? "\t" : ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if !sawData, let first = fields.first?.lowercased(), ["start", "onset", "filename"].contains(first) {
                sawData = true
                fileFirst = first == "filename"
                continue  // header
            }
            sawData = true
            let named = fileFirst ?? (fields.count == 4 && (Double(fields[0]) == nil || Double(fields[1]) == nil))
            fileFirst = named
            guard named ? fields.count == 4 : fields.count >= 3 else {
                throw SomniError(.badInput, "line \(lineNumber): expected 'start,end,class' (or tab-separated, or DCASE's "
                                 + "'filename onset offset event_label' on every line), got '\(line)'")
            }
            let name = named ? stem(of: fields[0]) : nil
            let (startText, endText, label) = named ? (fields[1], fields[2], fields[3]) : (fields[0], fields[1], fields[2])
            guard let start = Double(startText), start.isFinite, start >= 0 else {
                throw SomniError(.badInput, "line \(lineNumber): start '\(startText)' is not a time in seconds")
            }
            guard let end = Double(endText), end.isFinite else {
                throw SomniError(.badInput, "line \(lineNumber): end '\(endText)' is not a time in seconds")
            }
            guard end >= start else {
                throw SomniError(.badInput, "line \(lineNumber): end \(endText) is before start \(startText)")
            }
            if ignored.contains(label.lowercased()) { continue }
            guard let eventClass = eventClass(named: label) else {
                let known = EventClass.allCases.map(\.rawValue).joined(separator: ", ")
                throw SomniError(.badInput, "line \(lineNumber): unknown class '\(label)' (use \(known); "
                                 + "--ignore '\(label)' leaves such lines out)")
            }
            events.append((name, ReferenceEvent(eventClass: eventClass, start: start, end: end)))
        }
        guard fileFirst == true else { return events.map(\.event) }
        let names = Set(events.compactMap(\.recording))
        if let own = recording.map(stem(of:)), names.contains(own) {
            return events.filter { $0.recording == own }.map(\.event)
        }
        guard names.count > 1 else {
            if recording != nil, let named = names.first { namesAnother(named) }
            return events.map(\.event)
        }
        let listed = names.sorted().prefix(5).joined(separator: ", ") + (names.count > 5 ? ", …" : "")
        throw SomniError(.badInput, "the reference holds \(names.count) recordings (\(listed)) and "
                         + (recording.map { "none of them is '\($0)'" } ?? "does not say which one this is"))
    }

    /// A recording's name without its folder or extension.
    static func stem(of name: String) -> String {
        ((name as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    /// CSV with a header, one event a line, times at microsecond precision.
    public static func write(_ events: [ReferenceEvent]) -> String {
        var text = "start,end,class\n"
        for e in events {
            text += "\(format(e.start)),\(format(e.end)),\(e.eventClass.rawValue)\n"
        }
        return text
    }

    private static func format(_ seconds: Double) -> String {
        var s = String(format: "%.6f", seconds)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }
}
