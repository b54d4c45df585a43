import Foundation

/// A planar tensor shape: channels × height × width.
public struct TensorShape: Codable, Sendable, Equatable, CustomStringConvertible {
    public var channels: Int, height: Int, width: Int
    public init(channels: Int, height: Int, width: Int) { self.channels = channels; self.height = height; self.width = width }
    public var count: Int { channels * height * width }
    public var positions: Int { height * width }
    public var description: String { "\(channels)×\(height)×\(width)" }
}

/// One layer of the network, as written in the model file.
public enum LayerSpec: Codable, Sendable, Equatable {
    /// Full 3×3 convolution, zero padding 1, stride 1 (im2col + GEMM).
    case conv3x3(channels: Int)
    /// 3×3 convolution of each channel on its own (MobileNet's depthwise step).
    case depthwise3x3
    /// 1×1 convolution mixing channels at each position.
    case pointwise(channels: Int)
    case relu
    /// 2×2 max-pooling with stride 2 (odd edges dropped).
    case maxPool2
    case globalAveragePool
    /// Average over time (height) only, keeping channels × frequency: where in the spectrum a
    /// pattern sits still reaches the dense layer.
    case timeAveragePool
    /// Identity at inference; in training zeroes a share `rate` of values and rescales the rest.
    case dropout(rate: Float)
    /// Fully connected over the whole input.
    case dense(outputs: Int)
}

/// A layer placed in a network: its shapes and where its parameters sit in the flat parameter array.
public struct LayerPlan: Sendable, Equatable {
    public let spec: LayerSpec
    public let input: TensorShape
    public let output: TensorShape
    /// Weights start at `parameterOffset`, the bias follows them.
    public let parameterOffset: Int
    public let weightCount: Int
    public let biasCount: Int
    public var parameterCount: Int { weightCount + biasCount }
}

/// A feed-forward network: its layer plans and the size of its flat parameter array.
/// Stateless; activations live in a `NetworkWorkspace`, parameters in a caller's `[Float]`.
public struct Network: Sendable, Equatable {
    public let inputShape: TensorShape
    public let layers: [LayerPlan]
    public let parameterCount: Int
    public var outputShape: TensorShape { layers.last?.output ?? inputShape }

    /// Plans every layer; throws `.badModel` for shapes that do not fit together.
    public init(input: TensorShape, layers specs: [LayerSpec]) throws {
        func fail(_ why: String) -> SomniError { SomniError(.badModel, "network architecture is invalid: \(why)") }
        guard input.channels > 0, input.height > 0, input.width > 0, input.count <= 1 << 22 else { throw fail("input \(input)") }
        guard !specs.isEmpty, specs.count <= 256 else { throw fail("\(specs.count) layers") }
        var shape = input, offset = 0
        var plans: [LayerPlan] = []
        for spec in specs {
            var out = shape, weights = 0, biases = 0
            switch spec {
            case .conv3x3(let c):
                guard c > 0, c <= 4096 else { throw fail("conv3x3 with \(c) channels") }
                out.channels = c; weights = c * shape.channels * 9; biases = c
            case .depthwise3x3:
                weights = shape.channels * 9; biases = shape.channels
            case .pointwise(let c):
                guard c > 0, c <= 4096 else { throw fail("pointwise with \(c) channels") }
                out.channels = c; weights = c * shape.channels; biases = c
            case .relu:
                break
            case .maxPool2:
                guard shape.height >= 2, shape.width >= 2 else { throw fail("max-pool on \(shape)") }
                out.height /= 2; out.width /= 2
            case .globalAveragePool:
                out.height = 1; out.width = 1
            case .timeAveragePool:
                out.height = 1
            case .dropout(let rate):
                guard rate >= 0, rate < 1 else { throw fail("dropout rate \(rate)") }
            case .dense(let n):
                guard n > 0, n <= 4096 else { throw fail("dense with \(n) outputs") }
                out = TensorShape(channels: n, height: 1, width: 1); weights = n * shape.count; biases = n
            }
            plans.append(LayerPlan(spec: spec, input: shape, output: out, parameterOffset: offset,
                                   weightCount: weights, biasCount: biases))
            offset += weights + biases
            shape = out
        }
        guard offset <= 1 << 24 else { throw fail("\(offset) parameters") }
        // A forged file with few parameters can still ask for wide layers many times over: 254
        // ReLUs of 4,096 channels were 8 GB of activations, allocated before the first window.
        let activations = plans.reduce(0) { $0 + $1.output.count }
        guard activations <= Self.largestActivationCount else { throw fail("\(activations) activations per window") }
        inputShape = input
        layers = plans
        parameterCount = offset
        guard multiplyAccumulates <= Self.largestMultiplyAccumulates else {
            throw fail("\(multiplyAccumulates) multiply-accumulates per window")
        }
    }

