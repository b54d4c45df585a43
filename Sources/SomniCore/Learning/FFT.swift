import Foundation

/// Real-input FFTs of a fixed power-of-two size, eight at a time: lane l of every SIMD8 value
/// belongs to the l-th signal. Eight frames of a spectrogram thus cost about what one would with
/// scalar code.
///
/// The N real samples are packed as N/2 complex values, transformed with an iterative radix-2
/// FFT and split into the N/2 + 1 bins of the real spectrum (the usual "two for one" trick).
/// Tables and buffers are allocated once in `init`; one instance per thread.
public final class RealFFT {
    public let size: Int
    private let half: Int
    private let bitReversed: [Int32]
    /// Twiddles of the N/2-point complex FFT: exp(-2πik/(N/2)), k < N/4.
    private let twiddleRe: [Float], twiddleIm: [Float]
    /// Twiddles of the split step: exp(-2πik/N), k ≤ N/2.
    private let splitRe: [Float], splitIm: [Float]
    private let re: UnsafeMutablePointer<SIMD8<Float>>, im: UnsafeMutablePointer<SIMD8<Float>>

    /// `size` must be a power of two, at least 4.
    public init(size: Int) throws {
        guard size >= 4, size <= 1 << 20, size & (size - 1) == 0 else {
            throw SomniError(.badInput, "FFT size must be a power of two from 4 to 2^20, not \(size)")
        }
        self.size = size
        half = size / 2
        let bits = half.trailingZeroBitCount
        bitReversed = (0..<half).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return Int32(r)
        }
        let quarter = max(half / 2, 1)
        twiddleRe = (0..<quarter).map { Float(cos(-2 * Double.pi * Double($0) / Double(size / 2))) }
        twiddleIm = (0..<quarter).map { Float(sin(-2 * Double.pi * Double($0) / Double(size / 2))) }
        splitRe = (0...half).map { Float(cos(-2 * Double.pi * Double($0) / Double(size))) }
        splitIm = (0...half).map { Float(sin(-2 * Double.pi * Double($0) / Double(size))) }
        re = .allocate(capacity: half)
        re.initialize(repeating: SIMD8(), count: half)
        im = .allocate(capacity: half)
        im.initialize(repeating: SIMD8(), count: half)
    }

    deinit {
        re.deallocate()
        im.deallocate()
    }

    /// Power |X[k]|² of bins k = 0 … N/2 of eight signals: `input` holds `size` SIMD8 values,
    /// `power` receives N/2 + 1.
    public func powerSpectra(_ input: UnsafePointer<SIMD8<Float>>, into power: UnsafeMutablePointer<SIMD8<Float>>) {
        let n = half
        bitReversed.withUnsafeBufferPointer { rev in
            for i in 0..<n {
                let j = Int(rev[i])
                re[i] = input[2 * j]
                im[i] = input[2 * j + 1]
            }
        }
        transform()
        splitRe.withUnsafeBufferPointer { wr in
            splitIm.withUnsafeBufferPointer { wi in
                // X[k] = E[k] + W^k·O[k], E = (Z[k] + conj Z[n-k])/2, O = -i·(Z[k] - conj Z[n-k])/2
                for k in 0...n {
                    let a = k == n ? 0 : k
                    let b = k == 0 ? 0 : n - k
                    let zr = re[a], zi = im[a], cr = re[b], ci = -im[b]
                    let er = 0.5 * (zr + cr), ei = 0.5 * (zi + ci)
                    let orr = 0.5 * (zi - ci), oi = -0.5 * (zr - cr)
                    let xr = er + wr[k] * orr - wi[k] * oi
                    let xi = ei + wr[k] * oi + wi[k] * orr
                    power[k] = xr * xr + xi * xi
                }
            }
        }
    }

    /// Iterative radix-2 decimation-in-time FFT over the bit-reversed `re`, `im`.
    private func transform() {
        let n = half, re = self.re, im = self.im
        // First stage: twiddle 1.
        var i = 0
        while i + 1 < n {
            let ur = re[i], ui = im[i], vr = re[i + 1], vi = im[i + 1]
            re[i] = ur + vr; im[i] = ui + vi
            re[i + 1] = ur - vr; im[i + 1] = ui - vi
            i += 2
        }
        twiddleRe.withUnsafeBufferPointer { tr in
            twiddleIm.withUnsafeBufferPointer { ti in
                var length = 4
                while length <= n {
                    let halfLength = length / 2
                    let stride = n / length
                    for j in 0..<halfLength {
                        let wr = tr[j * stride], wi = ti[j * stride]
                        var u = j
                        while u < n {
                            let v = u + halfLength
                            let vr = re[v] * wr - im[v] * wi
                            let vi = re[v] * wi + im[v] * wr
                            let ur = re[u], ui = im[u]
                            re[v] = ur - vr; im[v] = ui - vi
                            re[u] = ur + vr; im[u] = ui + vi
                            u += length
                        }
                    }
                    length *= 2
                }
            }
        }
    }
}
