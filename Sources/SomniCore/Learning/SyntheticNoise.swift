import Foundation

/// Seeded coloured noise for training: white, pink, brown, fan-like (low-passed, with a hum
/// and a slow wobble) and rumble (deep low-passed noise swelling and fading like passing traffic). Real bedrooms hum with fans, air conditioning and traffic that the few
/// noise recordings of a data set do not cover; these teach "steady noise is not an event" and
/// serve as extra beds to mix under examples.
public enum SyntheticNoise {
    /// `count` beds of `seconds` each at an RMS of 0.05, kind by index (white, pink, brown, fan, rumble).
    public static func beds(count: Int, seconds: Double, seed: UInt64) -> [[Float]] {
        (0..<count).map { i in
            var rng = SeededRandom(seed: seed &+ UInt64(i) &* 0x9E37_79B9_7F4A_7C15)
            let n = Int(seconds * Double(analysisSampleRate))
            var x = [Float](repeating: 0, count: n)
            switch i % 5 {
            case 0:
                for k in 0..<n { x[k] = rng.nextGaussian() }
            case 1:  // Paul Kellet's economy pink filter
                var b0: Float = 0, b1: Float = 0, b2: Float = 0
                for k in 0..<n {
                    let w = rng.nextGaussian()
                    b0 = 0.99765 * b0 + w * 0.0990460
                    b1 = 0.96300 * b1 + w * 0.2965164
                    b2 = 0.57000 * b2 + w * 1.0526913
                    x[k] = b0 + b1 + b2 + w * 0.1848
                }
            case 2:  // brown: leaky integration
                var y: Float = 0
                for k in 0..<n { y = 0.995 * y + rng.nextGaussian(); x[k] = y }
            case 3:  // rumble: two one-pole low-passes at 60–300 Hz, swells of 2–20 s up to 12 dB
                let cutoff = rng.nextUniform(60...300)
                let a = exp(-2 * Float.pi * cutoff / Float(analysisSampleRate))
                var y1: Float = 0, y2: Float = 0, phase: Float = 0
                var period = rng.nextUniform(2...20)
                for k in 0..<n {
                    y1 = a * y1 + (1 - a) * rng.nextGaussian()
                    y2 = a * y2 + (1 - a) * y1
                    phase += 1 / (period * Float(analysisSampleRate))
                    if phase >= 1 { phase -= 1; period = rng.nextUniform(2...20) }
                    x[k] = y2 * pow(4, 0.5 - 0.5 * cos(2 * Float.pi * phase))
                }
            default:  // fan: one-pole low-pass at 150–1500 Hz, mains-like hum, slow amplitude wobble
                let cutoff = rng.nextUniform(150...1500), hum = rng.nextUniform(50...200), wobble = rng.nextUniform(0.2...1.5)
                let a = exp(-2 * Float.pi * cutoff / Float(analysisSampleRate))
                var y: Float = 0
                for k in 0..<n {
                    y = a * y + (1 - a) * rng.nextGaussian()
                    let t = Float(k) / Float(analysisSampleRate)
                    x[k] = y * (1 + 0.1 * sin(2 * Float.pi * wobble * t)) + 0.02 * sin(2 * Float.pi * hum * t)
                }
            }
            let rms = (x.reduce(0) { $0 + $1 * $1 } / Float(max(n, 1))).squareRoot()
            let scale = rms > 0 ? 0.05 / rms : 0
            for k in 0..<n { x[k] *= scale }
            return x
        }
    }

    /// The beds as a training set: windows of class `label`, one group per bed.
    public static func trainingSet(labels: [String], label: Int, beds: [[Float]], windowLength: Int) -> TrainingSet {
        var examples: [TrainingSet.Example] = []
        for (i, bed) in beds.enumerated() {
            var start = 0
            while start + windowLength <= bed.count {
                examples.append(.init(clip: i, start: start, length: windowLength, label: label, group: "generated noise \(i)",
                                      stratum: "\(labels[label])/generated noise", path: ""))
                start += windowLength
            }
        }
        return TrainingSet(labels: labels, clips: beds, examples: examples)
    }
}
