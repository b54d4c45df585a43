import Foundation
import SomniAudio
import SomniCore
import SomniReport
import SomniStore

struct AnalyzeCommand: Command {
    static let name = "analyze"
    static let summary = "Analyse a recording (any common format) into a night: events, clips, summary"
    static let help = """
    Usage: somni analyze FILE... [--join] [--out DIR] [--replace] [--started WHEN] [--like FILE] [--sensitivity N] [--classifier model|heuristic] [--model FILE] [--no-clips] [--json]

    Decodes FILE (WAV, FLAC, MP3, Ogg Vorbis/Opus, M4A/AAC, ...), finds snoring, sleep-talk and
    coughs, and saves the night (session.json, envelope.bin, clips/) in the night store, where
    'somni nights', 'show', 'report' and 'export' find it. Several files are analysed one after
    another; one that fails is reported and the others go on (the exit status is then non-zero).
    A recording already in the store (the same content, and the same start where both say one)
    is not analysed again, so a batch run again over a folder adds only its new recordings.

      --join               the files are one night recorded in parts (a recorder that splits its
                           files at 2 GB, say), in the order given: one night, the parts' start
                           times (as below) placing each; a pause between parts is kept as silence
                           and recorded as a gap
      --out DIR            write a bare night folder here instead of saving it in the store; with
                           several files, DIR holds one night folder per file, named after it
      --replace            analyse a recording already in the store again (new settings, a new
                           model, --started for an undated one) and put the new night in place
                           of the old one
      --sensitivity N      1 (strict, confidence ≥ 0.70) … 10 (permissive, ≥ 0.25); default 5 (≥ 0.50):
                           the score a window needs to find an event. Snores in a train it found may
                           score less, so an event's confidence (its windows' best) can be lower
      --started WHEN       when the recording started, as 2026-11-28T23:14 or "2026-11-28 23:14" (local
                           time unless an offset such as +01:00 or Z follows); one night only. Without
                           it the night is dated from the file's creation time (M4A/MP4 from a phone,
                           broadcast WAV, an MP3's or Ogg's recording date with a time of day),
                           else from a date and time in its name (Recording_20261128_231402.m4a,
                           Aufnahme 28.11.2026 23-14.m4a), else left undated
      --like FILE          for an M4A cut off before it was finished (a flat battery, the app
                           stopped), whose index was never written: a complete recording made by
                           the same app with the same settings, to read the settings from. Without
                           it such a file is read when its frames decode at one rate only
    \(ClassifierChoice.help(column: 23))
      --no-clips           keep no clips: events, summary and loudness only, in about a third
                           less time (for many nights analysed for their figures)
      --json               print session.json instead of the readable summary
    \(StoreOptions.help(column: 23))
    """

    var files: [String]
    var out: String?
    var sensitivity: Int
    var classifierKind: String
    var modelPaths: [String] = []
    var json: Bool
    var keepsClips: Bool
    var store: String?
    var started: Date?
    /// The clock an offset in --started names, when it is not this machine's.
    var startedClock: TimeZone?
    /// A complete recording made the same way, for one cut off before its index was written.
    var like: String?
    var join: Bool
    var replace: Bool

    init(_ a: inout Arguments) throws {
        out = try a.option("--out")
        let startedText = try a.option("--started")
        startedClock = startedText.flatMap { RecordingStart.clock(of: $0) }
        started = try startedText.map { text in
            guard let date = RecordingStart.parse(text) else {
                throw UsageError("--started takes a date and time such as 2026-11-28T23:14 or \"2026-11-28 23:14\", not '\(text)'")
            }
            // As a file's own time is: a typo (0026 for 2026) was stored as the night's date.
            guard RecordingStart.isPlausible(date) else {
                throw UsageError("--started \(text) cannot be when a recording started: it is before 2000 or in the future")
            }
            // On the nights the clocks change, a local time can name no moment, or two.
            guard let moments = RecordingStart.moments(text), moments.count != 1 else { return date }
            let zone = TimeZone.current
            guard let first = moments.first, let second = moments.last else {
                throw UsageError("--started \(text): the clocks in \(zone.identifier) skipped that time; give the time they showed")
            }
            func offset(_ moment: Date) -> String { NightClock.offsetText(zone.secondsFromGMT(for: moment)) }
            printError("somni analyze: note: \(text) happened twice in \(zone.identifier), as the clocks went back; taken as "
                       + "the first (\(offset(first))); give \(text.replacingOccurrences(of: " ", with: "T"))\(offset(second)) for the second")
            return first
        }
        like = try a.option("--like")
        store = try a.option("--store")
        // As record and recover: a night goes to a bare folder or into the store, and one of
        // them given in vain would be a night the user looks for where it is not.
        if out != nil && store != nil { throw UsageError("give --out or --store, not both") }
        sensitivity = try a.sensitivity()
        (classifierKind, modelPaths) = try ClassifierChoice.parse(&a)
        json = a.flag("--json")
        join = a.flag("--join")
        replace = a.flag("--replace")
        keepsClips = !a.flag("--no-clips")
        files = [try a.requiredPositional("FILE")]
        while let more = a.positional() { files.append(more) }
    }

