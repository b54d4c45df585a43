import Foundation
import SomniAudio
import SomniCore
import Testing

/// `somni analyze` driven as a person would drive it: through the built binary.
@Suite struct AnalyzeCommandTests {
    /// `classify` hears a recording without its mains hum, as `analyze` does, and says so.
    @Test func classifyTakesMainsHumOutAsAnalyzeDoes() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let hummed = dir.appendingPathComponent("hum.wav"), plain = dir.appendingPathComponent("plain.wav")
        try #require(try CLI.run(["synth", "--out", hummed.path, "--hours", "0.02", "--seed", "5", "--hum", "50", "--hum-level", "-40"]).status == 0)
        try #require(try CLI.run(["synth", "--out", plain.path, "--hours", "0.02", "--seed", "5"]).status == 0)
        func windows(_ url: URL) throws -> (stderr: String, scores: [[String: Any]]) {
            let r = try CLI.run(["classify", url.path, "--json"])
            #expect(r.status == 0, "\(r.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            return (r.stderr, try #require(json["windows"] as? [[String: Any]]))
        }
        let (said, heard) = try windows(hummed)
        let (plainSaid, plainHeard) = try windows(plain)
        #expect(said.contains("mains hum (50.0 Hz, about -40 dBFS, from the start)"), "\(said)")
        #expect(!plainSaid.contains("mains hum"))
        #expect(heard.count == plainHeard.count)
        // Each window's top label is the one it has without the hum, nearly everywhere.
        let same = zip(heard, plainHeard).filter { a, b in
            ((a["labels"] as? [[String: Any]])?.first?["label"] as? String) == ((b["labels"] as? [[String: Any]])?.first?["label"] as? String)
        }.count
        #expect(Double(same) >= 0.9 * Double(heard.count), "\(same) of \(heard.count) windows")
    }

    /// Writes `seconds` of a generated signal to a 16 kHz WAV.
    func writeWAV(_ url: URL, seconds: Double, _ sample: (Int) -> Float) throws {
        let n = Int(seconds * Double(analysisSampleRate))
        let samples = (0..<n).map(sample)
        let writer = try WAVWriter(url: url)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
    }

    /// A bad input must give one clear error line, a non-zero exit, and no night folder at all.
    func expectRejected(_ input: URL, mentioning words: [String], in dir: URL) throws {
        let out = dir.appendingPathComponent("night")
        let r = try CLI.run(["analyze", input.path, "--out", out.path])
        #expect(r.status != 0)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "expected one error line, got: \(r.stderr)")
        for w in words { #expect(r.stderr.lowercased().contains(w), "\(r.stderr) should mention \(w)") }
        #expect(!FileManager.default.fileExists(atPath: out.path))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("partial") }
        #expect(leftovers.isEmpty, "half-written folders left: \(leftovers)")
    }

    /// Ctrl-C (and TERM, HUP) part-way through writing a night to --out removes its unfinished
    /// hidden folder: it was left for a later run to sweep six hours on.
    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptedAnalysisLeavesNoUnfinishedFolder(signal number: Int32) throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        let synth = try CLI.run(["synth", "--out", audio.path, "--hours", "0.5", "--seed", "3"])
        try #require(synth.status == 0, "\(synth.stderr)")
        let outs = dir.appendingPathComponent("outs")
        try FileManager.default.createDirectory(at: outs, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = CLI.executable
        p.arguments = ["analyze", audio.path, "--out", outs.appendingPathComponent("night").path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Once its working folder is there, it is writing the night.
        let deadline = Date() + 120
        while Date() < deadline, p.isRunning,
              (try FileManager.default.contentsOfDirectory(atPath: outs.path)).isEmpty {
            Thread.sleep(forTimeInterval: 0.02)
        }
        try #require(p.isRunning, "the analysis ended before it could be interrupted")
        kill(p.processIdentifier, number)
        p.waitUntilExit()
        #expect(p.terminationStatus == 128 + number, "\(p.terminationReason) \(p.terminationStatus)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outs.path) == [])
    }

    /// A signal the moment a night into the store is analysed (its folder in the store's
    /// incoming/, not yet saved) leaves neither it there nor half a night: the folder stayed in
    /// incoming/ until the next command swept it (26 of 30 such signals).
    @Test func aSignalBetweenAnalysisAndSaveLeavesNothingInIncoming() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        try #require(try CLI.run(["synth", "--out", audio.path, "--hours", "0.03", "--seed", "3"]).status == 0)
        // The folder is there for a few milliseconds: a run whose polling missed it is tried again.
        var caught = false
        for attempt in 1...5 where !caught {
            let store = dir.appendingPathComponent("store-\(attempt)")
            let incoming = store.appendingPathComponent("incoming")
            let p = Process()
            p.executableURL = CLI.executable
            p.arguments = ["analyze", audio.path, "--classifier", "heuristic", "--no-clips", "--store", store.path]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            func placed() -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: incoming.path)) ?? []).filter { !$0.hasPrefix(".") }
            }
            while p.isRunning {
                if !placed().isEmpty { kill(p.processIdentifier, SIGINT); caught = true; break }
                usleep(200)
            }
            p.waitUntilExit()
            #expect(placed().isEmpty, "left in incoming/: \(placed())")
            guard caught else { continue }
            // 0 if it had ended between the look and the signal.
            #expect(p.terminationStatus == 130 || p.terminationStatus == 0, "\(p.terminationStatus)")
            // Saved whole, or not at all: the store opens without a word of anything unfinished.
            let listed = try CLI.run(["nights", "--json", "--store", store.path])
            #expect(listed.status == 0 && listed.stderr.isEmpty, "\(listed.stderr)")
        }
        #expect(caught, "no run was seen between its analysis and its save")
    }

    /// A synthesised night interrupted part-way leaves neither its working file (0.9 GB for
    /// eight hours, which waited six hours for a later synth of its name) nor its reference.
    @Test func anInterruptedSynthesisLeavesNoWorkingFiles() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let p = Process()
        p.executableURL = CLI.executable
        p.arguments = ["synth", "--out", dir.appendingPathComponent("night.wav").path, "--hours", "4", "--seed", "3"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] }
        let deadline = Date() + 120
        while Date() < deadline, p.isRunning, !names().contains(where: { $0.hasPrefix(".night.wav.partial-") }) {
            Thread.sleep(forTimeInterval: 0.02)
        }
        try #require(p.isRunning, "the synthesis ended before it could be interrupted")
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationStatus == 128 + SIGTERM, "\(p.terminationReason) \(p.terminationStatus)")
        #expect(names() == [], "\(names())")
    }

    /// A batch stopped on its second recording stops there: that night's unfinished folder goes,
    /// the first night stays, and the first night's summary is out already, though standard
    /// output is a pipe. Before, the signal was ignored after the first night (the whole batch
    /// ran on, exit 0), and the summaries came only at the end. It says which recordings it
    /// never analysed, so that they can be given again.
    @Test func aBatchStoppedPartWayKeepsTheNightsSavedAndStops() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = dir.appendingPathComponent("first.wav"), second = dir.appendingPathComponent("second.wav")
        let third = dir.appendingPathComponent("--third night.wav")
        try #require(try CLI.run(["synth", "--out", first.path, "--hours", "0.02", "--seed", "3"]).status == 0)
        try #require(try CLI.run(["synth", "--out", second.path, "--hours", "0.5", "--seed", "4"]).status == 0)
        try FileManager.default.copyItem(at: first, to: third)
        let outs = dir.appendingPathComponent("outs")
        let p = Process()
        p.executableURL = CLI.executable
        // Named as a person in that folder would: the third, given after "--", is said as
        // "./--third night.wav", so that it can be given again without "--".
        p.currentDirectoryURL = dir
        p.arguments = ["analyze", "first.wav", "second.wav", "--out", outs.path, "--classifier", "heuristic", "--", "--third night.wav"]
        let output = Pipe(), errors = Pipe()
        p.standardOutput = output
        p.standardError = errors
        try p.run()
        let deadline = Date() + 120
        func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: outs.path)) ?? [] }
        while Date() < deadline, p.isRunning, !names().contains(where: { $0.hasPrefix(".second") }) {
            Thread.sleep(forTimeInterval: 0.02)
        }
        try #require(p.isRunning, "the batch ended before it could be interrupted")
        kill(p.processIdentifier, SIGINT)
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(said.contains("somni analyze: interrupted: 1 of 3 recordings analysed and kept; not analysed: "
                              + "second.wav \"./--third night.wav\"\n"), "\(said)")
        #expect(p.terminationStatus == 130, "\(p.terminationReason) \(p.terminationStatus)")
        #expect(names() == ["first"], "\(names())")
        #expect(printed.contains("Night of first.wav") && !printed.contains("Night of second.wav"), "\(printed)")
    }

    @Test func missingPathIsOneClearError() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try expectRejected(dir.appendingPathComponent("nope.m4a"), mentioning: ["no such file"], in: dir)
        // A file there whose name is Latin-1 ("caf" 0xE9): the shell hands its bytes over, Swift
        // reads them as "caf\u{FFFD}", which names nothing, and the error says why.
        let bytes = Array(dir.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(".wav".utf8) + [0]
        let made = bytes.withUnsafeBufferPointer { b in b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { creat($0, 0o644) } }
        #expect(made >= 0)
        close(made)
        try expectRejected(dir.appendingPathComponent("caf\u{FFFD}.wav"), mentioning: ["no such file", "not valid utf-8"], in: dir)
    }

    @Test func directoryIsRejected() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sub = dir.appendingPathComponent("folder.wav")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try expectRejected(sub, mentioning: ["folder"], in: dir)
    }

    @Test func zeroLengthFileIsRejected() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty.wav")
        #expect(FileManager.default.createFile(atPath: empty.path, contents: Data()))
        try expectRejected(empty, mentioning: ["empty"], in: dir)
    }

    /// A recording shorter than one classification window is refused, saying how long it is:
    /// it was stored as a night of 0:00:00 with no events and no word of why.
    @Test func aRecordingShorterThanAWindowIsRefused() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let short = dir.appendingPathComponent("short.wav")
        try writeWAV(short, seconds: 0.5) { Float(sin(Double($0) * 0.2)) * 0.3 }
        try expectRejected(short, mentioning: ["holds only 0.50 s of audio", "too short"], in: dir)
        // A moment (1 ms at 48 kHz) resamples to nothing: short too, not "not an audio file, or too damaged".
        let moment = dir.appendingPathComponent("moment.wav")
        let writer = try WAVWriter(url: moment, sampleRate: 48_000)
        try [Float](repeating: 0.1, count: 48).withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        try expectRejected(moment, mentioning: ["holds only 1 ms of audio, too short to analyse"], in: dir)
        // One window long, it is a night (of nothing much).
        let enough = dir.appendingPathComponent("enough.wav")
        try writeWAV(enough, seconds: 1) { Float(sin(Double($0) * 0.2)) * 0.3 }
        let r = try CLI.run(["analyze", enough.path, "--out", dir.appendingPathComponent("enough.night").path, "--no-clips"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// A named pipe is read as it comes, into a bare folder and into the store: it was refused
    /// as "empty (0 bytes)", its size being a pipe's.
    @Test func aNamedPipeIsReadAsItComes() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("night.wav")
        var rng = SeededRandom(seed: 11)
        try writeWAV(wav, seconds: 3) { _ in Float(rng.unit() - 0.5) * 0.02 }
        /// `file` written into a new named pipe by another program, as a recorder piping into it
        /// would (cat stops at EPIPE), while `somni analyze` reads the pipe, under a timeout: a
        /// reader that never came would leave the writer, and this, waiting.
        func analysePiped(_ file: URL, _ name: String, _ arguments: [String]) throws -> CLIResult {
            let fifo = dir.appendingPathComponent(name)
            #expect(mkfifo(fifo.path, 0o600) == 0)
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", "exec cat \"$0\" > \"$1\"", file.path, fifo.path]
            try writer.run()
            defer { if writer.isRunning { writer.terminate() } }
            return try CLI.run(executable: URL(fileURLWithPath: "/usr/bin/timeout"),
                               ["60", CLI.executable.path, "analyze", fifo.path] + arguments)
        }
        for (n, intoStore) in [false, true].enumerated() {
            let where_ = intoStore ? ["--store", dir.appendingPathComponent("store").path]
                                   : ["--out", dir.appendingPathComponent("pipe-\(n).night").path]
            let r = try analysePiped(wav, "pipe-\(n).wav", ["--no-clips", "--json"] + where_)
            #expect(r.status == 0, "\(intoStore ? "store" : "folder"): \(r.stderr)")
            let session = try? JSONDecoder().decode(Session.self, from: Data(r.stdout.utf8))
            #expect(abs((session?.duration ?? 0) - 3) < 0.05, "\(r.stdout.prefix(300))")
            // Whether a piped recording is stored already cannot be told: said, not skipped silently.
            #expect(r.stderr.contains("is read from a pipe") == intoStore, "\(r.stderr)")
        }
        // Not audio through a pipe: one error, from the one open (a second waited for a writer for ever).
        let text = dir.appendingPathComponent("notes.txt")
        try Data("hello, not a recording at all".utf8).write(to: text)
        let r = try analysePiped(text, "notes.wav", ["--out", dir.appendingPathComponent("notes.night").path])
        #expect(r.status == 65 && r.errorLines.count == 1 && r.stderr.contains("not an audio file"), "\(r.status): \(r.stderr)")
    }

    @Test func textAndRandomBytesAreNotAudio() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = dir.appendingPathComponent("notes.mp3")
        try Data(String(repeating: "this is not a recording\n", count: 200).utf8).write(to: text)
        try expectRejected(text, mentioning: ["not an audio file"], in: dir)
        var rng = SeededRandom(seed: 3)
        let noise = dir.appendingPathComponent("noise.m4a")
        try Data((0..<50_000).map { _ in UInt8.random(in: 0...255, using: &rng) }).write(to: noise)
        try expectRejected(noise, mentioning: ["audio"], in: dir)
    }

    @Test func unsupportedCodecIsRejected() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A WAV whose format tag names a codec no decoder exists for.
        let url = dir.appendingPathComponent("odd.wav")
        try writeWAV(url, seconds: 1) { Float(sin(Double($0) * 0.1)) * 0.3 }
        var bytes = try Data(contentsOf: url)
        bytes[20] = 0x34; bytes[21] = 0x12  // format tag 0x1234
        try bytes.write(to: url)
        try expectRejected(url, mentioning: ["odd.wav"], in: dir)
    }

    @Test func truncatedFileIsAnalysedUpToTheBreakWithAWarning() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cut.flac")
        let writer = try EncodedAudioWriter(url: url, format: .flac, sampleRate: analysisSampleRate)
        let samples = (0..<(analysisSampleRate * 60)).map { Float(sin(Double($0) * 0.05)) * 0.2 }
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        let whole = try Data(contentsOf: url)
        try whole.prefix(whole.count / 2).write(to: url)

        let out = dir.appendingPathComponent("cut.night")
        let r = try CLI.run(["analyze", url.path, "--out", out.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("ends early"), "\(r.stderr)")
        let session = try Session.load(from: out.appendingPathComponent("session.json"))
        #expect(session.duration > 20 && session.duration < 40, "read \(session.duration) s of a 60 s file cut in half")
        #expect(session.warnings.contains { $0.contains("ends early") })
    }

    /// A phone's night cut off by a flat battery: an M4A of audio frames with no index after
    /// them. Without --like, one clear error that says what to add; with it, the night as far
    /// as it was recorded, dated from the file's name as before (its creation time was in the
    /// lost index).
    @Test func aNightCutOffBeforeItsIndexIsReadWithACompleteRecordingLikeIt() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let complete = dir.appendingPathComponent("Recording_20261127_230000.m4a")
        let writer = try EncodedAudioWriter(url: complete, format: .m4a, sampleRate: 48_000)
        let samples = (0..<(48_000 * 40)).map { (index: Int) -> Float in
            let level: Float = 0.05 + 0.2 * Float(index / 48_000 % 3)  // steps each second
            return level * Float(sin(Double(index) * 0.05))
        }
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        // ftyp, then the frames, cut two thirds in, as the recorder left them: no moov.
        let bytes = try Data(contentsOf: complete)
        var boxes: [String: Range<Int>] = [:]
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            boxes[String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)] = offset..<offset + size
            offset += size
        }
        let ftyp = try #require(boxes["ftyp"]), mdat = try #require(boxes["mdat"])
        let cut = dir.appendingPathComponent("Recording_20261128_231402.m4a")
        try (bytes[ftyp] + bytes[mdat].prefix(mdat.count * 2 / 3)).write(to: cut)

        try expectRejected(cut, mentioning: ["cut off before its index", "--like"], in: dir)

        let out = dir.appendingPathComponent("cut.night")
        let r = try CLI.run(["analyze", cut.path, "--like", complete.path, "--out", out.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("its audio was read from its frames, with the settings of Recording_20261127_230000.m4a"), "\(r.stderr)")
        let session = try Session.load(from: out.appendingPathComponent("session.json"))
        #expect(abs(session.duration - 26.7) < 2, "read \(session.duration) s of 40 s cut two thirds in")
        #expect(session.startedAt?.hasPrefix("2026-11-28T23:14:02") == true, "\(session.startedAt ?? "undated")")

        // 'somni classify' reads the same file the same way.
        let refused = try CLI.run(["classify", cut.path, "--json"])
        #expect(refused.status == 65 && refused.errorLines.count == 1 && refused.stderr.contains("--like"), "\(refused.stderr)")
        let classified = try CLI.run(["classify", cut.path, "--like", complete.path, "--json"])
        #expect(classified.status == 0, "\(classified.stderr)")
        let windows = try #require(try JSONSerialization.jsonObject(with: Data(classified.stdout.utf8)) as? [String: Any])["windows"] as? [[String: Any]]
        let lastEnd = try #require(windows?.last?["end"] as? Double)
        #expect(abs(lastEnd - session.duration) < 1, "classify's windows end at \(lastEnd) s, the analysis at \(session.duration) s")

        // A --like that is not there is said at once, also for a file that would not need it.
        let missing = dir.appendingPathComponent("no-such.m4a").path
        for arguments in [["analyze", complete.path, "--like", missing, "--out", dir.appendingPathComponent("x.night").path],
                          ["classify", complete.path, "--like", missing], ["analyze", complete.path, "--like", dir.path, "--out", dir.appendingPathComponent("y.night").path]] {
            let r = try CLI.run(arguments)
            #expect(r.status == 65 && r.errorLines.count == 1 && r.stderr.contains("--like"), "\(arguments): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.night").path))
    }

    @Test func aRecordingMadeAt8kHzGetsTheNarrowBandModelAndAWarning() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededRandom(seed: 12)
        func analysed(recordedAt rate: Int, _ extra: [String] = []) throws -> (Session, String) {
            let url = dir.appendingPathComponent("\(rate)-\(extra.count).wav")
            let writer = try WAVWriter(url: url, sampleRate: rate)
            let samples = (0..<(rate * 20)).map { i in 0.02 * rng.nextGaussian() + 0.1 * Float(sin(Double(i) * 0.2)) }
            try samples.withUnsafeBufferPointer { try writer.write($0) }
            try writer.finish()
            let out = dir.appendingPathComponent("\(rate)-\(extra.count).night")
            let r = try CLI.run(["analyze", url.path, "--out", out.path, "--no-clips"] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            return (try Session.load(from: out.appendingPathComponent("session.json")), r.stderr)
        }
        let (telephone, said) = try analysed(recordedAt: 8_000)
        #expect(telephone.settings.classifier.contains("narrow-band"), "\(telephone.settings.classifier)")
        #expect(telephone.warnings.contains { $0.hasPrefix("the recording was made at 8000 Hz and holds no sound above 4.0 kHz") })
        #expect(said.contains("warning: the recording was made at 8000 Hz"))
        let (wide, _) = try analysed(recordedAt: 16_000)
        #expect(!wide.settings.classifier.contains("narrow-band") && wide.settings.classifier.hasPrefix("somni-cnn"))
        #expect(wide.warnings.isEmpty)
        // A model the user names is used whatever the rate; the warning stays.
        let models = CNNClassifier.bundledModelURLs
        #expect(models.count == 2)
        let (chosen, _) = try analysed(recordedAt: 8_000, models.flatMap { ["--model", $0.path] })
        #expect(chosen.settings.classifier == wide.settings.classifier)
        #expect(chosen.warnings.count == 1)
    }

    /// Also when the silence sits on a DC offset (a dead microphone behind a sound card that
    /// adds one): a constant is not sound.
    @Test(arguments: [Float(0), 0.02])
    func silentRecordingIsAnalysedAndWarnsAboutTheMicrophone(dcOffset: Float) throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("silent.wav")
        var rng = SeededRandom(seed: 9)
        try writeWAV(url, seconds: 120) { _ in dcOffset + Float(rng.unit() - 0.5) * 2e-5 }
        let out = dir.appendingPathComponent("silent.night")
        let r = try CLI.run(["analyze", url.path, "--out", out.path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("microphone"))
        let session = try JSONDecoder().decode(Session.self, from: Data(r.stdout.utf8))
        #expect(session.events.isEmpty)
        #expect(abs(session.duration - 120) < 0.1)
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("envelope.bin").path))
        // One of several: the warning names its file, as an error does (it did with --json only).
        let quiet = dir.appendingPathComponent("quiet.wav")
        try FileManager.default.copyItem(at: url, to: quiet)
        let batch = try CLI.run(["analyze", url.path, quiet.path, "--out", dir.appendingPathComponent("batch").path, "--no-clips"])
        #expect(batch.status == 0, "\(batch.stderr)")
        for file in [url, quiet] {
            #expect(batch.errorLines.contains { $0.hasPrefix("somni analyze: \(file.path): warning: ") && $0.contains("microphone") },
                    "\(batch.stderr)")
        }
    }

    @Test func existingDestinationIsNotOverwritten() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("a.wav")
        try writeWAV(url, seconds: 5) { _ in 0 }
        let out = dir.appendingPathComponent("kept")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: out.appendingPathComponent("precious.txt"))
        let r = try CLI.run(["analyze", url.path, "--out", out.path])
        #expect(r.status != 0)
        #expect(try String(contentsOf: out.appendingPathComponent("precious.txt"), encoding: .utf8) == "mine")
    }

    @Test func badOptionsAreUsageErrors() throws {
        let r = try CLI.run(["analyze", "x.wav", "--sensitivity", "11"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--sensitivity"))
        // The commands that analyse a night take the same levels, checked the same way.
        for command in [["record", "--for", "1m"], ["recover"]] {
            for level in ["0", "11", "five"] {
                let bad = try CLI.run(command + ["--sensitivity", level])
                #expect(bad.status == 64 && bad.errorLines.count == 1 && bad.stderr.contains("--sensitivity"), "\(command) \(level): \(bad.stderr)")
            }
        }
        // A capture rate the recorder cannot convert from is refused before a microphone opens
        // (8000 passed, and failed once the device was open).
        for rate in ["8000", "15999", "400000"] {
            let bad = try CLI.run(["record", "--for", "1m", "--rate", rate])
            #expect(bad.status == 64 && bad.errorLines.count == 1 && bad.stderr.contains("--rate must be 16000…384000"), "\(rate): \(bad.stderr)")
        }
        // A bare folder and the store at once: one would be ignored.
        let both = try CLI.run(["analyze", "x.wav", "--out", "night", "--store", "store"])
        #expect(both.status == 64 && both.stderr.contains("give --out or --store, not both"), "\(both.stderr)")
    }

    /// A `somni` installed on its own (`install .build/release/somni ~/.local/bin`), or reached
    /// through a link, finds its models: beside it, else where it was built.
    @Test func anInstalledCopyOrALinkFindsTheModels() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededRandom(seed: 8)
        try writeWAV(dir.appendingPathComponent("hiss.wav"), seconds: 3) { _ in Float(rng.unit() - 0.5) * 0.1 }
        let copy = dir.appendingPathComponent("bin/somni"), link = dir.appendingPathComponent("link/somni")
        for folder in [copy, link] {
            try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(at: CLI.executable, to: copy)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: CLI.executable)
        for program in [copy, link] {
            let r = try CLI.run(executable: program, ["classify", "hiss.wav", "--top", "1", "--json"], in: dir)
            #expect(r.status == 0 && r.stdout.contains("\"windows\""), "\(program.path): \(r.stderr)")
        }
    }

    /// `--` ends the options, as everywhere: a file whose name begins with two dashes is read.
    @Test func aDoubleDashEndsTheOptions() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededRandom(seed: 4)
        try writeWAV(dir.appendingPathComponent("--odd.wav"), seconds: 5) { _ in Float(rng.unit() - 0.5) * 0.01 }
        let r = try CLI.run(["analyze", "--out", "odd.night", "--no-clips", "--json", "--", "--odd.wav"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Session.load(from: dir.appendingPathComponent("odd.night/session.json")).source == "--odd.wav")
        // A file named as the help flags is a file there too, not a call for help.
        try FileManager.default.copyItem(at: dir.appendingPathComponent("--odd.wav"), to: dir.appendingPathComponent("-h"))
        let named = try CLI.run(["analyze", "--out", "h.night", "--no-clips", "--", "-h"], in: dir)
        #expect(named.status == 0 && !named.stdout.contains("Usage:"), "\(named.stdout)")
        #expect(try Session.load(from: dir.appendingPathComponent("h.night/session.json")).source == "-h")
        #expect(try CLI.run(["analyze", "-h", "--", "x.wav"], in: dir).stdout.contains("Usage:"))
        let none = try CLI.run(["analyze", "--out", "none.night", "--"], in: dir)
        #expect(none.status == 64 && none.stderr.contains("missing FILE"), "\(none.stderr)")
        let dashed = try CLI.run(["analyze", "x.wav", "--odd.wav"], in: dir)
        #expect(dashed.status == 64 && dashed.stderr.contains("goes after --"), "\(dashed.stderr)")
        let extra = try CLI.run(["nights", "--", "x"], in: dir)
        #expect(extra.status == 64 && extra.stderr.contains("unexpected argument 'x'"), "\(extra.stderr)")
    }

    @Test func anOptionGivenTwiceIsNamedAsSuch() throws {
        for twice in [["--sensitivity", "3", "--sensitivity", "4"], ["--sensitivity=3", "--sensitivity", "4"],
                      ["--json", "--json"]] {
            let r = try CLI.run(["analyze", "x.wav"] + twice)
            #expect(r.status == 64)
            #expect(r.stderr.contains("\(twice[0].prefix { $0 != "=" }) is given more than once"), "\(twice): \(r.stderr)")
        }
        let r = try CLI.run(["analyze", "x.wav", "--sensitivty", "3"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unexpected argument '--sensitivty'"), "\(r.stderr)")
    }
}

/// `--no-clips`: the same events and summary, no clips written or named.
@Suite struct AnalyzeWithoutClipsTests {
    @Test func noClipsGivesTheSameEventsAndNoClipFolder() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        #expect(try CLI.run(["synth", "--out", audio.path, "--hours", "0.05", "--seed", "6"]).status == 0)
        let with = dir.appendingPathComponent("with.night"), without = dir.appendingPathComponent("without.night")
        let a = try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--out", with.path])
        let b = try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--out", without.path, "--no-clips"])
        #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
        let kept = try Session.load(from: with.appendingPathComponent("session.json"))
        let bare = try Session.load(from: without.appendingPathComponent("session.json"))
        #expect(!kept.events.isEmpty && kept.events.allSatisfy { $0.clip != nil })
        #expect(bare.events.map { [$0.start, $0.end] } == kept.events.map { [$0.start, $0.end] })
        #expect(bare.events.allSatisfy { $0.clip == nil })
        #expect(!FileManager.default.fileExists(atPath: without.appendingPathComponent("clips").path))
        #expect(FileManager.default.fileExists(atPath: without.appendingPathComponent("envelope.bin").path))
    }
}

/// Without --out a night lands in the store, where the other commands find it.
@Suite struct AnalyzeIntoStoreTests {
    @Test func severalRecordingsAreAnalysedOneAfterAnotherAndABadOneStopsNoOther() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = dir.appendingPathComponent("night.wav"), second = dir.appendingPathComponent("b/night.wav")
        try FileManager.default.createDirectory(at: second.deletingLastPathComponent(), withIntermediateDirectories: true)
        for (url, seed) in [(first, 5), (second, 6)] { try CLI.synthesiseShortNight(at: url, seed: seed) }
        let bad = dir.appendingPathComponent("notes.wav")
        try Data("not audio at all".utf8).write(to: bad)

        // Into folders under --out: one per recording, named after it (numbered when two share a
        // name); the bad one is named in one error line, the others are analysed, the exit says so.
        let out = dir.appendingPathComponent("nights")
        let r = try CLI.run(["analyze", first.path, bad.path, second.path, "--out", out.path,
                             "--classifier", "heuristic", "--no-clips"])
        #expect(r.status == 65, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(r.stderr)")
        #expect(lines.first?.contains("\(bad.path): error: not an audio file") == true, "\(r.stderr)")
        #expect(lines.last?.contains("1 of 3 recordings could not be analysed: \(bad.path)") == true, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["night", "night-2"])
        let sessions = try ["night", "night-2"].map {
            try Session.load(from: out.appendingPathComponent($0).appendingPathComponent(Session.fileName))
        }
        // Each folder holds its own recording's night: the two synthesised nights differ.
        #expect(sessions.allSatisfy { $0.source == "night.wav" && abs($0.duration - 180) < 0.1 })
        #expect(sessions[0].events.map(\.start) != sessions[1].events.map(\.start))

        // Into the store, as JSON: one array, a session per recording, every night listed.
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        let j = try CLI.run(["analyze", first.path, second.path, "--json", "--classifier", "heuristic", "--no-clips"],
                            environment: store)
        #expect(j.status == 0, "\(j.stderr)")
        let array = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]]
        #expect(array?.count == 2)
        let listed = try JSONSerialization.jsonObject(with: Data(try CLI.run(["nights", "--json"], environment: store).stdout.utf8))
        #expect((listed as? [Any])?.count == 2)
    }

    @Test func aFullDiskIsOneClearErrorAndLosesNothingSaved() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)

        // A bare night folder: the envelope (7 KB) cannot be written; nothing half-written is left.
        let out = dir.appendingPathComponent("night")
        let bare = try CLI.run(["analyze", audio.path, "--out", out.path, "--classifier", "heuristic"], fileSizeLimitKiB: 4)
        #expect(bare.status == 74)
        #expect(bare.errorLines.count == 1, "\(bare.stderr)")
        #expect(bare.stderr.contains("envelope.bin: file too large"), "\(bare.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["night.csv", "night.wav"])

        // The store: a night saved before is untouched whichever write fails.
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        #expect(try CLI.run(["analyze", audio.path, "--classifier", "heuristic"], environment: store).status == 0)
        let before = try CLI.run(["nights", "--json"], environment: store).stdout
        // Another recording (the same one would be found stored and not analysed again).
        let other = dir.appendingPathComponent("other.wav")
        try CLI.synthesiseShortNight(at: other, seed: 6)
        // 8 KiB: SQLite cannot map its 32 KiB shared-memory file, so the store refuses to open.
        let closed = try CLI.run(["analyze", other.path, "--classifier", "heuristic"], environment: store, fileSizeLimitKiB: 8)
        #expect(closed.status == 74)
        #expect(closed.errorLines.count == 1, "\(closed.stderr)")
        // Said before any decoding, with the system's own reason and the way to make room.
        #expect(closed.stderr.contains("no room to write to the night store") && closed.stderr.contains("'somni delete NIGHT'")
                && closed.stderr.hasSuffix(": file too large\n"), "\(closed.stderr)")
        // 34 KiB: the store opens and the night is analysed, but the transaction that adds it
        // cannot grow the write-ahead log. The analysed night is kept where the error says, a
        // later command does not sweep it away, and `somni import` adds it once there is room.
        let full = try CLI.run(["analyze", other.path, "--classifier", "heuristic"], environment: store, fileSizeLimitKiB: 34)
        #expect(full.status == 74)
        #expect(full.errorLines.count == 1, "\(full.stderr)")
        #expect(full.stderr.contains("could not be saved in the store"), "\(full.stderr)")
        let keptPath = try #require(full.stderr.components(separatedBy: "it is kept in ").dropFirst().first?
            .components(separatedBy: ":").first, "\(full.stderr)")
        #expect(try CLI.run(["nights", "--json"], environment: store).stdout == before)
        #expect(FileManager.default.fileExists(atPath: URL(fileURLWithPath: keptPath).appendingPathComponent(Session.fileName).path))
        let imported = try CLI.run(["import", keptPath, "--move"], environment: store)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: keptPath))
        let after = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout)
        let earlier = try CLI.nightIDs(before)
        #expect(after.count == 2 && Set(earlier).isSubset(of: after), "\(after)")

        // Analysed again with --replace and not saved: the command given puts it in the earlier
        // analysis's place (without --replace, import refused it as already stored).
        let again = try CLI.run(["analyze", other.path, "--classifier", "heuristic", "--replace", "--sensitivity", "7"],
                                environment: store, fileSizeLimitKiB: 34)
        #expect(again.status == 74 && again.stderr.contains("--move --replace' adds it later"), "\(again.stderr)")
        let keptAgain = try #require(again.stderr.components(separatedBy: "it is kept in ").dropFirst().first?
            .components(separatedBy: ":").first, "\(again.stderr)")
        let replaced = try CLI.run(["import", keptAgain, "--move", "--replace"], environment: store)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout).count == 2)
    }

    /// A batch run again over a folder adds only its new recordings; --replace analyses one again
    /// (new settings) and puts the new night in the old one's place.
    /// Two analyses of one recording at once (a batch started twice, a cron job and a person)
    /// save it once: the one that commits second finds the first's night, as it would run after it.
    @Test func oneRecordingAnalysedTwiceAtOnceIsStoredOnce() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let night = dir.appendingPathComponent("Recording_20261128_231402.wav")
        try CLI.synthesiseShortNight(at: night)
        let env = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        final class Results: @unchecked Sendable { var all: [CLIResult?] = [nil, nil] }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            results.all[i] = try? CLI.run(["analyze", night.path, "--classifier", "heuristic", "--no-clips"], environment: env)
        }
        let outputs = results.all.compactMap { $0 }
        #expect(outputs.count == 2 && outputs.allSatisfy { $0.status == 0 }, "\(outputs.map(\.stderr))")
        // The second either found the night before analysing, or was beaten to the store and says so.
        #expect(outputs.filter { $0.stdout.contains("is already in the night store as 20261128-2314")
                    || $0.stdout.contains("was saved in the night store as 20261128-2314 by another somni while this one analysed it")
                }.count == 1, "\(outputs.map(\.stdout))")
        let listed = try JSONSerialization.jsonObject(with: Data(try CLI.run(["nights", "--json"], environment: env).stdout.utf8))
        #expect((listed as? [[String: Any]])?.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("store/incoming").path).isEmpty)
    }

    @Test func aRecordingAlreadyStoredIsNotAnalysedAgainUnlessReplaced() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = dir.appendingPathComponent("Recording_20261128_231402.wav")
        let second = dir.appendingPathComponent("Recording_20261129_230510.wav")
        for (url, seed) in [(first, 5), (second, 6)] { try CLI.synthesiseShortNight(at: url, seed: seed) }
        let store = dir.appendingPathComponent("store")
        let env = ["SOMNI_STORE": store.path]
        func nights() throws -> [[String: Any]] {
            try JSONSerialization.jsonObject(with: Data(try CLI.run(["nights", "--json"], environment: env).stdout.utf8))
                as? [[String: Any]] ?? []
        }
        func storedFolders() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: store.appendingPathComponent("nights").path).sorted()
        }
        let options = ["--classifier", "heuristic", "--no-clips"]
        #expect(try CLI.run(["analyze", first.path] + options, environment: env).status == 0)
        let firstID = try #require(nights().first?["id"] as? String)

        let again = try CLI.run(["analyze", first.path, second.path] + options, environment: env)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("Recording_20261128_231402.wav is already in the night store as \(firstID)"), "\(again.stdout)")
        #expect(again.stdout.components(separatedBy: "Saved in the night store as").count == 2, "\(again.stdout)")
        #expect(try nights().count == 2)

        // As JSON: the stored night's session, and a note on standard error.
        let json = try CLI.run(["analyze", first.path, "--json"] + options, environment: env)
        #expect(json.status == 0 && json.stderr.contains("already in the night store"), "\(json.stderr)")
        #expect(try JSONDecoder().decode(Session.self, from: Data(json.stdout.utf8)).source == first.lastPathComponent)

        let replaced = try CLI.run(["analyze", first.path, "--replace", "--sensitivity", "8"] + options, environment: env)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stdout.contains("It replaces the earlier analysis of this recording, and keeps its id."), "\(replaced.stdout)")
        let after = try nights()
        #expect(after.count == 2)
        let firstNow = try #require(after.first { $0["source"] as? String == first.lastPathComponent })
        let newID = try #require(firstNow["id"] as? String)
        #expect(newID == firstID, "a night analysed again keeps its id")
        let session = try Session.load(from: store.appendingPathComponent("nights/\(newID)/\(Session.fileName)"))
        #expect(session.settings.sensitivity == 8)
        // The old night's folder went with it; only the two nights' folders are there.
        #expect(try storedFolders() == after.compactMap { $0["id"] as? String }.sorted())

        #expect(try CLI.run(["analyze", first.path, "--replace", "--out", dir.appendingPathComponent("bare").path] + options,
                            environment: env).status == 64)
        // An undated recording is known by its content: stored once, then found.
        let undated = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: undated, seed: 7)
        #expect(try CLI.run(["analyze", undated.path] + options, environment: env).status == 0)
        let undatedAgain = try CLI.run(["analyze", undated.path] + options, environment: env)
        #expect(undatedAgain.status == 0 && undatedAgain.stdout.contains("night.wav is already in the night store"),
                "\(undatedAgain.stdout)")
        // ... and so is a dated one renamed.
        let renamed = dir.appendingPathComponent("copy of Recording_20261128_231402.wav")
        try FileManager.default.copyItem(at: first, to: renamed)
        #expect(try CLI.run(["analyze", renamed.path, "--started", "2026-11-28 23:14:02"] + options, environment: env).stdout
            .contains("is already in the night store"))
        #expect(try nights().count == 3)
    }

    @Test func analysedNightIsSavedInTheStoreAndListed() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        let store = dir.appendingPathComponent("store")
        let analyze = try CLI.run(["analyze", audio.path, "--classifier", "heuristic"], environment: ["SOMNI_STORE": store.path])
        #expect(analyze.status == 0, "\(analyze.stderr)")
        #expect(analyze.stdout.contains("Saved in the night store"))
        // Which Somni analysed it, as 'somni --version' says it: a figure traced to its rules.
        let folder = try #require(analyze.stdout.components(separatedBy: "Night folder: ").dropFirst().first?
            .split(separator: "\n").first.map(String.init))
        let session = try Session.load(from: URL(fileURLWithPath: folder).appendingPathComponent(Session.fileName))
        let version = try CLI.run(["--version"])
        #expect(version.status == 0 && version.stdout == SomniVersion.name + "\n" && SomniVersion.name.hasPrefix("somni "))
        #expect(session.settings.analyser == SomniVersion.name)

        let nights = try CLI.run(["nights", "--json"], environment: ["SOMNI_STORE": store.path])
        #expect(nights.status == 0, "\(nights.stderr)")
        #expect(nights.stdout.contains("night.wav"))
        // Nothing is left behind in the working area once the night is in.
        let incoming = store.appendingPathComponent("incoming")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: incoming.path)) ?? []
        #expect(left.isEmpty, "left in incoming/: \(left)")
    }
}

