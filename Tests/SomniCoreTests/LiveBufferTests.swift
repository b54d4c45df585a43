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
        // No taps, or no room for input, is refused when made, not a trap at the first block.
        #expect(throws: SomniError.self) { try RateConverter(inputRate: 48_000, tapsPerPhase: 0) }
        #expect(throws: SomniError.self) { try RateConverter(inputRate: 48_000, maxInputCount: -5) }
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

@Suite struct LiveSnoreDetectorTests {
    /// Samples numbered by their index, so a window's first and last sample say where it lies.
    static let numbered = (0..<10_000).map(Float.init)

    /// Reports each window's first and last sample, and scores it as snoring by a planted schedule.
    final class Probe: SoundClassifier {
        let labels = ["other", "snoring", "speech"]
        let windowLength: Int
        let name = "probe"
        var seen: [(first: Float, last: Float)] = []
        /// Snoring confidence of window k (0 past the end).
        var snoring: [Float]
        init(windowLength: Int, snoring: [Float] = []) { self.windowLength = windowLength; self.snoring = snoring }
        func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {
            let k = seen.count
            seen.append((window.first!, window.last!))
            let s = k < snoring.count ? snoring[k] : 0
            scores[0] = (1 - s) * 0.7; scores[1] = s; scores[2] = (1 - s) * 0.3
        }
    }

    static func feed<C>(_ samples: [Float], blocks: [Int], into detector: LiveSnoreDetector<C>) -> [LiveSnoreDetector<C>.Window] {
        var windows: [LiveSnoreDetector<C>.Window] = []
        var offset = 0, b = 0
        samples.withUnsafeBufferPointer { all in
            while offset < all.count {
                let n = min(blocks[b % blocks.count], all.count - offset)
                detector.feed(UnsafeBufferPointer(rebasing: all[offset..<(offset + n)])) { windows.append($0) }
                offset += n; b += 1
            }
        }
        return windows
    }

    @Test(arguments: [[1], [7], [100], [1600], [10_000], [3, 250, 1, 999]])
    func windowsHalfOverlapAtTheSamePlacesWhateverTheBlocks(blocks: [Int]) throws {
        let probe = Probe(windowLength: 400)
        let detector = try LiveSnoreDetector(classifier: probe)
        let windows = Self.feed(Self.numbered, blocks: blocks, into: detector)
        // Windows end at 400, 600, …, 10,000: (10,000 − 400) / 200 + 1 of them.
        #expect(windows.count == 49)
        for (k, w) in windows.enumerated() {
            #expect(w.endSample == 400 + 200 * k)
            #expect(probe.seen[k].first == Float(200 * k) && probe.seen[k].last == Float(200 * k + 399))
            #expect(abs(w.start - Double(200 * k) / 16_000) < 1e-12 && abs(w.end - Double(200 * k + 400) / 16_000) < 1e-12)
        }
    }

    @Test func episodesAreTheSegmentersOnTheWindowsSnoringScores() throws {
        // A train: sure windows, quieter ones that only continue it, a gap longer than the hangover.
        var schedule = [Float](repeating: 0.02, count: 300)
        for k in stride(from: 20, to: 120, by: 10) { schedule[k] = 0.9; schedule[k + 1] = 0.7 }
        for k in stride(from: 125, to: 160, by: 10) { schedule[k] = 0.3 }
        schedule[200] = 0.95; schedule[201] = 0.8
        let windowLength = classifierWindowLength
        let probe = Probe(windowLength: windowLength, snoring: schedule)
        let settings = LiveEpisodeSettings()
        let detector = try LiveSnoreDetector(classifier: probe, settings: settings)
        let samples = [Float](repeating: 0, count: windowLength + 299 * detector.hop)
        let windows = Self.feed(samples, blocks: [1600], into: detector)
        #expect(windows.count == 300)
        var changes = windows.flatMap(\.changes)
        if let last = detector.finish() { changes.append(.ended(last)) }

        // The same scores fed to the segmenter the settings describe, window by window.
        var reference = LiveEpisodeSegmenter(threshold: 0.6, continuation: 0.6 * settings.continuationShare,
                                             leadIn: 0.6 * settings.leadInShare,
                                             lookBack: settings.preRoll - LiveEpisodeSettings.clipLeadIn)
        var expected: [LiveEpisodeSegmenter.Change] = []
        for w in windows {
            expected += reference.feed(WindowLabels(start: w.start, end: w.end,
                                                    ranked: [LabelConfidence(label: "snoring", confidence: w.snoring)]))
        }
        if let last = reference.finish() { expected.append(.ended(last)) }
        #expect(changes == expected)
        // Two episodes: the train with its quieter tail, and the lone pair at window 200.
        let ended = changes.compactMap { if case .ended(let e) = $0 { e } else { nil } }
        #expect(ended.count == 2)
        #expect(windows.map(\.snoring) == schedule)
        #expect(windows[21].runPeak == 0.9 && windows[22].runPeak == 0 && windows[201].runPeak == 0.95)
        #expect(windows[21].top == LabelConfidence(label: "snoring", confidence: 0.7))
        #expect(windows[0].top.label == "other")
    }

    @Test func aClassifierWithoutASnoringLabelOrWindowIsRefused() {
        struct Talk: SoundClassifier {
            var labels = ["speech", "other"]
            var windowLength = classifierWindowLength
            let name = "talk only"
            func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {}
        }
        #expect(throws: SomniError.self) { try LiveSnoreDetector(classifier: Talk()) }
        #expect(throws: SomniError.self) { try LiveSnoreDetector(classifier: Talk(labels: ["snoring", "other"], windowLength: 0)) }
        #expect((try? LiveSnoreDetector(classifier: Talk(labels: ["snort", "other"]))) != nil)
    }
}
