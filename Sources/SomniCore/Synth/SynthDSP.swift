import Foundation

/// A direct-form-I biquad (RBJ cookbook) for shaping generated sounds, run in Double so low corner
/// frequencies stay stable (the analysis filters are `Biquad`, in Float).
struct SynthFilter {
    private var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    enum Shape { case lowPass, highPass, bandPass }

    init(_ shape: Shape, frequency: Double, q: Double = 0.707, sampleRate: Double = Double(analysisSampleRate)) {
        let w = 2 * Double.pi * min(frequency, 0.45 * sampleRate) / sampleRate
        let alpha = sin(w) / (2 * q), c = cos(w)
        let a0 = 1 + alpha
        switch shape {
        case .lowPass: b0 = (1 - c) / 2; b1 = 1 - c; b2 = (1 - c) / 2
        case .highPass: b0 = (1 + c) / 2; b1 = -(1 + c); b2 = (1 + c) / 2
        case .bandPass: b0 = alpha; b1 = 0; b2 = -alpha  // 0 dB peak gain
        }
        a1 = -2 * c; a2 = 1 - alpha
        b0 /= a0; b1 /= a0; b2 /= a0; a1 /= a0; a2 /= a0
    }

    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        x2 = x1; x1 = x; y2 = y1; y1 = y
        return y
    }
}

/// Pink noise (Paul Kellet's economy filter over white noise).
struct PinkNoise {
    private var b0 = 0.0, b1 = 0.0, b2 = 0.0
    mutating func next(_ rng: inout SeededRandom) -> Double {
        let white = rng.unit() * 2 - 1
        b0 = 0.99765 * b0 + white * 0.0990460
        b1 = 0.96300 * b1 + white * 0.2965164
        b2 = 0.57000 * b2 + white * 1.0526913
        return (b0 + b1 + b2 + white * 0.1848) * 0.25
    }
}

/// Brown (red) noise: leaky integrated white noise.
struct BrownNoise {
    private var value = 0.0
    mutating func next(_ rng: inout SeededRandom) -> Double {
        value = 0.995 * value + 0.05 * (rng.unit() * 2 - 1)
        return value
    }
}

/// A sine oscillator by rotation: two multiply-adds per sample instead of a `sin` call.
struct Oscillator {
    private var c = 1.0, s = 0.0
    private let dc: Double, ds: Double

    init(frequency: Double, sampleRate: Double = Double(analysisSampleRate)) {
        dc = cos(2 * Double.pi * frequency / sampleRate)
        ds = sin(2 * Double.pi * frequency / sampleRate)
    }

    /// sin of the phase, then advances one sample.
    mutating func next() -> Double {
        let value = s
        let c2 = c * dc - s * ds
        s = s * dc + c * ds
        // Pull the radius back to 1 so rounding errors do not grow over hours.
        let correction = (3 - (c2 * c2 + s * s)) / 2
        c = c2 * correction
        s *= correction
        return value
    }

    /// sin and cos of the current phase (before `next()` advances it).
    var sine: Double { s }
    var cosine: Double { c }
}

/// The Rosenberg glottal pulse over one period, phase in [0, 1): a smooth voiced source whose
/// harmonics fall off steeply, cheap enough to run per sample.
func glottalPulse(_ phase: Double, open: Double = 0.4, closing: Double = 0.16) -> Double {
    if phase < open { return 0.5 * (1 - cos(Double.pi * phase / open)) }
    if phase < open + closing { return cos(0.5 * Double.pi * (phase - open) / closing) }
    return 0
}

/// Root mean square of a buffer.
func rootMeanSquare(_ samples: [Float]) -> Double {
    guard !samples.isEmpty else { return 0 }
    var sum = 0.0
    for s in samples { sum += Double(s) * Double(s) }
    return (sum / Double(samples.count)).squareRoot()
}

/// Scales to a 0.9 peak (a no-op on silence).
func normalizedToPeak(_ samples: [Float]) -> [Float] {
    let peak = samples.reduce(Float(0)) { max($0, abs($1)) }
    guard peak > 0 else { return samples }
    let g = 0.9 / peak
    return samples.map { $0 * g }
}

/// The part of a clip between its first and last 10 ms frame within `dynamicRange` dB of its
/// loudest frame: recorded clips carry silence around the sound, and reference events must
/// cover only the sound.
func trimmedToSound(_ samples: [Float], dynamicRange: Double = 30) -> [Float] {
    let frame = analysisSampleRate / 100
    let frameCount = samples.count / frame
    guard frameCount > 0 else { return samples }
    var energies = [Double](repeating: 0, count: frameCount)
    for f in 0..<frameCount {
        var sum = 0.0
        for i in f * frame..<(f + 1) * frame { sum += Double(samples[i]) * Double(samples[i]) }
        energies[f] = sum / Double(frame)
    }
    guard let loudest = energies.max(), loudest > 0 else { return [] }
    let threshold = loudest * pow(10, -dynamicRange / 10)
    guard let first = energies.firstIndex(where: { $0 >= threshold }),
          let last = energies.lastIndex(where: { $0 >= threshold }) else { return [] }
    let end = last == frameCount - 1 ? samples.count : (last + 1) * frame
    return Array(samples[first * frame..<end])
}
