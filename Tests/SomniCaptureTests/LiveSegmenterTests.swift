import Testing
@testable import SomniCore

/// The live segmenter's hysteresis: quieter snores keep a train together and move its start back.
@Suite struct LiveSegmenterTests {
    /// Windows every 0.4875 s (50 % overlap of 0.975 s) with the given snoring confidences.
    /// `chainEnd` stands for the snore band's bursts (`SnoreBandBursts.chainEnd`).
    static func feed(_ confidences: [Float], into segmenter: inout LiveEpisodeSegmenter,
                     chainEnd: (Double, Double) -> Double = { from, _ in from }) -> [LiveEpisodeSegmenter.Change] {
        var changes: [LiveEpisodeSegmenter.Change] = []
        for (i, c) in confidences.enumerated() {
            let start = Double(i) * 0.4875
            changes += segmenter.feed(WindowLabels(start: start, end: start + 0.975,
                                                   ranked: [LabelConfidence(label: "snoring", confidence: c)]),
                                      chainEnd: chainEnd)
        }
        if let last = segmenter.finish() { changes.append(.ended(last)) }
        return changes
    }

    /// A snore every ~5 s (10 windows): loud ones at 0.9 in two windows, quiet ones at 0.3 in one.
    static func train(_ loud: [Bool]) -> [Float] {
        loud.flatMap { isLoud in
            (0..<10).map { k -> Float in isLoud ? (k < 2 ? 0.9 : 0.01) : (k == 0 ? 0.3 : 0.01) }
        }
    }