    /// Far beyond any network this classifier trains (tens of times the shipped one's), and
    /// small enough that a night's memory and time stay bounded whatever a model file says.
    static let largestActivationCount = 1 << 22, largestMultiplyAccumulates = 1 << 27

    /// Multiply-accumulates of one forward pass.
    public var multiplyAccumulates: Int {
        layers.reduce(0) { total, l in
            switch l.spec {
            case .conv3x3, .depthwise3x3, .pointwise: return total + l.weightCount * l.output.positions
            case .dense: return total + l.weightCount
            default: return total
            }
        }
    }

    /// He-initialised weights and zero biases from a seeded generator.
    public func initialParameters(seed: UInt64) -> [Float] {
        var rng = SeededRandom(seed: seed)
        var p = [Float](repeating: 0, count: parameterCount)
        for l in layers where l.weightCount > 0 {
            let fanIn: Int
            switch l.spec {
            case .conv3x3: fanIn = l.input.channels * 9
            case .depthwise3x3: fanIn = 9
            case .pointwise: fanIn = l.input.channels
            default: fanIn = l.input.count
            }
            let scale = Float((2.0 / Double(fanIn)).squareRoot())
            for i in 0..<l.weightCount { p[l.parameterOffset + i] = scale * rng.nextGaussian() }
        }
        return p
    }

    // MARK: Forward