/// The progress bar is for a person at a terminal; piped output stays clean.
@Suite struct ProgressBarTests {
    @Test func barOnATerminalNoneWhenPiped() throws {
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path) else {
            print("skipping: /usr/bin/script (util-linux) is needed to run somni under a pseudo-terminal")
            return
        }
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        #expect(try CLI.run(["synth", "--out", audio.path, "--hours", "0.05", "--seed", "3"]).status == 0)

        let piped = try CLI.run(["analyze", audio.path, "--out", dir.appendingPathComponent("a").path])
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("%") && !piped.stdout.contains("["), "no bar when piped: \(piped.stderr)")

        // Under a pseudo-terminal (script -qec runs the command with a tty on both streams).
        let p = Process()
        p.executableURL = script
        let command = "\(CLI.executable.path) analyze \(audio.path) --out \(dir.appendingPathComponent("b").path)"
        p.arguments = ["-qec", command, "/dev/null"]
        let out = Pipe()
        p.standardOutput = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains("reading") && text.contains("%") && text.contains("\r"), "expected a progress bar: \(text)")
    }
}

/// A recording from a phone app is dated from what it says of itself, so the store shows its
/// date and bedtime; `--started` says it when the file does not.
@Suite struct AnalyzeDatingTests {
    @Test func aNightIsDatedFromTheFilesNameItsCreationTimeOrTheOption() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let utc = ["TZ": "UTC", "SOMNI_STORE": dir.appendingPathComponent("store").path]
        let named = dir.appendingPathComponent("Recording_20261128_231402.wav")
        try CLI.synthesiseShortNight(at: named)
        // Another recording, whose name and content say nothing of when it started.
        let plain = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: plain, seed: 6)
        let m4a = dir.appendingPathComponent("phone.m4a")
        let writer = try EncodedAudioWriter(url: m4a, format: .m4a, sampleRate: 16_000,
                                            metadata: ["creation_time": "2026-11-29T22:40:00.000000Z"])
        let decoder = try AudioDecoder(url: plain)
        var block = [Float](repeating: 0, count: 16_000)
        while case let n = try block.withUnsafeMutableBufferPointer({ try decoder.read(into: $0) }), n > 0 {
            try block.withUnsafeBufferPointer { try writer.write(UnsafeBufferPointer(rebasing: $0[..<n])) }
        }
        try writer.finish()

        func analyse(_ arguments: [String]) throws -> Session {
            let r = try CLI.run(["analyze"] + arguments + ["--classifier", "heuristic", "--no-clips", "--json"], environment: utc)
            try #require(r.status == 0, "\(arguments): \(r.stderr)")
            return try JSONDecoder().decode(Session.self, from: Data(r.stdout.utf8))
        }
        let fromName = try analyse([named.path])
        #expect(fromName.startedAt == "2026-11-28T23:14:02Z" && fromName.startedFrom == .fileName)
        let fromContainer = try analyse([m4a.path])
        #expect(fromContainer.startedAt == "2026-11-29T22:40:00Z" && fromContainer.startedFrom == .creationTime)
        let given = try analyse([m4a.path, "--started", "2026-11-30 23:05"])
        #expect(given.startedAt == "2026-11-30T23:05:00Z" && given.startedFrom == .given)
        let undated = try analyse([plain.path])
        #expect(undated.startedAt == nil && undated.startedFrom == nil)
        // A copy of the named recording that lost the time in its name is the same recording,
        // found dated as it was stored.
        let copy = dir.appendingPathComponent("copy.wav")
        try FileManager.default.copyItem(at: named, to: copy)
        let copied = try CLI.run(["analyze", copy.path, "--classifier", "heuristic", "--no-clips"], environment: utc)
        // Named as the user gave it: the message had named only the stored file, as if that were the one given.
        #expect(copied.status == 0 && copied.stdout.contains(
            "copy.wav is the same recording as Recording_20261128_231402.wav, which is already in the night store as 20261128-2314"),
                "\(copied.stdout)")

        // The store lists each on its night, with its bedtime.
        let listed = try CLI.run(["nights", "--json"], environment: utc)
        let nights = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(Set(nights.compactMap { $0["date"] as? String }) == ["2026-11-28", "2026-11-29", "2026-11-30"], "\(listed.stdout)")
        #expect(Set(nights.compactMap { $0["bedtime"] as? String }) == ["23:14", "22:40", "23:05"], "\(listed.stdout)")
        // Stored undated, the summary says how to date it; dated, it says where the time came from.
        let plainText = try CLI.run(["analyze", plain.path, "--classifier", "heuristic", "--no-clips", "--replace"],
                                    environment: utc)
        #expect(plainText.stdout.contains("the night is undated: analysed again with --started \"YYYY-MM-DD HH:MM\" --replace"),
                "\(plainText.stdout)")
        // Written with --out, it is said too: imported, it is an undated night.
        let outText = try CLI.run(["analyze", plain.path, "--classifier", "heuristic", "--no-clips", "--out",
                                   dir.appendingPathComponent("out").path], environment: utc)
        #expect(outText.status == 0 && outText.stdout.contains(
            "does not say when it started, so the night is undated (its times are into the night, not clock times): "
            + "analysed again into a new --out folder with --started \"YYYY-MM-DD HH:MM\", it is dated."), "\(outText.stdout)")
        // A name dated far ahead is passed over, and said to be.
        let ahead = plain.deletingLastPathComponent().appendingPathComponent("Recording_20991128_231402.wav")
        try FileManager.default.copyItem(at: plain, to: ahead)
        let aheadText = try CLI.run(["analyze", ahead.path, "--classifier", "heuristic", "--no-clips", "--replace"], environment: utc)
        #expect(aheadText.stdout.contains("The recording's name says it started 2099-11-28 23:14, more than a day ahead of this machine's clock, "
                                          + "so the night is undated"), "\(aheadText.stdout)")
        // Given a start without --replace, it is found, not stored twice, and told how to date it ...
        let found = try CLI.run(["analyze", plain.path, "--classifier", "heuristic", "--no-clips", "--started", "2026-12-01 23:00"],
                                environment: utc)
        #expect(found.status == 0 && found.stdout.contains("is already in the night store")
                && found.stdout.contains("It is stored undated; --replace dates it from --started, 2026-12-01T23:00:00Z"),
                "\(found.stdout)")
        // ... which dates it in the undated copy's place.
        let dated = try CLI.run(["analyze", plain.path, "--classifier", "heuristic", "--no-clips", "--replace",
                                 "--started", "2026-12-01 23:00"], environment: utc)
        #expect(dated.status == 0 && dated.stdout.contains("It replaces "), "\(dated.stdout)")
        let after = try #require(try JSONSerialization.jsonObject(with: Data(try CLI.run(["nights", "--json"], environment: utc)
            .stdout.utf8)) as? [[String: Any]])
        #expect(after.count == nights.count && after.filter { $0["date"] == nil }.isEmpty
                && after.contains { $0["date"] as? String == "2026-12-01" }, "\(after)")
        // The next morning's batch run, without --started, finds the night dated by hand.
        let batch = try CLI.run(["analyze", plain.path, "--classifier", "heuristic", "--no-clips"], environment: utc)
        #expect(batch.status == 0 && batch.stdout.contains("is already in the night store"), "\(batch.stdout)")
        let afterBatch = try JSONSerialization.jsonObject(with: Data(try CLI.run(["nights", "--json"], environment: utc).stdout.utf8))
        #expect((afterBatch as? [[String: Any]])?.count == nights.count, "\(afterBatch)")
        // Analysed again with new settings and no --started, it keeps the date given by hand
        // (before, it fell back to undated, out of every dated list, under a new id).
        let resettled = try CLI.run(["analyze", plain.path, "--classifier", "heuristic", "--no-clips", "--replace",
                                     "--sensitivity", "7"], environment: utc)
        #expect(resettled.status == 0 && resettled.stdout.contains("It replaces the earlier analysis of this recording, and keeps its id.")
                && resettled.stdout.contains("It keeps the start given before"), "\(resettled.stdout)")
        let afterResettle = try #require(try JSONSerialization.jsonObject(
            with: Data(try CLI.run(["nights", "--json"], environment: utc).stdout.utf8)) as? [[String: Any]])
        #expect(afterResettle.count == nights.count && afterResettle.contains { $0["id"] as? String == "20261201-2300" }
                && afterResettle.allSatisfy { $0["date"] != nil }, "\(nights.map { $0["id"] ?? "" }) → \(afterResettle.map { $0["id"] ?? "" })")
        // A file whose name dates it, dated otherwise by hand (its clock was wrong): analysed
        // again without --started it keeps the hand's start, in that night's place (before, the
        // file name's start found no night and stored a second); with --started, it takes that.
        let wrongClock = dir.appendingPathComponent("Q_20261111_230000.wav")
        try CLI.synthesiseShortNight(at: wrongClock, seed: 11)
        let quick = ["--classifier", "heuristic", "--no-clips"]
        #expect(try CLI.run(["analyze", wrongClock.path, "--started", "2026-11-11 22:00"] + quick, environment: utc).status == 0)
        let kept = try CLI.run(["analyze", wrongClock.path, "--replace", "--sensitivity", "6"] + quick, environment: utc)
        #expect(kept.status == 0 && kept.stdout.contains("It keeps the start given before"), "\(kept.stdout)")
        let redated = try CLI.run(["analyze", wrongClock.path, "--replace", "--started", "2026-11-11 22:30"] + quick, environment: utc)
        #expect(redated.status == 0 && redated.stdout.contains("It replaces 20261111-2200"), "\(redated.stdout)")
        let ids = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: utc).stdout)
        #expect(ids.filter { $0.hasPrefix("20261111") } == ["20261111-2230"], "\(ids)")
        let text = try CLI.run(["analyze", named.path, "--out", dir.appendingPathComponent("n").path, "--classifier", "heuristic",
                                "--no-clips"], environment: utc)
        #expect(text.stdout.contains("started 2026-11-28T23:14:02Z (from the file name)"), "\(text.stdout)")
        // Dated, the most severe events are listed at the time of day they happened; undated, at
        // their time into the recording, and the heading says which.
        func loudest(_ summary: String) -> [Substring] {
            Array(summary.split(separator: "\n").drop { !$0.contains("most severe events") }.dropFirst().prefix { $0.hasPrefix("    ") })
        }
        #expect(!loudest(text.stdout).isEmpty && loudest(text.stdout).allSatisfy { $0.hasPrefix("    23:") }, "\(text.stdout)")
        #expect(plainText.stdout.contains("most severe events (time into the recording):")
                && loudest(plainText.stdout).allSatisfy { $0.hasPrefix("    +0:") }, "\(plainText.stdout)")

        for bad in [[m4a.path, "--started", "tonight"], [m4a.path, named.path, "--started", "2026-11-30 23:05"]] {
            let r = try CLI.run(["analyze"] + bad, environment: utc)
            #expect(r.status == 64 && r.errorLines.count == 1 && r.stderr.contains("--started"), "\(bad): \(r.stderr)")
        }
    }

    /// An app that writes the creation time when it stops (Android's recorder) would date the night
    /// at the wake time: the name's time is taken when the creation time is one recording later,
    /// and with no time in the name, a creation time at the file's last change is taken for the stop.
    @Test func aCreationTimeWrittenAtTheStopDoesNotDateTheNightAtItsEnd() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededRandom(seed: 3)
        let samples = (0..<(16_000 * 420)).map { _ in 0.003 * rng.nextGaussian() }  // 7 minutes of a quiet room
        func recording(_ name: String, created: String) throws -> URL {
            let url = dir.appendingPathComponent(name)
            let writer = try EncodedAudioWriter(url: url, format: .m4a, sampleRate: 16_000, metadata: ["creation_time": created])
            try samples.withUnsafeBufferPointer { try writer.write($0) }
            try writer.finish()
            return url
        }
        func start(of url: URL) throws -> (String?, RecordingStart.Origin?) {
            let r = try CLI.run(["analyze", url.path, "--out", dir.appendingPathComponent(UUID().uuidString).path,
                                 "--classifier", "heuristic", "--no-clips", "--json"], environment: ["TZ": "UTC"])
            try #require(r.status == 0, "\(r.stderr)")
            let session = try JSONDecoder().decode(Session.self, from: Data(r.stdout.utf8))
            return (session.startedAt, session.startedFrom)
        }
        let stopped = try start(of: recording("Recording_20261127_230000.m4a", created: "2026-11-27T23:07:02.000000Z"))
        #expect(stopped.0 == "2026-11-27T23:00:00Z" && stopped.1 == .fileName, "\(stopped)")
        let started = try start(of: recording("Recording_20261127_230001.m4a", created: "2026-11-27T23:00:03.000000Z"))
        #expect(started.0 == "2026-11-27T23:00:03Z" && started.1 == .creationTime, "\(started)")
        // No time in the name: copied since (changed today), the creation time stands; changed
        // last when it was created, it was written at the stop.
        let voice = try recording("Voice 001.m4a", created: "2026-11-27T23:07:02.000000Z")
        let unnamed = try start(of: voice)
        #expect(unnamed.0 == "2026-11-27T23:07:02Z" && unnamed.1 == .creationTime, "\(unnamed)")
        let stoppedAt = try #require(RecordingStart.parse("2026-11-27T23:07:05Z"))
        try FileManager.default.setAttributes([.modificationDate: stoppedAt], ofItemAtPath: voice.path)
        let atEnd = try start(of: voice)
        let startedAt = try #require(atEnd.0.flatMap { RecordingStart.parse($0) })
        #expect(abs(startedAt.timeIntervalSince(stoppedAt) + 423) < 2 && atEnd.1 == .creationTimeAtEnd, "\(atEnd)")

        // Stored before this Somni, dated from its creation time: known again, not stored twice,
        // and --replace dates it from its start.
        let store = ["TZ": "UTC", "SOMNI_STORE": dir.appendingPathComponent("store").path]
        let quick = ["--classifier", "heuristic", "--no-clips"]
        let old = try CLI.run(["analyze", voice.path, "--started", "2026-11-27T23:07:02Z"] + quick, environment: store)
        #expect(old.status == 0, "\(old.stderr)")
        let again = try CLI.run(["analyze", voice.path] + quick, environment: store)
        #expect(again.status == 0 && again.stdout.contains("is already in the night store as 20261127-2307"), "\(again.stdout)")
        #expect(again.stdout.contains("--replace dates it from its start, 2026-11-27T23:00:0"), "\(again.stdout)")
        let replaced = try CLI.run(["analyze", voice.path, "--replace"] + quick, environment: store)
        #expect(replaced.status == 0 && replaced.stdout.contains("It replaces 20261127-2307"), "\(replaced.stdout)")
        let listed = try JSONSerialization.jsonObject(with: Data(try CLI.run(["nights", "--json"], environment: store).stdout.utf8))
        let nights = try #require(listed as? [[String: Any]])
        #expect(nights.count == 1 && nights.first?["bedtime"] as? String == "23:00", "\(nights)")
    }
}

