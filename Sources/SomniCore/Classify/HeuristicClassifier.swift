import Foundation

/// A rule-based baseline classifier: the MoyiSnore screeners and band-dominance tests, applied
/// to the 50 ms frames of one window.
///
/// What it is: a transparent, dependency-free stand-in that works with no trained model, on
/// clean recordings in a quiet room, and a yardstick the learned classifier must beat. Each
/// window is filtered through the same bands as the overnight loop (40–400 Hz and 250–3000 Hz,
/// 4th-order Butterworth edges) and judged by:
/// - snoring: frames above the night's floor × 3.4 whose low band outweighs the voice band
///   (the screeners' low > mid × 2, softened to a ramp over low/mid 0.75…1.35 after measuring
///   real snores), sustained for a snore-like time (≥ 200 ms), with a low zero-crossing rate;
/// - speech: the voice band carries the sound (mid/low ramping over 0.75…1.35; the screeners
///   used mid > low × 0.35, which most snores pass too), the zero-crossing rate is in
///   the voiced range (0.006–0.35), little energy lies above 3 kHz, and the level is modulated
///   at a syllable rate (dips and rises within the window);
/// - cough: a short (≤ 0.5 s) broadband burst that starts sharply (≥ 4× in one 50 ms frame),
///   not one of a train of three or more onsets within the window (that is speech);
/// - other: what is left, 1 − the largest of the three.
/// Confidences are smooth ramps of these measures, so the sensitivity threshold moves them.
///
/// What it is not: a detector to trust with a fan, traffic, a partner's television or a second
/// sleeper. It cannot see the breathing rhythm (a window is under a second), it takes any
/// low-frequency pulse for a snore, and without `prepare(noiseFloor:)` it judges each window
/// against its own quietest frame. Measured on single 1 s clips (no night floor): snoring comes
/// first for about half of Khan's snores and 6 % of his non-snores; speech for about half of the
/// spoken word "one", while words with /h/ and /s/ ("house") mostly read as coughs.
public struct HeuristicClassifier: SoundClassifier, Sendable {
    public let labels = ["snoring", "speech", "cough", "other"]
    public let windowLength: Int
    public let name = "heuristic"

    /// Frames above floor × this count as sound (the screeners' ratio at sensitivity 5).
    static let floorRatio: Float = 3.4
    /// ≈ −61 dBFS: the screeners' absolute trigger bound.
    static let minimumTrigger: Float = 0.0009

    private let frameLength: Int
    private var noiseFloor: Float = 0
    /// Lanes: 40–400 Hz, 250–3000 Hz, above 3 kHz.
    private var bands: FilterBank
    private var raw: [Float], low: [Float], mid: [Float], high: [Float], zcr: [Float]

    public init(windowLength: Int = classifierWindowLength, sampleRate: Int = analysisSampleRate) {
        self.windowLength = max(windowLength, 1)
        frameLength = max(sampleRate / 20, 1)
        let rate = Double(max(sampleRate, 20))
        let top = Biquad.highestCutoffShare * rate
        bands = FilterBank(chains: [
            Biquad.butterworthBand(FrameTrack.lowBand, sampleRate: rate),
            Biquad.butterworthBand(FrameTrack.midBand, sampleRate: rate),
            Biquad.butterworth4Qs.map { Biquad.highPass(cutoff: min(FrameTrack.midBand.upperBound, top), q: $0, sampleRate: rate) },
        ])
        let frames = (self.windowLength + frameLength - 1) / frameLength
        raw = [Float](repeating: 0, count: frames)
        low = raw; mid = raw; high = raw; zcr = raw
    }

    public mutating func prepare(noiseFloor: Float) {
        self.noiseFloor = noiseFloor.isFinite ? max(noiseFloor, 0) : 0
    }

    public var readsNoiseFloor: Bool { true }

    public mutating func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {
        guard scores.count >= labels.count else { return }
        let n = min(window.count, windowLength)
        let frames = (n + frameLength - 1) / frameLength
        computeFrames(window, count: n)
        let s = Self.judge(Frames(raw: raw, low: low, mid: mid, high: high, zcr: zcr, count: frames), floor: noiseFloor)
        scores[0] = s.snoring; scores[1] = s.speech; scores[2] = s.cough
        scores[3] = 1 - max(s.snoring, s.speech, s.cough)
    }

    // MARK: frames

    /// One pass over the window: raw RMS and zero crossings around the window's mean (so a
    /// microphone's DC offset hides neither), and the three band RMS values, per 50 ms frame.
    private mutating func computeFrames(_ window: UnsafeBufferPointer<Float>, count n: Int) {
        var mean: Float = 0
        for j in 0..<n { mean += window[j] }
        mean /= Float(max(n, 1))
        var filters = bands
        filters.reset()
        var f = 0, i = 0
        var wasNegative = n > 0 && window[0] < mean
        while i < n {
            let end = min(i + frameLength, n)
            var sum: Float = 0, bandSum = Quad(repeating: 0), crossings = 0
            for j in i..<end {
                let v = filters.step(window[j])
                bandSum = bandSum + v * v
                let x = window[j] - mean
                sum += x * x
                let negative = x < 0
                crossings &+= negative != wasNegative ? 1 : 0
                wasNegative = negative
            }
            let count = Float(end - i)
            raw[f] = (sum / count).squareRoot()
            zcr[f] = Float(crossings) / count
            low[f] = (bandSum.a / count).squareRoot()
            mid[f] = (bandSum.b / count).squareRoot()
            high[f] = (bandSum.c / count).squareRoot()
            f += 1; i = end
        }
        bands = filters
    }

    // MARK: rules

    struct Scores { var snoring: Float, speech: Float, cough: Float }

