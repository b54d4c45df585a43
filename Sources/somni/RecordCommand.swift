import Foundation
import SomniAudio
import SomniCapture
import SomniCore
import SomniStore

struct RecordCommand: Command {
    static let name = "record"
    static let summary = "Record tonight from the microphone; analyse it in the morning"
    static let help = """
    Usage: somni record [--for DURATION | --until HH:MM] [--mode night|live] [options]

    Listens to the microphone all night. Ctrl-C or SIGTERM ends the night cleanly and runs the
    morning analysis; a second Ctrl-C stops at once (run 'somni recover' later). If the device
    vanishes (USB microphone unplugged, sound server restarted) it retries with backoff and
    records the gap; if the disk fills it stops saving audio and keeps everything saved.
    Nights left open by a crash (kill -9, power loss) are closed first.

      --for DURATION     how long to record: 8h, 90m, 7h30m, 45s (default 8h)
      --until HH:MM      record until this local time (the next time the clock shows it, at
                         most 16 h away: a restart after waking time records nothing)
      --mode MODE        night: only the loudness envelope overnight and a FLAC master, analysed
                         in the morning, then the master is deleted (default);
                         live: the classifier runs on the stream and only snoring episodes are
                         written (each clip the episode ±1 s, reaching into 10 s of pre-roll)
      --backend B        pulse: PulseAudio or PipeWire (default); alsa: ALSA directly (no sound
                         server); file: play an audio file as the microphone, as fast as it reads
      --device NAME      a PulseAudio source (pactl list short sources), an ALSA PCM such as
                         plughw:1,0 (arecord -L), or the file for --backend file; default: the
                         system's default microphone
      --rate HZ          capture rate, 16000…384000 (default 48000); converted to 16 kHz inside Somni
      --out DIR          keep the night as a bare folder here instead of saving it in the store
      --store DIR        the night store the night is saved in (default: $SOMNI_STORE when set,
                         else $XDG_DATA_HOME/somni, else ~/.local/share/somni); the night is
                         recorded in its recording/ folder and moved in when analysed
      --keep-audio       keep the night-mode master recording after the analysis
      --master F         flac (default: written frame by frame, kill -9 loses < 0.3 s) | opus
                         (smaller; kill -9 loses what came since the last 30 s flush)
      --sensitivity N    1 (strict) … 10 (permissive) for the morning analysis (default 5)
    \(ClassifierChoice.help(column: 21))
      --threshold X      live mode: confidence that counts as a snoring window (default 0.6);
                         2 windows in a row, one at X, the other at S × X, start an
                         episode; then S × X keeps it going
      --continuation S   live mode: that share S (default 0.2, as the morning pass); 1 gives
                         the seeds' rule (2 windows at X to start, 10 s without one ends it)
      --bridge SECONDS   live mode: how long after its last snoring window an episode may be
                         carried on by snores the classifier missed, heard as bursts in the
                         snore band every < 10 s, as the morning pass bridges (default 60;
                         0: 10 s without a snoring window always ends it)
      --lock FILE        the recording lock (default: /tmp/somni-record.lock, one per machine)
      --lease DURATION   how long the lock outlives a recorder that died (default 15m); the
                         heartbeat runs every third of it
      --json             print session.json at the end instead of the summary
    """

    var duration: Double
    /// With --until: the time as given, and the moment it names. The night ends then, however
    /// long closing an interrupted night and opening the microphone took first.
    var until: (text: String, moment: Date)?
    var mode: NightJournal.Mode
    var backend: CaptureBackend
    var device: String?
    var rate: Int
    var options: RecordingOptions
    var keepAudio: Bool
    var masterFormat: EncodedAudioWriter.Format
    var sensitivity: Int
    var classifierKind: String
    var modelPaths: [String] = []
    var threshold: Float
    var continuationShare: Float
    var bridgeReach: Double
    var json: Bool