extension AnalyzeDatingTests {
    /// A night across the autumn change reads as the bedroom's clock did: the zone goes into
    /// session.json and the store, and `show` says when the clocks went back.
    @Test func aNightAcrossADaylightSavingChangeKeepsTheBedroomsClock() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let night = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: night)  // 3 minutes
        let berlin = ["TZ": "Europe/Berlin", "SOMNI_STORE": dir.appendingPathComponent("store").path]
        let r = try CLI.run(["analyze", night.path, "--started", "2026-10-25T02:58+02:00", "--classifier", "heuristic",
                             "--no-clips", "--json"], environment: berlin)
        try #require(r.status == 0, "\(r.stderr)")
        let session = try JSONDecoder().decode(Session.self, from: Data(r.stdout.utf8))
        #expect(session.startedAt == "2026-10-25T02:58:00+02:00" && session.timeZone == "Europe/Berlin")

        // Read elsewhere (UTC here), the night keeps its own clock.
        let shown = try CLI.run(["show", "2026-10-24"], environment: ["TZ": "UTC", "SOMNI_STORE": berlin["SOMNI_STORE"]!])
        #expect(shown.stdout.contains("night of Sat 24 Oct 2026, 02:58 → 02:01 (2nd)"), "\(shown.stdout)")
        #expect(shown.stdout.contains("clock         at 03:00 the clocks went back to 02:00"), "\(shown.stdout)")
        let listed = try CLI.run(["nights", "--json"], environment: berlin)
        let nights = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(nights.first?["wake"] as? String == "02:01", "\(listed.stdout)")

        // A --started in the hour the clocks skipped names no moment; in the hour they repeated, two.
        let skipped = try CLI.run(["analyze", night.path, "--started", "2026-03-29 02:30", "--out", dir.appendingPathComponent("a").path],
                                  environment: berlin)
        #expect(skipped.status == 64 && skipped.errorLines.count == 1 && skipped.stderr.contains("skipped that time"),
                "\(skipped.stderr)")
        let twice = try CLI.run(["analyze", night.path, "--started", "2026-10-25 02:30", "--classifier", "heuristic", "--no-clips",
                                 "--json", "--out", dir.appendingPathComponent("b").path], environment: berlin)
        #expect(twice.status == 0 && twice.stderr.contains("happened twice in Europe/Berlin")
                && twice.stderr.contains("give 2026-10-25T02:30+01:00 for the second"), "\(twice.stderr)")
        let first = try JSONDecoder().decode(Session.self, from: Data(twice.stdout.utf8))
        #expect(first.startedAt == "2026-10-25T02:30:00+02:00")
    }

    /// A --started with an offset other than this machine's (a night recorded abroad, dated
    /// here) reads on the clock it was given on: it was filed at this machine's time of that
    /// moment, 10:00 on the evening before, with this machine's offset in every export.
    /// TZ as the C library reads it (`date`), which Foundation read otherwise: ":Asia/Tokyo" and a
    /// zoneinfo path as UTC, "UTC-3" three hours the other way. A zone's name is followed; a POSIX
    /// rule gives its present offset and a warning.
    @Test func theZoneIsReadFromTZAsTheSystemReadsIt() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("n.wav")
        let synth = try CLI.run(["synth", "--out", wav.path, "--hours", "0.002"])
        try #require(synth.status == 0, "\(synth.stderr)")
        for (tz, started, zone, warns) in [(":Asia/Tokyo", "+09:00", "Asia/Tokyo", false),
                                           (":/usr/share/zoneinfo/Asia/Kolkata", "+05:30", "Asia/Kolkata", false),
                                           ("UTC-3", "+03:00", "GMT+0300", true), ("JST-9", "+09:00", "GMT+0900", true)] {
            let r = try CLI.run(["analyze", wav.path, "--out", dir.appendingPathComponent(UUID().uuidString).path, "--started",
                                 "2026-11-28 23:14", "--classifier", "heuristic", "--no-clips", "--json"], environment: ["TZ": tz])
            try #require(r.status == 0, "\(tz): \(r.stderr)")
            let session = try JSONDecoder().decode(Session.self, from: Data(r.stdout.utf8))
            #expect(session.startedAt == "2026-11-28T23:14:00" + started && session.timeZone == zone,
                    "\(tz): \(session.startedAt ?? "-") \(session.timeZone ?? "-")")
            #expect(r.stderr.contains("warning: TZ='\(tz)' is not a time zone Somni can follow") == warns, "\(tz): \(r.stderr)")
        }
    }

    @Test func aStartGivenOnAnotherClockKeepsThatClock() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let night = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: night)
        let here = ["TZ": "UTC", "SOMNI_STORE": dir.appendingPathComponent("store").path]
        let r = try CLI.run(["analyze", night.path, "--started", "2026-11-28T23:00+13:00", "--classifier", "heuristic",
                             "--no-clips", "--json"], environment: here)
        try #require(r.status == 0, "\(r.stderr)")
        let session = try JSONDecoder().decode(Session.self, from: Data(r.stdout.utf8))
        #expect(session.startedAt == "2026-11-28T23:00:00+13:00" && session.timeZone == "GMT+1300", "\(r.stdout)")
        let listed = try CLI.run(["nights"], environment: here)
        #expect(listed.stdout.contains("20261128-2300  2026-11-28  23:00"), "\(listed.stdout)")
        let exported = try CLI.run(["export", "--all", "--rows", "night"], environment: here)
        #expect(exported.stdout.contains("2026-11-28T23:00:00+13:00"), "\(exported.stdout)")
        // Analysed again without --started, it keeps the start and the clock it was given.
        let again = try CLI.run(["analyze", night.path, "--replace", "--sensitivity", "7", "--classifier", "heuristic",
                                 "--no-clips", "--json"], environment: here)
        let replaced = try JSONDecoder().decode(Session.self, from: Data(again.stdout.utf8))
        #expect(replaced.startedAt == "2026-11-28T23:00:00+13:00" && replaced.timeZone == "GMT+1300", "\(again.stdout)\(again.stderr)")
        // The machine's own offset keeps the machine's zone, which knows when its clocks change.
        let berlin = try CLI.run(["analyze", night.path, "--started", "2026-11-28T23:00+01:00", "--classifier", "heuristic",
                                  "--no-clips", "--json", "--out", dir.appendingPathComponent("b").path],
                                 environment: ["TZ": "Europe/Berlin"])
        let local = try JSONDecoder().decode(Session.self, from: Data(berlin.stdout.utf8))
        #expect(local.startedAt == "2026-11-28T23:00:00+01:00" && local.timeZone == "Europe/Berlin", "\(berlin.stdout)")
    }
}

