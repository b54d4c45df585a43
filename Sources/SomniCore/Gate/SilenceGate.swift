import Foundation

/// A span of a recording in seconds from its start.
public struct TimeRange: Sendable, Equatable, Codable {
    public var start: Double
    public var end: Double
    public init(start: Double, end: Double) { self.start = start; self.end = end }
    public var duration: Double { max(0, end - start) }
    public func overlaps(_ other: TimeRange) -> Bool { start < other.end && other.start < end }

    /// The sample (or frame) indices the range covers at `rate` per second, clamped to
    /// 0…`limit`; a NaN or infinite bound clamps instead of trapping.
    public func indices(rate: Double, limit: Int) -> Range<Int> {
        let a = Self.index(start * rate, .down, limit: limit)
        return a..<max(a, Self.index(end * rate, .up, limit: limit))
    }

    static func index(_ x: Double, _ rule: FloatingPointRoundingRule, limit: Int) -> Int {
        guard !x.isNaN else { return 0 }
        return Int(min(max(x.rounded(rule), 0), Double(max(limit, 0))))
    }
}

/// What the silence gate decided for a night.
public struct GateResult: Sendable, Equatable {
    /// Active stretches, padded, merged and clamped to the recording, in time order.
    public var stretches: [TimeRange]
    /// The noise floor: the chosen percentile of the envelope.
    public var floor: Float
    /// The level above which an envelope value counts as active.
    public var threshold: Float
    /// The share of the night the stretches cover (0…1).
    public var activeShare: Double
    /// True when the stretches covered more than `bailShare` and the whole night is classified.
    public var bypassed: Bool

    public init(stretches: [TimeRange], floor: Float, threshold: Float, activeShare: Double, bypassed: Bool) {
        self.stretches = stretches; self.floor = floor; self.threshold = threshold
        self.activeShare = activeShare; self.bypassed = bypassed
    }

    /// Seconds the classifier will read.
    public var analysedSeconds: Double { stretches.reduce(0) { $0 + $1.duration } }
}

/// Picks the stretches of a night worth classifying from its 10 Hz envelope.
///
/// The floor is relative (a percentile of the night itself), so a bedroom with a loud air
/// conditioner and a silent one both work. The threshold never drops below
/// `absoluteMinimum` (≈ −61 dBFS, the seeds' screener bound): on a digitally silent night the
/// floor is 0 and without it every dither step would count as active.
public enum SilenceGate {
    public static let absoluteMinimum: Float = 0.0009
    /// The seeds' floor (the 20th percentile of the envelope) and threshold (floor × 2.5).
    public static let floorPercentile = 0.2
    public static let factor: Float = 2.5

    public static func run(envelope: [Float], rate: Double = 10, floorPercentile: Double = SilenceGate.floorPercentile,
                           factor: Float = SilenceGate.factor, pad: Double = 2, mergeGap: Double = 5,
                           bailShare: Double = 0.7, duration knownDuration: Double? = nil) -> GateResult {
        // The envelope ends up to one value short of the audio; the caller may know better.
        let duration = knownDuration ?? (rate > 0 ? Double(envelope.count) / rate : 0)
        guard duration > 0 else {
            return GateResult(stretches: [], floor: 0, threshold: absoluteMinimum, activeShare: 0, bypassed: false)
        }
        let floor = percentile(envelope, floorPercentile)
        let threshold = max(floor * factor, absoluteMinimum)
        let stretches = self.stretches(envelope, in: envelope.indices, above: threshold, rate: rate, pad: pad,
                                       mergeGap: mergeGap, duration: duration)
        let share = stretches.reduce(0) { $0 + $1.duration } / duration
        if share > bailShare {
            return GateResult(stretches: [TimeRange(start: 0, end: duration)], floor: floor, threshold: threshold,
                              activeShare: share, bypassed: true)
        }
        return GateResult(stretches: stretches, floor: floor, threshold: threshold, activeShare: share, bypassed: false)
    }

    /// The active runs of `envelope[range]` (values above `threshold`), each padded by `pad`
    /// seconds and merged with the previous one when less than `mergeGap` apart, clamped to
    /// 0…`duration`; times count from the envelope's first value.
    public static func stretches(_ envelope: [Float], in range: Range<Int>, above threshold: Float, rate: Double = 10,
                                 pad: Double = 2, mergeGap: Double = 5, duration: Double) -> [TimeRange] {
        var stretches: [TimeRange] = []
        var runStart: Int?
        for i in range.lowerBound...range.upperBound {
            // Non-finite values (a damaged file) never count as active.
            let active = i < range.upperBound && envelope[i].isFinite && envelope[i] > threshold
            if active, runStart == nil { runStart = i }
            if !active, let s = runStart {
                let stretch = TimeRange(start: max(0, Double(s) / rate - pad), end: min(duration, Double(i) / rate + pad))
                if let last = stretches.last, stretch.start - last.end < mergeGap {
                    stretches[stretches.count - 1].end = stretch.end
                } else {
                    stretches.append(stretch)
                }
                runStart = nil
            }
        }
        return stretches
    }

    /// The `p` quantile (0…1) of the finite values, nearest rank; 0 when there are none.
    public static func percentile(_ values: [Float], _ p: Double) -> Float {
        let finite = values.filter(\.isFinite).sorted()
        guard !finite.isEmpty else { return 0 }
        let rank = TimeRange.index(p * Double(finite.count - 1), .toNearestOrAwayFromZero, limit: finite.count - 1)
        return finite[rank]
    }
}