    init(_ a: inout Arguments) throws {
        let forValue = try a.option("--for")
        let untilValue = try a.option("--until")
        if forValue != nil && untilValue != nil { throw UsageError("give --for or --until, not both") }
        if let untilValue {
            duration = try RecordingOptions.secondsUntil(untilValue)
            until = (untilValue, Date().addingTimeInterval(duration))
        } else {
            duration = try RecordingOptions.seconds(forValue ?? "8h", option: "--for")
        }
        let modeValue = try a.option("--mode") ?? "night"
        guard let m = NightJournal.Mode(rawValue: modeValue) else { throw UsageError("--mode must be night or live, not '\(modeValue)'") }
        mode = m
        let backendValue = try a.option("--backend") ?? "pulse"
        guard let b = CaptureBackend(rawValue: backendValue) else {
            throw UsageError("--backend must be pulse, alsa or file, not '\(backendValue)'")
        }
        backend = b
        device = try a.option("--device")
        rate = try a.option("--rate", as: Int.self) ?? 48_000
        keepAudio = a.flag("--keep-audio")
        let masterValue = try a.option("--master") ?? "flac"
        guard let f = EncodedAudioWriter.Format(rawValue: masterValue), [.flac, .opus].contains(f) else {
            throw UsageError("--master must be flac or opus, not '\(masterValue)'")
        }
        masterFormat = f
        sensitivity = try a.sensitivity()
        (classifierKind, modelPaths) = try ClassifierChoice.parse(&a)
        let givenThreshold = try a.option("--threshold", as: Float.self)
        let givenContinuation = try a.option("--continuation", as: Float.self)
        let givenBridge = try a.option("--bridge")
        // Live mode's alone: in night mode they were taken and did nothing.
        if mode == .night, let unused = [("--threshold", givenThreshold != nil), ("--continuation", givenContinuation != nil),
                                         ("--bridge", givenBridge != nil)].first(where: \.1) {
            throw UsageError("\(unused.0) applies to live mode (--mode live); night mode analyses the whole night in the morning")
        }
        threshold = givenThreshold ?? 0.6
        continuationShare = givenContinuation ?? EventDetector.snoringContinuationShare
        bridgeReach = try givenBridge.map { try RecordingOptions.seconds($0, option: "--bridge") }
            ?? LiveEpisodeSettings().bridgeReach
        json = a.flag("--json")
        options = try RecordingOptions(&a)
    }

    func validate() throws {
        // Under a second holds no window to classify: a night of nothing, stored as "0:00:00".
        guard duration >= 1 else { throw UsageError("the night must last at least 1 s") }
        guard duration <= 24 * 3600 else { throw UsageError("a night lasts at most 24 h") }
        // Capture is only ever converted down to the analysis rate: 8000 passed here and then
        // failed once the microphone was open.
        guard (analysisSampleRate...384_000).contains(rate) else {
            throw UsageError("--rate must be \(analysisSampleRate)…384000 (Somni analyses at 16 kHz and converts capture down to it), not \(rate)")
        }
        guard threshold > 0, threshold <= 1 else { throw UsageError("--threshold must be in (0, 1], not \(threshold)") }
        guard continuationShare > 0, continuationShare <= 1 else {
            throw UsageError("--continuation must be in (0, 1], not \(continuationShare)")
        }
        // The bridged stretch is held in memory (64 kB a second) until the next snoring window.
        guard (0...300).contains(bridgeReach) else {
            throw UsageError("--bridge must be 0…300 s (5m), not \(bridgeReach)")
        }
        if backend == .file && device == nil { throw UsageError("--backend file needs --device FILE") }
    }

    func run() throws {
        // A microphone below 16 kHz (a Bluetooth headset's 8 kHz) gets the model for such
        // recordings, as `analyze` gives a file recorded so: its sound is resampled here, so
        // the night's master could not tell.
        var narrowBand: Int?
        if backend == .pulse, classifierKind != "heuristic", modelPaths.isEmpty,
           let sourceRate = PulseDevice.sourceRate(device), sourceRate < Int(analysisSampleRate) {
            narrowBand = sourceRate
            printError("somni record: the microphone records at \(sourceRate) Hz: the model for recordings below 16 kHz listens")
        }
        switch try ClassifierChoice.make(kind: classifierKind, modelPaths: modelPaths, recordedSampleRate: narrowBand, command: "record",
                                         announcingUnheardClasses: true) {
        case .heuristic(let c): try record(with: c, choice: .heuristic(c))
        case .learned(let c): try record(with: c, choice: .learned(c))
        }
    }

