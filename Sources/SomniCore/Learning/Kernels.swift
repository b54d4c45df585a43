/// The inner loops of the network: SIMD8 over contiguous positions, register-blocked GEMMs.
/// Everything works on planar tensors: channel c, position p at `c * positions + p`.
enum Kernels {
    @inline(__always)
    static func load8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
    }

    @inline(__always)
    static func store8(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD8<Float>.self)
    }

    /// out[o][p] = bias[o] + Σ_k weights[o][k] · x[k][p]   (weights: rows × depth, x: depth × positions)
    /// Positions that do not fill a last vector are covered by one more vector ending at the
    /// last position, overlapping the one before: the shared lanes get the same sums again, and
    /// no lane is left to a scalar loop (30 positions, the last pointwise layer's, left 6 of them).
    static func gemm(weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, x: UnsafePointer<Float>,
                     out: UnsafeMutablePointer<Float>, rows: Int, depth: Int, positions: Int) {
        let overlapsTail = positions > 8 && positions & 7 != 0
        let vectorEnd = overlapsTail ? positions : positions & ~7
        var o = 0
        while o + 4 <= rows {
            let w0 = weights + o * depth, w1 = w0 + depth, w2 = w1 + depth, w3 = w2 + depth
            var p = 0
            while p < vectorEnd {
                if p + 8 > positions { p = positions - 8 }
                var a0 = SIMD8<Float>(repeating: bias[o]), a1 = SIMD8<Float>(repeating: bias[o + 1])
                var a2 = SIMD8<Float>(repeating: bias[o + 2]), a3 = SIMD8<Float>(repeating: bias[o + 3])
                var xp = x + p
                for k in 0..<depth {
                    let v = load8(xp)
                    a0 += w0[k] * v; a1 += w1[k] * v; a2 += w2[k] * v; a3 += w3[k] * v
                    xp += positions
                }
                store8(a0, out + o * positions + p); store8(a1, out + (o + 1) * positions + p)
                store8(a2, out + (o + 2) * positions + p); store8(a3, out + (o + 3) * positions + p)
                p += 8
            }
            for r in o..<(o + 4) { gemmScalarTail(weights, bias, x, out, row: r, depth: depth, positions: positions, from: vectorEnd) }
            o += 4
        }
        while o < rows {
            let w = weights + o * depth
            var p = 0
            while p < vectorEnd {
                if p + 8 > positions { p = positions - 8 }
                var a = SIMD8<Float>(repeating: bias[o])
                for k in 0..<depth { a += w[k] * load8(x + k * positions + p) }
                store8(a, out + o * positions + p)
                p += 8
            }
            gemmScalarTail(weights, bias, x, out, row: o, depth: depth, positions: positions, from: vectorEnd)
            o += 1
        }
    }

    @inline(__always)
    private static func gemmScalarTail(_ weights: UnsafePointer<Float>, _ bias: UnsafePointer<Float>, _ x: UnsafePointer<Float>,
                                       _ out: UnsafeMutablePointer<Float>, row: Int, depth: Int, positions: Int, from: Int) {
        guard from < positions else { return }
        let w = weights + row * depth
        for p in from..<positions {
            var a = bias[row]
            for k in 0..<depth { a += w[k] * x[k * positions + p] }
            out[row * positions + p] = a
        }
    }

    /// out[o][y][x] = bias[o] + Σ_c Σ_tap weights[o][c][tap] · padded[c][y + dy][x + dx]: a 3×3
    /// convolution read straight from the zero-bordered planes, without the nine-fold column copy
    /// a GEMM needs. The sum runs in the GEMM's order (bias, then c and tap ascending), so both
    /// give the same floats. One channel in (the first layer) keeps its nine weights in registers.
    static func conv3x3(padded: UnsafePointer<Float>, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                        out: UnsafeMutablePointer<Float>, inChannels: Int, outChannels: Int, height: Int, width: Int) {
        let pw = width + 2, plane = (height + 2) * pw, positions = height * width
        let vectorEnd = width & ~7
        for o in 0..<outChannels {
            let wo = weights + o * inChannels * 9, dst = out + o * positions
            let b = SIMD8<Float>(repeating: bias[o])
            if inChannels == 1 {
                let taps = Taps3x3(wo)
                for row in 0..<height {
                    let top = padded + row * pw
                    var x = 0
                    while x < vectorEnd {
                        store8(taps.sum(b, top + x, rowLength: pw), dst + row * width + x)
                        x += 8
                    }
                    conv3x3ScalarTail(padded, wo, bias[o], dst, inChannels: 1, plane: plane, row: row, width: width, from: vectorEnd)
                }
            } else if inChannels == 2 {
                // The default model's two input channels, one pass each over the output row, so
                // each pass's nine taps stay in registers (eighteen do not fit). The sums are
                // added in the same order as the general path's.
                let taps0 = Taps3x3(wo), taps1 = Taps3x3(wo + 9)
                for row in 0..<height {
                    let top = padded + row * pw, out = dst + row * width
                    var x = 0
                    while x < vectorEnd { store8(taps0.sum(b, top + x, rowLength: pw), out + x); x += 8 }
                    x = 0
                    while x < vectorEnd { store8(taps1.sum(load8(out + x), top + plane + x, rowLength: pw), out + x); x += 8 }
                    conv3x3ScalarTail(padded, wo, bias[o], dst, inChannels: 2, plane: plane, row: row, width: width, from: vectorEnd)
                }
            } else {
                for row in 0..<height {
                    var x = 0
                    while x < vectorEnd {
                        var a = b
                        for c in 0..<inChannels { a = Taps3x3(wo + c * 9).sum(a, padded + c * plane + row * pw + x, rowLength: pw) }
                        store8(a, dst + row * width + x)
                        x += 8
                    }
                    conv3x3ScalarTail(padded, wo, bias[o], dst, inChannels: inChannels, plane: plane, row: row, width: width, from: vectorEnd)
                }
            }
        }
    }

    /// out[c][y][x] = bias[c] + Σ_tap weights[c][tap] · padded[c][y + dy][x + dx]. Each plane is
    /// swept as one run over its padded rows (`wide`, height × (width + 2)), the two extra
    /// columns discarded when the rows are copied out; the nine weights sit in registers.
    static func depthwise3x3(padded: UnsafePointer<Float>, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                             wide: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>,
                             channels: Int, height: Int, width: Int) {
        let pw = width + 2, plane = (height + 2) * pw, span = height * pw
        // A last vector overlapping the one before covers a short tail, as in the GEMM.
        let vectorEnd = span > 8 ? span : span & ~7
        for c in 0..<channels {
            let top = padded + c * plane, wc = weights + c * 9
            let taps = Taps3x3(wc), b = SIMD8<Float>(repeating: bias[c])
            var k = 0
            while k < vectorEnd {
                if k + 8 > span { k = span - 8 }
                store8(taps.sum(b, top + k, rowLength: pw), wide + k)
                k += 8
            }
            while k < span {
                var a = bias[c]
                for tap in 0..<9 { a += wc[tap] * top[k + tapOffset(tap, paddedWidth: pw)] }
                wide[k] = a
                k += 1
            }
            for row in 0..<height { (out + (c * height + row) * width).update(from: wide + row * pw, count: width) }
        }
    }

    /// A 3×3 kernel's nine weights, each in all lanes, kept in registers across a sweep.
    struct Taps3x3 {
        let t0, t1, t2, t3, t4, t5, t6, t7, t8: SIMD8<Float>

        @inline(__always)
        init(_ w: UnsafePointer<Float>) {
            t0 = SIMD8(repeating: w[0]); t1 = SIMD8(repeating: w[1]); t2 = SIMD8(repeating: w[2])
            t3 = SIMD8(repeating: w[3]); t4 = SIMD8(repeating: w[4]); t5 = SIMD8(repeating: w[5])
            t6 = SIMD8(repeating: w[6]); t7 = SIMD8(repeating: w[7]); t8 = SIMD8(repeating: w[8])
        }

        /// `bias` plus the nine taps over eight outputs whose top-left neighbours start at `top`
        /// in a padded plane of `rowLength`, added in tap order (as the GEMM adds them).
        @inline(__always)
        func sum(_ bias: SIMD8<Float>, _ top: UnsafePointer<Float>, rowLength: Int) -> SIMD8<Float> {
            let r1 = top + rowLength, r2 = r1 + rowLength
            var a = bias
            a += t0 * load8(top); a += t1 * load8(top + 1); a += t2 * load8(top + 2)
            a += t3 * load8(r1); a += t4 * load8(r1 + 1); a += t5 * load8(r1 + 2)
            a += t6 * load8(r2); a += t7 * load8(r2 + 1); a += t8 * load8(r2 + 2)
            return a
        }
    }

    @inline(__always)
    private static func conv3x3ScalarTail(_ padded: UnsafePointer<Float>, _ wo: UnsafePointer<Float>, _ bias: Float,
                                          _ dst: UnsafeMutablePointer<Float>, inChannels: Int, plane: Int,
                                          row: Int, width: Int, from: Int) {
        guard from < width else { return }
        let pw = width + 2
        for x in from..<width {
            var a = bias
            for c in 0..<inChannels {
                let src = padded + c * plane + row * pw + x
                for tap in 0..<9 { a += wo[c * 9 + tap] * src[tapOffset(tap, paddedWidth: pw)] }
            }
            dst[row * width + x] = a
        }
    }

    /// gradWeights[o][k] += Σ_p gradOut[o][p] · x[k][p];  gradBias[o] += Σ_p gradOut[o][p]
    static func gemmWeightGradient(gradOut: UnsafePointer<Float>, x: UnsafePointer<Float>,
                                   gradWeights: UnsafeMutablePointer<Float>, gradBias: UnsafeMutablePointer<Float>,
                                   rows: Int, depth: Int, positions: Int) {
        for o in 0..<rows {
            let g = gradOut + o * positions
            gradBias[o] += sum(g, positions)
            for k in 0..<depth { gradWeights[o * depth + k] += dot(g, x + k * positions, positions) }
        }
    }

    /// gradX[k][p] (+)= Σ_o weights[o][k] · gradOut[o][p]
    static func gemmInputGradient(weights: UnsafePointer<Float>, gradOut: UnsafePointer<Float>, gradX: UnsafeMutablePointer<Float>,
                                  rows: Int, depth: Int, positions: Int, accumulate: Bool) {
        let vectorEnd = positions & ~7
        for k in 0..<depth {
            let gx = gradX + k * positions
            var p = 0
            while p < vectorEnd {
                var a = accumulate ? load8(gx + p) : SIMD8<Float>()
                var g = gradOut + p
                for o in 0..<rows { a += weights[o * depth + k] * load8(g); g += positions }
                store8(a, gx + p)
                p += 8
            }
            while p < positions {
                var a: Float = accumulate ? gx[p] : 0
                for o in 0..<rows { a += weights[o * depth + k] * gradOut[o * positions + p] }
                gx[p] = a
                p += 1
            }
        }
    }

    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ n: Int) -> Float {
        var acc = SIMD8<Float>()
        var i = 0
        while i + 8 <= n { acc += load8(a + i) * load8(b + i); i += 8 }
        var s = acc.sum()
        while i < n { s += a[i] * b[i]; i += 1 }
        return s
    }

    @inline(__always)
    static func sum(_ a: UnsafePointer<Float>, _ n: Int) -> Float {
        var acc = SIMD8<Float>()
        var i = 0
        while i + 8 <= n { acc += load8(a + i); i += 8 }
        var s = acc.sum()
        while i < n { s += a[i]; i += 1 }
        return s
    }

    /// Copies each height × width plane into a (height + 2) × (width + 2) plane with a zero border.
    static func pad(_ x: UnsafePointer<Float>, into padded: UnsafeMutablePointer<Float>, channels: Int, height: Int, width: Int) {
        let pw = width + 2, planeSize = (height + 2) * pw
        padded.update(repeating: 0, count: channels * planeSize)
        for c in 0..<channels {
            for y in 0..<height {
                (padded + c * planeSize + (y + 1) * pw + 1).update(from: x + (c * height + y) * width, count: width)
            }
        }
    }

    /// Offset of tap (dy, dx) ∈ 3×3 in a padded plane of row length `paddedWidth`.
    @inline(__always)
    static func tapOffset(_ tap: Int, paddedWidth: Int) -> Int { (tap / 3) * paddedWidth + tap % 3 }
}
