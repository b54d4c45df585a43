import Foundation

/// One night recorded as several files, read as one recording: a handheld recorder splits its
/// WAV at 2 or 4 GB (a few hours at 48 kHz), an app may split by the hour. Where a part says when
/// it started, the pause between the end of the part before (as far as it really decoded, not as
/// its header claims, and where it was placed: end to end after an overlap, or after an undated
/// part, which follows the one before it) and its start is read as silence, so the night's
/// clock stays true; those stretches are the night's gaps.
public final class JoinedAudioSource: AudioSource {
    public struct Part {
        public var name: String
        public var source: any AudioSource
        /// When the part started, if known.
        public var start: Date?
        public init(name: String, source: any AudioSource, start: Date? = nil) {
            self.name = name; self.source = source; self.start = start
        }
    }

    /// Pauses shorter than this are the parts' own rounding, not a stop of the recorder.
    public static let shortestPause = 1.0
    /// Parts further apart than this are not one night (a recorder whose clock was never set
    /// dates its file 1970): reading the pause as silence would spool years of it.
    public static let longestPause: Double = 12 * 3600

    private let parts: [Part]
    private var current = 0
    private var silenceLeft = 0
    /// Samples delivered so far, and where the current part began.
    private var position = 0, partStart = 0
    /// Where the current part was placed on the clock, when known.
    private var placedStart: Date?
    public private(set) var gaps: [RecordingGap] = []
    private var notes: [String] = []

    public init(parts: [Part]) {
        self.parts = parts
        placedStart = parts.first?.start
    }

    /// From the parts' durations and start times; nil when a part's duration is unknown.
    public var expectedDuration: Double? {
        var total = 0.0
        var placed: Date?  // where the part before was placed on the clock
        for (i, part) in parts.enumerated() {
            guard let seconds = part.source.expectedDuration else { return nil }
            if i == 0 {
                placed = part.start
            } else {
                let length = parts[i - 1].source.expectedDuration ?? 0
                let (pause, start) = Self.placement(after: placed, lasting: length, of: part.start)
                total += max(0, pause)
                placed = start
            }
            total += seconds
        }
        return total
    }

    /// The pause before a part that starts at `here` (by its own time), after one placed at
    /// `previous` that lasted `length`, and where on the clock the part is placed: at its own
    /// time, or end to end where it starts before the part before ends (an overlap) or its time
    /// is unknown. From the part before as placed, not as dated: after an overlap, the next
    /// part was put behind a gap that was not there.
    static func placement(after previous: Date?, lasting length: Double, of here: Date?) -> (pause: Double, start: Date?) {
        let endToEnd = previous.map { $0.addingTimeInterval(length) }
        guard let previous, let here else { return (0, here ?? endToEnd) }
        let pause = Self.pause(from: previous, lasting: length, to: here)
        return (pause, pause < 0 ? endToEnd : here)
    }

    /// The lowest of the parts' rates: one narrow-band part makes the night's talk and coughs
    /// less reliable.
    public var recordedSampleRate: Int? { parts.compactMap(\.source.recordedSampleRate).min() }

    public var partsAtTheRecordedRate: [String]? {
        let rates = parts.map(\.source.recordedSampleRate)
        guard let lowest = recordedSampleRate, Set(rates).count > 1 else { return nil }
        return parts.filter { $0.source.recordedSampleRate == lowest }.map(\.name)
    }

    /// The parts' fingerprints and start times combined in order (the starts place the parts,
    /// so the same files with another pause between them are another night); nil when a part has
    /// no fingerprint. Each start is taken from the first part's, so a night dated by hand later
    /// (`--started`, which moves every part alike) is the same recording: with the starts
    /// themselves, an undated join analysed again with --started was stored twice.
    public var fingerprint: String? {
        let first = parts.first?.start
        let each = parts.enumerated().compactMap { i, part in
            part.source.fingerprint.map { own in
                guard i > 0, let first, let start = part.start else { return "\(own)@-" }
                // To the second, as the store matches starts: a shift by --started moves them alike
                // to within a rounding of the decimals.
                return "\(own)@+\(Int(start.timeIntervalSince(first).rounded()))"
            }
        }
        return each.count == parts.count ? RecordingFingerprint.combining(each) : nil
    }

    public var warnings: [String] {
        notes + parts.flatMap { part in part.source.warnings.map { "\(part.name): \($0)" } }
    }

    /// Seconds from the end of a part that started at `start` and lasted `length` to `next`;
    /// 0 for pauses shorter than `shortestPause` either way.
    public static func pause(from start: Date, lasting length: Double, to next: Date) -> Double {
        let pause = next.timeIntervalSince(start) - length
        return abs(pause) < shortestPause ? 0 : pause
    }

    /// Why `next` cannot follow `previous` in one night, `pause` seconds after it ends (before
    /// it, when negative: a part dated a year early, or the parts out of order).
    public static func tooFarApart(_ next: String, _ pause: Double, _ previous: String) -> SomniError {
        SomniError(.badInput, String(format: "%@ starts %.1f h %@ %@ ends: not one night (parts are at most %.0f h apart%@)",
                                     next, abs(pause) / 3600, pause < 0 ? "before" : "after", previous, longestPause / 3600,
                                     pause < 0 ? ", in the order they were recorded" : ""))
    }

    /// "40 s", "12.5 min", "3.2 h".
    static func spoken(_ seconds: Double) -> String {
        seconds < 120 ? String(format: "%.0f s", seconds) : seconds < 7200 ? String(format: "%.1f min", seconds / 60)
            : String(format: "%.1f h", seconds / 3600)
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        let rate = Double(analysisSampleRate)
        var filled = 0
        while filled < buffer.count, current < parts.count {
            if silenceLeft > 0 {
                let n = min(silenceLeft, buffer.count - filled)
                UnsafeMutableBufferPointer(rebasing: buffer[filled..<(filled + n)]).update(repeating: 0)
                silenceLeft -= n; filled += n; position += n
                if silenceLeft == 0 { partStart = position }
                continue
            }
            let n = try parts[current].source.checkedRead(into: UnsafeMutableBufferPointer(rebasing: buffer[filled...]))
            if n > 0 { filled += n; position += n; continue }
            // The part ended: place the next one after the pause their times show.
            let length = Double(position - partStart) / rate
            current += 1
            partStart = position
            guard current < parts.count else { continue }
            let previousPlaced = placedStart
            let (pause, placed) = Self.placement(after: previousPlaced, lasting: length, of: parts[current].start)
            placedStart = placed
            guard abs(pause) <= Self.longestPause else { throw Self.tooFarApart(parts[current].name, pause, parts[current - 1].name) }
            if pause > 0 {
                silenceLeft = Int((pause * rate).rounded())
                gaps.append(RecordingGap(start: Double(position) / rate, duration: Double(silenceLeft) / rate,
                                         reason: "no recording between the files before \(parts[current].name)"))
            } else if pause < 0 {
                // The part before may itself have been moved on by an overlap: then this one
                // overlaps it where it was put, not by their own times.
                var moved = 0.0
                if let put = previousPlaced, let own = parts[current - 1].start { moved = put.timeIntervalSince(own) }
                let how = moved >= Self.shortestPause
                    ? "where it was put (\(Self.spoken(moved)) after its own time, by the overlap before it)" : "by their times"
                notes.append("\(parts[current].name) starts \(Self.spoken(-pause)) before \(parts[current - 1].name) ends, \(how); "
                             + "joined end to end")
            }
        }
        return filled
    }
}