    /// The night with one concrete classifier (generic, so the per-window call is static).
    private func record<C: SoundClassifier>(with classifier: C, choice: ClassifierChoice) throws {
        let stop = StopRequest(recoverCommand: options.recoverCommand)
        let root = options.root
        let folder = try NightJournal.claimFolder(under: root, stamp: RecordingOptions.folderStamp(Date()))
        // Held to the end: no recover closes or saves this night while this process has it.
        let claim = try NightFolderClaim(folder)
        defer { withExtendedLifetime(claim) {} }
        let lock: RecordingLock
        do { lock = try options.takeLock(nightFolder: folder) } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        defer { lock.release() }
        options.sweepStore()  // a night a save that died left in staging comes back to be saved below
        options.removeAbandonedFolders()
        for unfinished in NightJournal.unfinishedNights(under: root) {
            guard let held = try? NightFolderClaim(unfinished) else {
                printError("somni record: \(unfinished.lastPathComponent) is being recorded or closed by another somni; left alone")
                continue
            }
            defer { withExtendedLifetime(held) {} }
            if let journal = try? NightJournal.load(in: unfinished), let recorder = LocalProcess.liveRecorder(of: journal, in: unfinished) {
                printError("somni record: \(unfinished.lastPathComponent) is being recorded by pid \(recorder.pid) under another lock; left alone")
                continue
            }
            printError("somni record: closing the interrupted night \(unfinished.lastPathComponent) first")
            do {
                try RecordingOptions.close(unfinished, classifier: choice, sensitivity: sensitivity, recovered: true)
                try options.save(unfinished)
            } catch {
                printError("somni record: could not close \(unfinished.path): \(error)")
            }
        }
        for analysed in options.out == nil ? NightJournal.analysedNights(under: root) : [] {
            guard let held = try? NightFolderClaim(analysed) else { continue }  // its own recorder is saving it
            defer { withExtendedLifetime(held) {} }
            do {
                if let done = try options.saveAnalysed(analysed) { printError("somni record: \(analysed.lastPathComponent), analysed before: \(done)") }
            } catch {
                printError("somni record: could not save \(analysed.path) in the night store: \(error)")
            }
        }

        if stop.isRequested {
            try? FileManager.default.removeItem(at: folder)
            lock.release()
            stop.exitIfRequestedBeforeCapture("stopped before the night began: nothing was recorded")
            return
        }

        let duration = until.map { $0.moment.timeIntervalSinceNow } ?? self.duration
        if let until, duration < 1 {
            try? FileManager.default.removeItem(at: folder)
            lock.release()
            return printError("somni record: it is \(until.text) already (closing the interrupted nights took until then): "
                              + "nothing was recorded")
        }
        var settings = RecorderSettings(mode: mode, duration: duration, masterFormat: masterFormat, keepAudio: keepAudio)
        settings.keepsTime = backend != .file
        let recover = options.recoverCommand
        settings.deviceHung = { seconds in
            // The loop is stuck inside the driver and cannot end the night itself: the process
            // goes, its lock with it, and what was flushed (all but the last half minute) waits
            // for `recover` or the next `record`, which closes interrupted nights first.
            let text = "\nsomni record: error: the capture device has not answered for \(Int(seconds)) s: its driver hung inside "
                + "a read (ALSA's pulse plugin does when the sound server stops; --backend pulse does not). The night so far "
                + "is kept: '\(recover)' closes it\n"
            FileHandle.standardError.write(Data(text.utf8))
            _exit(74)
        }
        settings.live.threshold = threshold
        settings.live.continuationShare = continuationShare
        settings.live.bridgeReach = bridgeReach
        let line = LiveLine(terminal: standardErrorIsTerminal)
        let (backend, device, rate) = (self.backend, self.device, self.rate)
        let deviceName = "\(backend.rawValue):\(device ?? "default")"
        // Said once the microphone has opened: a device that cannot open ends with its error alone.
        var announced = false
        var captured = 0.0  // seconds
        do {
            let recorder = try NightRecorder(
                folder: folder, settings: settings, classifier: classifier,
                device: deviceName, captureRate: rate, startedAt: Date(),  // after any night closed first
                openCapture: {
                    let source = try backend.open(device: device, rate: rate)
                    if !announced {
                        announced = true
                        line.log("recording into \(folder.path) (\(mode.rawValue) mode, \(deviceName)); Ctrl-C ends the night")
                    }
                    return source
                },
                heartbeat: { stop.noteProgress(); try lock.heartbeatIfDue() },
                shouldStop: { [deadline = until?.moment] in stop.isRequested || deadline.map { Date() >= $0 } == true },
                observe: line.show)
            stop.captureBegan()
            captured = try recorder.run().secondsFlushed
        } catch {
            // Once the night has a folder, say where it is and how to close it: a disk still full
            // at the end of the night ended with SQLite's or the journal's own words alone. Before
            // it has one (no microphone to open), the folder claimed for it goes: it was left empty.
            guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(NightJournal.fileName).path) else {
                try? FileManager.default.removeItem(at: folder)
                throw error
            }
            line.end()
            let code = (error as? SomniError)?.code ?? .io
            throw SomniError(code, "recording stopped: \(error). What was recorded is kept in \(folder.path); free some "
                + "space if the disk is full, then run '\(options.recoverCommand)' to close the night")
        }
        stop.captureEnded()
        line.end()
        // Stopped in its first second (a microphone can take that long to open): no window to
        // classify, and no night worth keeping.
        if stop.isRequested, captured < Double(classifier.windowLength) / Double(analysisSampleRate) {
            try? FileManager.default.removeItem(at: folder)
            lock.release()
            stop.exitIfRequestedBeforeCapture("stopped before a second was recorded: nothing was saved")
        }
        line.log("night over; running the morning analysis")
        let session: Session
        // From the moment the night is on the disk as analysed, a signal lets it be saved.
        do { session = try RecordingOptions.close(folder, classifier: choice, sensitivity: sensitivity, recovered: false,
                                                  analysed: stop.morningEnded) } catch {
            let code = (error as? SomniError)?.code ?? .io
            throw SomniError(code, "the morning analysis failed (\(error)). The night is saved in \(folder.path); "
                + "run '\(options.recoverCommand)' once the problem is fixed", cause: error)
        }
        let (saved, savedAs) = try options.save(folder)
        try NightSummaryText.printResult(session, folder: saved, savedAs: savedAs, json: json, command: Self.name)
    }
}