    /// Runs the network on `workspace.input` and leaves the result in `workspace.output`.
    /// `training` turns dropout on (drawing from the workspace's generator).
    public func forward(_ parameters: UnsafePointer<Float>, _ ws: NetworkWorkspace, training: Bool = false) {
        for (i, l) in layers.enumerated() {
            let x = UnsafePointer(ws.activation(i)), y = ws.activation(i + 1)
            let w = parameters + l.parameterOffset, b = w + l.weightCount
            let inC = l.input.channels, h = l.input.height, wd = l.input.width, positions = l.input.positions
            switch l.spec {
            case .conv3x3:
                let padded = ws.scratch(i, .padded)
                Kernels.pad(x, into: padded, channels: inC, height: h, width: wd)
                if ws.forTraining {
                    // backward reads the columns, so training builds them and multiplies those.
                    let col = ws.scratch(i, .columns)
                    im2col(UnsafePointer(padded), col, channels: inC, height: h, width: wd)
                    Kernels.gemm(weights: w, bias: b, x: col, out: y, rows: l.output.channels, depth: inC * 9, positions: positions)
                } else {
                    Kernels.conv3x3(padded: padded, weights: w, bias: b, out: y, inChannels: inC,
                                    outChannels: l.output.channels, height: h, width: wd)
                }
            case .depthwise3x3:
                let padded = ws.scratch(i, .padded), wide = ws.scratch(i, .wide)
                Kernels.pad(x, into: padded, channels: inC, height: h, width: wd)
                Kernels.depthwise3x3(padded: padded, weights: w, bias: b, wide: wide, out: y, channels: inC, height: h, width: wd)
            case .pointwise:
                Kernels.gemm(weights: w, bias: b, x: x, out: y, rows: l.output.channels, depth: inC, positions: positions)
            case .dense:
                Kernels.gemm(weights: w, bias: b, x: x, out: y, rows: l.output.channels, depth: l.input.count, positions: 1)
            case .relu:
                let n = l.input.count
                var k = 0
                // A lane select rather than pointwiseMax, which the optimiser left as a call per vector.
                while k + 8 <= n {
                    let v = Kernels.load8(x + k)
                    Kernels.store8(v.replacing(with: 0, where: v .< 0), y + k); k += 8
                }
                while k < n { y[k] = max(x[k], 0); k += 1 }
            case .maxPool2:
                // Rows pairwise, then neighbours: even and odd lanes of the vertical maxima.
                let oh = l.output.height, ow = l.output.width
                for c in 0..<inC {
                    for oy in 0..<oh {
                        let r0 = x + c * positions + 2 * oy * wd, r1 = r0 + wd
                        let out = y + (c * oh + oy) * ow
                        var ox = 0
                        while ox + 4 <= ow {
                            let a = Kernels.load8(r0 + 2 * ox), b = Kernels.load8(r1 + 2 * ox)
                            let v = a.replacing(with: b, where: b .> a)
                            let even = v.evenHalf, odd = v.oddHalf
                            UnsafeMutableRawPointer(out + ox).storeBytes(of: even.replacing(with: odd, where: odd .> even), as: SIMD4<Float>.self)
                            ox += 4
                        }
                        while ox < ow {
                            out[ox] = max(max(r0[2 * ox], r0[2 * ox + 1]), max(r1[2 * ox], r1[2 * ox + 1]))
                            ox += 1
                        }
                    }
                }
            case .globalAveragePool:
                let scale = 1 / Float(positions)
                for c in 0..<inC { y[c] = Kernels.sum(x + c * positions, positions) * scale }
            case .timeAveragePool:
                let scale = 1 / Float(h)
                for c in 0..<inC {
                    for f in 0..<wd {
                        var total: Float = 0
                        for t in 0..<h { total += x[c * positions + t * wd + f] }
                        y[c * wd + f] = total * scale
                    }
                }
            case .dropout(let rate):
                let n = l.input.count
                let mask = ws.scratch(i, .mask)
                guard training && rate > 0 else {
                    mask.update(repeating: 1, count: n)
                    y.update(from: x, count: n)
                    continue
                }
                let keep = 1 / (1 - rate)
                for k in 0..<n { mask[k] = ws.random.nextUnit() < rate ? 0 : keep }
                for k in 0..<n { y[k] = x[k] * mask[k] }
            }
        }
    }

    private func im2col(_ padded: UnsafePointer<Float>, _ col: UnsafeMutablePointer<Float>, channels: Int, height: Int, width: Int) {
        let pw = width + 2, plane = (height + 2) * pw, positions = height * width
        for c in 0..<channels {
            for tap in 0..<9 {
                let dst = col + (c * 9 + tap) * positions
                let src = padded + c * plane + Kernels.tapOffset(tap, paddedWidth: pw)
                for row in 0..<height { (dst + row * width).update(from: src + row * pw, count: width) }
            }
        }
    }

    // MARK: Backward

