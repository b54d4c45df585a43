import Foundation
import SomniAudio
import SomniCore

struct EvaluateCommand: Command {
    static let name = "evaluate"
    static let summary = "Score a night's found events against reference annotations (DCASE-style)"
    static let help = """
    Usage: somni evaluate --reference REF.csv NIGHT_DIR | SESSION_JSON | FOUND.csv [options]
           somni evaluate --reference REF1.csv NIGHT1 --reference REF2.csv NIGHT2 ... [options]

    Compares the events in a night's session.json (or a CSV of found events in the reference
    format, with --duration) with reference annotations and prints, per class and in total,
    event-based precision/recall/F1 (one-to-one matching), segment-based F1 and false events per
    hour, over the night's duration from session.json (false events per hour recorded, for a
    night with gaps).

    Default protocol: snoring as episodes (events < 10 s apart merged on both sides) with a 3 s
    collar and 10 s segments; sleep_talk with a 1 s collar and 1 s segments; single coughs with a
    0.5 s collar and 1 s segments. A match needs its onset within the collar and its offset within
    max(collar, 50 % of the reference's length).

    Several nights, each after its own --reference (paired in the order given), are scored
    together: a line per night with its snoring episode F1, snoring time F1, sleep_talk and
    cough F1 and false events per hour; each figure's median, mean and range over the nights
    (an F1 over the nights with reference events of its class) with how many nights reach 0.8
    and 0.9 (false events: at most 1 an hour); and the nights' counts pooled into one table.
    With five nights or more scoring a figure, its pooled value comes with a 95 % interval: the
    nights drawn again with replacement 2,000 times (seeded), the figure pooled each time.

      --reference REF.csv   annotations, one event a line: start,end,class (seconds; header,
                            blank lines, # comments and notes after the class allowed),
                            or the same tab-separated, as an Audacity label track or
                            DCASE metadata (onset, offset, label;
                            with a filename column first, the lines of this night's recording);
                            classes snoring, sleep_talk, cough, or the aliases snore, snort,
                            sleeptalk, sleep-talk, sleep talk, speech, talk, coughing
      --ignore LABEL,...    reference lines of these other labels (door, fan on) are left
                            out; any other unknown label is an error, so a typo never drops
                            events from the score
      --duration SEC        length of the recording in seconds (required for a found CSV;
                            overrides session.json's)
      --audio FILE          (one night) the recording itself: adds recall by level, each scored reference
                            binned by how far it rises over the background around it in its
                            class's band (snoring 40-400 Hz, talk and coughs 250-3000 Hz), so
                            a night's score shows where the detector stops hearing; snoring
                            episodes also by their first snore, whose level decides whether
                            an episode's onset is found
      --errors              (one night) list where the event score was lost: each scored reference no
                            found event matched (missed; onset: found late or early; offset;
                            split) and each found event that matched none (false; extra: a
                            second piece of a sound already matched), with times
      --json                print the report as JSON instead of a table
      --collar CLASS=SEC    onset collar for a class (repeatable)
      --segment CLASS=SEC   segment length for a class (repeatable)
      --merge-gap CLASS=SEC merge events of a class closer than SEC before event scoring;
                            CLASS=none turns merging off (repeatable)
    """

    /// Each night with its reference, in the order given.
    var pairs: [(reference: String, night: String)]
    var json: Bool
    var duration: Double?
    var audioPath: String?
    var listsErrors: Bool
    /// The reference's other labels, left out by name (`--ignore`).
    var ignoredLabels: Set<String>
    var rules: EvaluationProtocol