/// Options and steps `record` and `recover` share: where nights go, the lock, the morning step.
struct RecordingOptions {
    var out: String?
    var store: String?
    var lockPath: String?
    var lease: Double

    init(_ a: inout Arguments) throws {
        out = try a.option("--out")
        store = try a.option("--store")
        if out != nil && store != nil { throw UsageError("give --out or --store, not both") }
        if let out { try refuseNightFolderInsideTheStore(out, instead: "without --out the night is saved in the store") }
        if store?.isEmpty == true { throw UsageError("--store needs a folder") }
        if out == nil { try NightStore.refuseAFile(at: NightStore.defaultDirectory(explicit: store)) }
        lockPath = try a.option("--lock")
        lease = try RecordingOptions.seconds(try a.option("--lease") ?? "15m", option: "--lease")
        guard lease >= 3 else { throw UsageError("--lease must be at least 3 s") }
    }

    /// `somni recover` with the folder or store this night is in (without them, it looks in the
    /// default store's and says there is nothing to close) and the lock the night was recorded
    /// under, ready to paste into a shell.
    var recoverCommand: String {
        var words = ["somni", "recover"]
        if let out { words += ["--out", out] } else if let store { words += ["--store", store] }
        if let lockPath { words += ["--lock", lockPath] }
        return words.map(shellWord).joined(separator: " ")
    }

    /// Where nights are recorded: --out, or the store's recording/ folder.
    var root: URL {
        if let out { return URL(fileURLWithPath: out, isDirectory: true) }
        return NightStore.defaultDirectory(explicit: store).appendingPathComponent("recording", isDirectory: true)
    }