    /// Back-propagates `workspace.outputGradient` (set by the caller) through the layers of the
    /// last `forward`, adding each parameter's gradient into `gradients`.
    public func backward(_ parameters: UnsafePointer<Float>, _ ws: NetworkWorkspace, gradients: UnsafeMutablePointer<Float>) {
        precondition(ws.forTraining, "backward needs a workspace made for training")
        for i in layers.indices.reversed() {
            let l = layers[i]
            let x = UnsafePointer(ws.activation(i)), y = UnsafePointer(ws.activation(i + 1))
            let gy = UnsafePointer(ws.gradient(i + 1)), gx = ws.gradient(i)
            let needInput = i > 0
            let w = parameters + l.parameterOffset
            let gw = gradients + l.parameterOffset, gb = gw + l.weightCount
            let inC = l.input.channels, h = l.input.height, wd = l.input.width, positions = l.input.positions
            switch l.spec {
            case .conv3x3:
                let col = ws.scratch(i, .columns), padded = ws.scratch(i, .padded)
                let depth = inC * 9, outC = l.output.channels
                Kernels.gemmWeightGradient(gradOut: gy, x: col, gradWeights: gw, gradBias: gb, rows: outC, depth: depth, positions: positions)
                guard needInput else { continue }
                Kernels.gemmInputGradient(weights: w, gradOut: gy, gradX: col, rows: outC, depth: depth, positions: positions, accumulate: false)
                // col2im: scatter the column gradients back through the padding.
                let pw = wd + 2, plane = (h + 2) * pw
                padded.update(repeating: 0, count: inC * plane)
                for c in 0..<inC {
                    for tap in 0..<9 {
                        let src = col + (c * 9 + tap) * positions
                        let dst = padded + c * plane + Kernels.tapOffset(tap, paddedWidth: pw)
                        for row in 0..<h { for xx in 0..<wd { dst[row * pw + xx] += src[row * wd + xx] } }
                    }
                }
                unpad(padded, into: gx, channels: inC, height: h, width: wd)
            case .depthwise3x3:
                let padded = ws.scratch(i, .padded), wide = ws.scratch(i, .wide), gpad = ws.scratch(i, .paddedGradient)
                let pw = wd + 2, plane = (h + 2) * pw, span = h * pw
                if needInput { gpad.update(repeating: 0, count: inC * plane) }
                for c in 0..<inC {
                    // The output gradient laid out on padded rows, zero in the two extra columns.
                    wide.update(repeating: 0, count: span)
                    for row in 0..<h { (wide + row * pw).update(from: gy + (c * h + row) * wd, count: wd) }
                    gb[c] += Kernels.sum(wide, span)
                    for tap in 0..<9 {
                        let off = Kernels.tapOffset(tap, paddedWidth: pw)
                        gw[c * 9 + tap] += Kernels.dot(wide, padded + c * plane + off, span)
                        guard needInput else { continue }
                        let dst = gpad + c * plane + off, wt = w[c * 9 + tap]
                        var k = 0
                        while k + 8 <= span { Kernels.store8(Kernels.load8(dst + k) + wt * Kernels.load8(wide + k), dst + k); k += 8 }
                        while k < span { dst[k] += wt * wide[k]; k += 1 }
                    }
                }
                if needInput { unpad(gpad, into: gx, channels: inC, height: h, width: wd) }
            case .pointwise:
                let outC = l.output.channels
                Kernels.gemmWeightGradient(gradOut: gy, x: x, gradWeights: gw, gradBias: gb, rows: outC, depth: inC, positions: positions)
                if needInput {
                    Kernels.gemmInputGradient(weights: w, gradOut: gy, gradX: gx, rows: outC, depth: inC, positions: positions, accumulate: false)
                }
            case .dense:
                let n = l.output.channels, depth = l.input.count
                Kernels.gemmWeightGradient(gradOut: gy, x: x, gradWeights: gw, gradBias: gb, rows: n, depth: depth, positions: 1)
                if needInput {
                    Kernels.gemmInputGradient(weights: w, gradOut: gy, gradX: gx, rows: n, depth: depth, positions: 1, accumulate: false)
                }
            case .relu:
                for k in 0..<l.input.count { gx[k] = y[k] > 0 ? gy[k] : 0 }
            case .maxPool2:
                // The gradient goes to the first of the four inputs that equals the maximum.
                gx.update(repeating: 0, count: l.input.count)
                let oh = l.output.height, ow = l.output.width
                for c in 0..<inC {
                    for oy in 0..<oh {
                        for ox in 0..<ow {
                            let corner = c * positions + 2 * oy * wd + 2 * ox
                            let o = (c * oh + oy) * ow + ox
                            let top = y[o]
                            let source = x[corner] == top ? corner : x[corner + 1] == top ? corner + 1
                                : x[corner + wd] == top ? corner + wd : corner + wd + 1
                            gx[source] += gy[o]
                        }
                    }
                }
            case .globalAveragePool:
                let scale = 1 / Float(positions)
                for c in 0..<inC { (gx + c * positions).update(repeating: gy[c] * scale, count: positions) }
            case .timeAveragePool:
                let scale = 1 / Float(h)
                for c in 0..<inC { for t in 0..<h { for f in 0..<wd { gx[c * positions + t * wd + f] = gy[c * wd + f] * scale } } }
            case .dropout:
                let mask = ws.scratch(i, .mask)
                for k in 0..<l.input.count { gx[k] = gy[k] * mask[k] }
            }
        }
    }

