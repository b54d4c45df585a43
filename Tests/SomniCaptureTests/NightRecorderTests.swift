import Foundation
import SomniAudio
import Testing
@testable import SomniCapture
@testable import SomniCore

/// Scores a window as snoring when it is loud: enough to drive the recorder's live path with
/// signals whose truth the test knows.
struct LoudWindowClassifier: SoundClassifier {
    let labels = ["snoring", "speech", "other"]
    let windowLength = classifierWindowLength
    let name = "loud-window test classifier"
    mutating func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {
        var sum: Float = 0
        for x in window { sum += x * x }
        let loud = (sum / Float(window.count)).squareRoot() > 0.02
        scores[0] = loud ? 0.9 : 0.05
        scores[1] = 0.05
        scores[2] = loud ? 0.05 : 0.9
    }
}

/// A generated night: faint noise, with 1 s bursts of a 120 Hz buzz at the given times (and
/// quieter ones, 0.02 against 0.3, that `LoudWindowClassifier` does not hear).
func syntheticNight(seconds: Int, bursts: [Double], quietBursts: [Double] = [], seed: UInt64 = 7) -> [Float] {
    var state = seed
    var out = [Float](repeating: 0, count: seconds * analysisSampleRate)
    for i in out.indices {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        out[i] = (Float(state >> 40) / Float(1 << 24) - 0.5) * 0.002
    }
    for (b, amplitude) in bursts.map({ ($0, Float(0.3)) }) + quietBursts.map({ ($0, Float(0.02)) }) {
        let start = Int(b * Double(analysisSampleRate))
        for i in start..<min(out.count, start + analysisSampleRate) {
            out[i] += amplitude * Float(sin(2 * Double.pi * 120 * Double(i) / Double(analysisSampleRate)))
        }
    }
    return out
}

/// A device that fails after `failAfter` blocks, as an unplugged microphone does.
final class FailingDevice: CaptureDevice {
    let inner: SourceAsDevice<BufferAudioSource>
    var blocksLeft: Int
    var rate: Int { inner.rate }
    let name = "failing"
    init(_ source: BufferAudioSource, failAfter: Int) { inner = SourceAsDevice(source); blocksLeft = failAfter }
    func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        blocksLeft -= 1
        if blocksLeft < 0 { throw SomniError(.io, "capture device vanished (test)") }
        return try inner.readBlock(into: buffer)
    }
}

/// A device whose read, after `hangAfter` blocks, waits until `until` is signalled and then
/// throws: a driver hung inside a read, released here so the test can end.
final class HangingDevice: CaptureDevice {
    let inner: SourceAsDevice<BufferAudioSource>
    var blocksLeft: Int
    let until: DispatchSemaphore
    var rate: Int { inner.rate }
    let name = "hanging"
    init(_ source: BufferAudioSource, hangAfter: Int, until: DispatchSemaphore) {
        inner = SourceAsDevice(source); blocksLeft = hangAfter; self.until = until
    }
    func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        blocksLeft -= 1
        if blocksLeft < 0 {
            until.wait()
            throw SomniError(.io, "capture device released (test)")
        }
        return try inner.readBlock(into: buffer)
    }
}

/// A device whose first read waits `wait` seconds before its sound: a source slow to give any.
final class SlowToStartDevice: CaptureDevice {
    let inner: SourceAsDevice<BufferAudioSource>
    var wait: Double
    var rate: Int { inner.rate }
    let name = "slow"
    init(_ source: BufferAudioSource, wait: Double) { inner = SourceAsDevice(source); self.wait = wait }
    func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        if wait > 0 { Thread.sleep(forTimeInterval: wait); wait = 0 }
        return try inner.readBlock(into: buffer)
    }
}

final class ReportedSeconds: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: Double?
    func set(_ value: Double) { lock.withLock { seconds = value } }
    var value: Double? { lock.withLock { seconds } }
}

/// A device that, after `stallAfter` blocks, gives nothing: each read waits `seconds` and throws
/// `CaptureStalled`, as a stalled sound server or a suspended source does.
final class StallingDevice: CaptureDevice {
    let inner: SourceAsDevice<BufferAudioSource>
    var blocksLeft: Int
    let seconds: Double
    var rate: Int { inner.rate }
    let name = "stalling"
    init(_ source: BufferAudioSource, stallAfter: Int, for seconds: Double) {
        inner = SourceAsDevice(source); blocksLeft = stallAfter; self.seconds = seconds
    }
    func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        blocksLeft -= 1
        if blocksLeft < 0 {
            Thread.sleep(forTimeInterval: seconds)
            throw CaptureStalled(device: name, seconds: seconds)
        }
        return try inner.readBlock(into: buffer)
    }
}

func temporaryFolder(_ tag: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-\(tag)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func decodedLength(_ url: URL) throws -> Int {
    try CLIHarness.decode(url).count
}

/// A microphone that gives its sound as it happens, a tenth of a second at a time, and nothing
/// at all for `stall` seconds after `stallAt` (a laptop asleep with its lid shut, a stalled
/// sound server): that sound is lost, not held back.
final class PacedMicrophone: AudioSource {
    private let samples: [Float]
    private var position = 0
    private let stallAt: Int, stall: Double
    private var stalled = false
    let warnings: [String] = []
    var expectedDuration: Double? { nil }

    init(_ samples: [Float], stallAt seconds: Double, for stall: Double) {
        self.samples = samples; stallAt = Int(seconds * 16_000); self.stall = stall
    }

    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        if !stalled, position >= stallAt {
            stalled = true
            Thread.sleep(forTimeInterval: stall)
            position += Int(stall * 16_000)
        }
        let n = min(buffer.count, 1_600, samples.count - position)
        guard n > 0 else { return 0 }
        Thread.sleep(forTimeInterval: Double(n) / 16_000)
        samples.withUnsafeBufferPointer { src in _ = UnsafeMutableBufferPointer(rebasing: buffer[0..<n]).initialize(from: src[position..<position + n]) }
        position += n
        return n
    }
}

