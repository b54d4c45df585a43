import Foundation

/// A real-input FFT of a fixed power-of-two size, written for repeated use on one thread.
///
/// The N real samples are packed as N/2 complex values, transformed with an iterative radix-2
/// FFT and split into the N/2 + 1 bins of the real spectrum (the usual "two for one" trick), so
/// a frame costs half a complex FFT. Tables and buffers are allocated once in `init`.
public final class RealFFT {
    public let size: Int
    private let half: Int
    private let bitReversed: [Int32]
    /// Twiddles of the N/2-point complex FFT: exp(-2πik/(N/2)), k < N/4.
    private let twiddleRe: [Float], twiddleIm: [Float]
    /// Twiddles of the split step: exp(-2πik/N), k ≤ N/2.
    private let splitRe: [Float], splitIm: [Float]
    private var re: [Float], im: [Float]

    /// `size` must be a power of two, at least 4.
    public init(size: Int) throws {
        guard size >= 4, size & (size - 1) == 0 else {
            throw SomniError(.badInput, "FFT size must be a power of two of at least 4, not \(size)")
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
        re = [Float](repeating: 0, count: half)
        im = [Float](repeating: 0, count: half)
    }

    /// Power |X[k]|² of bins k = 0 … N/2 of `input` (count == size) into `power` (count N/2 + 1).
    public func powerSpectrum(_ input: UnsafeBufferPointer<Float>, into power: UnsafeMutableBufferPointer<Float>) {
        precondition(input.count == size && power.count == half + 1)
        let n = half
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in
                bitReversed.withUnsafeBufferPointer { rev in
                    for i in 0..<n {
                        let j = Int(rev[i])
                        re[i] = input[2 * j]
                        im[i] = input[2 * j + 1]
                    }
                }
                transformInPlace(re, im)
                splitRe.withUnsafeBufferPointer { wr in
                    splitIm.withUnsafeBufferPointer { wi in
                        // X[k] = (Z[k] + conj Z[n-k])/2 - i·W^k·(Z[k] - conj Z[n-k])/2
                        for k in 0...n {
                            let a = k == n ? 0 : k
                            let b = k == 0 ? 0 : n - k
                            let zr = re[a], zi = im[a], cr = re[b], ci = -im[b]
                            let er = 0.5 * (zr + cr), ei = 0.5 * (zi + ci)
                            let dr = 0.5 * (zr - cr), di = 0.5 * (zi - ci)
                            // o = -i·d
                            let orr = di, oi = -dr
                            let xr = er + wr[k] * orr - wi[k] * oi
                            let xi = ei + wr[k] * oi + wi[k] * orr
                            power[k] = xr * xr + xi * xi
                        }
                    }
                }
            }
        }
    }

    /// Iterative radix-2 decimation-in-time FFT over bit-reversed input.
    private func transformInPlace(_ re: UnsafeMutableBufferPointer<Float>, _ im: UnsafeMutableBufferPointer<Float>) {
        let n = half
        twiddleRe.withUnsafeBufferPointer { tr in
            twiddleIm.withUnsafeBufferPointer { ti in
                var length = 2
                while length <= n {
                    let halfLength = length / 2
                    let stride = n / length
                    var start = 0
                    while start < n {
                        for j in 0..<halfLength {
                            let wr = tr[j * stride], wi = ti[j * stride]
                            let u = start + j, v = u + halfLength
                            let vr = re[v] * wr - im[v] * wi
                            let vi = re[v] * wi + im[v] * wr
                            re[v] = re[u] - vr; im[v] = im[u] - vi
                            re[u] += vr; im[u] += vi
                        }
                        start += length
                    }
                    length *= 2
                }
            }
        }
    }
}
