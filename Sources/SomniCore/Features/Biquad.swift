import Foundation

/// A second-order IIR section (two poles, two zeros) in transposed direct form II.
///
/// Coefficients come from the RBJ audio-EQ cookbook, which is the bilinear transform of the
/// analog prototype pre-warped at the cutoff, so a cascade of sections with Butterworth Qs is an
/// exact digital Butterworth filter with −3 dB at the cutoff. `a0` is normalised to 1.
public struct Biquad: Sendable {
    public var b0: Float, b1: Float, b2: Float, a1: Float, a2: Float
    @usableFromInline var z1: Float = 0, z2: Float = 0

    public init(b0: Float, b1: Float, b2: Float, a1: Float, a2: Float) {
        self.b0 = b0; self.b1 = b1; self.b2 = b2; self.a1 = a1; self.a2 = a2
    }

    /// 2nd-order low-pass at `cutoff` Hz with quality factor `q` (0.7071 is Butterworth).
    public static func lowPass(cutoff: Double, q: Double, sampleRate: Double) -> Biquad {
        let (cosW, alpha) = warp(cutoff: cutoff, q: q, sampleRate: sampleRate)
        let a0 = 1 + alpha
        return Biquad(b0: Float((1 - cosW) / 2 / a0), b1: Float((1 - cosW) / a0), b2: Float((1 - cosW) / 2 / a0),
                      a1: Float(-2 * cosW / a0), a2: Float((1 - alpha) / a0))
    }

    /// 2nd-order high-pass at `cutoff` Hz with quality factor `q`.
    public static func highPass(cutoff: Double, q: Double, sampleRate: Double) -> Biquad {
        let (cosW, alpha) = warp(cutoff: cutoff, q: q, sampleRate: sampleRate)
        let a0 = 1 + alpha
        return Biquad(b0: Float((1 + cosW) / 2 / a0), b1: Float(-(1 + cosW) / a0), b2: Float((1 + cosW) / 2 / a0),
                      a1: Float(-2 * cosW / a0), a2: Float((1 - alpha) / a0))
    }

    /// A notch at `frequency` Hz: zero gain there, −3 dB at frequency ± frequency / (2 `q`).
    public static func notch(frequency: Double, q: Double, sampleRate: Double) -> Biquad {
        let (cosW, alpha) = warp(cutoff: frequency, q: q, sampleRate: sampleRate)
        let a0 = 1 + alpha
        return Biquad(b0: Float(1 / a0), b1: Float(-2 * cosW / a0), b2: Float(1 / a0),
                      a1: Float(-2 * cosW / a0), a2: Float((1 - alpha) / a0))
    }

    private static func warp(cutoff: Double, q: Double, sampleRate: Double) -> (cosW: Double, alpha: Double) {
        let w0 = 2 * Double.pi * cutoff / sampleRate
        return (cos(w0), sin(w0) / (2 * q))
    }

    /// Qs of the two sections of a 4th-order Butterworth: 1 / (2 cos(π(2k−1)/8)), k = 1, 2.
    public static let butterworth4Qs: [Double] = [1 / (2 * cos(Double.pi / 8)), 1 / (2 * cos(3 * Double.pi / 8))]

    /// Qs of the four sections of an 8th-order Butterworth: 1 / (2 cos(π(2k−1)/16)), k = 1…4.
    /// Low-pass sections with them give −3 dB at the cutoff and 48 dB/octave above it, about as
    /// steep as a voice codec's band edge.
    public static let butterworth8Qs: [Double] = (1...4).map { 1 / (2 * cos(Double.pi * Double(2 * $0 - 1) / 16)) }

    /// The four sections of a band-pass made of a 4th-order Butterworth high-pass at `low` Hz
    /// cascaded with a 4th-order Butterworth low-pass at `high` Hz: −3 dB at each edge (for bands
    /// an octave or more wide) and 24 dB/octave skirts on both sides.
    public static func butterworthBand(low: Double, high: Double, sampleRate: Double) -> [Biquad] {
        butterworth4Qs.map { highPass(cutoff: low, q: $0, sampleRate: sampleRate) }
            + butterworth4Qs.map { lowPass(cutoff: high, q: $0, sampleRate: sampleRate) }
    }

    /// Below this share of the sample rate a cutoff stays clear of Nyquist, where the bilinear
    /// transform's sections go unstable (a band's upper edge at a low analysis rate).
    public static let highestCutoffShare = 0.45

    /// The band `hz`, its upper edge kept under `highestCutoffShare` × the sample rate.
    public static func butterworthBand(_ hz: ClosedRange<Double>, sampleRate: Double) -> [Biquad] {
        butterworthBand(low: hz.lowerBound, high: min(hz.upperBound, highestCutoffShare * sampleRate), sampleRate: sampleRate)
    }

    /// Filters one sample.
    @inlinable @inline(__always)
    public mutating func process(_ x: Float) -> Float {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }

    /// Filters `buffer` in place; allocation-free.
    public mutating func process(_ buffer: UnsafeMutableBufferPointer<Float>) {
        var s1 = z1, s2 = z2
        let (b0, b1, b2, a1, a2) = (self.b0, self.b1, self.b2, self.a1, self.a2)
        for i in buffer.indices {
            let x = buffer[i]
            let y = b0 * x + s1
            s1 = b1 * x - a1 * y + s2
            s2 = b2 * x - a2 * y
            buffer[i] = y
        }
        z1 = s1; z2 = s2
    }

    /// Sets memories too small to matter to zero: after a loud sound, silence would leave them
    /// decaying through denormals (very slow on x86).
    public mutating func flushTiny() {
        if abs(z1) < 1e-30 { z1 = 0 }
        if abs(z2) < 1e-30 { z2 = 0 }
    }

    /// Clears the filter's memory.
    public mutating func reset() { z1 = 0; z2 = 0 }

    /// The magnitude response at `frequency` Hz, from the coefficients (not by filtering).
    public func gain(at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        func mag(_ c0: Double, _ c1: Double, _ c2: Double) -> Double {
            let re = c0 + c1 * cos(w) + c2 * cos(2 * w)
            let im = -(c1 * sin(w) + c2 * sin(2 * w))
            return (re * re + im * im).squareRoot()
        }
        return mag(Double(b0), Double(b1), Double(b2)) / mag(1, Double(a1), Double(a2))
    }
}

extension Array where Element == Biquad {
    /// Runs `buffer` in place through every section in turn.
    public mutating func process(_ buffer: UnsafeMutableBufferPointer<Float>) {
        for i in indices { self[i].process(buffer) }
    }

    public mutating func reset() {
        for i in indices { self[i].reset() }
    }
}