/// The journal of a night-mode night of a 16 kHz microphone, its master "master.flac".
func nightModeJournal() -> NightJournal {
    NightJournal(mode: .night, startedAt: Date(timeIntervalSince1970: 1_795_900_000), device: "test",
                 captureRate: 16_000, master: "master.flac", keepAudio: false)
}

@Suite struct NightRecorderTests {
    /// Sound the microphone never gave (a stall of 3 s, 2 s in) is time the night still passes:
    /// silence, recorded as a gap, so a burst 7 s in on the clock is 7 s in on the night (before,
    /// the night's time stood still while nothing came, and everything after sat early). The
    /// margins allow for a loaded machine pacing the microphone late.
    @Test func timeTheMicrophoneNeverGaveIsAGapNotLost() throws {
        let folder = try temporaryFolder("stall")
        defer { try? FileManager.default.removeItem(at: folder) }
        let night = syntheticNight(seconds: 9, bursts: [7])
        var notes: [String] = []
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .night, duration: 3600, keepAudio: true, stallGap: 1.5),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 16_000,
            openCapture: { PacedMicrophone(night, stallAt: 2, for: 3) },
            observe: { if case .note(let text) = $0 { notes.append(text) } })
        let journal = try recorder.run()
        let gap = try #require(journal.gaps.first, "\(notes)")
        #expect(journal.gaps.count == 1, "\(journal.gaps)")
        #expect(abs(gap.start - 2) < 0.5 && abs(gap.duration - 3) < 0.6, "\(gap)")
        #expect(gap.reason.contains("no sound came from the microphone"))
        #expect(notes.contains { $0.hasPrefix("no sound came from the microphone for 3 s") }, "\(notes)")
        #expect(abs(journal.secondsFlushed - 9) < 0.6, "\(journal.secondsFlushed)")
        let envelope = try EnvelopeFile.read(from: folder.appendingPathComponent(EnvelopeFile.fileName)).values
        let onset = try #require(envelope.indices.first { envelope[$0] > 0.15 })
        #expect(abs(Double(onset) / 10 - 7) < 0.6, "the burst at \(Double(onset) / 10) s")
    }

    /// A night-mode night whose master holds no sound (a recorder killed before its first frame
    /// reached the disk) is closed with its overnight levels and no events, saying why: before,
    /// every `recover` and every later `record` failed on it, for good.
    @Test func aNightWhoseMasterHoldsNoSoundIsClosedWithItsLevels() throws {
        let folder = try temporaryFolder("empty-master")
        defer { try? FileManager.default.removeItem(at: folder) }
        var journal = nightModeJournal()
        journal.secondsFlushed = 60
        try journal.save(in: folder)
        try Data().write(to: folder.appendingPathComponent("master.flac"))
        try EnvelopeFile.write(values: [Float](repeating: 0.02, count: 600), rate: 10, start: nil,
                               to: folder.appendingPathComponent(EnvelopeFile.fileName))
        let session = try NightCloser.close(folder: folder, classifierName: "test", sensitivity: 5, recovered: true) { master, _, _ in
            _ = try AudioDecoder(url: master)  // the real reader: an empty file is no audio
            Issue.record("an empty master was read")
            throw SomniError(.internalError, "unreachable")
        }
        #expect(session.events.isEmpty && abs(session.duration - 60) < 0.01)
        #expect(session.warnings.contains { $0.hasPrefix("the night's recording could not be analysed (") }, "\(session.warnings)")
        #expect(try EnvelopeFile.read(from: folder.appendingPathComponent(EnvelopeFile.fileName)).values.count == 600)
        #expect(try NightJournal.load(in: folder).status == .analysed)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(Session.fileName).path))
    }

    /// A disk that filled in the night stops the audio, not the night: the rest of it, its
    /// levels still in the envelope, is a gap "audio not saved" (taking in any gap the recorder
    /// met there), the night is as long as it was, and its rates are over the time with audio.
    /// Before, the night ended where its audio did, and the hours after were not in it.
    /// A night whose capture ended cleanly and whose morning did not finish (a full disk) lost no
    /// sound, and says so when recover closes it: it said the recorder had stopped unexpectedly.
    @Test(arguments: [NightJournal.Status.captured, .recording])
    func aRecoveredNightSaysWhatWasInterrupted(status: NightJournal.Status) throws {
        let folder = try temporaryFolder("morning-failed")
        defer { try? FileManager.default.removeItem(at: folder) }
        var journal = nightModeJournal()
        journal.secondsFlushed = 60
        journal.status = status
        try journal.save(in: folder)
        try Data([1]).write(to: folder.appendingPathComponent("master.flac"))
        let session = try NightCloser.close(folder: folder, classifierName: "test", sensitivity: 5, recovered: true) { _, _, journal in
            journal.liveSession(duration: 60, classifierName: "test", sensitivity: 5)
        }
        let said = status == .captured ? "the morning analysis did not finish when the night ended" : "the recorder stopped unexpectedly"
        #expect(session.warnings.filter { $0.contains(said) }.count == 1, "\(session.warnings)")
        #expect(!session.warnings.contains { $0.contains(status == .captured ? "stopped unexpectedly" : "did not finish") })
        // With no master's fingerprint, the night is known by its recorder and start: nights
        // begun in one second were listed as copies of each other.
        #expect(session.sourceFingerprint == "recorded \(journal.startedAt) by \(folder.lastPathComponent)", "\(session.sourceFingerprint ?? "none")")
    }

    @Test func aNightWhoseAudioStoppedIsAsLongAsItWasWithTheRestAGap() throws {
        let folder = try temporaryFolder("audio-stopped")
        defer { try? FileManager.default.removeItem(at: folder) }
        var journal = nightModeJournal()
        journal.secondsFlushed = 300
        journal.audioStoppedAt = 120
        let lost = RecordingGap(start: 30, duration: 10, reason: "capture device lost")
        journal.gaps = [lost, RecordingGap(start: 200, duration: 20, reason: "capture device lost again")]
        try journal.save(in: folder)
        try Data([1]).write(to: folder.appendingPathComponent("master.flac"))
        try EnvelopeFile.write(values: [Float](repeating: 0.02, count: 3_000), rate: 10, start: nil,
                               to: folder.appendingPathComponent(EnvelopeFile.fileName))
        let session = try NightCloser.close(folder: folder, classifierName: "test", sensitivity: 5, recovered: false) { _, _, journal in
            // The master ends a little before the recorder noticed the disk was full.
            let snores = [50.0, 90].map {
                SessionEvent(id: "evt-\($0)", eventClass: .snoring, start: $0, end: $0 + 6, confidence: 0.9,
                             peakDBFS: -20, meanDBFS: -25, severity: 40)
            }
            let gaps = journal.gaps.filter { $0.start < 118 }
            var s = Session(source: "microphone", startedAt: nil, duration: 118, analysedSeconds: 60, activeShare: 0.5,
                            settings: .init(sensitivity: 5, classifier: "test"),
                            summary: SessionSummary(duration: 118, analysedSeconds: 60, activeShare: 0.5, gateBypassed: false,
                                                    events: snores, episodes: [], recordedSeconds: RecordingGap.recorded(of: 118, less: gaps)),
                            episodes: [], events: snores, warnings: [])
            s.gaps = gaps
            return s
        }
        #expect(session.duration == 300 && session.summary.duration == 300)
        let unsaved = RecordingGap(start: 118, duration: 182, reason: "audio not saved: the disk was full or the file too large")
        #expect(session.gaps == [lost, unsaved], "\(session.gaps ?? [])")
        #expect(session.recordedSeconds == 108 && session.summary.recordedSeconds == 108)
        #expect(abs((session.summary.eventsPerHour["snoring"] ?? -1) - 2 * 3600 / 108) < 1e-9)
        #expect(abs(session.summary.snoringPercent - 100 * 12 / 108) < 1e-9)
        #expect(session.events.count == 2 && session.inconsistency == nil)
        #expect(try EnvelopeFile.read(from: folder.appendingPathComponent(EnvelopeFile.fileName)).values.count == 3_000)
    }

    /// A disk still full when the recorder last wrote its journal leaves no word that the audio
    /// stopped: the envelope going on past the audio says it. Before, such a night ended where
    /// its audio did (a fresh-eyes pass: 65 s of a 90 s night). A crash's few seconds more of
    /// envelope than audio are not that.
    @Test(arguments: [(envelope: 3_000, gapFrom: 118.0 as Double?), (envelope: 1_200, gapFrom: nil)])
    func anEnvelopeFarPastTheAudioIsAudioNotSavedEvenUnsaid(envelope: Int, gapFrom: Double?) throws {
        let folder = try temporaryFolder("audio-stopped-unsaid")
        defer { try? FileManager.default.removeItem(at: folder) }
        var journal = nightModeJournal()
        journal.secondsFlushed = 60  // the last journal the full disk let through
        journal.audioStoppedAt = nil
        try journal.save(in: folder)
        try Data([1]).write(to: folder.appendingPathComponent("master.flac"))
        try EnvelopeFile.write(values: [Float](repeating: 0.02, count: envelope), rate: 10, start: nil,
                               to: folder.appendingPathComponent(EnvelopeFile.fileName))
        let audio = gapFrom ?? 118
        let session = try NightCloser.close(folder: folder, classifierName: "test", sensitivity: 5, recovered: true) { _, _, _ in
            Session(source: "microphone", startedAt: nil, duration: audio, analysedSeconds: 60, activeShare: 0.5,
                    settings: .init(sensitivity: 5, classifier: "test"),
                    summary: SessionSummary(duration: audio, analysedSeconds: 60, activeShare: 0.5, gateBypassed: false,
                                            events: [], episodes: []),
                    episodes: [], events: [], warnings: [])
        }
        if let gapFrom {
            #expect(session.duration == 300 && session.gaps?.map(\.start) == [gapFrom], "\(session.gaps ?? [])")
            #expect(session.gaps?.first?.reason.hasPrefix("audio not saved") == true && session.recordedSeconds == gapFrom)
        } else {
            #expect(session.duration == 118 && session.gaps == nil, "\(session.gaps ?? [])")
        }
        #expect(session.inconsistency == nil)
    }

    /// A night closed after a crash has audio up to the master's last flush; a gap the recorder
    /// was in when it died runs past that. It is cut at the night's end, where before the night
    /// said a gap ran outside it, and the store refused it.
    @Test func aGapPastTheAudioACrashLeftIsCutAtTheNightsEnd() throws {
        let folder = try temporaryFolder("gap-past-end")
        defer { try? FileManager.default.removeItem(at: folder) }
        var journal = nightModeJournal()
        journal.secondsFlushed = 140
        journal.gaps = [RecordingGap(start: 100, duration: 40, reason: "capture device lost")]
        try journal.save(in: folder)
        try Data([1]).write(to: folder.appendingPathComponent("master.flac"))
        let session = try NightCloser.close(folder: folder, classifierName: "test", sensitivity: 5, recovered: true) { _, _, _ in
            let snore = SessionEvent(id: "evt-0001", eventClass: .snoring, start: 50, end: 56, confidence: 0.9,
                                     peakDBFS: -20, meanDBFS: -25, severity: 40)
            return Session(source: "microphone", startedAt: nil, duration: 110, analysedSeconds: 60, activeShare: 0.5,
                           settings: .init(sensitivity: 5, classifier: "test"),
                           summary: SessionSummary(duration: 110, analysedSeconds: 60, activeShare: 0.5, gateBypassed: false,
                                                   events: [snore], episodes: [], recordedSeconds: 100),
                           episodes: [], events: [snore], warnings: [])
        }
        #expect(session.gaps == [RecordingGap(start: 100, duration: 10, reason: "capture device lost")])
        #expect(session.inconsistency == nil && session.duration == 110)
        #expect(session.summary.recordedSeconds == 100 && session.summary.eventsPerHour["snoring"] == 36)
    }

    /// A night whose microphone gives nothing for a while is still its recorder's: the journal is
    /// touched every minute from a thread of its own, and a journal touched lately names a live
    /// recorder however long ago its content was written.
    @Test func aJournalTouchedLatelyNamesALiveRecorder() throws {
        let folder = try temporaryFolder("touched")
        defer { try? FileManager.default.removeItem(at: folder) }
        var journal = NightJournal(mode: .night, startedAt: Date(timeIntervalSinceNow: -3_600), device: "test", captureRate: 16_000,
                                   master: nil, keepAudio: false)
        // Another process on this machine, alive: the first one.
        journal.recorder = .init(pid: 1, host: ProcessInfo.processInfo.hostName, boot: LocalProcess.bootID)
        try journal.save(in: folder)
        let file = folder.appendingPathComponent(NightJournal.fileName).path
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3_600)], ofItemAtPath: file)
        #expect(LocalProcess.liveRecorder(of: journal, in: folder) == nil, "written an hour ago, touched an hour ago")
        let touching = LocalProcess.keepTouching(journalIn: folder, every: 0.1)
        defer { touching.cancel() }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(LocalProcess.liveRecorder(of: journal, in: folder)?.pid == 1)
        #expect(LocalProcess.liveRecorder(of: journal) == nil, "the content alone is an hour old")
    }

    @Test func nightModeWritesTheEnvelopeAndAStreamableMasterOfTheWholeNight() throws {
        let folder = try temporaryFolder("night")
        defer { try? FileManager.default.removeItem(at: folder) }
        let night = syntheticNight(seconds: 100, bursts: [40, 41, 70])
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .night, duration: 3600, keepAudio: true),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 48_000,
            openCapture: { try CaptureStream(device: SourceAsDevice(BufferAudioSource(night))) })
        let journal = try recorder.run()
        #expect(journal.status == .captured)
        #expect(abs(journal.secondsFlushed - 100) < 0.01)
        let envelope = try EnvelopeFile.read(from: folder.appendingPathComponent(EnvelopeFile.fileName))
        #expect(envelope.values.count == 1_000)
        // Loud where the bursts were (0.3 amplitude sine: RMS 0.21), faint elsewhere.
        #expect(envelope.values[405] > 0.15)
        #expect(envelope.values[705] > 0.15)
        #expect(envelope.values[200] < 0.01)
        let master = folder.appendingPathComponent("master.flac")
        #expect(abs(try decodedLength(master) - night.count) < 100)
        // No temporary names left behind.
        let hidden = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty)
    }

    @Test func liveModeKeepsOnlyEpisodeAudioWithPreRollAndBackdatedStarts() throws {
        let folder = try temporaryFolder("live")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A snoring episode: bursts every 4 s from 30 s to 50 s; then a single burst at 80 s.
        let bursts = stride(from: 30.0, through: 50, by: 4).map { $0 } + [80]
        let night = syntheticNight(seconds: 120, bursts: bursts)
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .live, duration: 3600),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 48_000,
            openCapture: { try CaptureStream(device: SourceAsDevice(BufferAudioSource(night))) })
        let journal = try recorder.run()
        #expect(journal.master == nil)
        // The 80 s burst spans two overlapping windows, so it starts a (short) episode too.
        #expect(journal.episodes.count == 2)
        let first = try #require(journal.episodes.first)
        // Backdated: the first positive window starts before the first burst at 30 s.
        #expect(first.episode.start <= 30)
        #expect(first.episode.start > 28.5)
        #expect(abs(first.episode.end - 51) < 1)
        // The clip covers the episode with 1 s either side (the lead-in comes from the pre-roll),
        // like a morning clip, and is levelled to a 0.9 peak as they are.
        #expect(abs(first.clipStart - (first.episode.start - 1)) < 0.01)
        let clip = try CLIHarness.decode(folder.appendingPathComponent(try #require(first.clip)))
        #expect(abs(Double(clip.count) / 16_000 - (first.episode.end + 1 - first.clipStart)) < 0.2)
        #expect(abs((clip.map(abs).max() ?? 0) - 0.9) < 0.02)
        // The recorded levels are the room's, not the levelled clip's, and measured as the morning
        // pass measures an event's: over 50 ms frames (a 0.3 amplitude sine: RMS −13.5 dBFS, where
        // its sample peak would read −10.5).
        #expect(abs(first.peakDBFS - 20 * log10(0.3 / 2.0.squareRoot())) < 0.1)
        let extractor = FeatureExtractor()
        night.withUnsafeBufferPointer { extractor.process($0) }
        extractor.finish()
        for record in journal.episodes {
            let morning = EventDetector.levels(TimeRange(start: record.episode.start, end: record.episode.end),
                                               frames: extractor.frames)
            #expect(abs(record.peakDBFS - morning.peakDBFS) < 0.05, "\(record) against \(morning)")
            #expect(abs(record.meanDBFS - morning.meanDBFS) < 0.05, "\(record) against \(morning)")
        }
        // Nothing but clips, the envelope and the journal on disk.
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files == ["clips", "envelope.bin", "recording.json"])
        let session = try NightCloser.close(folder: folder, classifierName: "test", sensitivity: 5, recovered: false,
                                            morning: { _, _, _ in throw SomniError(.internalError, "no morning in live mode") })
        #expect(session.events.count == 2)
        #expect(try NightJournal.load(in: folder).status == .analysed)
        // Dated by the recorder's clock, in the zone it ran in (for nights across a clock change).
        #expect(session.startedFrom == .recorder && session.startedAt == journal.startedAt)
        #expect(session.timeZone != nil && session.timeZone == TimeZone.current.identifier)
    }

    /// Snores the classifier misses between heard ones (a faint snorer under a fan: every other
    /// snore) keep the episode, and its clip, whole, as the morning pass bridges them; with the
    /// bridge off it splits at each pause longer than 10 s.
    @Test func liveModeBridgesSnoresTheClassifierMissesIntoOneEpisodeAndClip() throws {
        // Heard snores every 4 s at 30–42 s and 62–74 s; between them snores it cannot hear.
        let night = syntheticNight(seconds: 100, bursts: [30, 34, 38, 42, 62, 66, 70, 74],
                                   quietBursts: [46, 50, 54, 58])
        func record(bridge: Double) throws -> (NightJournal, URL) {
            let folder = try temporaryFolder("bridge")
            var settings = RecorderSettings(mode: .live, duration: 3600)
            settings.live.bridgeReach = bridge
            let recorder = try NightRecorder(
                folder: folder, settings: settings, classifier: LoudWindowClassifier(), device: "test", captureRate: 16_000,
                openCapture: { try CaptureStream(device: SourceAsDevice(BufferAudioSource(night))) })
            return (try recorder.run(), folder)
        }
        let (bridged, folder) = try record(bridge: 60)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(bridged.episodes.count == 1)
        let episode = try #require(bridged.episodes.first)
        #expect(episode.episode.start > 28.5 && episode.episode.start <= 30)
        #expect(abs(episode.episode.end - 75) < 1)
        // The clip runs unbroken from 1 s before the start to 1 s after the end: the night's
        // sound in that stretch, levelled (compared by the half second: capture filters a little).
        let clip = try CLIHarness.decode(folder.appendingPathComponent(try #require(episode.clip)))
        let first = Int((episode.clipStart * 16_000).rounded())
        #expect(abs(Double(clip.count) / 16_000 - (episode.episode.end + 1 - episode.clipStart)) < 0.2)
        let gain = 0.9 / (night[first..<(first + clip.count)].map(abs).max() ?? 1)
        func rms(_ x: ArraySlice<Float>) -> Float { (x.map { $0 * $0 }.reduce(0, +) / Float(x.count)).squareRoot() }
        for t in stride(from: 44.0, through: 61, by: 0.5) {
            let a = Int(t * 16_000), heard = rms(clip[(a - first)..<(a - first + 8000)]), played = gain * rms(night[a..<(a + 8000)])
            if played > 0.01 {
                #expect(abs(heard - played) < 0.02 * played, "clip at \(t) s: \(heard) for \(played)")
            } else {
                #expect(heard < 0.005, "clip at \(t) s: \(heard) for \(played)")
            }
        }

        let (split, splitFolder) = try record(bridge: 0)
        defer { try? FileManager.default.removeItem(at: splitFolder) }
        #expect(split.episodes.count == 2)
        #expect(split.episodes.first.map { abs($0.episode.end - 43) < 1 } == true)
        // Each clip whole with the smallest pre-roll too: the hum step hands the stream on 16 s
        // at a time, and a pre-roll of 15 s given a whole block lost the start of every clip.
        for record in split.episodes {
            let clip = try CLIHarness.decode(splitFolder.appendingPathComponent(try #require(record.clip)))
            #expect(abs(record.clipStart - (record.episode.start - 1)) < 0.01, "\(record)")
            #expect(abs(Double(clip.count) / 16_000 - (record.episode.end + 1 - record.clipStart)) < 0.01, "\(record) \(clip.count)")
        }
    }

    /// Mains hum loud enough to read as snoring all night is taken out before the live detector
    /// hears it and before the clips keep it, and the night says so.
    @Test func liveModeTakesMainsHumOutOfWhatItHearsAndKeeps() throws {
        var night = syntheticNight(seconds: 100, bursts: [30, 34, 38, 42])
        // 50 Hz at −30 dBFS: every window is over the test classifier's loudness on its own.
        for i in night.indices { night[i] += 0.045 * Float(sin(2 * Double.pi * 50 * Double(i) / 16_000)) }
        let folder = try temporaryFolder("hum")
        defer { try? FileManager.default.removeItem(at: folder) }
        // What the journal on disk says 45 s in, as a recorder killed then would leave it.
        var ticks = 0
        var savedMidNight: [String] = []
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .live, duration: 3600), classifier: LoudWindowClassifier(),
            device: "test", captureRate: 16_000,
            openCapture: { try CaptureStream(device: SourceAsDevice(BufferAudioSource(night))) },
            heartbeat: {
                ticks += 1
                if ticks == 45 { savedMidNight = (try? NightJournal.load(in: folder))?.warnings ?? ["no journal"] }
            })
        let journal = try recorder.run()
        #expect(savedMidNight.contains { $0.hasPrefix("the recording has mains hum (50.0 Hz") }, "\(savedMidNight)")
        #expect(journal.warnings.filter { $0.contains("mains hum") }.count == 1, "\(journal.warnings)")
        #expect(journal.episodes.count == 1, "\(journal.episodes.map(\.episode))")
        let episode = try #require(journal.episodes.first)
        #expect(episode.episode.start > 28.5 && episode.episode.start <= 30)
        #expect(abs(episode.episode.end - 43) < 1)
        #expect(journal.warnings.contains { $0.hasPrefix("the recording has mains hum (50.0 Hz, about -30 dBFS") },
                "\(journal.warnings)")
        // The clip's lead-in, before the first snore, holds no hum (levelled, it would read 0.13).
        let clip = try CLIHarness.decode(folder.appendingPathComponent(try #require(episode.clip)))
        let leadIn = clip[0..<8000]
        let rms = (leadIn.map { $0 * $0 }.reduce(0, +) / Float(leadIn.count)).squareRoot()
        #expect(rms < 0.01, "\(rms)")
    }

    /// The noise floor live mode gives a classifier that reads one (the heuristic) is that of
    /// what the detector hears, hum taken out: from the night's own envelope, the floor stood at
    /// the hum's level and the heuristic heard no snore under it.
    @Test func liveModesNoiseFloorIsThatOfTheSoundWithoutItsHum() throws {
        final class FloorProbe: SoundClassifier, @unchecked Sendable {
            let labels = ["snoring", "other"]
            let windowLength = classifierWindowLength
            let name = "floor probe"
            var floors: [Float] = []
            func prepare(noiseFloor: Float) { floors.append(noiseFloor) }
            var readsNoiseFloor: Bool { true }
            func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {
                scores[0] = 0; scores[1] = 1
            }
        }
        var night = syntheticNight(seconds: 100, bursts: [])
        for i in night.indices { night[i] += 0.045 * Float(sin(2 * Double.pi * 50 * Double(i) / 16_000)) }
        let folder = try temporaryFolder("floor")
        defer { try? FileManager.default.removeItem(at: folder) }
        let probe = FloorProbe()
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .live, duration: 3600), classifier: probe,
            device: "test", captureRate: 16_000,
            openCapture: { try CaptureStream(device: SourceAsDevice(BufferAudioSource(night))) })
        _ = try recorder.run()
        // The room's noise is about −65 dBFS, the hum −30 dBFS.
        let floor = try #require(probe.floors.last)
        #expect(floor > 0 && floor < 0.003, "\(probe.floors)")
    }

    /// The night starts when the microphone gives its first sound, not when the recorder was
    /// asked for: a sound server that takes seconds to connect would otherwise put every event
    /// that much early on the clock.
    @Test func theNightStartsWhenTheMicrophoneOpens() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-rec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let asked = Date(timeIntervalSince1970: 1_795_900_000)  // a whole second
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .live, duration: 3600),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 16_000, startedAt: asked,
            openCapture: {
                Thread.sleep(forTimeInterval: 2)
                return try CaptureStream(device: SourceAsDevice(BufferAudioSource([Float](repeating: 0, count: 16_000))))
            })
        let journal = try recorder.run()
        let late = try #require(journal.startDate).timeIntervalSince(asked)
        #expect(late >= 2 && late <= 3, "started \(late) s after it was asked for")
    }

    /// ... also when the device opens at once and its first sound comes later (a sound server's
    /// monitor source gives it about 2 s after opening): the night started at the open, and
    /// every event sat 2 s early. The envelope's header starts there too.
    @Test func theNightStartsAtTheFirstSoundAfterTheOpen() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-rec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let asked = Date(timeIntervalSince1970: 1_795_900_000)
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .live, duration: 3600),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 16_000, startedAt: asked,
            openCapture: { try CaptureStream(device: SlowToStartDevice(BufferAudioSource([Float](repeating: 0, count: 16_000)), wait: 2)) })
        let journal = try recorder.run()
        let late = try #require(journal.startDate).timeIntervalSince(asked)
        #expect(late >= 2 && late <= 3, "started \(late) s after it was asked for")
        let envelopeStart = try #require(EnvelopeFile.read(from: folder.appendingPathComponent(EnvelopeFile.fileName)).start)
        #expect(abs(envelopeStart.timeIntervalSince(asked) - late) < 1, "envelope from \(envelopeStart.timeIntervalSince(asked)) s")

        // A device that stalled from its open: that time is a gap from the start, not a later start too.
        let stalled = folder.appendingPathComponent("stalled")
        var opens = 0
        let again = try NightRecorder(
            folder: stalled, settings: RecorderSettings(mode: .live, duration: 3, retryDelay: 0.05...0.1),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 16_000, startedAt: asked,
            openCapture: {
                opens += 1
                let night = BufferAudioSource([Float](repeating: 0, count: 48_000))
                return opens == 1 ? try CaptureStream(device: StallingDevice(night, stallAfter: 0, for: 1))
                    : try CaptureStream(device: SourceAsDevice(night))
            })
        let stalledJournal = try again.run()
        #expect(try #require(stalledJournal.startDate).timeIntervalSince(asked) < 0.5)
        #expect(stalledJournal.gaps.first.map { $0.start == 0 && $0.duration >= 1 } == true, "\(stalledJournal.gaps)")
    }

    @Test func aDCOffsetChangesNeitherTheEpisodesLevelsNorTheLiveLevel() throws {
        // A cheap USB sound card's offset, under the test classifier's loudness line (0.02) so
        // that the same episodes are found; before, it read as a −36.5 dBFS room.
        let night = syntheticNight(seconds: 60, bursts: [20, 24, 28])
        func record(_ samples: [Float]) throws -> (NightJournal, [Double]) {
            let folder = try temporaryFolder("live-dc")
            defer { try? FileManager.default.removeItem(at: folder) }
            var levels: [Double] = []
            let recorder = try NightRecorder(
                folder: folder, settings: RecorderSettings(mode: .live, duration: 3600),
                classifier: LoudWindowClassifier(), device: "test", captureRate: 16_000,
                openCapture: { try CaptureStream(device: SourceAsDevice(BufferAudioSource(samples))) },
                observe: { if case .status(let s) = $0 { levels.append(s.levelDBFS) } })
            return (try recorder.run(), levels)
        }
        let (plain, plainLevels) = try record(night)
        let (offset, offsetLevels) = try record(night.map { $0 + 0.015 })
        #expect(plain.episodes.count == 1)
        #expect(offset.episodes.map(\.episode) == plain.episodes.map(\.episode))
        for (a, b) in zip(offset.episodes, plain.episodes) {
            #expect(abs(a.peakDBFS - b.peakDBFS) < 0.05, "\(a.peakDBFS) against \(b.peakDBFS)")
            #expect(abs(a.meanDBFS - b.meanDBFS) < 0.05, "\(a.meanDBFS) against \(b.meanDBFS)")
        }
        // The live line's level of each second: the quiet room (−65 dBFS) reads as quiet. The first
        // second is left out: the rate converter's filter starts from zeros, so the offset enters
        // it as a step.
        #expect(offsetLevels.count == plainLevels.count && offsetLevels.count >= 59)
        for (i, (a, b)) in zip(offsetLevels, plainLevels).enumerated().dropFirst() {
            #expect(abs(a - b) < 0.2, "second \(i): \(a) against \(b)")
        }
        #expect(offsetLevels[5] < -60)
    }

    /// A night-mode night whose device, opened for the n-th time, is `open(n)`, retried quickly.
    private func recordReopening(in folder: URL, _ open: @escaping (Int) throws -> any AudioSource) throws
        -> (journal: NightJournal, opens: Int, notes: [String]) {
        var opens = 0
        var notes: [String] = []
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .night, duration: 3600, retryDelay: 0.05...0.2),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 48_000,
            openCapture: { opens += 1; return try open(opens) },
            observe: { if case .note(let text) = $0 { notes.append(text) } })
        let journal = try recorder.run()
        return (journal, opens, notes)
    }

    /// The night's end cuts short a wait for a device that is away: --for and --until ended the
    /// night only at the next try, up to the longest wait (30 s) late.
    @Test func aNightWhoseDeviceIsAwayEndsOnTime() throws {
        let folder = try temporaryFolder("away")
        defer { try? FileManager.default.removeItem(at: folder) }
        let night = syntheticNight(seconds: 60, bursts: [])
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .night, duration: 22, retryDelay: 20...30),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 48_000,
            openCapture: {
                if FileManager.default.fileExists(atPath: folder.appendingPathComponent(NightJournal.fileName).path) {
                    throw SomniError(.io, "no such device")  // unplugged for good
                }
                return try CaptureStream(device: FailingDevice(BufferAudioSource(night), failAfter: 200))
            })
        let began = Date()
        let journal = try recorder.run()
        // 20 s of sound come at once, then 2 s of night are left to wait out, not the first 20 s retry.
        #expect(Date().timeIntervalSince(began) < 10, "ended \(Date().timeIntervalSince(began)) s after it began")
        #expect(abs(journal.secondsFlushed - 22) < 0.15, "\(journal.secondsFlushed)")
        #expect(journal.gaps.count == 1 && abs((journal.gaps.first?.start ?? 0) - 20) < 0.01)
    }

    /// A device that gives sound far faster than the clock runs (ALSA's null device) is no
    /// microphone: the night ends, said, once it is 20 s ahead, not hours of "night" later.
    /// A file played as the microphone, which reads as fast as it can, is not held to it.
    @Test(arguments: [true, false])
    func aDeviceAheadOfTheClockEndsTheNightSaid(keepsTime: Bool) throws {
        let folder = try temporaryFolder("ahead")
        defer { try? FileManager.default.removeItem(at: folder) }
        let night = syntheticNight(seconds: 60, bursts: [])
        var settings = RecorderSettings(mode: .night, duration: 45)
        settings.keepsTime = keepsTime
        let recorder = try NightRecorder(
            folder: folder, settings: settings, classifier: LoudWindowClassifier(), device: "test", captureRate: 48_000,
            openCapture: { try CaptureStream(device: SourceAsDevice(BufferAudioSource(night))) })
        let journal = try recorder.run()
        if keepsTime {
            #expect(journal.secondsFlushed > RecorderSettings.mostAhead && journal.secondsFlushed < RecorderSettings.mostAhead + 5,
                    "\(journal.secondsFlushed)")
            #expect(journal.warnings.contains { $0.contains("it does not keep time as a microphone does") }, "\(journal.warnings)")
        } else {
            #expect(abs(journal.secondsFlushed - 45) < 0.15, "\(journal.secondsFlushed)")
            #expect(journal.warnings.isEmpty, "\(journal.warnings)")
        }
    }

    /// A read that never returns (a driver hung inside it) is reported once the limit has
    /// passed, from outside the stuck loop: the night was held for good, past --until.
    @Test func aReadThatNeverReturnsIsReported() throws {
        let folder = try temporaryFolder("hung")
        defer { try? FileManager.default.removeItem(at: folder) }
        let night = syntheticNight(seconds: 60, bursts: [])
        let release = DispatchSemaphore(value: 0)
        let reported = ReportedSeconds()
        var settings = RecorderSettings(mode: .night, duration: 8, retryDelay: 0.05...0.1)
        settings.hungAfter = 1
        settings.deviceHung = { seconds in reported.set(seconds); release.signal() }
        var opens = 0
        let recorder = try NightRecorder(
            folder: folder, settings: settings, classifier: LoudWindowClassifier(), device: "test", captureRate: 48_000,
            openCapture: {
                opens += 1
                if opens > 1 { throw SomniError(.io, "no such device") }
                return try CaptureStream(device: HangingDevice(BufferAudioSource(night), hangAfter: 50, until: release))
            })
        let journal = try recorder.run()
        let seconds = try #require(reported.value)
        #expect(seconds >= 1 && seconds < 3, "\(seconds)")
        // Released, the read failed as a lost device's does: a gap from where the sound stopped.
        #expect(journal.gaps.first.map { abs($0.start - 5) < 0.01 } == true, "\(journal.gaps)")
    }

    @Test func aVanishedDeviceIsRetriedAndTheGapKeepsTheClock() throws {
        let folder = try temporaryFolder("gap")
        defer { try? FileManager.default.removeItem(at: folder) }
        let night = syntheticNight(seconds: 60, bursts: [])
        let (journal, opens, _) = try recordReopening(in: folder) { n in
            switch n {
            case 1: return try CaptureStream(device: FailingDevice(BufferAudioSource(night), failAfter: 200))
            case 2, 3: throw SomniError(.io, "no such device")   // still unplugged
            default: return try CaptureStream(device: SourceAsDevice(BufferAudioSource(night)))
            }
        }
        #expect(opens == 4)
        let gap = try #require(journal.gaps.first)
        #expect(journal.gaps.count == 1)
        #expect(abs(gap.start - 20) < 0.01)   // 200 blocks of 100 ms
        // Waited 0.05 + 0.1 + 0.2 s (backoff) before the device came back.
        #expect(gap.duration >= 0.3 && gap.duration < 2)
        #expect(gap.reason.contains("vanished"))
        #expect(abs(journal.secondsFlushed - (80 + gap.duration)) < 0.15)
    }

    /// A device that stalls, and stalls again each time it is reopened, until sound comes back, is
    /// one gap with one note each way, its time (the stalled reads' included) kept on the clock.
    /// Before, a read waited for ever: `--until` never came and Ctrl-C could not end the night.
    @Test func aStalledDeviceIsOneGapUntilSoundComesBack() throws {
        let folder = try temporaryFolder("stalled")
        defer { try? FileManager.default.removeItem(at: folder) }
        let night = syntheticNight(seconds: 30, bursts: [])
        let (journal, opens, notes) = try recordReopening(in: folder) { n in
            switch n {
            case 1: return try CaptureStream(device: StallingDevice(BufferAudioSource(night), stallAfter: 100, for: 0.3))
            case 2, 3: return try CaptureStream(device: StallingDevice(BufferAudioSource(night), stallAfter: 0, for: 0.3))
            default: return try CaptureStream(device: SourceAsDevice(BufferAudioSource(night)))
            }
        }
        #expect(opens == 4)
        let gap = try #require(journal.gaps.first)
        #expect(journal.gaps.count == 1, "\(journal.gaps)")
        #expect(abs(gap.start - 10) < 0.01)   // 100 blocks of 100 ms
        // Three stalled reads of 0.3 s and the backoff's 0.05 + 0.1 + 0.2 s.
        #expect(gap.duration >= 1.2 && gap.duration < 3, "\(gap)")
        #expect(gap.reason.hasPrefix("stalling gave no sound"), "\(gap.reason)")
        #expect(notes.filter { $0.hasPrefix("capture device lost") }.count == 1, "\(notes)")
        #expect(notes.filter { $0.hasPrefix("sound back after") }.count == 1, "\(notes)")
        #expect(abs(journal.secondsFlushed - (40 + gap.duration)) < 0.15)
    }

    /// FLAC, the default master, is written frame by frame: a kill loses only the frame being
    /// filled. Ogg/Opus through FFmpeg's muxer is written out at each flush (its pages were
    /// held until full: 60–80 s lost), so a kill loses what came since.
    @Test(arguments: [EncodedAudioWriter.Format.flac, .opus])
    func aRecorderThatDiesIsRecoveredFromDiskLosingAtMostTheLastFlush(format: EncodedAudioWriter.Format) throws {
        let folder = try temporaryFolder("crash")
        defer { try? FileManager.default.removeItem(at: folder) }
        let night = syntheticNight(seconds: 200, bursts: [50])
        var beats = 0
        let recorder = try NightRecorder(
            folder: folder, settings: RecorderSettings(mode: .night, duration: 3600, masterFormat: format),
            classifier: LoudWindowClassifier(), device: "test", captureRate: 48_000,
            openCapture: { try CaptureStream(device: SourceAsDevice(BufferAudioSource(night))) },
            // Dies without closing anything at 130 s of audio.
            heartbeat: { beats += 1; if beats == 130 { throw SomniError(.internalError, "simulated crash") } })
        #expect(throws: SomniError.self) { try recorder.run() }
        let journal = try NightJournal.load(in: folder)
        #expect(journal.status == .recording)
        #expect(journal.secondsFlushed == 120)   // the last 30 s flush before the crash
        #expect(NightJournal.unfinishedNights(under: folder.deletingLastPathComponent()).map(\.lastPathComponent)
            .contains(folder.lastPathComponent))
        // A clip's levelled copy the crash cut short, and its encoder's hidden name: both go.
        let clips = folder.appendingPathComponent("clips")
        try FileManager.default.createDirectory(at: clips, withIntermediateDirectories: true)
        for leftover in [".levelled-evt-0001.flac", "..levelled-evt-0002.opus.partial-1A2B3C4D"] {
            try Data([1, 2, 3]).write(to: clips.appendingPathComponent(leftover))
        }
        var masterSeconds = 0.0
        let session = try NightCloser.close(folder: folder, classifierName: "test", sensitivity: 5, recovered: true) { master, night, journal in
            masterSeconds = Double(try decodedLength(master)) / 16_000
            // A morning envelope shorter than the overnight one (a master that stopped early).
            try EnvelopeFile.write(values: [Float](repeating: 0.01, count: 100), rate: 10, start: nil,
                                   to: night.appendingPathComponent(EnvelopeFile.fileName))
            return journal.liveSession(duration: masterSeconds, classifierName: "test", sensitivity: 5)
        }
        // The overnight envelope, which covers more of the night, is kept in its place (before, the
        // swap left the night with no envelope at all).
        #expect(try EnvelopeFile.read(from: folder.appendingPathComponent(EnvelopeFile.fileName)).values.count >= 1_200)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(".overnight-envelope.bin").path))
        // Everything up to the crash but the last unfinished FLAC frame (0.26 s) is readable;
        // of Opus, everything up to the last flush (120 s) but the encoder's last frame.
        #expect(masterSeconds > (format == .flac ? 130 - 0.3 : 120 - 0.5), "\(masterSeconds) s")
        #expect(masterSeconds <= 130.5)
        #expect(session.warnings.contains { $0.contains("stopped unexpectedly") })
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("master.\(format.fileExtension)").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: clips.path).filter { $0.contains("levelled") }.isEmpty)
    }
}
