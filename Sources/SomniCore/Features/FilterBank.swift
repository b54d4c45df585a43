import Foundation

/// Up to four biquad chains of up to four sections each, run side by side in the lanes of
/// `Quad`: one sample in, one output per chain out.
///
/// Stepping every section of every chain for one sample before the next keeps each section's
/// feedback (the latency-bound part of a biquad) overlapping with the others, instead of one
/// section at a time waiting on its own previous output. Shorter chains and unused lanes are
/// padded with pass-through sections.
struct FilterBank: Sendable {
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
    mutating func step(_ x: Float) -> Quad {
        var v = Quad(repeating: x)
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
struct LaneSection: Sendable {
    var b0, b1, b2, a1, a2: Quad
    var z1 = Quad(repeating: 0), z2 = Quad(repeating: 0)

    init(_ lanes: [Biquad]) {
        b0 = Quad(lanes.map(\.b0)); b1 = Quad(lanes.map(\.b1)); b2 = Quad(lanes.map(\.b2))
        a1 = Quad(lanes.map(\.a1)); a2 = Quad(lanes.map(\.a2))
    }

    @inline(__always)
    mutating func step(_ x: Quad) -> Quad {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }

    mutating func reset() { z1 = Quad(repeating: 0); z2 = Quad(repeating: 0) }

    mutating func flushTiny() {
        z1 = z1.flushed(below: 1e-30)
        z2 = z2.flushed(below: 1e-30)
    }
}

/// Four Floats with concrete, always-inlined arithmetic. In release builds LLVM packs these into
/// vector registers as it would `SIMD4<Float>`; unlike the standard library's generic SIMD
/// operators they stay quick in debug builds, where tests push minutes of audio through them.
struct Quad: Sendable {
    var a: Float, b: Float, c: Float, d: Float

    @inline(__always) init(_ a: Float, _ b: Float, _ c: Float, _ d: Float) { self.a = a; self.b = b; self.c = c; self.d = d }
    @inline(__always) init(repeating x: Float) { self.init(x, x, x, x) }
    init(_ v: [Float]) { self.init(v[0], v[1], v[2], v[3]) }

    @inline(__always) static func + (l: Quad, r: Quad) -> Quad { Quad(l.a + r.a, l.b + r.b, l.c + r.c, l.d + r.d) }
    @inline(__always) static func - (l: Quad, r: Quad) -> Quad { Quad(l.a - r.a, l.b - r.b, l.c - r.c, l.d - r.d) }
    @inline(__always) static func * (l: Quad, r: Quad) -> Quad { Quad(l.a * r.a, l.b * r.b, l.c * r.c, l.d * r.d) }

    func flushed(below tiny: Float) -> Quad {
        let f = { (x: Float) in abs(x) < tiny ? 0 : x }
        return Quad(f(a), f(b), f(c), f(d))
    }
}