    func validate() throws {
        try Self.checkLikeFile(like)
        if started != nil, files.count > 1, !join { throw UsageError("--started dates one night; give one FILE with it, or --join") }
        if replace, out != nil { throw UsageError("--replace replaces a night in the store; --out writes a bare folder instead") }
        if let out { try refuseNightFolderInsideTheStore(out, instead: "without --out the night is saved in the store") }
    }

    func run() throws {
        _ = RemovedOnInterrupt.shared  // listening before any night folder is made
        guard files.count > 1, !join else {
            let night = try analyse(files.map { URL(fileURLWithPath: $0) }, into: out.map { URL(fileURLWithPath: $0) }, store: nil)
            try printResult(night, given: files)
            return
        }
        // Several recordings: one store for all, or one folder per file under --out.
        let parent = out.map { URL(fileURLWithPath: $0, isDirectory: true) }
        if let parent {
            do { try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true) } catch {
                throw SomniError(.io, "cannot create \(parent.path)", cause: error)
            }
        }
        let store = parent == nil ? try openStore() : nil
        var names = Set<String>()
        var sessions: [Data] = []
        var failures: [(file: String, error: any Error)] = []
        for (i, file) in files.enumerated() {
            RemovedOnInterrupt.shared.sayOnInterrupt(Self.interruptedBatch(files, at: i, failed: failures.count),
                                                     onceKept: Self.interruptedBatch(files, at: i + 1, failed: failures.count))
            let input = URL(fileURLWithPath: file)
            let destination = parent.map { $0.appendingPathComponent(Self.uniqueName(for: input, taken: &names)) }
            do {
                let night = try analyse([input], into: destination, store: store)
                if json {
                    sessions.append(try night.session.jsonData())
                    if let stored = Self.alreadyStored(night, given: [file]) {
                        printError("somni analyze: \(file): \(stored)")
                    } else {
                        for w in night.session.warnings { printError("somni analyze: \(file): warning: \(w)") }
                    }
                } else {
                    if i > 0 { print("") }
                    try printResult(night, given: [file], inBatch: true)
                    // Each night's lines out as it is saved: a batch stopped later loses none.
                    StandardStreams.flushOutput()
                }
            } catch {
                RemovedOnInterrupt.waitIfInterrupted()
                printError("somni analyze: \(file): error: \(error)")
                failures.append((file, error))
            }
        }
        RemovedOnInterrupt.shared.sayOnInterrupt(nil)
        if json { print("[\n" + sessions.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ",\n") + "\n]") }
        guard let first = failures.first else { return }
        let code = (first.error as? SomniError)?.code ?? .internalError
        throw SomniError(code, "\(failures.count) of \(files.count) recordings could not be analysed: "
                         + failures.map(\.file).joined(separator: ", "))
    }

    /// What a batch stopped on its recording `index` says: how many nights it kept, and which
    /// recordings it never analysed (the first ten named), so that they can be given again.
    static func interruptedBatch(_ files: [String], at index: Int, failed: Int) -> String {
        let left = files[index...]
        // "./--x.wav", not "--x.wav": given again, a name is not read as an option.
        let named = left.prefix(10).map { shellWord($0.hasPrefix("-") && $0 != "-" ? "./" + $0 : $0) }.joined(separator: " ")
        return "somni analyze: interrupted: \(index - failed) of \(files.count) recordings analysed and kept"
            + (failed > 0 ? " (\(failed) could not be)" : "") + (left.isEmpty ? "" : "; not analysed: \(named)")
            + (left.count > 10 ? " and \(left.count - 10) more" : "")
    }

    /// The night's summary (or session.json), or, for a recording found in the store, where it is.
    /// `inBatch`: one of several recordings, whose warnings name it, as its errors do.
    private func printResult(_ night: AnalysedNight, given: [String], inBatch: Bool = false) throws {
        if let stored = Self.alreadyStored(night, given: given) {
            guard !json else {
                printError("somni analyze: \(stored)")
                return print(String(decoding: try night.session.jsonData(), as: UTF8.self))
            }
            return print(stored)
        }
        try NightSummaryText.printResult(night.session, folder: night.folder, savedAs: night.savedAs, json: json,
                                         command: Self.name + (inBatch ? ": " + given.joined(separator: " + ") : ""))
        guard !json else { return }
        let others = night.replaced.filter { $0 != night.savedAs }
        if others.count < night.replaced.count { print("It replaces the earlier analysis of this recording, and keeps its id.") }
        if night.keptStart { print("It keeps the start given before (--started gives another).") }
        if !others.isEmpty { print("It replaces \(others.joined(separator: ", ")), the same recording analysed before.") }
        Self.sayIfUndated(night.session, savedAs: night.savedAs)
    }

    /// What to say of a night found in the store rather than analysed; nil for one analysed.
    /// `given`: the recording as the user named it, which may be a copy under another name.
    static func alreadyStored(_ night: AnalysedNight, given: [String]) -> String? {
        guard let earlier = night.storedBefore else { return nil }
        let givenName = given.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: " + ")
        if night.savedMeanwhile {
            // It was analysed (with --replace too): said so, not "not analysed again".
            return Format.printable("\(givenName) was saved in the night store as \(earlier.id) by another somni while this one "
                + "analysed it; this analysis is not kept: 'somni show \(earlier.id)'")
        }
        let what = Format.printable(givenName == night.session.source ? givenName
                                    : "\(givenName) is the same recording as \(night.session.source), which")
        let said = "\(what) is already in the night store as \(earlier.id) (sensitivity \(earlier.sensitivity), "
            + "\(earlier.classifier)), so it was not analysed again: 'somni show \(earlier.id)'; --replace analyses "
            + "it again in its place"
        let time = ISO8601DateFormatter()
        time.timeZone = .current
        if let given = night.datesUndated {
            return said + ". It is stored undated; --replace dates it from --started, \(time.string(from: given))"
        }
        guard let start = night.startsEarlier else { return said }
        return said + ". It is stored dated from its creation time, which its app wrote when the recording stopped; "
            + "--replace dates it from its start, \(time.string(from: start.date)) (from the \(start.origin.rawValue))"
    }

    /// A night without a date has no bedtime in 'somni nights', no place in the trends, and
    /// times into the night instead of clock times; one written with --out is imported so.
    static func sayIfUndated(_ session: Session, savedAs: String?) {
        guard session.startedAt == nil else { return }
        let why: String
        if let ahead = RecordingStart.aheadInFileName(URL(fileURLWithPath: session.source).lastPathComponent) {
            let time = DateFormatter()
            time.dateFormat = "yyyy-MM-dd HH:mm"
            time.timeZone = .current
            why = "The recording's name says it started \(time.string(from: ahead)), more than a day ahead of this machine's clock"
        } else {
            why = "The recording does not say when it started"
        }
        guard let savedAs else {
            return print(why + ", so the night is undated (its times are into the night, not clock times): "
                         + "analysed again into a new --out folder with --started \"YYYY-MM-DD HH:MM\", it is dated.")
        }
        print(why + ", so the night is undated: analysed again with "
              + "--started \"YYYY-MM-DD HH:MM\" --replace, it is dated in place of \(savedAs).")
    }

    private func openStore() throws -> NightStore {
        try NightStore(directory: NightStore.defaultDirectory(explicit: store))
    }

    /// A night folder name for `input` under --out: its base name, numbered when two files share it.
    static func uniqueName(for input: URL, taken: inout Set<String>) -> String {
        let base = input.deletingPathExtension().lastPathComponent
        var name = base, n = 1
        while taken.contains(name) { n += 1; name = "\(base)-\(n)" }
        taken.insert(name)
        return name
    }

    /// The parts of one night, each placed after the pause its start time shows. Parts more than
    /// `JoinedAudioSource.longestPause` apart by their headers' durations are refused before
    /// anything is read (the source itself refuses them once it knows their real lengths).
    static func joined(_ inputs: [URL], _ decoders: [AudioDecoder], starts: [RecordingStart?]) throws -> JoinedAudioSource {
        // One file given twice (by two names or links) is a slip, not a night twice as long. A
        // copy is only likely one: the fingerprint (size, first and last MiB) is the same for two
        // parts of one size that begin and end in digital silence.
        for i in inputs.indices.dropFirst() {
            if let j = inputs[..<i].indices.first(where: { FileIdentity.same(inputs[$0], inputs[i]) }) {
                throw SomniError(.badInput, "\(inputs[i].lastPathComponent) is the same file as \(inputs[j].lastPathComponent): "
                                 + "--join takes each part of the night once")
            }
            if let fingerprint = decoders[i].fingerprint, let j = inputs[..<i].indices.first(where: { decoders[$0].fingerprint == fingerprint }) {
                printError("somni analyze: warning: \(inputs[i].lastPathComponent) looks like a copy of \(inputs[j].lastPathComponent) "
                           + "(the same size, beginning and end): joined all the same")
            }
        }
        for i in inputs.indices.dropFirst() {
            guard let previous = starts[i - 1]?.date, let length = decoders[i - 1].expectedDuration,
                  let here = starts[i]?.date else { continue }
            let pause = JoinedAudioSource.pause(from: previous, lasting: length, to: here)
            guard abs(pause) <= JoinedAudioSource.longestPause else {
                throw JoinedAudioSource.tooFarApart(inputs[i].lastPathComponent, pause, inputs[i - 1].lastPathComponent)
            }
        }
        return JoinedAudioSource(parts: inputs.indices.map {
            .init(name: inputs[$0].lastPathComponent, source: decoders[$0], start: starts[$0]?.date)
        })
    }

    /// The parts' starts with `--started` given: the first part starts then, and parts dated by
    /// their own files move with it by the same amount (a recorder's clock set wrong is wrong for
    /// every part), so each pause stays as the files show it. Before, the given time dated the
    /// night but not its first part, and the pause before a dated second part was lost.
    /// `clock`: the one the given time was read off, when not this machine's.
    static func placing(_ starts: [RecordingStart?], startedAt given: Date?, clock: TimeZone? = nil) -> [RecordingStart?] {
        guard let given, !starts.isEmpty else { return starts }
        var placed = starts
        if let own = starts[0]?.date {
            let shift = given.timeIntervalSince(own)
            placed = starts.map { $0.map { RecordingStart(date: $0.date.addingTimeInterval(shift), origin: .given, clock: clock) } }
        }
        placed[0] = RecordingStart(date: given, origin: .given, clock: clock)
        return placed
    }

    /// A --like recording that is not there is said at once: it is read only for a file cut
    /// off before its index, so a typo went unnoticed until the night that needed it.
    static func checkLikeFile(_ path: String?) throws {
        guard let path else { return }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw SomniError(.badInput, "--like \(path): no such file")
        }
        if isFolder.boolValue { throw SomniError(.badInput, "--like \(path) is a folder, not a recording") }
    }

    /// When a file says it started: its creation time or recording date tag, else a time in its
    /// name; unless its own time is when it stopped (`RecordingStart.reconciled`).
    static func start(of input: URL, decoder: AudioDecoder) -> RecordingStart? {
        let modified = (try? FileManager.default.attributesOfItem(atPath: input.path))?[.modificationDate] as? Date
        return RecordingStart.reconciled(fileTime: decoder.recordingStart, nameTime: RecordingStart.inFileName(input.lastPathComponent),
                                         modified: modified, duration: decoder.expectedDuration)
    }

    /// A night analysed, or found already in the store.
    struct AnalysedNight {
        var session: Session
        var folder: URL
        /// Its id in the store; nil for a bare folder.
        var savedAs: String?
        /// The stored night of this recording, when it was found there and not analysed again.
        var storedBefore: NightRecord? = nil
        /// The --started time of a recording found stored undated, which --replace would date.
        var datesUndated: Date? = nil
        /// The ids of the nights it replaced (`--replace`).
        var replaced: [String] = []
        /// For a night stored dated from when its recording stopped: its start.
        var startsEarlier: RecordingStart? = nil
        /// Whether it kept the start the night it replaced was given (the recording says none).
        var keptStart = false
        /// Whether another somni saved this recording while this one analysed it.
        var savedMeanwhile = false
    }

    /// One night, from one file or (`--join`) several parts, into a bare folder (`destination`)
    /// or into the store (`opened`, else opened once the recording is known to decode), unless
    /// the store holds it already and it is not to be replaced.
    private func analyse(_ inputs: [URL], into destination: URL?, store opened: NightStore?) throws -> AnalysedNight {
        // The user's files first: their problems are the likelier ones.
        let decoders = try inputs.map { try AudioDecoder(url: $0, like: like.map { URL(fileURLWithPath: $0) }) }
        let starts = Self.placing(zip(inputs, decoders).map { Self.start(of: $0, decoder: $1) }, startedAt: started, clock: startedClock)
        let start = starts[0]
        let source: any AudioSource = decoders.count == 1 ? decoders[0] : try Self.joined(inputs, decoders, starts: starts)
        let name = inputs.count == 1 ? inputs[0].lastPathComponent : inputs.map(\.lastPathComponent).joined(separator: " + ")
        let classifier = try ClassifierChoice.make(kind: classifierKind, modelPaths: modelPaths,
                                                   recordedSampleRate: source.recordedSampleRate, command: "analyze")
        let analyse = { (destination: URL, start: RecordingStart?, watchedUntilSaved: Bool) in
            try classifier.analyze(source: source, sourceName: name, started: start,
                                   sensitivity: sensitivity, destination: destination, showProgress: !json,
                                   keepsClips: keepsClips, watchedUntilSaved: watchedUntilSaved)
        }
        if let destination { return AnalysedNight(session: try analyse(destination, start, false), folder: destination, savedAs: nil) }
        let store = try opened ?? openStore()
        // A pipe has no fingerprint (it can be read only once): the same recording piped in
        // again was stored again, without a word.
        if source.fingerprint == nil {
            printError("somni analyze: note: \(name) is read from a pipe, so whether it is already in the store cannot be "
                       + "told; analysing the file itself can")
        }
        // With --replace and --started, an undated copy of the recording is dated in place.
        var earlier = try store.nights(recordedFrom: name, startedAt: start?.date, fingerprint: source.fingerprint)
        // Stored before Somni took a creation time written at the stop for the end (stop 41): the
        // same recording, under the start its creation time alone gave.
        var storedAtItsEnd = false
        if earlier.isEmpty, started == nil, decoders.count == 1, let own = decoders[0].recordingStart?.date, own != start?.date {
            earlier = try store.nights(recordedFrom: name, startedAt: own, fingerprint: source.fingerprint)
            storedAtItsEnd = !earlier.isEmpty
        }
        if replace, earlier.isEmpty, let fingerprint = source.fingerprint {
            // The same file stored under another start: dated by hand then, or being so now.
            earlier = try store.nights(ofFile: name, fingerprint: fingerprint)
        }
        if let stored = earlier.first, !replace {
            return AnalysedNight(session: try store.session(of: stored), folder: store.folder(of: stored), savedAs: stored.id,
                                 storedBefore: stored, datesUndated: stored.start == nil ? started : nil,
                                 startsEarlier: storedAtItsEnd ? start : nil)
        }
        // Analysed again with new settings and no --started, a night keeps the start it was
        // given by hand before (a recording that says none, or whose clock was wrong), rather
        // than falling out of every dated list or back to the wrong clock.
        var keptStart: RecordingStart?
        // (Not a night stored dated from a creation time written at the stop: that start was
        // the file's, known wrong, and --replace dates it from its start.)
        if started == nil, !storedAtItsEnd, let dated = earlier.first(where: { $0.start != nil }), let date = dated.start {
            let stored = try? store.session(of: dated)
            let origin = stored?.startedFrom
            // On the clock it was read on before (+13:00, or the zone it was analysed in).
            let clock = stored?.timeZone.flatMap(TimeZone.init(identifier:))
            if start == nil || origin == .given { keptStart = RecordingStart(date: date, origin: origin ?? .given, clock: clock) }
        }
        // Analysed beside the store, then added in one transaction that moves the folder in.
        let incoming = store.newIncomingFolder(name: inputs[0].deletingPathExtension().lastPathComponent)
        let session = try analyse(incoming, keptStart ?? start, true)
        let saved: (record: NightRecord, replaced: [NightRecord])
        do {
            // Saved whole before a signal is acted on; until then a signal removes it (see NightRun).
            saved = try RemovedOnInterrupt.shared.uninterruptible {
                defer { RemovedOnInterrupt.shared.end() }
                let saved = try store.save(nightFolder: incoming, moving: true, replacing: earlier, unlessStored: true)
                RemovedOnInterrupt.shared.kept()
                return saved
            }
        } catch let saved as NightStore.AlreadyStored {
            // Another analysis of this recording saved it first: one night, as when run one after the other.
            try? FileManager.default.removeItem(at: incoming)
            return AnalysedNight(session: try store.session(of: saved.night), folder: store.folder(of: saved.night),
                                 savedAs: saved.night.id, storedBefore: saved.night, savedMeanwhile: true)
        } catch {
            let kept = store.keepUnsaved(incoming)
            throw SomniError(.io, "the night was analysed but could not be saved in the store (\(error)); it is kept in "
                             + "\(kept.path): 'somni import \(kept.path) --move\(earlier.isEmpty ? "" : " --replace")' adds it later"
                             + (earlier.isEmpty ? "" : " in the earlier analysis's place"))
        }
        return AnalysedNight(session: session, folder: store.folder(of: saved.record), savedAs: saved.record.id,
                             replaced: saved.replaced.map(\.id), keptStart: keptStart != nil)
    }
}