    /// One window's frame features; `high` is the band above 3 kHz.
    struct Frames { var raw, low, mid, high, zcr: [Float]; var count: Int }

    static func judge(_ f: Frames, floor prepared: Float) -> Scores {
        let (raw, low, mid, high, zcr, frames) = (f.raw, f.low, f.mid, f.high, f.zcr, f.count)
        guard frames > 0 else { return Scores(snoring: 0, speech: 0, cough: 0) }
        var quietest = Float.greatestFiniteMagnitude, loudest: Float = 0
        for i in 0..<frames { quietest = min(quietest, raw[i]); loudest = max(loudest, raw[i]) }
        let floor = prepared > 0 ? prepared : quietest
        let trigger = max(floor * floorRatio, minimumTrigger)

        // Sums over the frames that carry sound.
        var active = 0, longestRun = 0, run = 0
        var lowPower: Float = 0, midPower: Float = 0, highPower: Float = 0, zcrSum: Float = 0
        for i in 0..<frames {
            guard raw[i] > trigger else { run = 0; continue }
            active += 1; run += 1; longestRun = max(longestRun, run)
            lowPower += low[i] * low[i]; midPower += mid[i] * mid[i]; highPower += high[i] * high[i]
            zcrSum += zcr[i]
        }
        guard active > 0 else { return Scores(snoring: 0, speech: 0, cough: 0) }
        let loud = ramp(loudest / trigger, 0.8, 3)
        let meanZCR = zcrSum / Float(active)
        let lowOverMid = (lowPower / max(midPower, 1e-20)).squareRoot()
        let midOverLow = (midPower / max(lowPower, 1e-20)).squareRoot()
        // Power above 3 kHz as a share of the three bands: large for noise-like bursts.
        let highShare = highPower / max(lowPower + midPower + highPower, 1e-20)

        // The screeners' low > mid × 2 rejects most real snores (Khan's clips: median low/mid
        // 1.4, speech-command words 0.67), so both sides ramp across ≈ 1 instead.
        let dominance = ramp(lowOverMid, 0.75, 1.35)
        let snoring = loud * dominance * ramp(Float(longestRun), 3, 8) * (1 - ramp(meanZCR, 0.15, 0.3))

        let broadband = max(ramp(highShare, 0.05, 0.2), ramp(meanZCR, 0.15, 0.3))
        let voicedZCR = ramp(meanZCR, 0.006, 0.02) * (1 - ramp(meanZCR, 0.25, 0.35))
        let modulation = syllableModulation(mid, frames: frames)
        let speech = loud * ramp(midOverLow, 0.75, 1.35) * voicedZCR * (1 - broadband) * modulation
            * ramp(Float(active), 3, 8)

        let (jump, burstFrames) = sharpestOnset(raw, frames: frames, trigger: trigger, floor: floor)
        let short = ramp(Float(burstFrames), 1, 3) * (1 - ramp(Float(burstFrames), 10, 14))
        // Coughs come at most two or three to a second (hand-marked coughs: 95 % of onsets 0.35 s
        // or more apart); a train of sharp onsets in one window is syllables.
        let train = 1 - ramp(Float(onsetCount(raw, frames: frames, trigger: trigger)), 2.5, 3.5)
        let cough = loud * ramp(jump, 2.5, 6) * short * broadband * train

        return Scores(snoring: snoring, speech: speech, cough: cough)
    }

    /// 0…1: how strongly the level rises and falls within the window, as syllables do (3–8 per
    /// second): the depth of the dips between peaks, more so when there are several.
    static func syllableModulation(_ v: [Float], frames: Int) -> Float {
        guard frames >= 3 else { return 0 }
        var mean: Float = 0
        for i in 0..<frames { mean += v[i] }
        mean /= Float(frames)
        var variance: Float = 0
        for i in 0..<frames { variance += (v[i] - mean) * (v[i] - mean) }
        let variation = (variance / Float(frames)).squareRoot() / max(mean, 1e-20)
        var peaks = 0
        for i in 1..<(frames - 1) where v[i] > v[i - 1] && v[i] >= v[i + 1] && v[i] > mean { peaks += 1 }
        return ramp(variation, 0.15, 0.45) * (0.5 + 0.5 * ramp(Float(peaks), 1, 3))
    }

    /// Rises of 2× or more in one frame into a frame above the trigger, at least 100 ms apart.
    static func onsetCount(_ raw: [Float], frames: Int, trigger: Float) -> Int {
        var count = 0, last = -10
        for i in 1..<max(frames, 1) where raw[i] > trigger && raw[i] >= 2 * raw[i - 1] && i - last >= 2 {
            count += 1; last = i
        }
        return count
    }

    /// The largest one-frame rise (ratio) into a frame above the trigger, and how many frames the
    /// burst it starts stays above the trigger.
    static func sharpestOnset(_ raw: [Float], frames: Int, trigger: Float, floor: Float) -> (jump: Float, length: Int) {
        var best: Float = 0, bestAt = -1
        for i in 1..<max(frames, 1) where raw[i] > trigger {
            let jump = raw[i] / max(raw[i - 1], floor, 1e-9)
            if jump > best { best = jump; bestAt = i }
        }
        guard bestAt >= 0 else { return (0, 0) }
        var length = 0
        for i in bestAt..<frames { if raw[i] > trigger { length += 1 } else { break } }
        return (best, length)
    }

    /// 0 below `a`, 1 above `b`, smooth (smoothstep) in between.
    static func ramp(_ x: Float, _ a: Float, _ b: Float) -> Float {
        guard x.isFinite else { return x > 0 ? 1 : 0 }
        let t = min(max((x - a) / (b - a), 0), 1)
        return t * t * (3 - 2 * t)
    }
}
