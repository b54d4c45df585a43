import Foundation
import Testing
@testable import SomniCore

/// The stages of this branch chained on a generated minute, as the analysis pipeline will chain
/// them: features → gate → windows → heuristic classifier → events.
@Suite struct DSPChainTests {
    @Test func aGeneratedMinuteComesOutAsTheSoundsPutInIt() {
        var x = Signals.noise(seconds: 60, rms: 0.002, seed: 21)
        x = Signals.mix(x, Signals.snore(seconds: 10, period: 2.5, pulse: 1.2, amplitude: 0.1), at: 10)
        x = Signals.mix(x, Signals.speech(seconds: 3, amplitude: 0.15), at: 32)
        for (k, at) in [48.0, 48.5, 49.0].enumerated() {
            x = Signals.mix(x, Signals.cough(seconds: 0.3, amplitude: 0.4, seed: UInt64(10 + k)), at: at)
        }

        let fx = FeatureExtractor()
        x.withUnsafeBufferPointer { fx.process($0) }
        fx.finish()
        let gate = SilenceGate.run(envelope: fx.envelope, duration: 60)
        #expect(!gate.bypassed && gate.activeShare < 0.7)
        #expect(gate.stretches.contains { $0.start <= 10 && $0.end >= 19 })
        #expect(!gate.stretches.contains { $0.overlaps(TimeRange(start: 23, end: 29)) })

        var classifier = HeuristicClassifier()
        classifier.prepare(noiseFloor: gate.floor)
        var scores = [Float](repeating: 0, count: classifier.labels.count)
        let starts = WindowPlanner.windowStarts(stretches: gate.stretches, totalSamples: x.count)
        let windows = starts.map { start in
            x.withUnsafeBufferPointer { p in
                scores.withUnsafeMutableBufferPointer { s in
                    classifier.classify(UnsafeBufferPointer(rebasing: p[start..<start + classifier.windowLength]), scores: s)
                }
            }
            let ranked = scores.withUnsafeBufferPointer { classifier.ranked($0) }
            let t = Double(start) / Signals.rate
            return WindowLabels(start: t, end: t + Double(classifier.windowLength) / Signals.rate, ranked: ranked)
        }
        let events = EventDetector.detect(windows: windows, frames: fx.frames, sensitivity: 5, duration: 60)
        let of = { (c: EventClass) in events.filter { $0.eventClass == c } }
        let summary = events.map { "\($0.eventClass.rawValue) \(String(format: "%.2f–%.2f", $0.start, $0.end))" }

        // Four pulses (10, 12.5, 15, 17.5 s) of 1.2 s; merged within 2 s, one episode.
        let snoring = of(.snoring)
        #expect(!snoring.isEmpty && snoring.allSatisfy { $0.start >= 9.8 && $0.end <= 18.9 }, "\(summary)")
        #expect(snoring.first.map { abs($0.start - 10) < 0.2 } == true, "\(summary)")
        #expect(EventDetector.episodes(of: events).count == 1)
        #expect(of(.sleepTalk).contains { $0.start >= 31.8 && $0.end <= 35.2 }, "\(summary)")
        #expect(of(.sleepTalk).allSatisfy { $0.start >= 31.8 && $0.end <= 35.2 }, "\(summary)")
        #expect(of(.cough).count == 3, "\(summary)")
        for (c, onset) in zip(of(.cough), [48.0, 48.5, 49.0]) { #expect(abs(c.start - onset) <= 0.1, "\(summary)") }
    }
}
