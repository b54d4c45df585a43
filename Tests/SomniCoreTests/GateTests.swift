import Foundation
import Testing
@testable import SomniCore

@Suite struct GateTests {
    /// A 10 Hz envelope of `seconds` at `floor`, with `level` over each given (start, end) in seconds.
    static func envelope(seconds: Double, floor: Float = 0.01, level: Float = 0.1,
                         bursts: [(Double, Double)]) -> [Float] {
        var e = [Float](repeating: floor, count: Int(seconds * 10))
        for (a, b) in bursts { for i in Int(a * 10)..<Int(b * 10) { e[i] = level } }
        return e
    }

    @Test func theRunningHistogramGivesTheGatesPercentileToWithinABin() {
        var histogram = LevelHistogram()
        var values: [Float] = []
        var seed: UInt64 = 7
        for i in 0..<5_000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            // Levels from −100 to 0 dBFS, a few exact zeros and non-finite values among them.
            let level: Float = i % 997 == 0 ? 0 : pow(10, -Float((seed >> 40) % 100_000) / 20_000)
            let value = i % 1_201 == 0 ? Float.nan : level
            histogram.add(value)
            values.append(value)
            if i % 500 == 499 {
                for p in [0.05, 0.2, 0.5, 0.9] {
                    let exact = SilenceGate.roomFloor(values, p)
                    let binned = histogram.quantile(p)
                    // At most one 1/8 dB bin above the exact value, never below it.
                    #expect(binned >= exact && binned <= exact * pow(10, 0.125 / 20) * 1.0001, "p \(p) after \(i + 1)")
                }
            }
        }
        #expect(histogram.total == values.filter { $0.isFinite && $0 > 0 }.count)
    }

    @Test func stretchesOfPartOfAnEnvelopeKeepTheirTimes() {
        let e = Self.envelope(seconds: 60, bursts: [(10, 12), (30, 31), (34, 35), (55, 60)])
        let all = SilenceGate.stretches(e, in: e.indices, above: 0.05, duration: 60)
        #expect(all == [TimeRange(start: 8, end: 14), TimeRange(start: 28, end: 37), TimeRange(start: 53, end: 60)])
        #expect(SilenceGate.stretches(e, in: 250..<500, above: 0.05, duration: 50)
                == [TimeRange(start: 28, end: 37)])
        #expect(SilenceGate.stretches(e, in: 0..<305, above: 0.05, duration: 30.5)
                == [TimeRange(start: 8, end: 14), TimeRange(start: 28, end: 30.5)], "a run cut by the range ends there, padded")
    }

    @Test func floorAndThresholdComeFromThePercentile() {
        var e = [Float](repeating: 0.01, count: 800) + [Float](repeating: 0.1, count: 200)
        var rng = Signals.Noise(seed: 42)
        e.shuffle(using: &rng)
        let g = SilenceGate.run(envelope: e, bailShare: 1.1)
        #expect(g.floor == 0.01)
        #expect(abs(g.threshold - 0.025) < 1e-7)
        #expect(SilenceGate.percentile([5, 1, 4, 2, 3], 0.5) == 3)
    }

    @Test func selectionGivesWhatSortingWould() {
        var seed: UInt64 = 11
        for n in [1, 2, 3, 7, 64, 601] {
            for repeats in [false, true] {  // many equal values (a steady fan's frames), or none
                let values: [Float] = (0..<n).map { _ in
                    seed = seed &* 6364136223846793005 &+ 1442695040888963407
                    return Float((seed >> 33) % (repeats ? 5 : 1_000_000))
                }
                let sorted = values.sorted()
                for k in Set([0, n / 5, n / 2, n - 1]) {
                    var scratch = values
                    #expect(SilenceGate.smallest(k, of: &scratch) == sorted[k], "n \(n), k \(k), repeats \(repeats)")
                }
            }
        }
        #expect(SilenceGate.percentile([.nan, 3, .infinity, 1, 2], 0.5) == 2)
    }

    @Test func stretchesArePaddedMergedAndClamped() {
        let g = SilenceGate.run(envelope: Self.envelope(seconds: 100, bursts: [(10, 10.1), (15, 15.5), (40, 41), (99.5, 100), (0, 0.3)]))
        // 10–10.1 and 15–15.5 pad to 8–12.1 and 13–17.5: 0.9 s apart, merged. 0–0.3 pads to
        // 0–2.3, 5.7 s before 8: kept apart. The last burst is clamped at the end of the night.
        #expect(g.stretches.count == 4)
        let expected = [TimeRange(start: 0, end: 2.3), TimeRange(start: 8, end: 17.5),
                        TimeRange(start: 38, end: 43), TimeRange(start: 97.5, end: 100)]
        for (s, x) in zip(g.stretches, expected) {
            #expect(abs(s.start - x.start) < 1e-9 && abs(s.end - x.end) < 1e-9, "\(s) vs \(x)")
        }
        #expect(!g.bypassed)
        #expect(abs(g.activeShare - (2.3 + 9.5 + 5 + 2.5) / 100) < 1e-9)
        #expect(abs(g.analysedSeconds - 19.3) < 1e-9)
        let longer = SilenceGate.run(envelope: Self.envelope(seconds: 100, bursts: [(99.5, 100)]), duration: 100.07)
        #expect(longer.stretches == [TimeRange(start: 97.5, end: 100.07)])
    }

    @Test func gapsOfFiveSecondsOrMoreStayApart() {
        // Padded to 8–13 and 15.9–21 (2.9 s apart) versus 8–13 and 18.1–23 (5.1 s apart).
        let merged = SilenceGate.run(envelope: Self.envelope(seconds: 100, bursts: [(10, 11), (17.9, 19)]))
        let separate = SilenceGate.run(envelope: Self.envelope(seconds: 100, bursts: [(10, 11), (20.1, 21)]))
        #expect(merged.stretches.count == 1)
        #expect(separate.stretches.count == 2)
    }

    @Test func aMostlyActiveNightBypassesTheGate() {
        let g = SilenceGate.run(envelope: Self.envelope(seconds: 100, bursts: (0..<20).map { (Double($0) * 5, Double($0) * 5 + 0.5) }))
        #expect(g.bypassed)
        #expect(g.stretches == [TimeRange(start: 0, end: 100)])
        #expect(g.activeShare > 0.7)
        let below = SilenceGate.run(envelope: Self.envelope(seconds: 100, bursts: [(10, 20), (40, 50)]))
        #expect(!below.bypassed && below.activeShare < 0.7)
    }

    /// A night joined from two parts, an hour apart: the 70 % rule weighs the recorded time, and
    /// the gate that stands aside passes the parts, not the silence between them. Before, the
    /// pause counted as quiet night, so how long it was decided whether the gate stood aside.
    @Test func theTimeBetweenAJoinedNightsPartsIsNotWeighed() {
        var bursts: [(Double, Double)] = (0..<6).map { k in (Double(k) * 5, Double(k) * 5 + 3) }
        bursts.append((90, 97))
        var e = Self.envelope(seconds: 100, bursts: bursts)
        for i in 300..<900 { e[i] = 0 }  // the pause, as the join fills it
        let pause = [TimeRange(start: 30, end: 90)]
        #expect(!SilenceGate.run(envelope: e, duration: 100).bypassed)
        let g = SilenceGate.run(envelope: e, duration: 100, notRecorded: pause)
        #expect(g.bypassed && g.activeShare > 0.9, "share \(g.activeShare)")
        #expect(g.stretches == [TimeRange(start: 0, end: 30), TimeRange(start: 90, end: 100)])
        #expect(SilenceGate.complement(of: [TimeRange(start: 0, end: 5), TimeRange(start: 95, end: 120)], within: 100)
                == [TimeRange(start: 5, end: 95)])
    }

    @Test func theSnoreBandOpensTheGateWhereTheRawLevelDoesNot() {
        // A fan: the raw level stays at its floor while snores stand out in the snore band.
        let raw = Self.envelope(seconds: 120, floor: 0.01, bursts: [(10, 11)])
        let band = Self.envelope(seconds: 120, floor: 0.002, level: 0.008, bursts: [(40, 41), (44, 45), (90, 91)])
        #expect(SilenceGate.run(envelope: raw).stretches == [TimeRange(start: 8, end: 13)])
        let both = SilenceGate.run(envelope: raw, snoreBand: band)
        #expect(both.stretches == [TimeRange(start: 8, end: 13), TimeRange(start: 38, end: 47), TimeRange(start: 88, end: 93)])
        #expect(both.floor == 0.01, "the floor the classifier is told is still the raw level's")
        #expect(abs(both.activeShare - 19.0 / 120) < 1e-9)
        // Stretches of the two that meet or lie less than 5 s apart merge; the bail counts both.
        let near = SilenceGate.run(envelope: raw, snoreBand: Self.envelope(seconds: 120, floor: 0.002, level: 0.008,
                                                                            bursts: [(16, 17)]))
        #expect(near.stretches == [TimeRange(start: 8, end: 19)])
        let busy = SilenceGate.run(envelope: raw, snoreBand: Self.envelope(seconds: 120, floor: 0.002, level: 0.008,
                                                                            bursts: (0..<24).map { (Double($0) * 5, Double($0) * 5 + 0.5) }))
        #expect(busy.bypassed && busy.stretches == [TimeRange(start: 0, end: 120)])
    }

    @Test func theSnoreBandEnvelopeIsTheLouderOfEachTwoFrames() {
        let track = FrameTrack(raw: [0, 0, 0, 0, 0], low: [1, 3, 4, 2, 9], mid: [0, 0, 0, 0, 0], zcr: [])
        #expect(SilenceGate.snoreBandEnvelope(track) == [3, 4])
        #expect(SilenceGate.snoreBandEnvelope(track, frames: 2..<4) == [4])
    }

    @Test func digitalSilenceIsNotTheRoomsFloor() {
        // A 10-minute room at 0.01 with two sounds, then 5 minutes of no recording (exactly 0,
        // a pause between a night's parts): the room's floor still sets the threshold.
        let room = Self.envelope(seconds: 600, bursts: [(100, 103), (400, 402)])
        let paused = Array(room[..<3000]) + [Float](repeating: 0, count: 3000) + Array(room[3000...])
        let g = SilenceGate.run(envelope: paused)
        #expect(g.floor == 0.01 && abs(g.threshold - 0.025) < 1e-7)
        #expect(g.stretches == [TimeRange(start: 98, end: 105), TimeRange(start: 698, end: 704)])
        #expect(!g.bypassed)
        // Counted as the floor, the pause took it to 0 and the threshold to −61 dBFS, under the room.
        #expect(SilenceGate.percentile(paused, SilenceGate.floorPercentile) == 0)
        #expect(SilenceGate.roomFloor(paused, SilenceGate.floorPercentile) == 0.01)
    }

    @Test func aSilentNightHasNoActiveStretch() {
        let zero = SilenceGate.run(envelope: [Float](repeating: 0, count: 36_000))
        #expect(zero.floor == 0 && zero.threshold == SilenceGate.absoluteMinimum)
        #expect(zero.stretches.isEmpty && zero.activeShare == 0 && !zero.bypassed)
        // Dither-level blips over digital silence are 1000× the floor but still below −61 dBFS.
        var dither = [Float](repeating: 0, count: 36_000)
        for i in stride(from: 0, to: dither.count, by: 97) { dither[i] = 0.0005 }
        #expect(SilenceGate.run(envelope: dither).stretches.isEmpty)
        // A real sound in a silent room is still found.
        dither[5000] = 0.05
        #expect(SilenceGate.run(envelope: dither).stretches == [TimeRange(start: 498, end: 502.1)])
        #expect(SilenceGate.run(envelope: []).stretches.isEmpty)
    }

    @Test func damagedValuesAreNeverActive() {
        var e = Self.envelope(seconds: 60, bursts: [])
        e[100] = .nan; e[200] = .infinity
        #expect(SilenceGate.run(envelope: e).stretches.isEmpty)
    }

    // MARK: windows

    let w = classifierWindowLength, hop = classifierWindowLength / 2

    @Test func windowsSitOnTheFileGridAndCoverTheStretch() {
        let starts = WindowPlanner.windowStarts(stretches: [TimeRange(start: 10, end: 12)], totalSamples: 16_000 * 60)
        #expect(starts == [156_000, 163_800, 171_600, 179_400])
        #expect(starts.allSatisfy { $0 % hop == 0 })
        #expect(starts.first! <= 160_000 && starts.last! + w >= 192_000)
    }

    @Test func aShortStretchGetsOneWindowThatHoldsIt() {
        let starts = WindowPlanner.windowStarts(stretches: [TimeRange(start: 10, end: 10.2)], totalSamples: 16_000 * 60)
        #expect(starts.count == 1)
        #expect(starts[0] <= 160_000 && starts[0] + w >= 163_200)
    }

    @Test func meetingStretchesShareWindows() {
        let a = TimeRange(start: 10, end: 12), b = TimeRange(start: 12, end: 14), c = TimeRange(start: 11, end: 13)
        let joined = WindowPlanner.windowStarts(stretches: [a, b, c], totalSamples: 16_000 * 60)
        let whole = WindowPlanner.windowStarts(stretches: [TimeRange(start: 10, end: 14)], totalSamples: 16_000 * 60)
        #expect(Set(joined).count == joined.count && joined == joined.sorted())
        #expect(Set(whole).isSubset(of: Set(joined)))
    }

    @Test func windowsStayInsideTheFile() {
        let total = 16_000 * 30 + 123
        let end = WindowPlanner.windowStarts(stretches: [TimeRange(start: 29, end: 40)], totalSamples: total)
        #expect(end.last == total - w)
        #expect(end.allSatisfy { $0 >= 0 && $0 + w <= total })
        #expect(WindowPlanner.windowStarts(stretches: [TimeRange(start: 0, end: 5)], totalSamples: 8000) == [0])
        #expect(WindowPlanner.windowStarts(stretches: [TimeRange(start: 0, end: 1)], totalSamples: 0).isEmpty)
        #expect(WindowPlanner.windowStarts(stretches: [TimeRange(start: .nan, end: .infinity)], totalSamples: total).count == (total - w) / hop + 2)
    }
}
