import Foundation

/// A small, fast, seedable generator (SplitMix64): the same seed gives the same night on every
/// platform and Swift version, which `SystemRandomNumberGenerator` cannot promise.
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
}
