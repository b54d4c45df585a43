import Foundation
import Testing
@testable import SomniCore

@Suite struct LiveNightJournalTests {
    func tempFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func roundTripsAndFindsUnfinishedNights() throws {
        let root = try tempFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        var journal = NightJournal(mode: .night, startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                                   device: "default", captureRate: 48_000, master: "master.flac", keepAudio: false)
        journal.gaps = [RecordingGap(start: 3600, duration: 42, reason: "capture device vanished")]
        journal.secondsFlushed = 7200
        for (name, status) in [("a", NightJournal.Status.recording), ("b", .analysed), ("c", .captured)] {
            let folder = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var j = journal
            j.status = status
            try j.save(in: folder)
        }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("d-no-journal"), withIntermediateDirectories: true)
        #expect(NightJournal.unfinishedNights(under: root).map(\.lastPathComponent) == ["a", "c"])
        let loaded = try NightJournal.load(in: root.appendingPathComponent("a"))
        #expect(loaded.gaps == journal.gaps)
        #expect(loaded.secondsFlushed == 7200)
        // Under the key journals on disk have always had, so a recorder's unfinished night is
        // read by a newer Somni.
        let text = try String(contentsOf: root.appendingPathComponent("a/\(NightJournal.fileName)"), encoding: .utf8)
        #expect(text.contains("\"recordedSeconds\"") && !text.contains("secondsFlushed"), "\(text)")
        #expect(loaded.status == .recording)
    }

    /// The journal is replaced whole each time, leaving no temporary file beside it; where it
    /// cannot be written, one I/O error and the last journal stays.
    @Test func aSavedJournalReplacesTheLastWholeAndAFailedSaveKeepsIt() throws {
        let folder = try tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var journal = NightJournal(mode: .night, startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                                   device: "default", captureRate: 48_000, master: "master.flac", keepAudio: false)
        for seconds in [30.0, 60.0, 90.0] {
            journal.secondsFlushed = seconds
            try journal.save(in: folder)
            #expect(try NightJournal.load(in: folder).secondsFlushed == seconds)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [NightJournal.fileName])
        // A folder in the journal's place: the rename cannot replace it, and nothing is left behind.
        let blocked = folder.appendingPathComponent("blocked")
        try FileManager.default.createDirectory(at: blocked.appendingPathComponent("\(NightJournal.fileName)/inside"),
                                                withIntermediateDirectories: true)
        #expect { try journal.save(in: blocked) } throws: { ($0 as? SomniError)?.code == .io }
        #expect(try FileManager.default.contentsOfDirectory(atPath: blocked.path) == [NightJournal.fileName])
        #expect { try journal.save(in: folder.appendingPathComponent("none")) } throws: { ($0 as? SomniError)?.code == .io }
    }

    /// The start is kept to the nearest second: cut to the second, every event of a night sat up
    /// to a second early on the clock.
    @Test func theStartIsKeptToTheNearestSecond() {
        for (at, kept) in [(1_795_900_000.7, 1_795_900_001.0), (1_795_900_000.3, 1_795_900_000.0)] {
            let journal = NightJournal(mode: .night, startedAt: Date(timeIntervalSince1970: at), device: "d", captureRate: 16_000,
                                       master: nil, keepAudio: false)
            #expect(journal.startDate == Date(timeIntervalSince1970: kept), "\(journal.startedAt)")
        }
    }

    /// Two recorders under different locks that start in the same second each get a folder.
    @Test func eachRecorderClaimsAFolderOfItsOwn() throws {
        let root = try tempFolder().appendingPathComponent("recording")
        defer { try? FileManager.default.removeItem(at: root.deletingLastPathComponent()) }
        let first = try NightJournal.claimFolder(under: root, stamp: "2026-12-05T192334")
        let second = try NightJournal.claimFolder(under: root, stamp: "2026-12-05T192334")
        #expect(first.lastPathComponent == "night-2026-12-05T192334" && second.lastPathComponent == "night-2026-12-05T192334-2")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == [first.lastPathComponent, second.lastPathComponent])
    }

    @Test func aCorruptJournalIsBadInput() throws {
        let folder = try tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("{".utf8).write(to: folder.appendingPathComponent(NightJournal.fileName))
        #expect { try NightJournal.load(in: folder) } throws: { ($0 as? SomniError)?.code == .badInput }
    }

    @Test func liveEpisodesBecomeSnoringEventsIncludingOneLeftOpenByACrash() throws {
        var journal = NightJournal(mode: .live, startedAt: Date(), device: "default", captureRate: 48_000,
                                   master: nil, keepAudio: false)
        journal.episodes = [LiveEpisodeRecord(episode: LiveEpisode(start: 100, end: 130, peakConfidence: 0.9, positiveWindows: 20),
                                              clip: "clips/evt-0001.ogg", clipStart: 91.5, peakDBFS: -10, meanDBFS: -30)]
        journal.openEpisode = LiveEpisodeRecord(episode: LiveEpisode(start: 500, end: 505, peakConfidence: 0.7, positiveWindows: 4),
                                                clip: "clips/evt-0002.ogg", clipStart: 491.5, peakDBFS: -50, meanDBFS: -60)
        journal.gaps = [RecordingGap(start: 200, duration: 10, reason: "x")]
        let session = journal.liveSession(duration: 600, classifierName: "heuristic", sensitivity: 5)
        #expect(session.events.count == 2)
        #expect(session.events.allSatisfy { $0.eventClass == .snoring })
        #expect(session.events[0].clip == "clips/evt-0001.ogg")
        // Loud (−10 dBFS) and 30 s long: the maximum; quiet and short: 0.4 × 5/20.
        #expect(abs(session.events[0].severity - 100) < 1e-9)
        #expect(abs(session.events[1].severity - 10) < 1e-9)
        #expect(session.summary.snoringEpisodes == 2)
        #expect(abs(session.summary.snoringMinutes - 35.0 / 60) < 1e-9)
        #expect(session.gaps?.count == 1)
        #expect(session.warnings.contains { $0.contains("closed at its last positive window") })
        // Live mode analysed the time it recorded, not its gap (before: all 600 s).
        #expect(session.analysedSeconds == 590 && session.summary.analysedSeconds == 590 && session.inconsistency == nil)
    }

    /// The clip of an episode open when the recorder died was streamed raw to the moment of the
    /// crash, with no length in its header: closing the night cuts it 1 s after the episode's
    /// last snoring window and levels it to 0.9 peak, as an episode that ended would have it.
    @Test func theClipOfAnEpisodeOpenAtACrashIsCutAndLevelledWhenTheNightIsClosed() throws {
        let folder = try tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("clips"), withIntermediateDirectories: true)
        let clip = folder.appendingPathComponent("clips/evt-0001.flac")
        do {  // written as the recorder writes it, and never finished
            let writer = try FLACStreamWriter(url: clip, sampleRate: 16_000)
            let tone = (0..<30 * 16_000).map { Float(0.2 * sin(Double($0) * 0.05)) }
            try tone.withUnsafeBufferPointer { try writer.write($0) }
            try writer.synchronize()
        }
        var journal = NightJournal(mode: .live, startedAt: Date(), device: "default", captureRate: 16_000,
                                   master: nil, keepAudio: false)
        journal.secondsFlushed = 60
        journal.openEpisode = LiveEpisodeRecord(episode: LiveEpisode(start: 10, end: 20, peakConfidence: 0.8, positiveWindows: 12),
                                                clip: "clips/evt-0001.flac", clipStart: 9, peakDBFS: -14, meanDBFS: -20)
        try journal.save(in: folder)
        let session = try NightCloser.close(folder: folder, classifierName: "test", sensitivity: 5, recovered: true) { _, _, _ in
            throw SomniError(.internalError, "a live night has no morning pass")
        }
        #expect(session.events.map(\.clip) == ["clips/evt-0001.flac"])
        let reader = try FLACStreamReader(url: clip)
        var samples = [Float](repeating: 0, count: 40 * 16_000)
        let n = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0) }
        #expect(n == 12 * 16_000, "the episode's 10 s and 1 s either side: \(n) samples")
        let peak = samples[..<n].map(abs).max() ?? 0
        #expect(abs(peak - ClipMaker.peak) < 0.001, "\(peak)")
        let header = try Data(contentsOf: clip).prefix(26)
        #expect(header.suffix(4) != Data(count: 4), "the header says how long it is")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("clips").path) == ["evt-0001.flac"])
    }

    /// An episode whose last window straddled the start of a gap (the microphone went mid-snore)
    /// ends where the gap begins: before, it ran 0.45 s into it, and a night of one such
    /// episode snored more than the time it recorded.
    @Test func anEpisodeOpenWhenTheMicrophoneWentEndsWhereTheGapBegins() {
        var journal = NightJournal(mode: .live, startedAt: Date(), device: "default", captureRate: 16_000,
                                   master: nil, keepAudio: false)
        journal.episodes = [LiveEpisodeRecord(episode: LiveEpisode(start: 0, end: 25.35, peakConfidence: 0.9, positiveWindows: 40),
                                              clip: nil, clipStart: 0, peakDBFS: -20, meanDBFS: -30)]
        journal.gaps = [RecordingGap(start: 24.9, duration: 25.1, reason: "the microphone stopped giving sound")]
        let session = journal.liveSession(duration: 50, classifierName: "heuristic", sensitivity: 5)
        #expect(session.events.map(\.end) == [24.9] && session.episodes.map(\.end) == [24.9])
        #expect(abs(session.summary.snoringMinutes * 60 - 24.9) < 1e-9 && session.summary.snoringPercent == 100)
        #expect(abs(session.analysedSeconds - 24.9) < 1e-9 && session.inconsistency == nil)
    }
}
