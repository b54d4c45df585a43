import Testing
@testable import SomniCore

/// Scripted window streams through the hysteresis segmenter (hop = half a window, as live mode).
@Suite struct LiveEpisodeSegmenterTests {
    let settings = LiveEpisodeSettings()
    var hop: Double { settings.windowDuration / 2 }

    /// Feeds confidences at consecutive hops; returns every change with the window index it came on.
    func run(_ confidences: [Float], _ segmenter: inout LiveEpisodeSegmenter) -> [(Int, LiveEpisodeSegmenter.Change)] {
        var out: [(Int, LiveEpisodeSegmenter.Change)] = []
        for (i, c) in confidences.enumerated() {
            for change in segmenter.add(windowStart: Double(i) * hop, confidence: c) { out.append((i, change)) }
        }
        return out
    }

    @Test func oneOffPositiveNeverStartsAnEpisode() {
        var s = LiveEpisodeSegmenter(settings: settings)
        let stream: [Float] = [0.1, 0.9, 0.2, 0.95, 0.1, 0.59, 0.7, 0.3] + Array(repeating: 0.2, count: 40)
        #expect(run(stream, &s).isEmpty)
        #expect(s.finish() == nil)
    }

    @Test func twoConsecutivePositivesStartWithABackdatedStart() throws {
        var s = LiveEpisodeSegmenter(settings: settings)
        let changes = run([0.1, 0.1, 0.6, 0.8], &s)
        #expect(changes.count == 1)
        let (index, change) = try #require(changes.first)
        #expect(index == 3)
        guard case .started(let e) = change else { Issue.record("expected a start, got \(change)"); return }
        // Backdated to the first positive window (index 2), not the trigger (index 3).
        #expect(abs(e.start - 2 * hop) < 1e-9)
        #expect(abs(e.end - (3 * hop + settings.windowDuration)) < 1e-9)
        #expect(e.positiveWindows == 2)
        #expect(abs(e.peakConfidence - 0.8) < 1e-6)
    }

    @Test func snoresFewSecondsApartStayOneEpisodeAndItEndsTenSecondsAfterTheLast() throws {
        var s = LiveEpisodeSegmenter(settings: settings)
        // Snores of two positive windows every 4 s (≈ 8 hops) for 40 s, then quiet for 30 s.
        var stream: [Float] = []
        let hopsPerCycle = Int((4 / hop).rounded())
        for _ in 0..<10 { stream += [0.9, 0.9] + Array(repeating: 0.1, count: hopsPerCycle - 2) }
        stream += Array(repeating: 0.1, count: Int(30 / hop))
        let changes = run(stream, &s)
        let starts = changes.filter { if case .started = $0.1 { true } else { false } }
        let ends = changes.compactMap { c -> (Int, LiveEpisode)? in
            if case .ended(let e) = c.1 { (c.0, e) } else { nil }
        }
        #expect(starts.count == 1)
        #expect(ends.count == 1)
        let (endIndex, episode) = try #require(ends.first)
        let lastPositive = 9 * hopsPerCycle + 1
        #expect(abs(episode.end - (Double(lastPositive) * hop + settings.windowDuration)) < 1e-9)
        #expect(episode.positiveWindows == 20)
        // Closed by the first window ending at least 10 s after the last positive one, not later.
        let closingWindowEnd = Double(endIndex) * hop + settings.windowDuration
        #expect(closingWindowEnd - episode.end >= settings.endAfter)
        #expect(closingWindowEnd - episode.end < settings.endAfter + hop)
    }

    @Test func aGapLongerThanTheHangoverSplitsEpisodes() {
        var s = LiveEpisodeSegmenter(settings: settings)
        let quiet = Array(repeating: Float(0.2), count: Int(12 / hop))
        let changes = run([0.9, 0.9, 0.9] + quiet + [0.9, 0.9], &s)
        let kinds = changes.map { c -> String in
            switch c.1 { case .started: "start"; case .extended: "extend"; case .ended: "end" }
        }
        #expect(kinds == ["start", "extend", "end", "start"])
        #expect(s.finish() != nil)
        #expect(s.current == nil)
    }

    @Test func thresholdIsInclusiveAndConfigurable() {
        var strict = LiveEpisodeSegmenter(settings: LiveEpisodeSettings(threshold: 0.8, windowsToStart: 3))
        #expect(run([0.79, 0.8, 0.8, 0.7, 0.8, 0.8], &strict).isEmpty)
        var s = LiveEpisodeSegmenter(settings: LiveEpisodeSettings(threshold: 0.8, windowsToStart: 3))
        #expect(run([0.8, 0.8, 0.8], &s).count == 1)
    }

    @Test func windowsThatSkipAheadStillEndTheOldEpisodeBeforeStartingANewOne() {
        var s = LiveEpisodeSegmenter(settings: settings)
        _ = s.add(windowStart: 0, confidence: 0.9)
        _ = s.add(windowStart: hop, confidence: 0.9)
        // The stream resumes 30 s later (a capture gap) with a positive window.
        let changes = s.add(windowStart: 30, confidence: 0.9)
        guard case .ended? = changes.first else { Issue.record("expected the old episode to end, got \(changes)"); return }
        #expect(changes.count == 1)
        #expect(s.current == nil)
    }
}
