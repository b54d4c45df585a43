import Foundation
import Testing
@testable import SomniCore

@Suite struct LivePreRollBufferTests {
    @Test func keepsOnlyTheNewestSamplesAndReadsThemByAbsoluteIndex() {
        let ring = PreRollBuffer(capacity: 10)
        let input = (0..<27).map(Float.init)
        // Uneven blocks so the write wraps in the middle of a block.
        for range in [0..<4, 4..<11, 11..<12, 12..<27] {
            input[range].withUnsafeBufferPointer { ring.append($0) }
        }
        #expect(ring.endIndex == 27)
        #expect(ring.startIndex == 17)
        var got: [Float] = []
        let from = ring.read(from: 0, to: 100) { got += $0 }
        #expect(from == 17)
        #expect(got == (17..<27).map(Float.init))
        got = []
        ring.read(from: 20, to: 23) { got += $0 }
        #expect(got == [20, 21, 22])
    }

    @Test func aBlockLargerThanTheRingKeepsItsTail() {
        let ring = PreRollBuffer(capacity: 5)
        let input = (0..<12).map(Float.init)
        input.withUnsafeBufferPointer { ring.append($0) }
        var got: [Float] = []
        ring.read(from: 0, to: 12) { got += $0 }
        #expect(got == [7, 8, 9, 10, 11])
    }
}

@Suite struct LiveRateConverterTests {
    /// Converts `seconds` of a sine at `frequency` through blocks of `block` samples.
    func convert(rate: Int, frequency: Double, seconds: Double, block: Int) throws -> [Float] {
        let converter = try RateConverter(inputRate: rate, maxInputCount: block)
        let n = Int(seconds * Double(rate))
        let input = (0..<n).map { Float(0.5 * sin(2 * .pi * frequency * Double($0) / Double(rate))) }
        var out: [Float] = []
        var chunk = [Float](repeating: 0, count: converter.maxOutputCount(forInput: block))
        var i = 0
        while i < n {
            let m = min(block, n - i)
            let written = input[i..<i + m].withUnsafeBufferPointer { src in
                chunk.withUnsafeMutableBufferPointer { converter.process(src, into: $0) }
            }
            out += chunk[0..<written]
            i += m
        }
        return out
    }

    func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0) { $0 + Double($1 * $1) } / Double(max(1, x.count))).squareRoot()
    }

    @Test(arguments: [48_000, 44_100, 32_000])
    func passesSpeechBandAndKeepsTheClock(rate: Int) throws {
        let out = try convert(rate: rate, frequency: 1_000, seconds: 2, block: 4_801)
        #expect(abs(out.count - 32_000) <= 2)
        // A 1 kHz tone at amplitude 0.5 keeps its level (RMS 0.354) after the filter settles.
        #expect(abs(rms(out[1_000...]) - 0.3536) < 0.01)
        // …and its frequency: count upward zero crossings over the last second.
        let tail = Array(out[16_000..<32_000])
        let crossings = zip(tail, tail.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        #expect(abs(crossings - 1_000) <= 2)
    }

    @Test(arguments: [48_000, 44_100])
    func removesWhatWouldAlias(rate: Int) throws {
        // 12 kHz would fold to 4 kHz at 16 kHz: it must be attenuated by more than 60 dB.
        let out = try convert(rate: rate, frequency: 12_000, seconds: 1, block: 1_000)
        #expect(rms(out[1_000...]) < 0.354 * 0.001)
    }

    @Test func refusesUpsamplingAndAbsurdRates() {
        #expect(throws: SomniError.self) { try RateConverter(inputRate: 8_000, outputRate: 16_000) }
        #expect(throws: SomniError.self) { try RateConverter(inputRate: 1_000_000) }
    }
}