/// Runs the morning pipeline into a folder that appears only when complete, with a progress bar
/// on a terminal.
enum NightRun {
    /// `watchedUntilSaved`: the folder is a night on its way into the store, still removed by a
    /// signal once in place, until the caller's save ends the watch (a Ctrl-C between the two
    /// left it in the store's incoming/ until the next command swept it).
    static func analyze<C: SoundClassifier>(source: some AudioSource, sourceName: String, started: RecordingStart?,
                                            classifier: C, sensitivity: Int, destination: URL, showProgress: Bool,
                                            keepsClips: Bool = true, watchedUntilSaved: Bool = false) throws -> Session {
        var analyzer = NightAnalyzer(classifier: classifier, sensitivity: sensitivity,
                                     clipEncoder: keepsClips ? MP3ClipEncoder() : nil)
        // Only for a person watching: not when either stream is piped or redirected.
        let bar = showProgress && standardErrorIsTerminal && standardOutputIsTerminal ? ProgressBar() : nil
        defer { bar?.finish() }
        // Watched until it is in place: a signal during the flush to disk or the rename that
        // follows the analysis left the finished folder under its hidden working name.
        // Handed on to the caller's save only once the folder is in place and nothing here failed
        // after it (the parent's flush), or a later recording's signal would remove this one.
        var handedOn = false
        defer { if !handedOn { RemovedOnInterrupt.shared.end() } }
        let session = try NightFolder.writeAtomically(to: destination, placing: { rename in
            try RemovedOnInterrupt.shared.uninterruptible {
                try rename()
                if watchedUntilSaved {
                    RemovedOnInterrupt.shared.watch(folders: [destination])
                } else {
                    RemovedOnInterrupt.shared.kept()
                    RemovedOnInterrupt.shared.end()
                }
            }
        }, creating: { RemovedOnInterrupt.shared.watch(folders: [$0]) }) { folder in
            // Watched from before it was made: a signal between its making and here left it for good.
            return try analyzer.analyze(source: source, sourceName: sourceName, started: started, into: folder) { stage, fraction in
                bar?.update(stage.rawValue, fraction)
            }
        }
        handedOn = watchedUntilSaved
        return session
    }
}