    @Test func quieterSnoresKeepATrainInOneEpisodeOnlyWithHysteresis() {
        // Loud, three quiet (15 s without a window at 0.6), loud again.
        let windows = Self.train([true, false, false, false, true, true])
        var plain = LiveEpisodeSegmenter(threshold: 0.6)
        let split = Self.feed(windows, into: &plain).filter { if case .ended = $0 { return true } else { return false } }
        #expect(split.count == 2)
        var hysteresis = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.24)
        let changes = Self.feed(windows, into: &hysteresis)
        guard changes.count == 2, case .ended(let episode) = changes[1] else {
            Issue.record("expected one episode, got \(changes)"); return
        }
        #expect(episode.eventCount == 6)
        #expect(abs(episode.end - (51 * 0.4875 + 0.975)) < 1e-9)   // the last loud snore's second window
    }

    @Test func aQuietStartOfATrainIsBackdatedWithinTheLookBack() {
        // Three quiet snores, then loud ones: the trigger comes at the 4th snore (window 30).
        let windows = Self.train([false, false, false, true, true])
        var segmenter = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.24, lookBack: 12)
        let changes = Self.feed(windows, into: &segmenter)
        guard case .started(let at) = changes.first else { Issue.record("no episode: \(changes)"); return }
        // Back over the quiet snores at windows 20 and 10 (starting within 12 s of the trigger's
        // end at 31 × 0.4875 + 0.975 = 16.1 s), not the one at window 0 (16.1 s before).
        #expect(abs(at - 10 * 0.4875) < 1e-9)
        var plain = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.24)
        guard case .started(let unmoved) = Self.feed(windows, into: &plain).first else { return }
        #expect(abs(unmoved - 30 * 0.4875) < 1e-9)
    }

    @Test func aStartIsBackdatedOverWindowsAtTheLeadInLevelOnly() {
        // Two faint snores (0.1 in one window) before the loud ones: under the continuation
        // level (0.24), at the lead-in level (0.06).
        let windows = Self.train([false, false, true, true]).enumerated().map { i, c in i < 20 && c == 0.3 ? 0.1 : c }
        var leadIn = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.24, leadIn: 0.06, lookBack: 12)
        guard case .started(let at) = Self.feed(windows, into: &leadIn).first else { Issue.record("no episode"); return }
        #expect(abs(at - 0) < 1e-9)
        var continuation = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.24, lookBack: 12)
        guard case .started(let later) = Self.feed(windows, into: &continuation).first else { return }
        #expect(abs(later - 20 * 0.4875) < 1e-9)
        // The lead-in level neither opens an episode nor keeps one open.
        var faint = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.24, leadIn: 0.06, lookBack: 12)
        #expect(Self.feed(windows.map { min($0, 0.1) }, into: &faint).isEmpty)
    }

    @Test func aSureWindowWithAQuieterNeighbourStartsAnEpisodeOnlyWithHysteresis() {
        // One snore: the window holding most of it is sure (0.7), its neighbour less so (0.2).
        let windows: [Float] = [0.01, 0.7, 0.2, 0.01, 0.01]
        var hysteresis = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.12)
        #expect(Self.feed(windows, into: &hysteresis).first == .started(at: 0.4875))
        var plain = LiveEpisodeSegmenter(threshold: 0.6)
        #expect(Self.feed(windows, into: &plain).isEmpty)
        // Two unsure windows are not enough: one of the run must reach the threshold.
        var unsure = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.12)
        #expect(Self.feed([0.01, 0.5, 0.5, 0.5, 0.01], into: &unsure).isEmpty)
    }

    @Test func aContinuationAtTheThresholdIsTheSeedsRule() {
        // `somni record --continuation 1`: the same episodes as without hysteresis.
        for windows in [Self.train([true, false, false, false, true, true]), [0.01, 0.7, 0.2, 0.01, 0.01],
                        Self.train([false, true, true, false, true])] {
            var seeds = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.6)
            var plain = LiveEpisodeSegmenter(threshold: 0.6)
            #expect(Self.feed(windows, into: &seeds) == Self.feed(windows, into: &plain))
        }
    }

    @Test func quietWindowsAloneNeverStartAnEpisode() {
        var segmenter = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.24, lookBack: 9)
        #expect(Self.feed(Self.train(Array(repeating: false, count: 20)), into: &segmenter).isEmpty)
    }

    static func episodes(_ changes: [LiveEpisodeSegmenter.Change]) -> [SnoringEpisode] {
        changes.compactMap { if case .ended(let e) = $0 { e } else { nil } }
    }

    @Test func snoresTheClassifierMissedCarryAnEpisodeAcrossAsTheirChainReaches() {
        // Loud snores, 30 windows (14.6 s) with none heard, loud snores again.
        let windows = Self.train([true, true]) + [Float](repeating: 0.01, count: 30) + Self.train([true, true])
        let lastBefore = 11 * 0.4875 + 0.975, resumed = 50 * 0.4875
        // The band's bursts chain on from the last heard snore over the whole pause…
        let chained: (Double, Double) -> Double = { from, _ in max(from, resumed) }
        var bridging = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.12, bridgeReach: 60)
        let one = Self.episodes(Self.feed(windows, into: &bridging, chainEnd: chained))
        #expect(one.count == 1)
        #expect(one.first.map { abs($0.end - (61 * 0.4875 + 0.975)) < 1e-9 } == true)
        #expect(one.first?.eventCount == 4)
        // …or break 10 s before it resumes, or the reach is shorter than the pause, or the bridge is off.
        let broken: (Double, Double) -> Double = { from, _ in max(from, min(resumed - 10, from + 4)) }
        let shortChain = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.12, bridgeReach: 60)
        let shortReach = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.12, bridgeReach: 12)
        let off = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.12)
        for (segmenter, chain) in [(shortChain, broken), (shortReach, chained), (off, chained)] {
            var s = segmenter
            let two = Self.episodes(Self.feed(windows, into: &s, chainEnd: chain))
            #expect(two.count == 2)
            // The first ends at its last snoring window, not where the chain ran out.
            #expect(two.first.map { abs($0.end - lastBefore) < 1e-9 } == true)
        }
    }

    @Test func acrossABridgeOnlyASureSnoreGoesOn() {
        // After the pause, a window at the continuation level only: a stray sound, not the next snore.
        var windows = Self.train([true, true]) + [Float](repeating: 0.01, count: 30)
        windows += [0.3] + [Float](repeating: 0.01, count: 40)
        var segmenter = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.12, bridgeReach: 60)
        let found = Self.episodes(Self.feed(windows, into: &segmenter, chainEnd: { from, _ in max(from, 25) }))
        #expect(found.count == 1)
        #expect(found.first.map { abs($0.end - (11 * 0.4875 + 0.975)) < 1e-9 } == true)
        #expect(found.first?.eventCount == 2)
    }
}