    private func unpad(_ padded: UnsafePointer<Float>, into x: UnsafeMutablePointer<Float>, channels: Int, height: Int, width: Int) {
        let pw = width + 2, plane = (height + 2) * pw
        for c in 0..<channels {
            for row in 0..<height {
                (x + (c * height + row) * width).update(from: padded + c * plane + (row + 1) * pw + 1, count: width)
            }
        }
    }
}

/// Activations, their gradients and each layer's scratch for one thread, allocated once.
public final class NetworkWorkspace {
    enum ScratchKind: Int, CaseIterable { case padded, paddedGradient, columns, wide, mask }

    private let slab: UnsafeMutablePointer<Float>
    private let slabCount: Int
    private let activationOffsets: [Int], gradientOffsets: [Int]
    private let scratchOffsets: [[Int]]
    /// Dropout's generator; reseed it per example for reproducible training.
    public var random: SeededRandom

    /// False for classifying only: no room for gradients (half the activations' memory again),
    /// and `backward` refuses the workspace.
    public let forTraining: Bool

    public init(_ network: Network, forTraining: Bool = true) {
        self.forTraining = forTraining
        var offset = 0
        func take(_ n: Int) -> Int { defer { offset += n }; return offset }
        let shapes = [network.inputShape] + network.layers.map(\.output)
        activationOffsets = shapes.map { take($0.count) }
        gradientOffsets = shapes.map { take(forTraining ? $0.count : 0) }
        scratchOffsets = network.layers.map { l in
            let s = l.input
            let paddedSize = s.channels * (s.height + 2) * (s.width + 2)
            let sizes: [ScratchKind: Int]
            switch l.spec {
            case .conv3x3: sizes = [.padded: paddedSize, .columns: forTraining ? s.channels * 9 * s.positions : 0]
            case .depthwise3x3: sizes = [.padded: paddedSize, .paddedGradient: forTraining ? paddedSize : 0,
                                         .wide: s.height * (s.width + 2)]
            case .dropout: sizes = [.mask: s.count]
            default: sizes = [:]
            }
            return ScratchKind.allCases.map { take(sizes[$0] ?? 0) }
        }
        slabCount = offset
        slab = .allocate(capacity: max(offset, 1))
        slab.initialize(repeating: 0, count: max(offset, 1))
        random = SeededRandom(seed: 0)
        outputCount = network.outputShape.count
        inputCount = network.inputShape.count
    }

    deinit {
        slab.deallocate()
    }

    public let inputCount: Int, outputCount: Int
    /// Where the caller writes the network's input.
    public var input: UnsafeMutableBufferPointer<Float> { .init(start: slab + activationOffsets[0], count: inputCount) }
    /// The last forward pass's output.
    public var output: UnsafeMutableBufferPointer<Float> { .init(start: slab + activationOffsets.last!, count: outputCount) }
    /// Where the caller writes d(loss)/d(output) before `backward`.
    public var outputGradient: UnsafeMutableBufferPointer<Float> { .init(start: slab + gradientOffsets.last!, count: outputCount) }

    func activation(_ i: Int) -> UnsafeMutablePointer<Float> { slab + activationOffsets[i] }
    func gradient(_ i: Int) -> UnsafeMutablePointer<Float> { slab + gradientOffsets[i] }
    func scratch(_ layer: Int, _ kind: ScratchKind) -> UnsafeMutablePointer<Float> { slab + scratchOffsets[layer][kind.rawValue] }
}