/// A one-line progress bar on standard error, redrawn in place, as wide as the terminal allows.
/// Sendable by hand: the analyser calls its progress one call at a time (see
/// `NightAnalyzer.analyze`), so `update`s never overlap, and `finish` comes after the last.
final class ProgressBar: @unchecked Sendable {
    private var lastDrawn = ""
    /// The terminal's width when the bar began; a line as wide would wrap, and each redraw with it.
    private let columns = ProgressBar.terminalColumns()

    func update(_ label: String, _ fraction: Double) {
        let name = label.padding(toLength: 12, withPad: " ", startingAt: 0), percent = " \(Int(fraction * 100))%"
        // "name [###...] 100%" in at most columns − 1 characters; too narrow for a bar, no bar.
        let width = min(30, columns - 1 - name.count - 3 - 5)
        var line = name + percent
        if width >= 5 {
            let filled = Int((max(0, min(1, fraction)) * Double(width)).rounded())
            line = name + " [" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]" + percent
        }
        guard line != lastDrawn else { return }
        lastDrawn = line
        // Erase to the line's end: a shorter line must not leave the last one's tail behind.
        writeToStandardError("\r" + String(line.prefix(max(columns - 1, 1))) + "\u{1B}[K")
    }

    func finish() {
        guard !lastDrawn.isEmpty else { return }
        writeToStandardError("\r\u{1B}[K")
    }

    static func terminalColumns() -> Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return Int(ProcessInfo.processInfo.environment["COLUMNS"] ?? "") ?? 80
    }
}

