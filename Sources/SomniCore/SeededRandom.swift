import Foundation

/// A small, fast, seedable generator (SplitMix64): the same seed gives the same night on every
/// platform and Swift version, which `SystemRandomNumberGenerator` cannot promise. Synthesis,
/// training and tests all draw from it.
public struct SeededRandom: RandomNumberGenerator, Sendable, Equatable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A new generator whose stream does not overlap this one's in practice.
    public mutating func split() -> SeededRandom { SeededRandom(seed: next() ^ 0x5851_F42D_4C95_7F2D) }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * unit()
    }

    /// Uniform integer in the range (tiny modulo bias is irrelevant here).
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    public mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// White noise sample, uniform in [-1, 1).
    public mutating func noise() -> Float { Float(unit() * 2 - 1) }

    /// Uniform Float in [0, 1) (24 bits: every value exactly representable).
    public mutating func nextUnit() -> Float { Float(next() >> 40) * (1.0 / Float(1 << 24)) }

    /// Standard normal (Box–Muller).
    public mutating func nextGaussian() -> Float {
        let u = max(Double(next() >> 11) * 0x1.0p-53, 1e-300), v = Double(next() >> 11) * 0x1.0p-53
        return Float((-2 * log(u)).squareRoot() * cos(2 * Double.pi * v))
    }

    /// Uniform Float in `range`.
    public mutating func nextUniform(_ range: ClosedRange<Float>) -> Float {
        range.lowerBound + (range.upperBound - range.lowerBound) * nextUnit()
    }
}
