import Foundation
import Testing
@testable import SomniCore

/// `somni record` as a user runs it: through PulseAudio (a private server started by
/// scripts/start-test-audio.sh, with a virtual microphone fed a synthesised night), and with
/// the faults of a night: the source unplugged, kill -9, a second recorder, a full disk.
@Suite(.serialized, .timeLimit(.minutes(10))) final class RecordEndToEndTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-record-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// Swift Testing makes one instance per test, so each test's folder goes when it ends.
    deinit { try? FileManager.default.removeItem(at: folder) }

    var nights: URL { folder.appendingPathComponent("nights") }
    var lock: URL { folder.appendingPathComponent("record.lock") }

    func recordArguments(_ extra: [String]) -> [String] {
        ["record", "--out", nights.path, "--lock", lock.path, "--classifier", "heuristic"] + extra
    }

    @Test(.enabled(if: CLIHarness.pulseAvailable))
    func capturesASynthesisedNightThroughPulseAudioAndFindsItsSnoring() throws {
        let (wav, reference) = try CLIHarness.synthesise(hours: 0.03, seed: 11, in: folder)
        let samples = try CLIHarness.decode(wav)
        let seconds = Double(samples.count) / 16_000
        let (_, night, mic) = try record(samples) { ["--backend", "pulse", "--device", $0, "--for", "\(Int(seconds))s"] }
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        #expect(abs(session.duration - seconds) < 1)
        #expect(session.source.contains("pulse:\(mic)"))
        // The master was deleted after the analysis; the clips and the envelope stay.
        #expect(!FileManager.default.fileExists(atPath: night.appendingPathComponent("master.flac").path))
        #expect(session.events.contains { $0.eventClass == .snoring })
        // The same night through the sound server scores as the file itself would.
        let f1 = try CLIHarness.segmentF1(reference: reference, night: night, eventClass: "snoring")
        #expect(f1 >= 0.8, "snoring segment F1 \(f1) through PulseAudio")
    }

    /// ALSA directly, with the sound server behind ALSA's pulse plugin standing in for a sound
    /// card: the recorded loudness follows the night that was played, value for value.
    @Test(.enabled(if: CLIHarness.pulseAvailable && CLIHarness.alsaPulsePluginInstalled))
    func theALSABackendCapturesTheSameNight() throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.01, seed: 15, in: folder)
        let samples = try CLIHarness.decode(wav)
        let (_, night, _) = try record(samples, asDefaultSource: true) { _ in
            ["--backend", "alsa", "--device", "pulse", "--for", "30s", "--keep-audio"]
        }
        #expect(try Session.load(from: night.appendingPathComponent(Session.fileName)).source.contains("alsa:pulse"))
        try expectLoudnessFollows(samples, in: night)
    }

    /// A microphone opened by its `hw:` name may give one channel only. The recorder asks for two
    /// (`StereoDownmix`), falls back to one, and says nothing about it: alsa-lib's line about the
    /// refused channel is not a fault of the night. ALSA's `multi` plugin with one binding refuses
    /// two channels as such a card does; the test's own ~/.asoundrc defines it over the sound server.
    @Test(.enabled(if: CLIHarness.pulseAvailable && CLIHarness.alsaPulsePluginInstalled))
    func aMonoOnlyALSADeviceIsRecordedThroughItsOneChannelQuietly() throws {
        let home = folder.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try """
        pcm.somni_mono_only {
            type multi
            slaves.a { pcm { type plug; slave.pcm "pulse" } channels 1 }
            bindings.0 { slave a; channel 0 }
        }
        """.write(to: home.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)
        let (wav, _) = try CLIHarness.synthesise(hours: 0.01, seed: 15, in: folder)
        let samples = try CLIHarness.decode(wav)
        let (result, night, _) = try record(samples, asDefaultSource: true, overrides: ["HOME": home.path]) { _ in
            ["--backend", "alsa", "--device", "somni_mono_only", "--for", "30s"]
        }
        #expect(!result.error.contains("ALSA lib"), "alsa-lib printed: \(result.error)")
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        #expect(session.source.contains("alsa:somni_mono_only"))
        #expect(!session.warnings.contains { $0.contains("opposite phase") }, "warnings: \(session.warnings)")
        try expectLoudnessFollows(samples, in: night)
    }

    /// An ALSA device that cannot be opened gets Somni's one line, without alsa-lib's own (on a
    /// machine without a sound card it printed eight first).
    @Test func anALSADeviceThatCannotOpenIsOneLine() throws {
        let result = try CLIHarness.somni(["record", "--backend", "alsa", "--device", "somni_no_such_pcm", "--for", "5s",
                                           "--out", nights.path, "--lock", lock.path])
        let lines = result.error.split(separator: "\n")
        #expect(result.status == 74 && lines.count == 1 && lines[0].contains("cannot open the ALSA capture device somni_no_such_pcm"),
                "\(result.status): \(result.error)")
    }

    /// A source the running sound server does not have (a name mistyped) is named as such,
    /// with where to find the names: it asked whether a sound server was running at all.
    @Test(.enabled(if: CLIHarness.pulseAvailable))
    func aSourceTheSoundServerLacksIsNamedAsSuch() throws {
        let result = try CLIHarness.somni(["record", "--backend", "pulse", "--device", "somni_no_such_source", "--for", "5s",
                                           "--out", nights.path, "--lock", lock.path])
        let lines = result.error.split(separator: "\n")
        #expect(result.status == 74 && lines.count == 1 && lines[0].contains("the sound server has no such source; 'pactl list short sources'")
                && !lines[0].contains("Is a sound server running"), "\(result.status): \(result.error)")
    }

    /// A microphone that records at 8 kHz (a Bluetooth headset's) gets the model for recordings
    /// below 16 kHz, as `analyze` gives such a file, and the night its warning: the wide-band
    /// one, on the night it resampled itself, found no snore a file of the same sound had.
    @Test(.enabled(if: CLIHarness.pulseAvailable))
    func aMicrophoneBelowSixteenKilohertzGetsTheNarrowBandModel() throws {
        let mic = try PipeMicrophone(folder: folder, rate: 8_000)
        let recorder = try CLIHarness.startSomni(["record", "--out", nights.path, "--lock", lock.path, "--backend", "pulse",
                                                  "--device", mic.name, "--for", "6s"])
        #expect(CLIHarness.wait(timeout: 30) { mic.hasListener }, "the recorder never connected to the source")
        let (wav, _) = try CLIHarness.synthesise(hours: 0.01, seed: 15, in: folder)
        // Paced for 16 kHz: half speed is the 8 kHz source's real time.
        try mic.play(try CLIHarness.decode(wav)[...], speed: 0.5, thenSilenceUntil: { !recorder.process.isRunning })
        let result = recorder.finish()
        #expect(result.status == 0 && result.error.contains("the microphone records at 8000 Hz"), "\(result.error)")
        let night = try #require(CLIHarness.nightFolder(under: nights))
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        #expect(session.settings.classifier.contains("narrow-band"), "\(session.settings.classifier)")
        // The night says what `analyze` says of such a file: its master, resampled, cannot.
        #expect(session.warnings.contains { $0.hasPrefix("the recording was made at 8000 Hz and holds no sound above 4.0 kHz") },
                "\(session.warnings)")
    }

    /// Live mode's options given to a night-mode recording are refused, not taken and ignored,
    /// as is a bridge longer than live mode keeps in memory; an --until too far away says how far to the minute ("16 h away" for 16 h 59 min).
    @Test func optionsThatWouldDoNothingOrTooLongANightAreRefused() throws {
        for option in [["--threshold", "0.5"], ["--continuation", "0.3"], ["--bridge", "30s"]] {
            let r = try CLIHarness.somni(["record", "--backend", "file", "--device", "/dev/null", "--out", nights.path] + option)
            #expect(r.status == 64 && r.error.contains("\(option[0]) applies to live mode"), "\(option): \(r.error)")
        }
        // The bridged stretch is held in memory: up to 5 minutes of it.
        for value in ["-5", "6m", "forever", "0x10", "nan"] {
            let r = try CLIHarness.somni(["record", "--backend", "file", "--device", "/dev/null", "--out", nights.path,
                                          "--mode", "live", "--bridge", value])
            #expect(r.status == 64 && r.error.contains("--bridge"), "\(value): \(r.error)")
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        let halfAnHourAgo = formatter.string(from: Date().addingTimeInterval(-1_800))
        let far = try CLIHarness.somni(["record", "--backend", "file", "--device", "/dev/null", "--out", nights.path,
                                        "--until", halfAnHourAgo])
        #expect(far.status == 64 && far.error.range(of: #"is 2[34] h \d+ min away"#, options: .regularExpression) != nil, "\(far.error)")
    }

    /// `recover` of a bare night folder (`record --out`) closes it where it is: a finished one was
    /// moved into the night store. A folder of another kind is bad input, and a --model typo is
    /// said even when there is nothing to close.
    @Test func recoverLeavesABareNightWhereItIs() throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.001, seed: 21, in: folder)
        let recorded = try CLIHarness.somni(recordArguments(["--backend", "file", "--device", wav.path, "--for", "3s"]))
        #expect(recorded.status == 0, "\(recorded.error)")
        let night = try #require(CLIHarness.nightFolder(under: nights))
        let store = folder.appendingPathComponent("store")
        let common = ["--lock", lock.path, "--classifier", "heuristic"]
        let again = try CLIHarness.somni(["recover", night.path, "--store", store.path] + common)
        #expect(again.status == 0 && again.output.contains("already closed") && !again.output.contains("night store"),
                "\(again.output) \(again.error)")
        #expect(FileManager.default.fileExists(atPath: night.appendingPathComponent(Session.fileName).path))
        #expect(!FileManager.default.fileExists(atPath: store.path), "no store was made for it")

        let analysed = folder.appendingPathComponent("analysed.night")
        #expect(try CLIHarness.somni(["analyze", wav.path, "--out", analysed.path, "--classifier", "heuristic", "--no-clips"]).status == 0)
        let other = try CLIHarness.somni(["recover", analysed.path, "--store", store.path] + common)
        #expect(other.status == 65 && other.error.contains("not a night folder of 'somni record'"), "\(other.status) \(other.error)")

        let typo = try CLIHarness.somni(["recover", "--out", folder.appendingPathComponent("empty").path, "--lock", lock.path,
                                         "--model", folder.appendingPathComponent("no-such.somnimodel").path])
        #expect(typo.status != 0 && typo.error.contains("no-such.somnimodel") && !typo.output.contains("No unfinished"), "\(typo.error)")
    }

    /// Plays `samples` (interleaved when `channels` is 2) into a new virtual microphone, made the
    /// default source when asked, while `somni record` runs with the arguments `arguments` gives
    /// for the microphone's name; expects a clean exit and returns the night it left.
    private func record(_ samples: [Float], channels: Int = 1, channelMap: String? = nil, asDefaultSource: Bool = false,
                        overrides: [String: String] = [:],
                        _ arguments: (_ microphone: String) -> [String]) throws -> (result: CLIHarness.Result, night: URL, microphone: String) {
        let mic = try PipeMicrophone(folder: folder, channels: channels, channelMap: channelMap)
        if asDefaultSource { try CLIHarness.run("/usr/bin/env", ["pactl", "set-default-source", mic.name]) }
        let recorder = try CLIHarness.startSomni(recordArguments(arguments(mic.name)), overrides: overrides)
        #expect(CLIHarness.wait(timeout: 30) { mic.hasListener }, "the recorder never connected to the source")
        try mic.play(samples[...], speed: 1.5, thenSilenceUntil: { !recorder.process.isRunning })
        let result = recorder.finish()
        #expect(result.status == 0, "\(result.error)")
        return (result, try #require(CLIHarness.nightFolder(under: nights)), mic.name)
    }

    /// The night's 10 Hz loudness follows that of the samples played, over the first 25 s (the
    /// recorder connects a moment before the first sample is written, hence the lags). Returns
    /// both envelopes over that stretch.
    @discardableResult
    private func expectLoudnessFollows(_ samples: [Float], in night: URL) throws -> (recorded: ArraySlice<Float>, played: ArraySlice<Float>) {
        let recorded = try EnvelopeFile.read(from: night.appendingPathComponent(EnvelopeFile.fileName)).values
        let played = FeatureExtractor()
        samples.withUnsafeBufferPointer { played.process($0) }
        let n = 250
        #expect(recorded.count >= n)
        let best = (0...5).map { lag in CLIHarness.correlation(Array(recorded[lag..<min(recorded.count, lag + n)]), Array(played.envelope.prefix(n))) }.max() ?? 0
        #expect(best > 0.95, "recorded loudness correlates \(best) with the night played")
        return (recorded.prefix(n), played.envelope.prefix(n))
    }

    /// Many laptops' built-in microphones deliver one channel in opposite phase. Asked for mono,
    /// the sound server averages the two and they cancel: a whole night of silence. The recorder
    /// must still hear the night, at its own level, and say why the channels were mixed as they were.
    @Test(.enabled(if: CLIHarness.pulseAvailable))
    func aMicrophoneWithOneChannelInvertedIsHeardThroughPulseAudio() throws {
        try recordInvertedMicrophone(backend: ["--backend", "pulse"], named: true)
    }

    @Test(.enabled(if: CLIHarness.pulseAvailable && CLIHarness.alsaPulsePluginInstalled))
    func aMicrophoneWithOneChannelInvertedIsHeardThroughALSA() throws {
        try recordInvertedMicrophone(backend: ["--backend", "alsa", "--device", "pulse"], named: false)
    }

    /// A microphone array whose four channels have no front positions (aux0…aux3, as some USB
    /// arrays name them): the server's own mix to front-left and front-right dropped them all, and
    /// the night was silence. The recorder takes the first two as they are.
    @Test(.enabled(if: CLIHarness.pulseAvailable), arguments: ["aux0,aux1,aux2,aux3", "front-left,front-right,rear-left,rear-right"])
    func aMicrophoneArrayIsHeardWhateverItsChannelsAreCalled(channelMap: String) throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.01, seed: 17, in: folder)
        let samples = try CLIHarness.decode(wav)
        let four = samples.flatMap { [$0, $0, $0, $0] }
        let (_, night, _) = try record(four, channels: 4, channelMap: channelMap) { mic in
            ["--backend", "pulse", "--device", mic, "--for", "30s"]
        }
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        #expect(!session.warnings.contains { $0.contains("silent") }, "warnings: \(session.warnings)")
        let (recorded, played) = try expectLoudnessFollows(samples, in: night)
        let loudest = { (values: ArraySlice<Float>) in EventDetector.dbfs(Double(values.max() ?? 0)) }
        #expect(abs(loudest(recorded) - loudest(played)) < 1.5,
                "loudest recorded \(loudest(recorded)) dBFS against \(loudest(played)) played")
    }

    private func recordInvertedMicrophone(backend: [String], named: Bool) throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.01, seed: 16, in: folder)
        let samples = try CLIHarness.decode(wav)
        var stereo = [Float](repeating: 0, count: 2 * samples.count)
        for (index, value) in samples.enumerated() {
            stereo[2 * index] = value
            stereo[2 * index + 1] = -value
        }
        let (_, night, _) = try record(stereo, channels: 2, asDefaultSource: !named) { mic in
            backend + (named ? ["--device", mic] : []) + ["--for", "30s"]
        }
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        #expect(session.warnings.contains { $0.contains("opposite phase") }, "warnings: \(session.warnings)")
        let (recorded, played) = try expectLoudnessFollows(samples, in: night)
        // Heard at the level of one channel, not a residue of the two cancelling.
        let loudest = { (values: ArraySlice<Float>) in EventDetector.dbfs(Double(values.max() ?? 0)) }
        #expect(abs(loudest(recorded) - loudest(played)) < 1.5,
                "loudest recorded \(loudest(recorded)) dBFS against \(loudest(played)) played")
    }

    /// The chosen microphone unplugged while another source exists (a null sink's monitor, as a
    /// desktop always has one): PulseAudio would move the stream there and record the wrong
    /// device all night; the recorder must notice instead, record the gap and wait for its own.
    @Test(.enabled(if: CLIHarness.pulseAvailable))
    func aMicrophoneUnpluggedAndPluggedBackLeavesAGapAndTheNightGoesOn() throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.02, seed: 12, in: folder)
        let samples = try CLIHarness.decode(wav)
        let elsewhere = try CLIHarness.run("/usr/bin/env", ["pactl", "load-module", "module-null-sink",
                                                           "sink_name=somni_test_elsewhere_\(UUID().uuidString.prefix(8).lowercased())"])
        #expect(elsewhere.status == 0, "cannot load a null sink: \(elsewhere.error)")
        defer { _ = try? CLIHarness.run("/usr/bin/env", ["pactl", "unload-module", elsewhere.output.trimmingCharacters(in: .whitespacesAndNewlines)]) }
        let mic = try PipeMicrophone(folder: folder)
        let recorder = try CLIHarness.startSomni(recordArguments(
            ["--backend", "pulse", "--device", mic.name, "--for", "60s"]))
        #expect(CLIHarness.wait(timeout: 30) { mic.hasListener })
        try mic.play(samples[0..<(20 * 16_000)], speed: 1.5)
        try mic.unplug()
        Thread.sleep(forTimeInterval: 3)
        try mic.load()
        #expect(CLIHarness.wait(timeout: 40) { mic.hasListener }, "the recorder did not come back to the source")
        try mic.play(samples[(20 * 16_000)...], speed: 1.5, thenSilenceUntil: { !recorder.process.isRunning })
        let result = recorder.finish()
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("capture device lost"))
        let night = try #require(CLIHarness.nightFolder(under: nights))
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        let gap = try #require(session.gaps?.first)
        #expect(session.gaps?.count == 1)
        #expect(abs(gap.start - 20) < 2)
        #expect(gap.duration >= 3)
        #expect(abs(session.duration - 60) < 1)
    }

    /// A microphone that stops giving sound without going away (a stalled sound server, a
    /// suspended source, a wedged USB microphone; here a FIFO held open and no longer written):
    /// a read gives up after 5 s, the night has one gap from there, and it still ends when
    /// `--for` says, analysed. Before, the read waited for ever, and neither `--for`, `--until`
    /// nor Ctrl-C could end the night cleanly.
    @Test(.enabled(if: CLIHarness.pulseAvailable))
    func aMicrophoneThatStopsGivingSoundStillEndsTheNightOnTime() throws {
        try recordStalledMicrophone(asDefaultSource: false) { ["--backend", "pulse", "--device", $0] }
    }

    @Test(.enabled(if: CLIHarness.pulseAvailable && CLIHarness.alsaPulsePluginInstalled))
    func aMicrophoneThatStopsGivingSoundThroughALSAStillEndsTheNightOnTime() throws {
        try recordStalledMicrophone(asDefaultSource: true) { _ in ["--backend", "alsa", "--device", "pulse"] }
    }

    private func recordStalledMicrophone(asDefaultSource: Bool, _ backend: (_ microphone: String) -> [String]) throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.01, seed: 16, in: folder)
        let samples = try CLIHarness.decode(wav)
        let mic = try PipeMicrophone(folder: folder)
        if asDefaultSource { try CLIHarness.run("/usr/bin/env", ["pactl", "set-default-source", mic.name]) }
        let began = Date()
        let recorder = try CLIHarness.startSomni(recordArguments(backend(mic.name) + ["--for", "40s"]))
        #expect(CLIHarness.wait(timeout: 30) { mic.hasListener }, "the recorder never connected to the source")
        try mic.play(samples[0..<(8 * 16_000)], speed: 1)
        let ended = CLIHarness.wait(timeout: 90) { !recorder.process.isRunning }
        if !ended { kill(recorder.process.processIdentifier, SIGKILL) }
        let result = recorder.finish()
        try #require(ended, "the recorder was still waiting for sound 90 s after the microphone went quiet")
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("gave no sound for 5 s"), "\(result.error)")
        #expect(Date().timeIntervalSince(began) < 75)
        let night = try #require(CLIHarness.nightFolder(under: nights))
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        let gap = try #require(session.gaps?.first)
        #expect(session.gaps?.count == 1, "\(session.gaps ?? [])")
        #expect(gap.start > 6 && gap.start < 12, "\(gap)")
        #expect(abs(gap.start + gap.duration - 40) < 1, "\(gap)")
        #expect(abs(session.duration - 40) < 1)
        // The morning analysis knew the gap: its rates are over the 8 s or so with sound.
        #expect(abs((session.summary.recordedSeconds ?? -1) - gap.start) < 0.01, "\(session.summary)")
    }

    /// Live mode on a synthesised night played through the capture path (file backend): the
    /// episodes it cuts live match the reference, and only their clips reach the disk.
    @Test(.enabled(if: CLIHarness.somni != nil))
    func liveModeFindsTheSnoringEpisodesOfASynthesisedNight() throws {
        let (wav, reference) = try CLIHarness.synthesise(hours: 0.33, seed: 21, in: folder)
        let result = try CLIHarness.somni(recordArguments(["--backend", "file", "--device", wav.path, "--for", "20m", "--mode", "live"]))
        #expect(result.status == 0, "\(result.error)")
        let night = try #require(CLIHarness.nightFolder(under: nights))
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        #expect(!session.events.isEmpty)
        for event in session.events {
            let clip = try #require(event.clip)
            #expect(FileManager.default.fileExists(atPath: night.appendingPathComponent(clip).path))
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: night.path).sorted()
        #expect(files == ["clips", "envelope.bin", "recording.json", "session.json"])
        let f1 = try CLIHarness.segmentF1(reference: reference, night: night, eventClass: "snoring")
        #expect(f1 >= 0.8, "live snoring segment F1 \(f1)")
    }

    /// The master is the night's only other copy, so what the morning made from it is written
    /// through to the disk before it is removed: a power cut right after could otherwise leave
    /// neither (the kernel keeps new files' data in memory for up to half a minute, while the
    /// master's removal may already stand). And the journal, by which `somni recover` finds and
    /// closes a night, is forced to the disk each time before it replaces the last one. Seen in
    /// the system calls, strace -y naming each descriptor's file.
    @Test(.enabled(if: CLIHarness.straceAvailable))
    func theMorningsFilesReachTheDiskBeforeTheMasterIsRemoved() throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.03, seed: 16, in: folder)
        let somni = try #require(CLIHarness.somni)
        let log = folder.appendingPathComponent("trace.txt")
        let result = try CLIHarness.run("/usr/bin/env", ["strace", "-f", "-qq", "-y", "-o", log.path,
                                                        "-e", "trace=fsync,fdatasync,unlink,unlinkat,rename,renameat,renameat2", somni.path]
                                        + recordArguments(["--backend", "file", "--device", wav.path, "--for", "100s"]))
        #expect(result.status == 0, "\(result.error)")
        let night = try #require(CLIHarness.nightFolder(under: nights))
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map { String($0.drop { $0.isNumber }.drop { $0 == " " }) }
        let removed = try #require(lines.firstIndex { $0.hasPrefix("unlink") && $0.contains("\(night.path)/master.flac\"") },
                                   "the master was not removed: \(lines.filter { $0.hasPrefix("unlink") })")
        let clips = try FileManager.default.contentsOfDirectory(atPath: night.appendingPathComponent("clips").path).map { "clips/\($0)" }
        #expect(!clips.isEmpty)
        let flushed = lines[..<removed].filter { $0.hasPrefix("fsync(") || $0.hasPrefix("fdatasync(") }
        for file in [Session.fileName, EnvelopeFile.fileName, "clips", ""] + clips {
            let path = file.isEmpty ? night.path : "\(night.path)/\(file)"
            #expect(flushed.contains { $0.contains("<\(path)>)") }, "\(path) was not written through before the master went")
        }
        let journal = "\(night.path)/\(NightJournal.fileName)"
        let replacements = lines.indices.filter { lines[$0].hasPrefix("rename") && lines[$0].contains(", \"\(journal)\"") }
        #expect(replacements.count >= 3, "the journal is written at the start, at the end and after the morning")
        for i in replacements {
            let temporary = try #require(lines[i].split(separator: "\"").dropFirst().first.map(String.init))
            #expect(lines[..<i].contains { $0.hasPrefix("fsync(") && $0.contains("<\(temporary)>)") }, "\(lines[i])")
            #expect(lines[(i + 1)...].contains { $0.hasPrefix("fsync(") && $0.contains("<\(night.path)>)") }, "\(lines[i])")
        }
    }

    /// A microphone that cannot be opened is one error, says no night began, and leaves no empty night folder behind
    /// (the folder claimed for the night stayed, and every later listing of the recordings met it).
    @Test(.enabled(if: CLIHarness.somni != nil))
    func aMicrophoneThatCannotBeOpenedLeavesNoNightFolder() throws {
        let missing = folder.appendingPathComponent("no-such-microphone.wav")
        let result = try CLIHarness.somni(recordArguments(["--backend", "file", "--device", missing.path, "--for", "1m"]))
        #expect(result.status != 0)
        #expect(result.error.split(separator: "\n").filter { $0.contains("error:") }.count == 1, "\(result.error)")
        // Before, "recording into …" came first, as if the night had begun.
        #expect(!result.error.contains("recording into"), "\(result.error)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: nights.path)) ?? []
        #expect(left.filter { $0.hasPrefix("night-") }.isEmpty, "\(left)")
    }

    /// Ctrl-C while the microphone opens (here a pipe no one writes to yet), then a fraction of a
    /// second of sound: no night, where an empty "0:00:00" one was stored; and `--for` under a
    /// second is refused.
    @Test(.enabled(if: CLIHarness.somni != nil))
    func ctrlCInTheFirstSecondSavesNoNight() throws {
        let pipe = folder.appendingPathComponent("mic.wav")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        let recorder = try CLIHarness.startSomni(recordArguments(["--backend", "file", "--device", pipe.path]))
        Thread.sleep(forTimeInterval: 0.7)
        kill(recorder.process.processIdentifier, SIGINT)
        Thread.sleep(forTimeInterval: 0.3)
        var wav = Data("RIFF".utf8) + le32(36 + 9_600) + Data("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(16_000)
        wav += le32(32_000) + le16(2) + le16(16) + Data("data".utf8) + le32(9_600) + Data(repeating: 16, count: 9_600)
        try wav.write(to: pipe)
        let result = recorder.finish()
        #expect(result.status == 130 && result.error.contains("stopped before a second was recorded: nothing was saved"),
                "\(result.status) \(result.error)")
        #expect(CLIHarness.nightFolder(under: nights) == nil)
        let short = try CLIHarness.somni(recordArguments(["--backend", "file", "--device", pipe.path, "--for", "0.5s"]))
        #expect(short.status == 64 && short.error.contains("the night must last at least 1 s"), "\(short.error)")
    }

    private func le32(_ v: Int) -> Data { withUnsafeBytes(of: UInt32(v).littleEndian) { Data($0) } }
    private func le16(_ v: Int) -> Data { withUnsafeBytes(of: UInt16(v).littleEndian) { Data($0) } }

    /// Ctrl-C while recording ends the night there, and the morning analysis runs: the signal
    /// reaches the recorder through the process's own delivery, as a user's does.
    @Test(.enabled(if: CLIHarness.somni != nil))
    func ctrlCEndsTheNightAndItIsAnalysed() throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.1, seed: 14, in: folder)
        let store = folder.appendingPathComponent("store")
        let recorder = try CLIHarness.startSomni(["record", "--store", store.path, "--lock", lock.path, "--classifier", "heuristic",
                                                  "--backend", "file", "--device", wav.path, "--for", "6m"])
        let recording = store.appendingPathComponent("recording")
        #expect(CLIHarness.wait(timeout: 120) {
            guard let night = CLIHarness.nightFolder(under: recording) else { return false }
            return (try? NightJournal.load(in: night)) != nil
        })
        Thread.sleep(forTimeInterval: 2)
        kill(recorder.process.processIdentifier, SIGINT)
        let result = recorder.finish()
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("Saved in the night store"), "\(result.output)")
        #expect(result.error.components(separatedBy: "recording into").count == 2, "said once: \(result.error)")
        let stored = try FileManager.default.contentsOfDirectory(atPath: store.appendingPathComponent("nights").path)
        #expect(stored.count == 1)
        let session = try Session.load(from: store.appendingPathComponent("nights/\(try #require(stored.first))/session.json"))
        #expect(session.duration > 1 && session.duration < 6 * 60, "\(session.duration)")
    }

    @Test(.enabled(if: CLIHarness.somni != nil))
    func aRecorderKilledWithSigkillIsRecoveredLosingAtMostThirtySecondsIntoTheStore() throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.1, seed: 13, in: folder)
        let store = folder.appendingPathComponent("store")
        let recording = store.appendingPathComponent("recording")
        let arguments = ["record", "--store", store.path, "--lock", lock.path, "--classifier", "heuristic",
                         "--backend", "file", "--device", wav.path]
        let recorder = try CLIHarness.startSomni(arguments + ["--for", "6m"])
        var flushed = 0.0
        let reached = CLIHarness.wait(timeout: 300) {
            guard let night = CLIHarness.nightFolder(under: recording), let j = try? NightJournal.load(in: night) else { return false }
            flushed = j.secondsFlushed
            return flushed >= 90
        }
        #expect(reached)
        // A second recorder on the same machine is refused while the first one lives.
        let second = try CLIHarness.somni(arguments + ["--for", "10s"])
        #expect(second.status != 0)
        #expect(second.error.contains("another recorder is already recording"))
        // Nor is its night closed under it by a recover given another lock file: the journal
        // names the live recorder.
        let elsewhere = folder.appendingPathComponent("other.lock").path
        let early = try CLIHarness.somni(["recover", "--store", store.path, "--lock", elsewhere, "--classifier", "heuristic"])
        #expect(early.error.contains("is being recorded right now (pid \(recorder.process.processIdentifier)"), "\(early.error)")
        #expect(try NightJournal.load(in: try #require(CLIHarness.nightFolder(under: recording))).status == .recording)

        kill(recorder.process.processIdentifier, SIGKILL)
        _ = recorder.finish()
        let night = try #require(CLIHarness.nightFolder(under: recording))
        #expect(try NightJournal.load(in: night).status == .recording)

        let recovered = try CLIHarness.somni(["recover", "--store", store.path, "--lock", lock.path, "--classifier", "heuristic"])
        #expect(recovered.status == 0, "\(recovered.error)")
        #expect(recovered.output.contains("saved in the night store"))
        // The night moved into the store.
        #expect(!FileManager.default.fileExists(atPath: night.path))
        let stored = try FileManager.default.contentsOfDirectory(atPath: store.appendingPathComponent("nights").path)
        #expect(stored.count == 1)
        let storedNight = store.appendingPathComponent("nights").appendingPathComponent(try #require(stored.first))
        let session = try Session.load(from: storedNight.appendingPathComponent(Session.fileName))
        // The kill came right after the flush at `flushed` s was seen (within a 50 ms poll); the
        // master on disk trails the recorder only by the encoder's buffer, so far less than 30 s is lost.
        #expect(session.duration >= flushed - 25)
        #expect(session.duration < flushed + 31)
        #expect(session.warnings.contains { $0.contains("stopped unexpectedly") })
        #expect(try NightJournal.load(in: storedNight).status == .analysed)
        // Nothing left to recover.
        let again = try CLIHarness.somni(["recover", "--store", store.path, "--lock", lock.path, "--classifier", "heuristic"])
        #expect(again.output.contains("No unfinished nights"))
        // A night folder named that is not there (a typo) is an error, not "closed meanwhile".
        let typo = try CLIHarness.somni(["recover", "--store", store.path, "--lock", lock.path, "--classifier", "heuristic",
                                         store.appendingPathComponent("recording/night-typo").path])
        #expect(typo.status == 65 && typo.error.contains("night-typo: no such night folder") && !typo.output.contains("meanwhile"),
                "\(typo.status) \(typo.output) \(typo.error)")

        // A night analysed but never taken in by the store (its save failed, or died and the
        // store put the folder back in recording/) is saved by recover; before, it was "already
        // closed" and stayed out of the store for good.
        let id = try #require(stored.first)
        let copy = folder.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: storedNight, to: copy)
        #expect(try CLIHarness.somni(["delete", id, "--store", store.path]).status == 0)
        let leftOver = recording.appendingPathComponent("night-left-over")
        try FileManager.default.copyItem(at: copy, to: leftOver)
        // Its master still there: the recorder was killed between marking the night analysed and
        // removing it (before, the master went first, and a kill then left recover no master to
        // close the night from: it was stored with no events).
        let master = leftOver.appendingPathComponent(try #require(try NightJournal.load(in: leftOver).master))
        try Data([1, 2, 3]).write(to: master)
        let listed = try CLIHarness.somni(["nights", "--store", store.path])
        #expect(listed.output.hasPrefix("No nights stored yet.") && listed.error.contains("a night in \(recording.path) is not in the store yet")
                && listed.error.contains("'somni recover --store \(store.path)'"), "\(listed.output) \(listed.error)")
        let saved = try CLIHarness.somni(["recover", "--store", store.path, "--lock", lock.path, "--classifier", "heuristic"])
        #expect(saved.status == 0 && saved.output.contains("night-left-over: already closed; saved in the night store as \(id)"),
                "\(saved.output) \(saved.error)")
        #expect(!FileManager.default.fileExists(atPath: leftOver.path))
        let savedNight = store.appendingPathComponent("nights/\(id)")
        #expect(!FileManager.default.fileExists(atPath: savedNight.appendingPathComponent(master.lastPathComponent).path))
        #expect(try Session.load(from: savedNight.appendingPathComponent(Session.fileName)).events.count == session.events.count)
        // One the store holds already (a save across file systems that died after its commit)
        // is removed, not stored twice.
        try FileManager.default.copyItem(at: copy, to: leftOver)
        let twice = try CLIHarness.somni(["recover", "--store", store.path, "--lock", lock.path, "--classifier", "heuristic"])
        #expect(twice.status == 0 && twice.output.contains("already in the night store as \(id); this copy was removed"),
                "\(twice.output) \(twice.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.appendingPathComponent("nights").path) == [id])
        #expect(!FileManager.default.fileExists(atPath: leftOver.path))
        // A folder a recorder claimed and never began (killed at once, before its journal: empty,
        // or a header-only envelope, an empty master and clips/) goes once it is a minute old; one
        // with sound in it, or touched lately, stays.
        let fm = FileManager.default
        func make(_ name: String, master: Int?) throws -> URL {
            let folder = recording.appendingPathComponent(name)
            try fm.createDirectory(at: folder.appendingPathComponent(master == nil ? "" : "clips"), withIntermediateDirectories: true)
            if let master {
                try Data(count: 24).write(to: folder.appendingPathComponent(EnvelopeFile.fileName))
                try Data(count: master).write(to: folder.appendingPathComponent("master.flac"))
            }
            return folder
        }
        let old = Date(timeIntervalSinceNow: -120)
        for folder in [try make("night-empty", master: nil), try make("night-begun", master: 0), try make("night-heard", master: 4_000)] {
            for item in [""] + (try fm.subpathsOfDirectory(atPath: folder.path)) {
                try fm.setAttributes([.modificationDate: old], ofItemAtPath: folder.appendingPathComponent(item).path)
            }
        }
        _ = try make("night-now", master: 0)
        #expect(try CLIHarness.somni(["recover", "--store", store.path, "--lock", lock.path, "--classifier", "heuristic"]).status == 0)
        #expect(try fm.contentsOfDirectory(atPath: recording.path).sorted() == ["night-heard", "night-now"])
    }

    @Test(.enabled(if: CLIHarness.somni != nil))
    func aFullDiskStopsTheAudioKeepsWhatWasSavedAndTheNightCloses() throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.05, seed: 14, in: folder)
        guard let somni = CLIHarness.somni else { return }
        // Files may grow to 300 KiB: the master stops partway; the rest of the night goes on.
        let command = (["ulimit -f 300; exec", somni.path] + recordArguments(["--backend", "file", "--device", wav.path, "--for", "3m"]))
            .joined(separator: " ")
        let result = try CLIHarness.run("/bin/bash", ["-c", command])
        #expect(result.error.contains("audio stopped being saved"))
        let night = try #require(CLIHarness.nightFolder(under: nights))
        let journal = try NightJournal.load(in: night)
        let stoppedAt = try #require(journal.audioStoppedAt)
        #expect(stoppedAt > 5 && stoppedAt < 170)
        #expect(abs(journal.secondsFlushed - 180) < 0.5)
        // The envelope covers the whole night even though the audio stopped.
        let envelope = try EnvelopeFile.read(from: night.appendingPathComponent(EnvelopeFile.fileName))
        #expect(abs(Double(envelope.values.count) - 1_800) <= 1)
        if result.status != 0 {
            // The morning pass needs room too; with space again, recover closes the night.
            let recovered = try CLIHarness.somni(["recover", "--out", nights.path, "--lock", lock.path, "--classifier", "heuristic"])
            #expect(recovered.status == 0, "\(recovered.error)")
        }
        let session = try Session.load(from: night.appendingPathComponent(Session.fileName))
        #expect(session.warnings.contains { $0.contains("audio stopped being saved") })
        // Said in the night's words and the system's reason: not Foundation's dump of its error,
        // nor the reader's "the file ends early" of a master the user never gave.
        #expect(!session.warnings.contains { $0.hasPrefix("the file ends early") || $0.contains("Error Domain") }, "\(session.warnings)")
        // The night is as long as it was; what came after the audio that reached the disk (the
        // writer noticed the failure a little later) is a gap, and the rates are over the rest.
        #expect(abs(session.duration - journal.secondsFlushed) < 0.5, "\(session.duration)")
        let unsaved = try #require(session.gaps?.last)
        #expect(unsaved.start > 10 && unsaved.start <= stoppedAt && abs(unsaved.start + unsaved.duration - session.duration) < 0.01)
        #expect(unsaved.reason.hasPrefix("audio not saved"), "\(unsaved.reason)")
        #expect(session.events.allSatisfy { $0.end <= unsaved.start + 1 })
        #expect(abs((session.summary.recordedSeconds ?? -1) - unsaved.start) < 0.01, "\(session.summary)")
    }

    /// A disk still full when the night ends: one message that says where the night is and that
    /// `somni recover` closes it once there is room (before: only "cannot write …recording.json:
    /// no space left on device"), and with room again, the command it gives, pasted into a shell
    /// as it stands (the lock's name has a space and a quote in it), does.
    @Test(.enabled(if: CLIHarness.somni != nil && CLIHarness.fullDiskAvailable))
    func aDiskStillFullWhenTheNightEndsSaysWhereTheNightIsAndHowToCloseIt() throws {
        let (wav, _) = try CLIHarness.synthesise(hours: 0.05, seed: 15, in: folder)
        guard let somni = CLIHarness.somni else { return }
        let disk = folder.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let script = """
            mount -t tmpfs -o size=256k tmpfs "\(disk.path)" || exit 99
            "\(somni.path)" record --backend file --device "\(wav.path)" --for 3m --out "\(disk.path)/nights" \
              --lock "\(disk.path)/night's lock" --classifier heuristic > "\(folder.path)/out" 2> "\(folder.path)/err"
            echo $? > "\(folder.path)/status"
            ls "\(disk.path)/nights" > "\(folder.path)/nights"
            mount -o remount,size=16m "\(disk.path)"
            given=$(tail -n 1 "\(folder.path)/err" | sed -n "s/.*then run '\\(.*\\)' to close the night$/\\1/p")
            [ -n "$given" ] || exit 98
            eval "\"\(somni.path)\"${given#somni} --classifier heuristic" > "\(folder.path)/recovered" 2>&1
            echo $? > "\(folder.path)/recover-status"
            """
        let result = try CLIHarness.run("/usr/bin/unshare", ["--user", "--map-root-user", "--mount", "/bin/bash", "-c", script])
        try #require(result.status == 0, "\(result.error)")
        func read(_ name: String) -> String {
            ((try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(read("status") == "74", "\(read("err"))")
        let night = read("nights")
        let last = read("err").split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.contains("recording stopped: ") && last.contains("What was recorded is kept in \(disk.path)/nights/\(night)")
                && last.hasSuffix("then run 'somni recover --out \(disk.path)/nights --lock \"\(disk.path)/night's lock\"' to close the night"),
                "\(last)")
        #expect(read("recover-status") == "0" && read("recovered").contains("\(night): recovered"), "\(read("recovered"))")
    }
}