/// The readable summary printed after an analysis.
enum NightSummaryText {
    /// What `analyze` and `record` print when a night is done: session.json or the summary, then
    /// the warnings on standard error (after "somni COMMAND: ", which may name the file too).
    static func printResult(_ session: Session, folder: URL, savedAs: String?, json: Bool, command: String) throws {
        if json {
            print(String(decoding: try session.jsonData(), as: UTF8.self))
        } else {
            print(render(session, folder: folder))
            if let savedAs { print("Saved in the night store as \(savedAs): 'somni show \(savedAs)', 'somni report \(savedAs) -o report.html'") }
        }
        for w in session.warnings { printError("somni \(command): warning: \(w)") }
    }

    /// h:mm:ss, as `show` and the report give a time into the night (whole seconds passed).
    static func clock(_ seconds: Double) -> String { Format.elapsed(seconds) }

    static func render(_ s: Session, folder: URL?) -> String {
        let m = s.summary
        var lines: [String] = []
        // A night with gaps (parts joined, a microphone lost) was not all recorded: say how much was.
        let missing = s.secondsNotRecorded
        let length = missing > 0 ? "\(clock(s.duration)) in all, \(clock(s.recordedSeconds)) of it recorded" : "\(clock(s.duration)) recorded"
        lines.append("Night of \(s.source)  (\(length), classifier: \(s.settings.classifier), sensitivity \(s.settings.sensitivity))")
        if let start = s.startedAt, s.startedFrom != .recorder {
            lines.append("  started \(start)" + (s.startedFrom.map { " (from the \($0 == .given ? "--started option" : $0.rawValue))" } ?? ""))
        }
        lines.append(String(format: "  analysed %@ of the night (%.0f%% active%@)", clock(m.analysedSeconds),
                            100 * m.activeShare, m.gateBypassed ? ", gate bypassed: everything classified" : ""))
        // Numbers rounded as `show` and the report round them (half away from zero).
        func number(_ value: Double, _ decimals: Int, width: Int) -> String {
            let text = Format.fixed(value, decimals)
            return String(repeating: " ", count: max(0, width - text.count)) + text
        }
        // Rates and the share are over the time recorded; a night with gaps says so.
        let of = missing > 0 ? "of the time recorded" : "of the night", perHour = missing > 0 ? "per hour recorded" : "per hour"
        lines.append("  snoring: \(Format.minutes(m.snoringMinutes)) (\(Format.fixed(m.snoringPercent, 1))% \(of)) in "
                     + "\(m.snoringEpisodes) episode\(m.snoringEpisodes == 1 ? "" : "s")")
        for c in EventClass.allCases {
            let n = m.eventCounts[c.rawValue] ?? 0
            lines.append("  " + c.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)
                         + String(format: " %4d events  ", n) + number(m.eventsPerHour[c.rawValue] ?? 0, 1, width: 6) + " " + perHour)
        }
        if !s.events.isEmpty {
            // A dated night's events at the time of day they happened, as 'somni show' lists them.
            let wallClock = NightClock(of: s)
            // By severity, which weighs a sound's loudness and its length, as the report ranks them.
            lines.append("  most severe events" + (wallClock == nil ? " (time into the recording):" : ":"))
            for e in s.events.sorted(by: { $0.severity > $1.severity }).prefix(5) {
                let when = Format.time(e.start, on: wallClock)  // "+0:12:03" into an undated night, as `show` says
                lines.append("    \(when)  " + e.eventClass.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                             + " \(number(e.duration, 1, width: 5)) s  peak \(number(e.peakDBFS, 1, width: 6)) dBFS  "
                             + "severity \(number(e.severity, 0, width: 3))")
            }
        }
        if let folder { lines.append("Night folder: \(folder.path)") }
        // A recording's name may hold control characters (an escape sequence, a line break).
        return lines.map { Format.printable($0) }.joined(separator: "\n")
    }
}
