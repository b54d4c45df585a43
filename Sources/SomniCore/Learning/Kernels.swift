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
    static func gemm(weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, x: UnsafePointer<Float>,
                     out: UnsafeMutablePointer<Float>, rows: Int, depth: Int, positions: Int) {
        let vectorEnd = positions & ~7
        var o = 0
        while o + 4 <= rows {
            let w0 = weights + o * depth, w1 = w0 + depth, w2 = w1 + depth, w3 = w2 + depth
            var p = 0
            while p < vectorEnd {
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
