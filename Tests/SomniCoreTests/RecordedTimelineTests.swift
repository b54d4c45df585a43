import Foundation
import Testing
@testable import SomniCore

@Suite struct RecordedTimelineTests {
    /// 50 s of night, 10–30 s not recorded: times map both ways, a time inside the cut goes to
    /// its place, and at the place a start goes after the cut and an end before it.
    @Test func timesFramesWindowsAndEventsMapAcrossACut() {
        let timeline = RecordedTimeline(notRecorded: [TimeRange(start: 10, end: 30)], frameCount: 1_000)
        #expect(timeline.recorded(5) == 5 && timeline.recorded(20) == 10 && timeline.recorded(35) == 15)
        #expect(timeline.recorded(50) == 30)
        #expect(timeline.night(5, isEnd: false) == 5 && timeline.night(15, isEnd: true) == 35)
        #expect(timeline.night(10, isEnd: false) == 30 && timeline.night(10, isEnd: true) == 10)

        let frames = timeline.frames(FrameTrack(raw: (0..<1_000).map(Float.init), low: [], mid: [], zcr: []))
        #expect(frames.raw.count == 600 && frames.raw[199] == 199 && frames.raw[200] == 600)

        let windows = timeline.windows([WindowLabels(start: 5, end: 5.975, ranked: []), WindowLabels(start: 12, end: 12.975, ranked: []),
                                        WindowLabels(start: 29.5, end: 30.475, ranked: [])])
        // The one reaching out of the cut is over the recorded audio it heard, not stretched over more.
        #expect(windows.map(\.start) == [5, 10] && zip(windows.map(\.end), [5.975, 10.475]).allSatisfy { abs($0 - $1) < 1e-9 })

        // Two snores either side of the cut, merged in recorded time: one each side again.
        let merged = DetectedEvent(eventClass: .snoring, start: 9, end: 11, confidence: 0.9, peakDBFS: -20, meanDBFS: -25, severity: 40)
        let pieces = timeline.night([merged], frames: frames)
        #expect(pieces.map { [$0.start, $0.end] } == [[9, 10], [30, 31]])
        // Each measured over its own frames: the louder second piece is the louder.
        #expect(pieces.count == 2 && pieces[1].peakDBFS > pieces[0].peakDBFS)
        // A short event that is not split is kept as it is.
        let short = DetectedEvent(eventClass: .cough, start: 40, end: 40.04, confidence: 0.9, peakDBFS: -20, meanDBFS: -25, severity: 40)
        #expect(timeline.night([short], frames: frames).map(\.start) == [60])
        #expect(timeline.night([TimeRange(start: 8, end: 12)]) == [TimeRange(start: 8, end: 10), TimeRange(start: 30, end: 32)])
    }

    /// A snore train either side of a 20 s pause between a night's parts: found as in the same
    /// audio without the pause, at the same clock times. Counted on the night's own time, the
    /// pause broke the train, and its snores on both sides were lost.
    @Test func aPauseBetweenPartsDoesNotBreakATrain() throws {
        let quiet = Signals.noise(seconds: 60, rms: 0.002, seed: 9)
        // The last 8 s of the first part and the first 8 s of the second: two snores each.
        let first = Signals.mix(quiet, Signals.snore(seconds: 8, period: 4, amplitude: 0.2), at: 51)
        let second = Signals.mix(Signals.noise(seconds: 60, rms: 0.002, seed: 10), Signals.snore(seconds: 8, period: 4, amplitude: 0.2), at: 1)
        func snores(_ source: some AudioSource) throws -> [DetectedEvent] {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-pause-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), clipEncoder: nil)
            let session = try NightFolder.writeAtomically(to: folder) { try analyzer.analyze(source: source, sourceName: "n", into: $0) }
            return session.events.filter { $0.eventClass == .snoring }
                .map { DetectedEvent(eventClass: .snoring, start: $0.start, end: $0.end, confidence: 0, peakDBFS: 0, meanDBFS: 0, severity: 0) }
        }
        let whole = try snores(BufferAudioSource(first + second))
        let t0 = Date(timeIntervalSince1970: 1_795_904_042)
        let joined = try snores(JoinedAudioSource(parts: [.init(name: "a.wav", source: BufferAudioSource(first), start: t0),
                                                          .init(name: "b.wav", source: BufferAudioSource(second), start: t0 + 80)]))
        #expect(whole.count == 4, "\(whole.map(\.start))")
        #expect(joined.count == whole.count, "\(joined.map(\.start)) against \(whole.map(\.start))")
        for (a, b) in zip(joined, whole) {
            let shift = b.start >= 60 ? 20.0 : 0
            #expect(abs(a.start - (b.start + shift)) < 0.3, "\(a.start) against \(b.start)")
        }
    }
}
