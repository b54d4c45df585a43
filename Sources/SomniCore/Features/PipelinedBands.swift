import Foundation

/// Two four-section biquad chains (the snore band and the voice band), pipelined across the eight
/// lanes of an `Octet`: lanes 2k and 2k + 1 hold section k of the first and the second chain, and
/// at each step section k filters what section k − 1 produced one step earlier. (Interleaved, the
/// step is a shift by two lanes, which LLVM packs into full vector registers; a chain per half
/// got half-empty ones and ran 20 % slower.) All eight sections
/// then advance together in one step whose only loop-carried dependencies are the sections' own
/// memories, instead of four dependent sections per sample; the outputs are those of the same
/// `Biquad` updates run one after another (the same operations on the same values, scheduled
/// differently), and the loop runs about twice as fast.
///
/// The price is latency: a step returns each chain's output for the sample fed `latency` steps
/// earlier. `pendingEnergy(skipping:)` finishes the samples still in flight without disturbing
/// the pipeline, so frame sums can still end exactly on a frame's last sample.
struct PipelinedBands: Sendable {
    /// Steps between a sample going in and its output coming out.
    static let latency = 3

    private var b0, b1, b2, a1, a2: Octet
    private var z1 = Octet(repeating: 0), z2 = Octet(repeating: 0)
    /// Each section's latest output: the next step's input of the section after it.
    private var y = Octet(repeating: 0)

    init(low: [Biquad], mid: [Biquad]) {
        precondition(low.count <= 4 && mid.count <= 4, "each pipelined chain holds 4 sections")
        let passThrough = Biquad(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
        let lanes = (0..<4).flatMap { k in
            [k < low.count ? low[k] : passThrough, k < mid.count ? mid[k] : passThrough]
        }
        b0 = Octet(lanes.map(\.b0)); b1 = Octet(lanes.map(\.b1)); b2 = Octet(lanes.map(\.b2))
        a1 = Octet(lanes.map(\.a1)); a2 = Octet(lanes.map(\.a2))
    }

    /// Feeds sample `input`; returns both chains' outputs for the sample fed `latency` steps
    /// earlier (zero for the first `latency` steps). `Biquad.process`'s update in every lane.
    @inline(__always)
    mutating func step(_ input: Float) -> (low: Float, mid: Float) {
        let x = Octet(input, input, y.a, y.b, y.c, y.d, y.e, y.f)
        let new = b0 * x + z1
        z1 = b1 * x - a1 * new + z2
        z2 = b2 * x - a2 * new
        y = new
        return (new.g, new.h)
    }

    /// Sum of squares of both chains' outputs for the `latency` samples still in flight, oldest
    /// first, leaving out the first `skipping`; computed on a copy: the pipeline itself goes on
    /// and hands out those same outputs from its next `latency` steps, which the caller skips.
    func pendingEnergy(skipping: Int) -> (low: Float, mid: Float) {
        var copy = self
        var lowSum: Float = 0, midSum: Float = 0
        for k in 0..<Self.latency {
            let (l, m) = copy.step(0)  // what goes in now only reaches the output after these steps
            if k >= skipping {
                lowSum += l * l
                midSum += m * m
            }
        }
        return (lowSum, midSum)
    }

    /// Digital silence would leave the memories decaying through denormals (very slow on x86);
    /// values this small are far below any audio, so they are set to zero.
    mutating func flushTiny() {
        z1 = z1.flushed(below: 1e-30)
        z2 = z2.flushed(below: 1e-30)
    }
}

/// Eight Floats with concrete, always-inlined arithmetic, like `Quad`: LLVM packs them into
/// vector registers in release builds, and debug builds stay quick.
struct Octet: Sendable {
    var a, b, c, d, e, f, g, h: Float

    @inline(__always)
    init(_ a: Float, _ b: Float, _ c: Float, _ d: Float, _ e: Float, _ f: Float, _ g: Float, _ h: Float) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.e = e; self.f = f; self.g = g; self.h = h
    }
    @inline(__always) init(repeating x: Float) { self.init(x, x, x, x, x, x, x, x) }
    init(_ v: [Float]) { self.init(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]) }

    @inline(__always) static func + (l: Octet, r: Octet) -> Octet {
        Octet(l.a + r.a, l.b + r.b, l.c + r.c, l.d + r.d, l.e + r.e, l.f + r.f, l.g + r.g, l.h + r.h)
    }
    @inline(__always) static func - (l: Octet, r: Octet) -> Octet {
        Octet(l.a - r.a, l.b - r.b, l.c - r.c, l.d - r.d, l.e - r.e, l.f - r.f, l.g - r.g, l.h - r.h)
    }
    @inline(__always) static func * (l: Octet, r: Octet) -> Octet {
        Octet(l.a * r.a, l.b * r.b, l.c * r.c, l.d * r.d, l.e * r.e, l.f * r.f, l.g * r.g, l.h * r.h)
    }

    func flushed(below tiny: Float) -> Octet {
        let f = { (x: Float) in abs(x) < tiny ? 0 : x }
        return Octet(f(a), f(b), f(c), f(d), f(e), f(self.f), f(g), f(h))
    }
}
