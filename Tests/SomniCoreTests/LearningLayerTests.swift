import Foundation
import Testing
@testable import SomniCore

/// Runs a network whose parameters and input the test sets by hand, in a training workspace
/// (convolutions through the column copy and the GEMM) and in a classifying one (convolutions
/// straight from the padded planes); the two must give the same floats.
private func run(_ layers: [LayerSpec], input: TensorShape, x: [Float], parameters: [Float]) throws -> [Float] {
    let net = try Network(input: input, layers: layers)
    #expect(net.parameterCount == parameters.count)
    let outputs = [true, false].map { forTraining in
        let ws = NetworkWorkspace(net, forTraining: forTraining)
        ws.input.baseAddress!.update(from: x, count: x.count)
        parameters.withUnsafeBufferPointer { net.forward($0.baseAddress!, ws) }
        return Array(ws.output)
    }
    #expect(outputs[0] == outputs[1])
    return outputs[0]
}

/// 3×3 convolution with zero padding, written out plainly: out[o][y][x], weights[o][c][tap].
private func naiveConv3x3(_ x: [Float], channels: Int, height: Int, width: Int, weights: [Float], bias: [Float],
                          depthwise: Bool) -> [Float] {
    let outChannels = bias.count
    var y = [Float](repeating: 0, count: outChannels * height * width)
    for o in 0..<outChannels {
        for row in 0..<height {
            for col in 0..<width {
                var sum = bias[o]
                for c in (depthwise ? o...o : 0...(channels - 1)) {
                    for tap in 0..<9 {
                        let (r, q) = (row + tap / 3 - 1, col + tap % 3 - 1)
                        guard r >= 0, r < height, q >= 0, q < width else { continue }
                        let w = depthwise ? weights[o * 9 + tap] : weights[(o * channels + c) * 9 + tap]
                        sum += w * x[(c * height + r) * width + q]
                    }
                }
                y[(o * height + row) * width + col] = sum
            }
        }
    }
    return y
}

@Suite struct LearningLayerTests {
    @Test func conv3x3OnATinyImage() throws {
        // 1×3×3 input 1…9; one output channel whose kernel picks the centre tap plus the right
        // neighbour; bias 0.5. Zero padding at the edges.
        var kernel = [Float](repeating: 0, count: 9)
        kernel[4] = 1; kernel[5] = 1
        let y = try run([.conv3x3(channels: 1)], input: .init(channels: 1, height: 3, width: 3),
                        x: (1...9).map(Float.init), parameters: kernel + [0.5])
        #expect(y == [3.5, 5.5, 3.5, 9.5, 11.5, 6.5, 15.5, 17.5, 9.5])
    }

    @Test func conv3x3MixesInputChannels() throws {
        // Two input channels, kernels with only the centre tap: out = 2·a − b.
        var w = [Float](repeating: 0, count: 18)
        w[4] = 2; w[13] = -1
        let y = try run([.conv3x3(channels: 1)], input: .init(channels: 2, height: 1, width: 2),
                        x: [1, 2, 10, 20], parameters: w + [0])
        #expect(y == [-8, -16])
    }

    @Test func depthwiseConvolvesEachChannelAlone() throws {
        // Channel 0: sum of the 3×3 neighbourhood; channel 1: its left neighbour, bias 1.
        var w = [Float](repeating: 1, count: 9) + [Float](repeating: 0, count: 9)
        w[9 + 3] = 1
        let y = try run([.depthwise3x3], input: .init(channels: 2, height: 2, width: 2),
                        x: [1, 2, 3, 4, 5, 6, 7, 8], parameters: w + [0, 1])
        #expect(y == [10, 10, 10, 10, 1, 6, 1, 8])
    }

    @Test func pointwiseAndDenseAreMatrixProducts() throws {
        let y = try run([.pointwise(channels: 2)], input: .init(channels: 2, height: 1, width: 3),
                        x: [1, 2, 3, 4, 5, 6], parameters: [1, 1, 2, -1, 0, 10])
        #expect(y == [5, 7, 9, 8, 9, 10])
        let d = try run([.dense(outputs: 1)], input: .init(channels: 1, height: 2, width: 2),
                        x: [1, 2, 3, 4], parameters: [1, 0, -1, 2, 0.5])
        #expect(d == [6.5])
    }

    @Test func reluPoolingAndDropoutAtInference() throws {
        let y = try run([.relu, .maxPool2, .dropout(rate: 0.5)], input: .init(channels: 1, height: 2, width: 5),
                        x: [-1, 3, 2, -7, 9, -4, 0, 5, 1, 2], parameters: [])
        #expect(y == [3, 5])  // the odd fifth column is dropped
        let g = try run([.globalAveragePool], input: .init(channels: 2, height: 1, width: 2), x: [1, 3, -2, 6], parameters: [])
        #expect(g == [2, 2])
        let t = try run([.timeAveragePool], input: .init(channels: 1, height: 2, width: 3), x: [1, 2, 3, 5, 6, 7], parameters: [])
        #expect(t == [3, 4, 5])
    }