/// `--join`: a night a recorder split into files is analysed as one, each part placed at its time.
@Suite struct AnalyzeJoinTests {
    /// The samples of `whole` from `from` to `to` as a 16 kHz WAV named `name`.
    static func part(of whole: [Float], _ from: Int, _ to: Int, named name: String, in dir: URL) throws -> URL {
        let url = dir.appendingPathComponent(name)
        let writer = try WAVWriter(url: url)
        try whole[from..<to].withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        return url
    }

    /// `somni analyze`'s clock, h:mm:ss (whole seconds passed, as `show` gives them).
    enum AnalyzeLines {
        static func clock(_ seconds: Double) -> String {
            let s = Int(seconds.rounded(.down))
            return String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
        }
    }

    @Test func aSplitNightIsOneNightWithItsPauseKeptAsAGap() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["TZ": "UTC", "SOMNI_STORE": dir.appendingPathComponent("store").path]
        let whole = dir.appendingPathComponent("whole.wav")
        try CLI.synthesiseShortNight(at: whole)
        let decoder = try AudioDecoder(url: whole)
        var samples: [Float] = [], block = [Float](repeating: 0, count: 16_000)
        while case let n = try block.withUnsafeMutableBufferPointer({ try decoder.read(into: $0) }), n > 0 { samples += block[..<n] }
        let split = 90 * 16_000
        func analyse(_ files: [URL], _ extra: [String] = []) throws -> (CLIResult, Session?) {
            let r = try CLI.run(["analyze"] + files.map(\.path) + extra + ["--classifier", "heuristic", "--no-clips", "--json"],
                                environment: env)
            return (r, r.status == 0 ? try JSONDecoder().decode(Session.self, from: Data(r.stdout.utf8)) : nil)
        }
        let (_, reference) = try analyse([whole])
        let original = try #require(reference)

