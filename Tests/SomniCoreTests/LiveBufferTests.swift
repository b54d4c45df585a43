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

@Suite struct LiveFrameLevelMeterTests {
    /// The recording's frames, as the morning pass computes them.
    static func frames(_ x: [Float]) -> FrameTrack {
        let extractor = FeatureExtractor()
        x.withUnsafeBufferPointer { extractor.process($0) }
        extractor.finish()
        return extractor.frames
    }

    /// Feeds `x[from..<to]` in ragged pieces at their positions, as the live clip is written.
    static func meter(_ x: [Float], start: Int, end: Int, from: Int, to: Int) -> FrameLevelMeter {
        var meter = FrameLevelMeter(from: start)
        var at = from
        for size in [1, 799, 333, 4801, 17] + [Int](repeating: 1600, count: x.count / 1600) where at < to {
            let piece = min(size, to - at)
            if at + piece >= end { meter.end(at: end) }
            x.withUnsafeBufferPointer { meter.measure(UnsafeBufferPointer(rebasing: $0[at..<at + piece]), at: at) }
            at += piece
        }
        return meter
    }

    @Test func measuresAStretchAsTheMorningPassMeasuresAnEvent() {
        // A quiet room, a 1 s snore-like burst at 2.3 s and a cough at 4.1 s; the stretch
        // 2.21–4.43 s starts and ends inside frames; the clip is written from 1 s before it
        // to 1 s after, so the meter must skip the lead-in and stop at the stretch's last frame.
        var x = Signals.noise(seconds: 6, rms: 0.003)
        x = Signals.mix(x, Signals.snore(seconds: 1), at: 2.3)
        x = Signals.mix(x, Signals.cough(amplitude: 0.8), at: 4.1)
        let start = Int(2.21 * 16_000), end = Int(4.43 * 16_000)
        let levels = Self.meter(x, start: start, end: end, from: start - 16_000, to: end + 16_000).levels
        let morning = EventDetector.levels(TimeRange(start: 2.21, end: 4.43), frames: Self.frames(x))
        #expect(abs(levels.peakDBFS - morning.peakDBFS) < 0.01, "\(levels) against \(morning)")
        #expect(abs(levels.meanDBFS - morning.meanDBFS) < 0.01, "\(levels) against \(morning)")
        // Not one sample's peak: the cough's loudest sample lies several dB above its loudest frame.
        let samplePeak = EventDetector.dbfs(Double(x[start..<end].map(abs).max() ?? 0))
        #expect(samplePeak - levels.peakDBFS > 3)
        // Ending it earlier leaves the cough out.
        let before = Self.meter(x, start: start, end: Int(3.5 * 16_000), from: start - 16_000, to: end + 16_000).levels
        #expect(levels.peakDBFS - before.peakDBFS > 3)
    }

    @Test func aDCOffsetIsNotALevel() {
        let x = Signals.mix(Signals.noise(seconds: 4, rms: 0.003), Signals.snore(seconds: 1.5), at: 1)
        let plain = Self.meter(x, start: 12_345, end: 50_000, from: 0, to: x.count).levels
        let offset = Self.meter(x.map { $0 + 0.05 }, start: 12_345, end: 50_000, from: 0, to: x.count).levels
        #expect(abs(offset.peakDBFS - plain.peakDBFS) < 0.01)
        #expect(abs(offset.meanDBFS - plain.meanDBFS) < 0.01)
        // A constant is silence, however far from zero.
        let constant = Self.meter([Float](repeating: 0.3, count: 8_000), start: 0, end: 8_000, from: 0, to: 8_000).levels
        #expect(constant.peakDBFS < -100)
        // Nothing measured yet reads as silence, not as a crash or NaN.
        #expect(FrameLevelMeter(from: 5).levels.peakDBFS == EventDetector.dbfs(0))
    }
}