    @Test(arguments: [(1, 9, 19), (3, 5, 16), (2, 4, 7), (2, 5, 20)])
    func wideConvolutionsMatchAPlainLoop(channels: Int, height: Int, width: Int) throws {
        // Widths with and without a vector tail, one input channel (the registers path) and more.
        var rng = SeededRandom(seed: UInt64(channels * 100 + width))
        let x = (0..<(channels * height * width)).map { _ in rng.nextUniform(-1...1) }
        let shape = TensorShape(channels: channels, height: height, width: width)
        let w = (0..<(4 * channels * 9)).map { _ in rng.nextUniform(-1...1) }, b = (0..<4).map { _ in rng.nextUniform(-1...1) }
        let y = try run([.conv3x3(channels: 4)], input: shape, x: x, parameters: w + b)
        let expected = naiveConv3x3(x, channels: channels, height: height, width: width, weights: w, bias: b, depthwise: false)
        #expect(zip(y, expected).allSatisfy { abs($0 - $1) < 1e-5 })

        let dw = (0..<(channels * 9)).map { _ in rng.nextUniform(-1...1) }, db = (0..<channels).map { _ in rng.nextUniform(-1...1) }
        let d = try run([.depthwise3x3], input: shape, x: x, parameters: dw + db)
        let dExpected = naiveConv3x3(x, channels: channels, height: height, width: width, weights: dw, bias: db, depthwise: true)
        #expect(zip(d, dExpected).allSatisfy { abs($0 - $1) < 1e-5 })
    }

    @Test func wideGEMMUsesTheVectorPathAndTheTail() throws {
        // 4 + 1 output rows over 11 positions: the blocked SIMD loop, a last vector overlapping
        // the one before, and the row left over.
        var rng = SeededRandom(seed: 3)
        let x = (0..<(3 * 11)).map { _ in rng.nextUniform(-1...1) }
        let w = (0..<15).map { _ in rng.nextUniform(-1...1) }, b = (0..<5).map { _ in rng.nextUniform(-1...1) }
        let y = try run([.pointwise(channels: 5)], input: .init(channels: 3, height: 1, width: 11), x: x, parameters: w + b)
        for o in 0..<5 {
            for p in 0..<11 {
                let expected = b[o] + (0..<3).reduce(Float(0)) { $0 + w[o * 3 + $1] * x[$1 * 11 + p] }
                #expect(abs(y[o * 11 + p] - expected) < 1e-5)
            }
        }
    }

    /// Compares backward's parameter and input gradients of L = Σ r·y with central differences.
    /// A leading rate-0 dropout makes the checked layer's input gradient visible.
    @Test(arguments: [
        [LayerSpec.conv3x3(channels: 3)], [.depthwise3x3], [.pointwise(channels: 3)], [.dense(outputs: 4)],
        [.relu], [.maxPool2], [.globalAveragePool], [.timeAveragePool], [.conv3x3(channels: 2), .relu, .maxPool2, .depthwise3x3, .pointwise(channels: 3), .globalAveragePool, .dense(outputs: 2)],
    ])
    func backwardMatchesFiniteDifferences(layers: [LayerSpec]) throws {
        let shape = TensorShape(channels: 2, height: 4, width: 5)
        let net = try Network(input: shape, layers: [.dropout(rate: 0)] + layers)
        var rng = SeededRandom(seed: 11)
        var params = (0..<net.parameterCount).map { _ in rng.nextUniform(-1...1) }
        // Inputs kept at least 0.1 from ReLU's kink so the differences never straddle it.
        var x = (0..<shape.count).map { _ -> Float in let u = rng.nextUniform(-1...1); return u < 0 ? u - 0.1 : u + 0.1 }
        let r = (0..<net.outputShape.count).map { _ in rng.nextUniform(-1...1) }
        let ws = NetworkWorkspace(net)
        func loss() -> Double {
            ws.input.baseAddress!.update(from: x, count: x.count)
            params.withUnsafeBufferPointer { net.forward($0.baseAddress!, ws) }
            return zip(ws.output, r).reduce(0) { $0 + Double($1.0 * $1.1) }
        }
        _ = loss()
        ws.outputGradient.baseAddress!.update(from: r, count: r.count)
        var grads = [Float](repeating: 0, count: net.parameterCount)
        params.withUnsafeBufferPointer { p in grads.withUnsafeMutableBufferPointer { net.backward(p.baseAddress!, ws, gradients: $0.baseAddress!) } }
        let inputGrad = Array(UnsafeBufferPointer(start: ws.gradient(0), count: shape.count))
        let h: Float = 1e-2
        for i in params.indices {
            let keep = params[i]
            params[i] = keep + h; let up = loss()
            params[i] = keep - h; let down = loss()
            params[i] = keep
            let numeric = (up - down) / Double(2 * h)
            #expect(abs(numeric - Double(grads[i])) < 2e-2 * max(1, abs(numeric)), "parameter \(i) of \(layers)")
        }
        for i in x.indices {
            let keep = x[i]
            x[i] = keep + h; let up = loss()
            x[i] = keep - h; let down = loss()
            x[i] = keep
            let numeric = (up - down) / Double(2 * h)
            #expect(abs(numeric - Double(inputGrad[i])) < 2e-2 * max(1, abs(numeric)), "input \(i) of \(layers)")
        }
    }

    @Test func architecturesThatDoNotFitAreRejected() {
        #expect(throws: SomniError.self) { try Network(input: .init(channels: 1, height: 1, width: 4), layers: [.maxPool2]) }
        #expect(throws: SomniError.self) { try Network(input: .init(channels: 1, height: 4, width: 4), layers: [.dense(outputs: 0)]) }
        #expect(throws: SomniError.self) { try Network(input: .init(channels: 1, height: 4, width: 4), layers: [.dropout(rate: 1)]) }
    }
}