    /// Removes night folders a recorder claimed and never began (killed at once, before its
    /// journal): no journal, nothing but empty folders and files of a header at most (64 bytes),
    /// unheld, and untouched for a minute. They stayed for good.
    func removeAbandonedFolders() {
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: root.path)) ?? [] where name.hasPrefix("night-") {
            let folder = root.appendingPathComponent(name, isDirectory: true)
            guard !fm.fileExists(atPath: folder.appendingPathComponent(NightJournal.fileName).path),
                  let entries = try? fm.subpathsOfDirectory(atPath: folder.path) else { continue }
            let items = ([folder.path] + entries.map { folder.appendingPathComponent($0).path }).map { try? fm.attributesOfItem(atPath: $0) }
            let untouched = items.allSatisfy { item in
                guard let item, let changed = item[.modificationDate] as? Date, Date().timeIntervalSince(changed) > 60 else { return false }
                return item[.type] as? FileAttributeType == .typeDirectory
                    || (item[.type] as? FileAttributeType == .typeRegular && (item[.size] as? Int ?? .max) <= 64)
            }
            guard untouched, let held = try? NightFolderClaim(folder) else { continue }
            withExtendedLifetime(held) { try? fm.removeItem(at: folder) }
        }
    }

    /// Opens the store (when nights go into one), which puts back in recording/ a night that a
    /// save that died left in its staging folder; a store that cannot open is left to the save.
    func sweepStore() {
        let directory = NightStore.defaultDirectory(explicit: store)
        guard out == nil, FileManager.default.fileExists(atPath: directory.appendingPathComponent(NightStore.databaseName).path) else { return }
        _ = try? NightStore(directory: directory)
    }

    /// These options for a night folder named to `recover`: one outside the store's recording/
    /// folder is a bare night (`record --out`), closed where it is; it was moved into the store.
    func keeping(_ folder: URL) -> RecordingOptions {
        guard out == nil else { return self }
        let parent = folder.standardizedFileURL.deletingLastPathComponent().resolvingSymlinksInPath().path
        guard parent != root.standardizedFileURL.resolvingSymlinksInPath().path else { return self }
        var bare = self
        bare.out = folder.standardizedFileURL.deletingLastPathComponent().path
        return bare
    }

    /// An analysed night left in the store's recording/ folder (its save failed, or died and
    /// the store put it back) saved now; what became of it, or nil with --out (where an analysed
    /// night is at its end). One a save that died after its commit left behind is removed.
    func saveAnalysed(_ folder: URL) throws -> String? {
        NightCloser.removeMasterOnceAnalysed(in: folder)  // a process killed just before it could
        guard out == nil else { return nil }
        let store = try NightStore(directory: NightStore.defaultDirectory(explicit: store))
        do {
            let record = try store.add(nightFolder: folder, moving: true, unlessStored: true)
            return "saved in the night store as \(record.id)"
        } catch let stored as NightStore.AlreadyStored {
            try? FileManager.default.removeItem(at: folder)
            return "already in the night store as \(stored.night.id); this copy was removed"
        }
    }

    /// Moves an analysed night into the store (unless --out asked for a bare folder); returns
    /// where the night now is and its id in the store.
    @discardableResult
    func save(_ folder: URL) throws -> (folder: URL, id: String?) {
        guard out == nil else { return (folder, nil) }
        do {
            // Opened here too: a store that cannot open (a full disk) must still say where the night is.
            let store = try NightStore(directory: NightStore.defaultDirectory(explicit: store))
            let record = try store.add(nightFolder: folder, moving: true)
            return (store.folder(of: record), record.id)
        } catch {
            throw SomniError(.io, "the night was analysed but could not be saved in the store; it is in \(folder.path)",
                             cause: error)
        }
    }

    var lockURL: URL { URL(fileURLWithPath: lockPath ?? "/tmp/somni-record.lock") }

    func takeLock(nightFolder: URL) throws -> RecordingLock {
        try RecordingLock(url: lockURL, nightFolder: nightFolder, pid: LocalProcess.id, lease: lease,
                          heartbeatInterval: lease / 3, processAlive: LocalProcess.isAlive)
    }

    /// The morning step: the night-mode master through the morning pipeline, into the night folder.
    @discardableResult
    static func close(_ folder: URL, classifier: ClassifierChoice, sensitivity: Int, recovered: Bool,
                      analysed: () -> Void = {}) throws -> Session {
        switch classifier {
        case .heuristic(let c): return try close(folder, classifier: c, sensitivity: sensitivity, recovered: recovered, analysed: analysed)
        case .learned(let c): return try close(folder, classifier: c, sensitivity: sensitivity, recovered: recovered, analysed: analysed)
        }
    }

    private static func close<C: SoundClassifier>(_ folder: URL, classifier: C, sensitivity: Int, recovered: Bool,
                                                  analysed: () -> Void) throws -> Session {
        try NightCloser.close(folder: folder, classifierName: classifier.name, sensitivity: sensitivity,
                              recovered: recovered, analysed: analysed) { master, folder, journal in
            var analyzer = NightAnalyzer(classifier: classifier, sensitivity: sensitivity, clipEncoder: MP3ClipEncoder())
            return try analyzer.analyze(source: SourceWithKnownGaps(AudioDecoder(url: master), gaps: journal.gaps), sourceName: "microphone",
                                        started: journal.startDate.map { RecordingStart(date: $0, origin: .recorder) },
                                        into: folder)
        }
    }

    /// "8h", "90m", "7h30m", "45s", "1.5h" or plain seconds.
    static func seconds(_ text: String, option: String) throws -> Double {
        if let plain = Arguments.decimal(text) { return plain }
        var total = 0.0
        var number = ""
        for ch in text {
            if ch.isNumber || ch == "." { number.append(ch); continue }
            guard let value = Double(number), let unit = ["h": 3600.0, "m": 60, "s": 1][String(ch)] else {
                throw UsageError("\(option) takes a duration like 8h, 90m, 7h30m or 45s, not '\(text)'")
            }
            total += value * unit
            number = ""
        }
        guard number.isEmpty, !text.isEmpty else {
            throw UsageError("\(option) takes a duration like 8h, 90m, 7h30m or 45s, not '\(text)'")
        }
        return total
    }

    /// Seconds from now until the next time the local clock shows HH:MM.
    static func secondsUntil(_ text: String, now: Date = Date()) throws -> Double {
        let parts = text.split(separator: ":").map { Int($0) }
        guard parts.count == 2, let h = parts[0], let m = parts[1], (0..<24).contains(h), (0..<60).contains(m) else {
            throw UsageError("--until takes a local time HH:MM, not '\(text)'")
        }
        let calendar = Calendar.current
        guard let next = calendar.nextDate(after: now, matching: DateComponents(hour: h, minute: m, second: 0),
                                           matchingPolicy: .nextTime) else {
            throw UsageError("--until \(text) does not occur in the next day")
        }
        let seconds = next.timeIntervalSince(now)
        // A restart just after waking time must not record for another day.
        guard seconds <= 16 * 3600 else {
            // To the minute: "16 h away" for 16 h 59 min read as within the limit it broke.
            let minutes = Int((seconds / 60).rounded(.up))
            throw UsageError("--until \(text) is \(minutes / 60) h \(minutes % 60) min away; with --until a night lasts at most 16 h")
        }
        return seconds
    }

    static func folderStamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd'T'HHmmss"
        return f.string(from: date)
    }
}