        // Back to back (the second part starts as the first ends): the same night, dated from the first.
        let first = try Self.part(of: samples, 0, split, named: "ZOOM_20261128_230000.wav", in: dir)
        let second = try Self.part(of: samples, split, samples.count, named: "ZOOM_20261128_230130.wav", in: dir)
        let (r1, joined) = try analyse([first, second], ["--join"])
        let night = try #require(joined, "\(r1.stderr)")
        #expect(night.events == original.events && night.duration == original.duration && night.gaps == nil)
        #expect(night.startedAt == "2026-11-28T23:00:00Z" && night.source == "ZOOM_20261128_230000.wav + ZOOM_20261128_230130.wav")

        // Twenty seconds between the parts: kept as silence, so later events keep their clock time.
        let late = try Self.part(of: samples, split, samples.count, named: "ZOOM_20261128_230150.wav", in: dir)
        let (r2, paused) = try analyse([first, late], ["--join"])
        let gapped = try #require(paused, "\(r2.stderr)")
        #expect(gapped.gaps == [RecordingGap(start: 90, duration: 20, reason: "no recording between the files before ZOOM_20261128_230150.wav")])
        #expect(abs(gapped.duration - (original.duration + 20)) < 0.01)
        let far = original.events.filter { abs($0.start - 90) > 10 && abs($0.end - 90) > 10 }
        #expect(far.count > 10)
        for e in far {
            let shift = e.start > 90 ? 20.0 : 0
            #expect(gapped.events.contains { $0.eventClass == e.eventClass && abs($0.start - e.start - shift) < 0.05
                                             && abs($0.end - e.end - shift) < 0.05 }, "\(e)")
        }

        // What was recorded is said beside the night's length, and `show` says what was not.
        let bare = try CLI.run(["analyze", first.path, late.path, "--join", "--out", dir.appendingPathComponent("bare").path,
                                "--classifier", "heuristic", "--no-clips"], environment: env)
        let recorded = AnalyzeLines.clock(original.duration)
        #expect(bare.stdout.contains("(\(AnalyzeLines.clock(original.duration + 20)) in all, \(recorded) of it recorded,"), "\(bare.stdout)")
        let shown = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: env).stdout)
            .map { try CLI.run(["show", $0], environment: env).stdout }
        #expect(shown.filter { $0.contains("not recorded  0:00:20 in 1 gap (from 23:01:30)") }.count == 1, "\(shown)")
        // Rates and the snoring share are over the time recorded, as the unbroken night's are,
        // and each place that gives them says so.
        #expect(gapped.summary.recordedSeconds.map { abs($0 - original.duration) < 0.01 } == true)
        for c in EventClass.allCases {
            let count = gapped.events.filter { $0.eventClass == c }.count
            #expect(abs((gapped.summary.eventsPerHour[c.rawValue] ?? -1) - Double(count) * 3600 / original.duration) < 1e-6, "\(c)")
        }
        #expect(abs(gapped.summary.snoringPercent - 100 * gapped.summary.snoringMinutes * 60 / original.duration) < 1e-6)
        #expect(gapped.analysedSeconds <= gapped.recordedSeconds + 0.01, "nothing is analysed in the pause")
        #expect(bare.stdout.contains("per hour recorded") && bare.stdout.contains("% of the time recorded)"), "\(bare.stdout)")
        #expect(shown.filter { $0.contains("of the time recorded ·") && $0.contains("/h recorded)") }.count == 1, "\(shown)")
        let perNight = try CLI.run(["export", "--all", "--rows", "night"], environment: env).stdout.split(separator: "\n")
            .map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let column = { (name: String) in perNight[0].firstIndex(of: name)! }
        let gappedRows = perNight.dropFirst().filter { $0[column("recorded_h")] != $0[column("duration_h")] }
        #expect(gappedRows.count == 1, "\(perNight)")
        let row = try #require(gappedRows.first)
        #expect(abs(Double(row[column("recorded_h")])! - original.duration / 3600) < 0.001, "\(perNight)")
        #expect(abs(Double(row[column("snoring_per_h")])! - (gapped.summary.eventsPerHour["snoring"] ?? -1)) < 0.01, "\(perNight)")
        let page = try CLI.run(["report", row[0], "-o", "-"], environment: env)
        #expect(page.status == 0 && page.stdout.contains("<span class=\"label\">not recorded</span>")
                && page.stdout.contains("of the time recorded snoring") && page.stdout.contains("Events per hour recorded"), "\(page.stderr)")

        // Parts thirteen hours apart are not one night: one error, nothing stored.
        let nextDay = try Self.part(of: samples, split, samples.count, named: "ZOOM_20261129_120000.wav", in: dir)
        let stored = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: env).stdout).count
        let (r3, none) = try analyse([first, nextDay], ["--join"])
        #expect(none == nil && r3.status == 65 && r3.errorLines.count == 1 && r3.stderr.contains("not one night"), "\(r3.stderr)")
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: env).stdout).count == stored)

        // --started places the first part: an undated first part given 23:00 keeps the pause
        // before a second dated 23:01:50 (it was lost, and the second part's events came 20 s
        // early); a dated one given another time moves every part with it, pause and all.
        let undated = try Self.part(of: samples, 0, split, named: "partA.wav", in: dir)
        for (parts, given, start) in [([undated, late], "2026-11-28 23:00", "2026-11-28T23:00:00Z"),
                                      ([first, late], "2026-11-28 22:00", "2026-11-28T22:00:00Z")] {
            let out = dir.appendingPathComponent("given-\(parts[0].lastPathComponent)").path
            let (r, given) = try analyse(parts, ["--join", "--started", given, "--out", out])
            let night = try #require(given, "\(r.stderr)")
            #expect(night.startedAt == start && night.gaps == gapped.gaps && night.events == gapped.events, "\(r.stdout)")
        }
        // One recording given twice is a slip, not a night twice as long; nor is a start before 2000.
        let (twice, _) = try analyse([first, dir.appendingPathComponent("./ZOOM_20261128_230000.wav")], ["--join"])
        #expect(twice.status == 65 && twice.stderr.contains("is the same file as ZOOM_20261128_230000.wav"), "\(twice.stderr)")
        // A copy is joined, with a word: two parts of one size that begin and end in silence
        // share a fingerprint without being one recording.
        let copy = dir.appendingPathComponent("copy-of-first.wav")
        try FileManager.default.copyItem(at: first, to: copy)
        let (copied, _) = try analyse([first, copy], ["--join", "--out", dir.appendingPathComponent("copied").path])
        #expect(copied.status == 0 && copied.stderr.contains("copy-of-first.wav looks like a copy of ZOOM_20261128_230000.wav"),
                "\(copied.stderr)")
        // A part dated a year before the one ahead of it is not one night either.
        let yearEarly = try Self.part(of: samples, split, samples.count, named: "ZOOM_20251128_230150.wav", in: dir)
        let (early, _) = try analyse([first, yearEarly], ["--join"])
        #expect(early.status == 65 && early.stderr.contains("h before ZOOM_20261128_230000.wav ends: not one night"), "\(early.stderr)")
        let (typo, _) = try analyse([first], ["--started", "0026-11-28 23:00"])
        #expect(typo.status == 64 && typo.stderr.contains("before 2000 or in the future"), "\(typo.stderr)")
    }
}
