import Foundation
import Testing
@testable import SomniCore

@Suite struct FeatureTests {
    static func db(_ g: Double) -> Double { 20 * log10(g) }

    static func chainGain(_ chain: [Biquad], at f: Double) -> Double {
        chain.reduce(1) { $0 * $1.gain(at: f, sampleRate: Signals.rate) }
    }

    static func close(_ a: [Float], _ b: [Float], tolerance: Float = 1e-5) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
    }

    static func extract(_ samples: [Float], blocks: [Int] = [4800]) -> FeatureExtractor {
        let fx = FeatureExtractor()
        samples.withUnsafeBufferPointer { p in
            var offset = 0, k = 0
            while offset < p.count {
                let n = min(blocks[k % blocks.count], p.count - offset)
                fx.process(UnsafeBufferPointer(rebasing: p[offset..<offset + n]))
                offset += n; k += 1
            }
        }
        return fx
    }

    @Test func bandEdgesAreMinus3dBAndSkirtsFall() {
        for (lo, hi) in [(40.0, 400.0), (250.0, 3000.0)] {
            let band = Biquad.butterworthBand(low: lo, high: hi, sampleRate: Signals.rate)
            #expect(band.count == 4)
            #expect(abs(Self.db(Self.chainGain(band, at: lo)) + 3) < 0.3)
            #expect(abs(Self.db(Self.chainGain(band, at: hi)) + 3) < 0.3)
            #expect(Self.db(Self.chainGain(band, at: (lo * hi).squareRoot())) > -1)
            #expect(Self.db(Self.chainGain(band, at: lo / 2)) < -20)
            #expect(Self.db(Self.chainGain(band, at: hi * 2)) < -20)
            #expect(Self.db(Self.chainGain(band, at: lo / 4)) < -45)
            #expect(Self.db(Self.chainGain(band, at: min(hi * 4, 0.49 * Signals.rate))) < -45)
        }
    }

    @Test func filteringASineMatchesTheDesignedGain() {
        // The in-place block path of Biquad against its own analytic response.
        var band = Biquad.butterworthBand(low: 40, high: 400, sampleRate: Signals.rate)
        for f in [40.0, 126, 400, 1000] {
            band.reset()
            var x = Signals.sine(f, seconds: 1, amplitude: 1)
            x.withUnsafeMutableBufferPointer { band.process($0) }
            let measured = Double(Signals.rms(x[8000...])) * 2.0.squareRoot()
            #expect(abs(Self.db(measured) - Self.db(Self.chainGain(band, at: f))) < 0.2, "at \(f) Hz")
        }
    }

    @Test func extractorBandsSeparateSnoreAndVoiceFrequencies() {
        func bands(_ f: Double) -> (raw: Double, low: Double, mid: Double) {
            let t = Self.extract(Signals.sine(f, seconds: 2)).frames
            let mean = { (a: [Float]) in Double(a[10...].reduce(0, +)) / Double(a.count - 10) }
            return (mean(t.raw), mean(t.low), mean(t.mid))
        }
        let snore = bands(126)
        #expect(abs(snore.raw - 0.5 / 2.0.squareRoot()) < 1e-3)
        #expect(Self.db(snore.low / snore.raw) > -1)
        #expect(Self.db(snore.mid / snore.raw) < -20)
        let voice = bands(1000)
        #expect(Self.db(voice.mid / voice.raw) > -1)
        #expect(Self.db(voice.low / voice.raw) < -25)
        let edge = bands(40)
        #expect(abs(Self.db(edge.low / edge.raw) + 3) < 0.5)
    }

    @Test func frameRMSAndZeroCrossingRate() {
        let fx = Self.extract(Signals.sine(1000, seconds: 1, amplitude: 0.4))
        let t = fx.frames
        #expect(t.count == 20)
        for i in 0..<t.count {
            #expect(abs(t.raw[i] - 0.4 / 2.0.squareRoot().float) < 1e-4)
            #expect(abs(t.zcr[i] - 0.125) <= 1.0 / 800)
        }
        let quiet = Self.extract([Float](repeating: 0, count: 8000)).frames
        #expect(quiet.raw.allSatisfy { $0 == 0 } && quiet.zcr.allSatisfy { $0 == 0 } && quiet.low.allSatisfy { $0 == 0 })
    }

    @Test func aDCOffsetChangesNeitherTheFrameRMSNorTheCrossings() {
        // The offset exceeds the sine's amplitude, so the raw samples never cross zero.
        let tone = Signals.sine(1000, seconds: 1, amplitude: 0.4)
        let t = Self.extract(tone.map { $0 + 0.5 }).frames
        let plain = Self.extract(tone).frames
        #expect(t.count == 20)
        for i in 0..<t.count {
            #expect(abs(t.raw[i] - 0.4 / 2.0.squareRoot().float) < 1e-4, "frame \(i): \(t.raw[i])")
        }
        // Crossings are counted about the previous frame's mean: all frames but the first.
        #expect(t.zcr[0] == 0)
        for i in 1..<t.count { #expect(abs(t.zcr[i] - 0.125) <= 1.0 / 800, "frame \(i): \(t.zcr[i])") }
        // The bands never saw the offset once their high-passes settled.
        #expect(Self.close(Array(t.low[2...]), Array(plain.low[2...]), tolerance: 1e-4))
        #expect(Self.close(Array(t.mid[2...]), Array(plain.mid[2...]), tolerance: 1e-4))
        // A constant is silence, however far from zero.
        let constant = Self.extract([Float](repeating: -0.3, count: 8000)).frames
        #expect(constant.raw.allSatisfy { $0 < 1e-5 }, "\(constant.raw)")
    }

    /// A sample that is not a number, or one far past full scale (a damaged float WAV), is read as
    /// silence or clipped to full scale: before, one NaN stayed in the band filters for good and
    /// every level after it was NaN.
    @Test func samplesThatAreNotNumbersAreSilenceAndHugeOnesAreClipped() {
        var x = Signals.mix(Signals.noise(seconds: 3, rms: 0.01), Signals.snore(seconds: 2), at: 0.5)
        var expected = x
        for (i, bad, readAs) in [(8_000, Float.nan, Float(0)), (8_001, .infinity, 0), (20_000, -.infinity, 0),
                                 (30_000, 3e38, 1), (30_010, -1e15, -1), (40_000, .nan, 0)] {
            x[i] = bad
            expected[i] = readAs
        }
        for blocks in [[4800], [1, 799, 333, 4801, 17]] {
            let fx = Self.extract(x, blocks: blocks)
            #expect(fx.frames == Self.extract(expected).frames, "blocks \(blocks)")
            #expect(fx.notNumbers == 4)
            #expect(fx.envelope.allSatisfy(\.isFinite) && fx.frames.low.allSatisfy(\.isFinite))
        }
        #expect(Self.extract(expected).notNumbers == 0)
    }

    @Test func blockSizeDoesNotChangeTheFeatures() {
        let x = Signals.mix(Signals.noise(seconds: 3, rms: 0.01), Signals.snore(seconds: 2), at: 0.5)
        let whole = Self.extract(x, blocks: [x.count]).frames
        let ragged = Self.extract(x, blocks: [1, 799, 333, 4801, 17]).frames
        #expect(whole == ragged)
        #expect(whole.count == 60)
    }

    @Test func pipelinedBandsEqualTheScalarFilterChains() {
        // The extractor's pipelined filters against each band filtered on its own, section after
        // section (`Biquad.process`), framed here; ragged blocks and a 2-sample last frame put
        // frame ends inside the pipeline's latency.
        var x = Signals.mix(Signals.noise(seconds: 3, rms: 0.02), Signals.snore(seconds: 2), at: 0.3)
        x = Signals.mix(x, Signals.speech(seconds: 1), at: 1.5) + [0.3, -0.2]
        let fx = Self.extract(x, blocks: [1, 2, 797, 333, 4801, 17])
        fx.finish()
        for (band, lo, hi) in [(fx.frames.low, 40.0, 400.0), (fx.frames.mid, 250.0, 3000.0)] {
            var chain = Biquad.butterworthBand(low: lo, high: hi, sampleRate: Signals.rate)
            var y = x
            y.withUnsafeMutableBufferPointer { chain.process($0) }
            let reference = stride(from: 0, to: y.count, by: 800).map { start in
                Float(Signals.rms(y[start..<min(start + 800, y.count)]))
            }
            #expect(band.count == reference.count && reference.count == 61)
            for (got, want) in zip(band, reference) {
                #expect(abs(got - want) <= 1e-4 * want + 1e-7, "\(lo)–\(hi) Hz: \(got) vs \(want)")
            }
        }
    }

    @Test func envelopeKeepsTheLouderOfEachTwoFrames() {
        let levels: [Float] = [0.1, 0.5, 0.3, 0.2, 0.05, 0.05, 0.9, 0.0, 0.2]
        // Each frame ±level on alternate samples: its RMS is the level, and its mean zero.
        let x = levels.flatMap { level in (0..<800).map { $0 % 2 == 0 ? level : -level } }
        let fx = FeatureExtractor()
        x.withUnsafeBufferPointer { p in fx.process(UnsafeBufferPointer(rebasing: p[0..<4000])) }
        #expect(Self.close(fx.takeNewEnvelopeValues(), [0.5, 0.3]))
        x.withUnsafeBufferPointer { p in fx.process(UnsafeBufferPointer(rebasing: p[4000...])) }
        #expect(Self.close(fx.takeNewEnvelopeValues(), [0.05, 0.9]))
        #expect(fx.takeNewEnvelopeValues().isEmpty)
        fx.finish()
        #expect(Self.close(fx.envelope, [0.5, 0.3, 0.05, 0.9, 0.2]))
        #expect(Self.close(fx.frames.raw, levels))
    }

    /// A recorder forgets the frames it took the envelope of every 30 s. Blocks of 1,600
    /// samples after a gap of 1,234 left the count off a frame pair for good, which the old
    /// reset waited for, so the frames grew all night; forgetting keeps them few and the
    /// envelope as without forgetting.
    @Test func forgettingTakenFramesKeepsMemoryFlatAndTheEnvelopeExact() {
        let x = Signals.mix(Signals.noise(seconds: 60.05, rms: 0.01), Signals.snore(seconds: 20), at: 15)  // 1,201 frames: one left alone
        let whole = Self.extract(x)
        whole.finish()
        let fx = FeatureExtractor()
        var taken: [Float] = [], offset = 0, blocks = 0, mostFrames = 0
        x.withUnsafeBufferPointer { p in
            while offset < p.count {
                let n = min(blocks == 3 ? 1_234 : 1_600, p.count - offset)
                fx.process(UnsafeBufferPointer(rebasing: p[offset..<offset + n]))
                offset += n; blocks += 1
                if blocks % 10 == 0 {
                    taken += fx.takeNewEnvelopeValues()
                    fx.forgetTakenFrames()
                    mostFrames = max(mostFrames, fx.frames.count)
                }
            }
        }
        fx.finish()
        taken += fx.takeNewEnvelopeValues()
        fx.forgetTakenFrames()  // as a recorder's last flush does, after an odd last frame's value
        #expect(fx.frames.count == 0 && fx.envelope.isEmpty)
        #expect(mostFrames <= 1, "\(mostFrames) frames kept after forgetting")
        #expect(Self.close(taken, whole.envelope, tolerance: 0), "\(taken.count) values against \(whole.envelope.count)")
    }
}