/// On a terminal: one line redrawn in place (elapsed, level, top label, episodes). Otherwise a
/// structured log on standard error: a status line every 5 minutes of night and every note.
final class LiveLine: @unchecked Sendable {
    let terminal: Bool
    private var lastDraw = Date.distantPast
    private var lastLogged = -Double.infinity
    private var drawn = false

    init(terminal: Bool) { self.terminal = terminal }

    func show(_ event: RecorderEvent) {
        switch event {
        case .status(let s):
            if terminal {
                guard Date().timeIntervalSince(lastDraw) >= 0.25 else { return }
                lastDraw = Date()
                let label = (s.topLabel.map { String(format: "%@ %.2f", $0, s.topConfidence) } ?? "listening")
                    .padding(toLength: 16, withPad: " ", startingAt: 0)
                var text = String(format: "\r%@  %6.1f dBFS  %@  episodes %d", NightSummaryText.clock(s.elapsed),
                                  s.levelDBFS, label, s.episodes)
                if s.gaps > 0 { text += "  gaps \(s.gaps)" }
                if s.audioStopped { text += "  AUDIO NOT SAVED" }
                writeToStandardError(text + "\u{1B}[K")
                drawn = true
            } else if s.elapsed - lastLogged >= 300 {
                lastLogged = s.elapsed
                var fields = [("event", "status"), ("elapsed_s", String(format: "%.0f", s.elapsed)),
                              ("level_dbfs", String(format: "%.1f", s.levelDBFS)), ("episodes", "\(s.episodes)"),
                              ("gaps", "\(s.gaps)"), ("audio_saved", s.audioStopped ? "no" : "yes")]
                if let label = s.topLabel { fields += [("top", label), ("confidence", String(format: "%.2f", s.topConfidence))] }
                logFields(fields)
            }
        case .note(let message):
            log(message)
        }
    }

    func log(_ message: String) {
        if terminal {
            end()
            printError("somni record: \(message)")
        } else {
            logFields([("event", "note"), ("message", message)])
        }
    }

    /// Leaves the redrawn line so the next output starts on a fresh one.
    func end() {
        if drawn { writeToStandardError("\n"); drawn = false }
    }

    private func logFields(_ fields: [(String, String)]) {
        let time = ISO8601DateFormatter().string(from: Date())
        let text = fields.map { key, value in
            value.contains(" ") || value.contains("\"") ? "\(key)=\"\(value.replacingOccurrences(of: "\"", with: "'"))\"" : "\(key)=\(value)"
        }.joined(separator: " ")
        printError("time=\(time) \(text)")
    }
}