    init(_ a: inout Arguments) throws {
        let references = try Self.repeated(&a, "--reference")
        guard !references.isEmpty else { throw UsageError("--reference REF.csv is required") }
        json = a.flag("--json")
        audioPath = try a.option("--audio")
        listsErrors = a.flag("--errors")
        ignoredLabels = try Self.labels(&a)
        duration = try a.option("--duration", as: Double.self)
        // From a second: rates per hour over 1e-300 s were inf, and --json could not be written.
        if let d = duration, !(d.isFinite && d >= 1 && d <= Session.longestPlausible) {
            throw UsageError("--duration takes a number of seconds from 1 to \(Int(Session.longestPlausible)) (31 days)")
        }
        var rules = EvaluationProtocol.somniDefault
        func override(_ flag: String, allowNone: Bool, _ apply: (inout ClassProtocol, Double?) -> Void) throws {
            for value in try Self.repeated(&a, flag) {
                let (c, seconds) = try Self.classValue(value, flag: flag, allowNone: allowNone)
                var settings = rules.settings(for: c)
                apply(&settings, seconds)
                rules.perClass[c] = settings
            }
        }
        try override("--collar", allowNone: false) { $0.collar = $1 ?? 0 }
        try override("--segment", allowNone: false) { $0.segmentLength = $1 ?? 0 }
        try override("--merge-gap", allowNone: true) { $0.mergeGap = $1 }
        self.rules = rules
        var nights: [String] = []
        while let night = a.positional() { nights.append(night) }
        guard !nights.isEmpty else { throw UsageError("missing night folder or session.json") }
        guard nights.count == references.count else {
            throw UsageError("\(references.count) --reference file\(references.count == 1 ? "" : "s") for \(nights.count) "
                             + "night\(nights.count == 1 ? "" : "s"): give each night its own, in the same order")
        }
        pairs = Array(zip(references, nights))
        if pairs.count > 1, audioPath != nil || listsErrors {
            throw UsageError("--audio and --errors go with one night at a time")
        }
    }

    static func readCSV(_ path: String, what: String, ignoring: Set<String> = [], recording: String? = nil,
                        command: String = "evaluate") throws -> [ReferenceEvent] {
        try parseCSV(TextFile.read(URL(fileURLWithPath: path), what: what), path: path, ignoring: ignoring, recording: recording,
                     command: command)
    }

    /// Events from a file's text, its errors naming it. `recording` picks a data set's lines of
    /// one recording; `sayingAnotherName`, whether a reference naming only another is said to.
    static func parseCSV(_ text: String, path: String, ignoring: Set<String> = [], recording: String? = nil,
                         sayingAnotherName: Bool = true, command: String = "evaluate") throws -> [ReferenceEvent] {
        do {
            return try ReferenceCSV.parse(text, ignoring: ignoring, recording: recording) { named in
                guard sayingAnotherName else { return }
                printError("somni \(command): warning: \(path): its lines name one recording, '\(named)', "
                           + "not this night's '\(recording ?? "")': "
                           + "scored as this night's (a renamed file, or another night's reference?)")
            }
        } catch let e as SomniError {
            throw SomniError(e.code, "\(path): \(e.message)", cause: e)
        }
    }

    /// The feature loop's 50 ms band levels over the whole recording, decoded in blocks.
    private static func frames(of url: URL) throws -> FrameTrack {
        let decoder = try AudioDecoder(url: url)
        let extractor = FeatureExtractor(keepsZeroCrossingRate: false)
        if let seconds = decoder.expectedDuration { extractor.reserveCapacity(seconds: seconds) }
        var block = [Float](repeating: 0, count: 16_384)
        while case let n = try block.withUnsafeMutableBufferPointer({ try decoder.read(into: $0) }), n > 0 {
            block.withUnsafeBufferPointer { extractor.process(UnsafeBufferPointer(rebasing: $0[0..<n])) }
        }
        extractor.finish()
        for w in decoder.warnings { printError("somni evaluate: warning: \(w)") }
        return extractor.frames
    }

    /// `--ignore LABEL[,LABEL…]`, repeatable. Never one of the scored classes: ignoring the
    /// reference's snores would score every snore found as false.
    static func labels(_ a: inout Arguments) throws -> Set<String> {
        let labels = ignoredLabels(try repeated(&a, "--ignore"))
        try checkIgnored(labels)
        return labels
    }

    /// `--ignore` values, each a comma-separated list.
    static func ignoredLabels(_ values: [String]) -> Set<String> {
        Set(values.flatMap { $0.split(separator: ",").map(String.init) })
    }

    static func checkIgnored(_ labels: Set<String>) throws {
        if let scored = labels.sorted().first(where: { ReferenceCSV.eventClass(named: $0) != nil }) {
            throw UsageError("--ignore is for the reference's other labels; '\(scored)' is one of the classes scored "
                             + "(its row of the table can be left aside instead)")
        }
    }

