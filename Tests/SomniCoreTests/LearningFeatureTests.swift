import Foundation
import Testing
@testable import SomniCore

@Suite struct LearningFeatureTests {
    @Test(arguments: [8, 64, 512])
    func realFFTMatchesNaiveDFTInEveryLane(size: Int) throws {
        var rng = SeededRandom(seed: UInt64(size))
        let signals = (0..<8).map { _ in (0..<size).map { _ in rng.nextUniform(-1...1) } }
        let packed = (0..<size).map { i in SIMD8<Float>((0..<8).map { signals[$0][i] }) }
        let fft = try RealFFT(size: size)
        var power = [SIMD8<Float>](repeating: SIMD8(), count: size / 2 + 1)
        packed.withUnsafeBufferPointer { input in power.withUnsafeMutableBufferPointer { fft.powerSpectra(input.baseAddress!, into: $0.baseAddress!) } }
        for lane in 0..<8 {
            let x = signals[lane]
            for k in 0...(size / 2) {
                var re = 0.0, im = 0.0
                for n in 0..<size {
                    let angle = -2 * Double.pi * Double(k * n) / Double(size)
                    re += Double(x[n]) * cos(angle); im += Double(x[n]) * sin(angle)
                }
                let expected = re * re + im * im
                #expect(abs(Double(power[k][lane]) - expected) <= 1e-3 * max(expected, 1), "lane \(lane) bin \(k)")
            }
        }
    }

    @Test func fastLogMatchesFoundation() {
        for x: Float in [1e-10, 3.7e-6, 0.01, 0.5, 0.70710677, 1, 1.4142135, 2, 3, 1234.5, 6.02e20] {
            let y = LogMelExtractor.log(SIMD8(repeating: x))[0]
            #expect(abs(y - Foundation.log(x)) < 1e-5 * max(1, abs(Foundation.log(x))), "log \(x)")
        }
    }

    @Test func fftRejectsSizesThatAreNotPowersOfTwo() {
        #expect(throws: SomniError.self) { try RealFFT(size: 100) }
    }

    @Test func melFilterbankMatchesTrianglesComputedHere() {
        let bands = 10, fftSize = 256, rate = 16_000
        let bank = MelFilterbank(bands: bands, fftSize: fftSize, sampleRate: rate, minFrequency: 100, maxFrequency: 6000)
        // Edges computed here from the natural-log form of the HTK mel scale.
        func mel(_ f: Double) -> Double { 1127 * Foundation.log(1 + f / 700) }
        func hz(_ m: Double) -> Double { 700 * (Foundation.exp(m / 1127) - 1) }
        let edges = (0..<(bands + 2)).map { hz(mel(100) + (mel(6000) - mel(100)) * Double($0) / Double(bands + 1)) }
        for b in 0..<bands {
            for k in 0...(fftSize / 2) {
                let f = Double(k) * Double(rate) / Double(fftSize)
                let expected = max(0, min((f - edges[b]) / (edges[b + 1] - edges[b]), (edges[b + 2] - f) / (edges[b + 2] - edges[b + 1])))
                let offset = k - bank.firstBin[b]
                let actual = offset >= 0 && offset < bank.weights[b].count ? Double(bank.weights[b][offset]) : 0
                #expect(abs(actual - expected) < 1e-4, "band \(b) bin \(k)")
            }
        }
    }

    @Test func logMelOfAToneLightsItsBand() throws {
        let s = FeatureSettings.standard
        let extractor = try LogMelExtractor(settings: s)
        let tone = (0..<s.windowLength).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 16_000)) }
        var out = [Float](repeating: 0, count: extractor.outputCount)
        tone.withUnsafeBufferPointer { t in out.withUnsafeMutableBufferPointer { extractor.extract(t, into: $0) } }
        #expect(out.count == 48 * 40)
        let frame = Array(out[(20 * 40)..<(21 * 40)])
        let loudest = frame.indices.max { frame[$0] < frame[$1] }!
        let bank = extractor.filterbank
        // The loudest band is the one whose peak lies nearest 1000 Hz.
        let centres = (0..<40).map { b -> Double in
            let w = bank.weights[b]
            return Double(bank.firstBin[b] + w.indices.max { w[$0] < w[$1] }!) * 16_000 / 512
        }
        #expect(abs(centres[loudest] - 1000) < 80)
        // Silence stays finite at the log floor.
        let silence = [Float](repeating: 0, count: s.windowLength)
        silence.withUnsafeBufferPointer { t in out.withUnsafeMutableBufferPointer { extractor.extract(t, into: $0) } }
        #expect(out.allSatisfy { abs($0 - log(s.logFloor)) < 1e-4 })
    }

    /// 40 bands go eight at a time, 20 end with a group overlapping the one before, 5 go singly.
    @Test(arguments: [40, 20, 5])
    func theSecondChannelIsEachBandAboveItsFloorInTheWindow(bands: Int) throws {
        var s = FeatureSettings.standard
        s.melBands = bands
        let plain = try LogMelExtractor(settings: s)
        s.windowFloorQuantile = 0.2
        let twoChannel = try LogMelExtractor(settings: s)
        #expect(twoChannel.outputCount == 2 * plain.outputCount)
        // Noise whose level doubles halfway through the window.
        var rng = SeededRandom(seed: 3)
        let noise = (0..<s.windowLength).map { i in 0.05 * rng.nextGaussian() * (i < s.windowLength / 2 ? 1 : 2) }
        func extract(_ e: LogMelExtractor, _ x: [Float]) -> [Float] {
            var out = [Float](repeating: 0, count: e.outputCount)
            x.withUnsafeBufferPointer { w in out.withUnsafeMutableBufferPointer { e.extract(w, into: $0) } }
            return out
        }
        let single = extract(plain, noise), both = extract(twoChannel, noise)
        let plane = single.count, frames = s.frameCount, middle = bands / 2
        #expect(Array(both[..<plane]) == single)
        for b in 0..<bands {
            let column = (0..<frames).map { single[$0 * bands + b] }
            let floor = column.sorted()[Int((0.2 * Float(frames - 1)).rounded())]
            for t in 0..<frames { #expect(abs(both[plane + t * bands + b] - (column[t] - floor)) < 1e-5) }
        }
        // A steady change of level moves the first channel and leaves the second alone.
        let louder = extract(twoChannel, noise.map { $0 * 4 })
        #expect(abs(louder[5 * bands + middle] - both[5 * bands + middle] - log(16)) < 1e-3)
        #expect(zip(louder[plane...], both[plane...]).allSatisfy { abs($0 - $1) < 1e-3 })
        // The louder second half stands about 6 dB (ln 4 in natural-log power) above the floor.
        let lateMean = (frames * 3 / 4..<frames).map { both[plane + $0 * bands + middle] }.reduce(0, +) / Float(frames / 4)
        #expect(abs(lateMean - log(4)) < 0.6, "\(lateMean)")
    }
}
