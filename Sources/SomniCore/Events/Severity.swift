import Foundation

/// How bad an event is, 0–100.
public enum Severity {
    /// 0.6 × loudness + 0.4 × duration, each on a 0–100 scale: loudness runs from −50 dBFS (0)
    /// to −10 dBFS (100), duration from 0 to 20 s, both clamped.
    public static func score(peakDBFS: Double, duration: Double) -> Double {
        let loudness = clamp01((peakDBFS + 50) / 40)
        let length = clamp01(duration / 20)
        return 100 * (0.6 * loudness + 0.4 * length)
    }

    private static func clamp01(_ x: Double) -> Double { x.isNaN ? 0 : min(max(x, 0), 1) }
}

/// What a clip is cut from and how it is levelled.
public enum ClipMaker {
    /// The level every clip is scaled to: the morning pass's and the live recorder's alike.
    public static let peak: Float = 0.9

    /// `samples` scaled so the largest magnitude is `peak`; silence (or nothing finite) is
    /// returned unchanged.
    public static func normalised(_ samples: [Float], peak: Float = ClipMaker.peak) -> [Float] {
        var copy = samples
        copy.withUnsafeMutableBufferPointer { normalise($0, peak: peak) }
        return copy
    }

    /// In place, for a clip buffer reused across a night's events.
    public static func normalise(_ samples: UnsafeMutableBufferPointer<Float>, peak: Float = ClipMaker.peak) {
        var largest: Float = 0
        for s in samples where s.isFinite { largest = max(largest, abs(s)) }
        guard largest > 0 else { return }
        let gain = peak / largest
        for i in samples.indices { samples[i] = samples[i].isFinite ? samples[i] * gain : 0 }
    }

    /// The event with `padding` seconds either side, clamped to the recording.
    public static func clipRange(start: Double, end: Double, padding: Double = 1, duration: Double) -> TimeRange {
        TimeRange(start: min(max(0, start - padding), duration), end: max(0, min(duration, end + padding)))
    }

    /// The samples of an event's clip: the event ± `padding` seconds at the analysis rate,
    /// clamped to the recording. The morning pass and its speculative pass both ask this, and
    /// a clip written ahead is used only for exactly the same range.
    public static func clipSamples(start: Double, end: Double, padding: Double = 1, duration: Double,
                                   totalSamples: Int) -> Range<Int> {
        sampleRange(clipRange(start: start, end: end, padding: padding, duration: duration), totalSamples: totalSamples)
    }

    /// Sample offsets of a range at `sampleRate`, clamped to `totalSamples`.
    public static func sampleRange(_ range: TimeRange, sampleRate: Int = analysisSampleRate, totalSamples: Int) -> Range<Int> {
        range.indices(rate: Double(sampleRate), limit: totalSamples)
    }
}
