import Foundation

/// Up to four biquad chains of up to four sections each, run side by side in the lanes of
/// `SIMD4<Float>`: one sample in, one output per chain out.
///
/// Stepping every section of every chain for one sample before the next keeps each section's
/// feedback (the latency-bound part of a biquad) overlapping with the others, instead of one
/// section at a time waiting on its own previous output. Shorter chains and unused lanes are
/// padded with pass-through sections.
struct FilterBank {
    private var s0: LaneSection, s1: LaneSection, s2: LaneSection, s3: LaneSection

    init(chains: [[Biquad]]) {
        precondition(chains.count <= 4 && chains.allSatisfy { $0.count <= 4 }, "FilterBank holds 4 × 4 sections")
        let passThrough = Biquad(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
        let section = { (k: Int) in
            LaneSection((0..<4).map { lane in
                lane < chains.count && k < chains[lane].count ? chains[lane][k] : passThrough
            })
        }
        s0 = section(0); s1 = section(1); s2 = section(2); s3 = section(3)
    }

    @inline(__always)
    mutating func step(_ x: Float) -> SIMD4<Float> {
        var v = SIMD4(repeating: x)
        v = s0.step(v)
        v = s1.step(v)
        v = s2.step(v)
        return s3.step(v)
    }

    mutating func reset() {
        s0.reset(); s1.reset(); s2.reset(); s3.reset()
    }

    /// Digital silence would leave the memories decaying through denormals (very slow on x86);
    /// values this small are far below any audio, so they are set to zero.
    mutating func flushTiny() {
        s0.flushTiny(); s1.flushTiny(); s2.flushTiny(); s3.flushTiny()
    }
}

/// Section `k` of each chain, one per lane.
struct LaneSection {
    var b0, b1, b2, a1, a2: SIMD4<Float>
    var z1 = SIMD4<Float>(), z2 = SIMD4<Float>()

    init(_ lanes: [Biquad]) {
        b0 = .init(lanes.map(\.b0)); b1 = .init(lanes.map(\.b1)); b2 = .init(lanes.map(\.b2))
        a1 = .init(lanes.map(\.a1)); a2 = .init(lanes.map(\.a2))
    }

    @inline(__always)
    mutating func step(_ x: SIMD4<Float>) -> SIMD4<Float> {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }

    mutating func reset() { z1 = .zero; z2 = .zero }

    mutating func flushTiny() {
        let tiny = SIMD4<Float>(repeating: 1e-30)
        z1.replace(with: 0, where: (z1 .< tiny) .& (z1 .> -tiny))
        z2.replace(with: 0, where: (z2 .< tiny) .& (z2 .> -tiny))
    }
}
