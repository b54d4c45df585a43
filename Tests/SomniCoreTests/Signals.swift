import Foundation

/// Generated test signals at 16 kHz, deterministic (seeded noise).
enum Signals {
    static let rate = 16_000.0

    /// A small deterministic generator (SplitMix64), so tests never depend on system randomness.
    struct Noise: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// Uniform in [-1, 1).
        mutating func float() -> Float { Float(Double(next() >> 40) / Double(1 << 24)) * 2 - 1 }
    }

    static func count(_ seconds: Double) -> Int { Int((seconds * rate).rounded()) }

    static func sine(_ frequency: Double, seconds: Double, amplitude: Float = 0.5) -> [Float] {
        (0..<count(seconds)).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / rate)) }
    }

    /// Uniform white noise with the given RMS.
    static func noise(seconds: Double, rms: Float, seed: UInt64 = 1) -> [Float] {
        var g = Noise(seed: seed)
        let scale = rms * 3.0.squareRoot().float
        return (0..<count(seconds)).map { _ in g.float() * scale }
    }

    /// Adds `burst` into `base` starting at `at` seconds.
    static func mix(_ base: [Float], _ burst: [Float], at: Double) -> [Float] {
        var out = base
        let start = count(at)
        for (i, v) in burst.enumerated() where start + i < out.count { out[start + i] += v }
        return out
    }

    /// Snore-like: a ~100 Hz harmonic buzz (fundamental + 2nd/3rd harmonic), in pulses of
    /// `pulse` seconds with a smooth attack and release, one every `period` seconds.
    static func snore(seconds: Double, period: Double = 2.5, pulse: Double = 1.2,
                      amplitude: Float = 0.3, fundamental: Double = 100) -> [Float] {
        (0..<count(seconds)).map { i in
            let t = Double(i) / rate
            let phase = t.truncatingRemainder(dividingBy: period)
            guard phase < pulse else { return 0 }
            let shape = sin(Double.pi * phase / pulse)
            let f = 2 * Double.pi * fundamental * t
            let tone = sin(f) + 0.6 * sin(2 * f) + 0.3 * sin(3 * f)
            return amplitude * Float(shape * tone / 1.9)
        }
    }

    /// Speech-like: a 140 Hz glottal pulse train through formant resonators (≈ 700, 1200,
    /// 2500 Hz), amplitude-modulated at a syllable rate of ~4 Hz.
    static func speech(seconds: Double, amplitude: Float = 0.2, seed: UInt64 = 7) -> [Float] {
        let n = count(seconds)
        var formants = [700.0, 1200, 2500].map { Resonator(frequency: $0, bandwidth: 120) }
        var g = Noise(seed: seed)
        var out = [Float](repeating: 0, count: n)
        var peak: Float = 0
        for i in 0..<n {
            let t = Double(i) / rate
            let pitch = 140 * (1 + 0.1 * sin(2 * Double.pi * 0.7 * t))
            // A zero-mean pulse train, so the source has no DC for the resonators to pass.
            let glottal: Float = (t * pitch).truncatingRemainder(dividingBy: 1) < 0.08 ? 0.92 : -0.08
            let source = glottal + 0.05 * g.float()
            var y: Float = 0
            for k in formants.indices { y += formants[k].process(source) }
            let syllable = Float(max(0, sin(2 * Double.pi * 4.3 * t)))
            out[i] = y * syllable
            peak = max(peak, abs(out[i]))
        }
        return out.map { $0 / max(peak, 1e-9) * amplitude }
    }

    /// Cough-like: a broadband noise burst with an instant onset and a fast exponential decay.
    static func cough(seconds: Double = 0.3, amplitude: Float = 0.5, seed: UInt64 = 3) -> [Float] {
        var g = Noise(seed: seed)
        var lowPassed: Float = 0
        return (0..<count(seconds)).map { i in
            let t = Double(i) / rate
            lowPassed = 0.7 * lowPassed + 0.3 * g.float()   // tilt towards the mid band
            return amplitude * Float(exp(-t / (seconds / 3))) * (lowPassed * 2)
        }
    }

    /// A two-pole resonator for formants.
    struct Resonator {
        var a1: Float, a2: Float, gain: Float, y1: Float = 0, y2: Float = 0
        init(frequency: Double, bandwidth: Double) {
            let r = exp(-Double.pi * bandwidth / Signals.rate)
            a1 = Float(2 * r * cos(2 * Double.pi * frequency / Signals.rate))
            a2 = Float(-r * r)
            gain = Float(1 - r)
        }
        mutating func process(_ x: Float) -> Float {
            let y = gain * x + a1 * y1 + a2 * y2
            y2 = y1; y1 = y
            return y
        }
    }

    static func rms(_ x: ArraySlice<Float>) -> Float {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(Float(0)) { $0 + $1 * $1 } / Float(x.count)).squareRoot()
    }
}

extension Double { var float: Float { Float(self) } }
