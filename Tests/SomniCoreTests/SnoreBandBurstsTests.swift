import Testing
@testable import SomniCore

/// Live mode's snore-band bursts: what carries an episode over the snores the classifier missed.
@Suite struct SnoreBandBurstsTests {
    /// Frames at `floor` in both bands from `from` to `to` seconds, with the given bursts laid
    /// over them (band, level, start, seconds long).
    static func frames(seconds: Double, floor: Float = 0.01,
                       bursts: [(mid: Bool, level: Float, start: Double, length: Double)]) -> [(low: Float, mid: Float)] {
        (0..<Int(seconds * FrameTrack.rate)).map { i in
            let t = Double(i) / FrameTrack.rate
            var frame = (low: floor, mid: floor)
            for b in bursts where t >= b.start && t < b.start + b.length {
                if b.mid { frame.mid = b.level } else { frame.low = b.level }
            }
            return frame
        }
    }

    static func heard(_ frames: [(low: Float, mid: Float)]) -> SnoreBandBursts {
        var bursts = SnoreBandBursts()
        for f in frames { bursts.feed(low: f.low, mid: f.mid) }
        return bursts
    }

    @Test func aChainOfSnoresReachesAsFarAsItsStepsStayUnderTheGap() {
        // Snores 0.5 s long every 4 s from 40 s to 52 s, then none until 70 s (an 17.5 s pause).
        let snores = [40.0, 44, 48, 52, 70].map { (mid: false, level: Float(0.05), start: $0, length: 0.5) }
        let bursts = Self.heard(Self.frames(seconds: 90, bursts: snores))
        #expect(abs(bursts.chainEnd(from: 36, gap: 10) - 52.5) < 1e-9)
        // From inside a snore the chain goes on from it.
        #expect(abs(bursts.chainEnd(from: 44.2, gap: 10) - 52.5) < 1e-9)
        #expect(abs(bursts.chainEnd(from: 61, gap: 10) - 70.5) < 1e-9)
        // Ten seconds or more to the next one is no chain.
        #expect(bursts.chainEnd(from: 30, gap: 10) == 30)
        #expect(bursts.chainEnd(from: 75, gap: 10) == 75)
        // A smaller gap breaks it sooner.
        #expect(abs(bursts.chainEnd(from: 36, gap: 4.5) - 52.5) < 1e-9)
        #expect(abs(bursts.chainEnd(from: 36, gap: 3) - 36) < 1e-9)
    }

    @Test func aSoundLongerThanASnoreIsNoLinkAndTheVoiceBandIsOne() {
        let bursts = Self.heard(Self.frames(seconds: 90, bursts: [
            (false, 0.05, 40, EventDetector.longestSnore + 1),   // a door slammed and rattling
            (true, 0.05, 60, 0.6),                               // a snore heard in the voice band only
        ]))
        #expect(bursts.chainEnd(from: 36, gap: 10) == 36)
        #expect(abs(bursts.chainEnd(from: 52, gap: 10) - 60.6) < 1e-9)
    }

    @Test func aSnoreStillGoingOnCountsSoFar() {
        let bursts = Self.heard(Self.frames(seconds: 41, bursts: [(false, 0.05, 40, 2)]))
        #expect(abs(bursts.chainEnd(from: 35, gap: 10) - 41) < 1e-9)
        #expect(abs(bursts.heardUntil - 41) < 1e-9)
    }

    @Test func theFloorFollowsTheRoom() {
        // A fan comes on at 30 s and runs at 0.05; bursts 1.2 × over it (and 6 × the old floor)
        // are the fan's wobble, 3 × over it a snore.
        var frames = Self.frames(seconds: 30, bursts: [])
        frames += Self.frames(seconds: 60, floor: 0.05, bursts: [
            (false, 0.06, 34, 0.5), (false, 0.06, 38, 0.5),
        ])
        frames += Self.frames(seconds: 30, floor: 0.05, bursts: [(false, 0.15, 10, 0.5)])
        let bursts = Self.heard(frames)
        // 60 s in, the floor is the fan's: its wobble at 64–68 s is no snore.
        #expect(bursts.chainEnd(from: 60, gap: 10) == 60)
        #expect(abs(bursts.chainEnd(from: 95, gap: 10) - 100.5) < 1e-9)
        // A band level that is not a number is silence, not a burst or a floor of infinity.
        var broken = SnoreBandBursts()
        for i in 0..<600 { broken.feed(low: i == 300 ? .nan : 0.01, mid: i == 301 ? .infinity : 0.01) }
        #expect(broken.chainEnd(from: 10, gap: 10) == 10)
    }
}