    private static func repeated(_ a: inout Arguments, _ name: String) throws -> [String] {
        var values: [String] = []
        while let v = try a.option(name) { values.append(v) }
        return values
    }

    static let shortestSegment = 0.05

    /// Parses `CLASS=SEC`; nil seconds only for `none` where allowed.
    private static func classValue(_ text: String, flag: String, allowNone: Bool) throws -> (EventClass, Double?) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw UsageError("\(flag) takes CLASS=SECONDS, not '\(text)'") }
        guard let c = ReferenceCSV.eventClass(named: parts[0]) else {
            let known = EventClass.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("\(flag): unknown class '\(parts[0])' (use \(known))")
        }
        if allowNone, parts[1].lowercased() == "none" { return (c, nil) }
        // A segment is at least one 50 ms frame long (shorter ones say nothing more, and a night
        // cut into nanoseconds would not fit in memory); a collar or merge gap may be 0.
        guard let seconds = Double(parts[1]), seconds.isFinite, seconds >= 0,
              seconds >= Self.shortestSegment || flag != "--segment" else {
            let hint = flag == "--segment" ? " (segments are at least \(Self.shortestSegment) s)" : ""
            throw UsageError("\(flag): '\(parts[1])' is not a valid number of seconds for \(c.rawValue)\(hint)")
        }
        return (c, seconds)
    }

    func run() throws {
        if pairs.count > 1 {
            Self.warnOfNightsGivenTwice(pairs.map(\.night))
            let names = Self.nightNames(pairs.map(\.night))
            let nights = try zip(names, pairs).map { name, pair in
                let night = try Self.load(reference: pair.reference, night: pair.night, duration: duration, ignoring: ignoredLabels)
                return (name: name, report: Evaluator.evaluate(reference: night.reference, found: night.found, duration: night.length,
                                                               recordedSeconds: night.recordedSeconds, protocol: rules))
            }
            let evaluation = NightsEvaluation(nights: nights)
            if json {
                print(String(decoding: try evaluation.jsonData(), as: UTF8.self))
            } else {
                print(evaluation.text(), terminator: "")
            }
            return
        }
        let night = try Self.load(reference: pairs[0].reference, night: pairs[0].night, duration: duration, ignoring: ignoredLabels)
        let (reference, found, recordingLength) = (night.reference, night.found, night.length)
        var report = Evaluator.evaluate(reference: reference, found: found, duration: recordingLength,
                                        recordedSeconds: night.recordedSeconds, protocol: rules)
        if let audioPath {
            let frames = try Self.frames(of: URL(fileURLWithPath: audioPath))
            let seconds = Double(frames.count) / FrameTrack.rate
            if abs(seconds - recordingLength) > 1 {
                printError(String(format: "somni evaluate: warning: %@ is %.1f s long, the night %.1f s: is it the same recording?",
                                  audioPath, seconds, recordingLength))
            }
            report.levels = Evaluator.recallByLevel(reference: reference, found: found, frames: frames, protocol: rules)
        }
        if listsErrors { report.errors = Evaluator.scoringErrors(reference: reference, found: found, protocol: rules) }
        if json {
            print(String(decoding: try report.jsonData(), as: UTF8.self))
        } else {
            print(report.text(), terminator: "")
        }
    }

    /// One night given twice (its folder and its session.json, a link, a slip in a long list)
    /// is scored twice and pooled twice: said, not refused, since two annotators' references of
    /// one night may be meant.
    private static func warnOfNightsGivenTwice(_ paths: [String]) {
        let files = paths.map(nightFile)
        for i in files.indices.dropFirst() {
            if let j = files[..<i].indices.first(where: { FileIdentity.same(files[$0], files[i]) }) {
                printError("somni evaluate: warning: \(paths[i]) is the same night as \(paths[j]), given before it: "
                           + "it is scored, and pooled, once more")
            }
        }
    }

    /// The file a night argument names: a night folder's session.json, else the path itself.
    private static func nightFile(_ path: String) -> URL {
        var isFolder: ObjCBool = false
        let url = URL(fileURLWithPath: path)
        let folder = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
        return folder ? url.appendingPathComponent(Session.fileName) : url
    }

    /// The nights' names in the table: each folder's, less ".night" ("fan-4.night/session.json" →
    /// "fan-4"); with the folder above too when two would read the same ("seed-4/fan", "seed-5/fan").
    private static func nightNames(_ paths: [String]) -> [String] {
        let urls = paths.map { path in
            let url = URL(fileURLWithPath: path)
            return url.lastPathComponent == Session.fileName ? url.deletingLastPathComponent() : url
        }
        func name(_ url: URL) -> String {
            let name = url.lastPathComponent
            for suffix in [".night", ".csv"] where name.lowercased().hasSuffix(suffix) { return String(name.dropLast(suffix.count)) }
            return name
        }
        let short = urls.map(name)
        guard Set(short).count < short.count else { return short }
        return zip(urls, short).map { "\($0.deletingLastPathComponent().lastPathComponent)/\($1)" }
    }

    /// One night to score: its reference, its found events, the recording's length and, for a
    /// night with gaps, the seconds of it recorded.
    private struct LoadedNight {
        var reference: [ReferenceEvent], found: [ReferenceEvent], length: Double, recordedSeconds: Double?
    }

    private static func load(reference referencePath: String, night nightPath: String, duration: Double?,
                             ignoring ignoredLabels: Set<String>) throws -> LoadedNight {
        // Read first, so a missing reference is said before anything about the night.
        let referenceText = try TextFile.read(URL(fileURLWithPath: referencePath), what: "the reference")
        let found: [ReferenceEvent]
        let recordingLength: Double
        var recordedSeconds: Double?
        // The night's recording, for a reference covering many (DCASE's filename column).
        let recording: String
        if nightPath.lowercased().hasSuffix(".csv") {
            guard let d = duration else { throw UsageError("a found-events CSV needs --duration SEC") }
            found = try readCSV(nightPath, what: "the found events")
            recordingLength = d
            recording = URL(fileURLWithPath: nightPath).lastPathComponent
        } else {
            guard FileManager.default.fileExists(atPath: nightPath) else {
                throw SomniError(.badInput, "no such night folder or session.json: \(nightPath)")
            }
            let sessionURL = nightFile(nightPath)
            let session = try Session.load(from: sessionURL)
            try session.refuseIfInconsistent(readFrom: sessionURL)
            found = session.events.map(ReferenceEvent.init)
            if let duration, duration + 1 < session.analysedSeconds {
                throw UsageError(String(format: "--duration %g s is shorter than the %.1f s %@ analysed", duration,
                                        session.analysedSeconds, nightPath))
            }
            recordingLength = duration ?? session.duration
            // A length given by hand changes the night's length, not its gaps: the rates stay per
            // hour recorded.
            let gaps = session.gaps ?? []
            if RecordingGap.unrecorded(in: recordingLength, by: gaps) > 0 {
                recordedSeconds = RecordingGap.recorded(of: recordingLength, less: gaps)
            }
            recording = session.source
        }
        // A found-events CSV is named for itself, not for a recording: no word when the names differ.
        let reference = try parseCSV(referenceText, path: referencePath, ignoring: ignoredLabels, recording: recording,
                                     sayingAnotherName: !nightPath.lowercased().hasSuffix(".csv"))
        // They still count as missed: the warning says why the recall may be low.
        let late = reference.filter { $0.start >= recordingLength + 1 }.count
        if late > 0 {
            printError(String(format: "somni evaluate: warning: %@: %d of %d reference events start after the night's end (%.1f s): is it this recording's reference?",
                              referencePath, late, reference.count, recordingLength))
        }
        let overrunning = reference.filter { $0.start < recordingLength + 1 && $0.end > recordingLength + 1 }.count
        if overrunning > 0 {
            printError(String(format: "somni evaluate: warning: %@: %d of %d reference events run on past the night's end (%.1f s): their time after it counts as missed segments",
                              referencePath, overrunning, reference.count, recordingLength))
        }
        return LoadedNight(reference: reference, found: found, length: recordingLength, recordedSeconds: recordedSeconds)
    }
}
