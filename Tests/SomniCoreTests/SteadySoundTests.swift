import Foundation
import Testing
@testable import SomniCore

@Suite struct SteadySoundTests {
    /// The spread of `signal`'s 50 ms frame levels as `SteadySound` measures it.
    func spread(_ signal: [Float]) -> Float {
        var levels = [Float](repeating: 0, count: signal.count / SteadySound.frameLength + 1)
        return signal.withUnsafeBufferPointer { s in levels.withUnsafeMutableBufferPointer { SteadySound.levelSpread(s, levels: $0) } }
    }

    /// A steady hum: a 180 Hz tone and eleven harmonics, the h-th h times quieter, the same all
    /// through. The shipped network alone reads it as snoring (0.998), as it does two of the
    /// held-out Khan "TV news" clips. (With the harmonics h² quieter, as before stop 24, the
    /// network trained with nights gives it 0.06.)
    static func hum(amplitude: Float = 0.05) -> [Float] {
        (0..<classifierWindowLength).map { i in
            let t = Double(i) / Signals.rate
            var sum = 0.0
            for h in 1...12 {
                let harmonic = Double(h)
                sum += sin(2 * .pi * 180 * harmonic * t + harmonic) / harmonic
            }
            return amplitude * Float(sum)
        }
    }

    @Test func aSteadyToneHasNoSpreadAndALevelStepIsMeasuredInDecibels() {
        #expect(spread(Signals.sine(220, seconds: 0.975)) < 0.01)
        // 9 frames at one level, then 10 at twice the amplitude: the 10th percentile lies among
        // the first, the 90th among the second, 20·log10(2) dB apart.
        var step = Signals.sine(200, seconds: 0.975, amplitude: 0.1)
        for i in (9 * SteadySound.frameLength)..<step.count { step[i] *= 2 }
        #expect(abs(spread(step) - 20 * log10(2)) < 0.01)
        // A breath: the level swells and fades over the window.
        let breath = Signals.sine(150, seconds: 0.975).enumerated().map { i, v in
            v * Float(sin(Double.pi * Double(i) / Double(classifierWindowLength)))
        }
        #expect(spread(breath) > 10)
        #expect(spread(Self.hum()) < SteadySound.spreadLimit)
    }

    @Test func tooShortAWindowIsNeverSteady() {
        #expect(spread(Signals.sine(220, seconds: 0.05)) == .infinity)
    }

    /// The network alone reads this hum as snoring; the classifier gives that score to "other".
    /// The same hum swelling and fading like a breath keeps the network's scores.
    @Test func theShippedClassifierDoesNotCallASteadyHumSnoring() throws {
        // The shipped default's first model alone: the check is on its network's scores, which a
        // second model's opinion would otherwise mix into.
        var classifier = try CNNClassifier(model: CNNClassifier.bundled().model)
        let snoring = try #require(classifier.labels.firstIndex(of: "snoring"))
        let other = try #require(classifier.labels.firstIndex(of: "other"))
        func scores(_ signal: [Float]) -> (classifier: [Float], network: [Float]) {
            var out = [Float](repeating: 0, count: classifier.labels.count), network = out
            signal.withUnsafeBufferPointer { s in out.withUnsafeMutableBufferPointer { classifier.classify(s, scores: $0) } }
            network.withUnsafeMutableBufferPointer { Softmax.apply(classifier.lastLogits, temperature: classifier.model.temperature, into: $0) }
            return (out, network)
        }
        let steady = scores(Self.hum())
        #expect(steady.network[snoring] > 0.5)
        #expect(steady.classifier[snoring] == 0)
        #expect(abs(steady.classifier[other] - (steady.network[other] + steady.network[snoring])) < 1e-6)
        #expect(abs(steady.classifier.reduce(0, +) - 1) < 1e-5)

        let breath = Self.hum().enumerated().map { i, v in v * Float(sin(Double.pi * Double(i) / Double(classifierWindowLength))) }
        let swelling = scores(breath)
        #expect(swelling.classifier == swelling.network)
        // Heard as snoring at the most sensitive setting (0.25): it keeps that score.
        #expect(swelling.network[snoring] > Sensitivity.minimumConfidence(10), "the network should hear the swelling hum as snoring too")
    }

    /// A cheap USB sound card's DC offset is not sound: the shipped classifier (both models) hears
    /// a breath-like swelling hum the same with an offset as without. Before, the offset's floor
    /// under each 50 ms frame flattened the swell (the window read as steady, its snoring given to
    /// "other") and leaked into the lowest mel bands.
    @Test func aDCOffsetChangesNothingTheClassifierHears() throws {
        var classifier = try CNNClassifier.bundled()
        let snoring = try #require(classifier.labels.firstIndex(of: "snoring"))
        func scores(_ signal: [Float]) -> [Float] {
            var out = [Float](repeating: 0, count: classifier.labels.count)
            signal.withUnsafeBufferPointer { s in out.withUnsafeMutableBufferPointer { classifier.classify(s, scores: $0) } }
            return out
        }
        let breath = Self.hum(amplitude: 0.01).enumerated().map { i, v in
            v * Float(sin(Double.pi * Double(i) / Double(classifierWindowLength)))
        }
        let plain = scores(breath)
        #expect(plain[snoring] > Sensitivity.minimumConfidence(5), "\(plain)")
        for offset: Float in [0.01, -0.03, 0.1] {
            let shifted = scores(breath.map { $0 + offset })
            for i in plain.indices { #expect(abs(shifted[i] - plain[i]) < 1e-3, "offset \(offset): \(shifted) against \(plain)") }
        }
        // A shorter window (the end of a recording) is centred over the samples it has.
        let short = Array(breath.prefix(12_000))
        let shortPlain = scores(short), shortShifted = scores(short.map { $0 + 0.05 })
        for i in plain.indices { #expect(abs(shortShifted[i] - shortPlain[i]) < 1e-3, "\(shortShifted) against \(shortPlain)") }
    }
}
