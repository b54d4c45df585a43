import Foundation
import Testing
@testable import SomniCore

@Suite struct HeuristicClassifierTests {
    static let floorRMS: Float = 0.002

    /// Scores of the window starting at `at` seconds, with the classifier prepared at `floor`.
    static func scores(_ signal: [Float], at: Double, floor: Float? = floorRMS) -> [String: Float] {
        var c = HeuristicClassifier()
        if let floor { c.prepare(noiseFloor: floor) }
        var out = [Float](repeating: -1, count: c.labels.count)
        let start = Signals.count(at)
        signal.withUnsafeBufferPointer { p in
            out.withUnsafeMutableBufferPointer { s in
                c.classify(UnsafeBufferPointer(rebasing: p[start..<start + c.windowLength]), scores: s)
            }
        }
        return Dictionary(uniqueKeysWithValues: zip(c.labels, out))
    }

    static func top(_ s: [String: Float]) -> String { s.max { $0.value < $1.value }?.key ?? "" }

    static func background(_ seconds: Double) -> [Float] { Signals.noise(seconds: seconds, rms: floorRMS, seed: 11) }

    @Test func snoreLikePulsesAreSnoring() {
        let x = Signals.mix(Self.background(10), Signals.snore(seconds: 10, period: 2.7, pulse: 1.4, amplitude: 0.1), at: 0)
        for at in [0.2, 2.9, 5.6] {
            let s = Self.scores(x, at: at)
            #expect(Self.top(s) == "snoring" && s["snoring"]! > 0.6, "\(at): \(s)")
        }
        // Between two pulses (the breath in) there is nothing to call a snore.
        let gap = Self.scores(x, at: 1.55)
        #expect(Self.top(gap) == "other", "\(gap)")
    }

    @Test func speechLikeSoundIsSpeech() {
        let x = Signals.mix(Self.background(4), Signals.speech(seconds: 4, amplitude: 0.15), at: 0)
        for at in [0.5, 1.5, 2.5] {
            let s = Self.scores(x, at: at)
            #expect(Self.top(s) == "speech" && s["speech"]! > 0.5, "\(at): \(s)")
            #expect(s["snoring"]! < 0.2, "\(s)")
        }
    }

    @Test func aShortSharpBroadbandBurstIsACough() {
        let x = Signals.mix(Self.background(3), Signals.cough(seconds: 0.3, amplitude: 0.3), at: 1.3)
        let s = Self.scores(x, at: 1.0)
        #expect(Self.top(s) == "cough" && s["cough"]! > 0.5, "\(s)")
        #expect(s["speech"]! < 0.3, "\(s)")
    }

    @Test func aTrainOfSharpBurstsIsNotACough() {
        var x = Self.background(3)
        for at in [1.1, 1.35, 1.6, 1.85] { x = Signals.mix(x, Signals.cough(seconds: 0.12, amplitude: 0.3), at: at) }
        let s = Self.scores(x, at: 1.0)
        #expect(s["cough"]! < 0.2, "\(s)")
        let pair = Signals.mix(Signals.mix(Self.background(3), Signals.cough(seconds: 0.3, amplitude: 0.3), at: 1.1),
                               Signals.cough(seconds: 0.3, amplitude: 0.3, seed: 4), at: 1.55)
        #expect(Self.top(Self.scores(pair, at: 1.0)) == "cough")
    }

    @Test func steadyNoiseAndSilenceAreOther() {
        let hiss = Signals.noise(seconds: 3, rms: 0.02, seed: 5)
        for floor in [Float(0.02), nil] {
            let s = Self.scores(hiss, at: 1, floor: floor)
            #expect(Self.top(s) == "other" && s["other"]! > 0.8, "floor \(String(describing: floor)): \(s)")
        }
        let silence = Self.scores([Float](repeating: 0, count: 32_000), at: 0.5)
        #expect(silence == ["snoring": 0, "speech": 0, "cough": 0, "other": 1])
    }

    @Test func confidencesAreSmoothAndBounded() {
        // A snore fading in: confidence should rise through intermediate values, not jump 0 → 1.
        var seen = Set<Int>()
        for step in 0..<16 {
            let amplitude = 0.002 * pow(1.3, Float(step))
            let x = Signals.mix(Self.background(3), Signals.snore(seconds: 3, period: 3, pulse: 1.4, amplitude: amplitude), at: 0)
            let s = Self.scores(x, at: 0.2)
            #expect(s.values.allSatisfy { $0 >= 0 && $0 <= 1 })
            seen.insert(Int(s["snoring"]! * 10))
        }
        #expect(seen.count >= 4, "\(seen.sorted())")
        #expect(HeuristicClassifier().labels == ["snoring", "speech", "cough", "other"])
        #expect(HeuristicClassifier().name == "heuristic")
    }
}
