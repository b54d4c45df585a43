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
/// conditioner and a silent one both work. Digital silence (a level of exactly 0: no recording,
/// such as a capture gap or the pause between the parts of a joined night) is not the room, and
/// the floor is taken over the rest; otherwise pauses filling a fifth of a night would bring it to
/// 0 and open the gate to the whole night. The threshold never drops below
/// `absoluteMinimum` (≈ −61 dBFS, the seeds' screener bound): on a digitally silent night the
/// floor is 0 and without it every dither step would count as active.
public enum SilenceGate {
    public static let absoluteMinimum: Float = 0.0009
    /// The seeds' floor (the 20th percentile of the envelope) and threshold (floor × 2.5).
    public static let floorPercentile = 0.2
    public static let factor: Float = 2.5
    /// Seconds each active run is padded by, and the gap under which stretches merge.
    public static let pad = 2.0, mergeGap = 5.0

    /// - Parameter snoreBand: the 40–400 Hz band's own 10 Hz level (`snoreBandEnvelope`), if
    ///   given, opens the gate too, above its own floor × `factor`: a deviation from the seeds.
    ///   A fan lifts the raw floor until a quieter snore no longer clears it, though it still
    ///   stands well clear of the fan in the snore band (on the fan nights, 14–26 % of the snores
    ///   reached no window through the raw level alone).
    /// - Parameter notRecorded: stretches without a recording (between the parts of a joined
    ///   night, silence in their place): the 70 % rule weighs the recorded time only, and a gate
    ///   that stands aside passes the recorded time, not that silence. Before, what a night found
    ///   hung on how long the pause between its parts was (5 % active with a 6 h pause, the gate
    ///   closed; bypassed with an 8 min one).
    public static func run(envelope: [Float], snoreBand: [Float]? = nil, rate: Double = 10,
                           floorPercentile: Double = SilenceGate.floorPercentile,
                           factor: Float = SilenceGate.factor, pad: Double = SilenceGate.pad,
                           mergeGap: Double = SilenceGate.mergeGap,
                           bailShare: Double = 0.7, duration knownDuration: Double? = nil,
                           notRecorded: [TimeRange] = []) -> GateResult {
        // The envelope ends up to one value short of the audio; the caller may know better.
        let duration = knownDuration ?? (rate > 0 ? Double(envelope.count) / rate : 0)
        guard duration > 0 else {
            return GateResult(stretches: [], floor: 0, threshold: absoluteMinimum, activeShare: 0, bypassed: false)
        }
        let floor = roomFloor(envelope, floorPercentile)
        let threshold = max(floor * factor, absoluteMinimum)
        var stretches = self.stretches(envelope, in: envelope.indices, above: threshold, rate: rate, pad: pad,
                                       mergeGap: mergeGap, duration: duration)
        if let snoreBand {
            let bandThreshold = max(roomFloor(snoreBand, floorPercentile) * factor, absoluteMinimum)
            stretches = union(stretches, self.stretches(snoreBand, in: snoreBand.indices, above: bandThreshold, rate: rate,
                                                        pad: pad, mergeGap: mergeGap, duration: duration),
                              mergeGap: mergeGap)
        }
        let recorded = complement(of: notRecorded, within: duration)
        let recordedSeconds = recorded.reduce(0) { $0 + $1.duration }
        let active = intersection(stretches, recorded).reduce(0) { $0 + $1.duration }
        let share = recordedSeconds > 0 ? active / recordedSeconds : 0
        if share > bailShare {
            return GateResult(stretches: recorded, floor: floor, threshold: threshold, activeShare: share, bypassed: true)
        }
        return GateResult(stretches: stretches, floor: floor, threshold: threshold, activeShare: share, bypassed: false)
    }

    /// The 10 Hz level of the snore band: the louder of each two 50 ms frames, as the envelope
    /// is of the raw level; `frames` limits it to a range of frames.
    public static func snoreBandEnvelope(_ track: FrameTrack, frames: Range<Int>? = nil) -> [Float] {
        let range = frames ?? 0..<track.count
        return stride(from: range.lowerBound, to: range.upperBound - 1, by: 2).map { max(track.low[$0], track.low[$0 + 1]) }
    }

    /// [0, duration] less `ranges`.
    static func complement(of ranges: [TimeRange], within duration: Double) -> [TimeRange] {
        var out: [TimeRange] = [], from = 0.0
        for r in ranges.sorted(by: { $0.start < $1.start }) where r.end > from {
            if r.start > from { out.append(TimeRange(start: from, end: min(r.start, duration))) }
            from = max(from, r.end)
            if from >= duration { break }
        }
        if from < duration { out.append(TimeRange(start: from, end: duration)) }
        return out.filter { $0.end > $0.start }
    }

    /// Where two sorted, non-overlapping lists of ranges overlap.
    static func intersection(_ a: [TimeRange], _ b: [TimeRange]) -> [TimeRange] {
        var out: [TimeRange] = [], i = 0, j = 0
        while i < a.count && j < b.count {
            let start = max(a[i].start, b[j].start), end = min(a[i].end, b[j].end)
            if end > start { out.append(TimeRange(start: start, end: end)) }
            if a[i].end < b[j].end { i += 1 } else { j += 1 }
        }
        return out
    }

    /// Two lists of stretches as one, those less than `mergeGap` apart merged.
    static func union(_ a: [TimeRange], _ b: [TimeRange], mergeGap: Double) -> [TimeRange] {
        merged((a + b).sorted { $0.start < $1.start }, gap: mergeGap)
    }

    /// Stretches in order of their starts, each merged into the one before when less than `gap`
    /// after its end.
    static func merged(_ sorted: [TimeRange], gap: Double) -> [TimeRange] {
        var merged: [TimeRange] = []
        for stretch in sorted {
            if let last = merged.last, stretch.start - last.end < gap {
                merged[merged.count - 1].end = max(last.end, stretch.end)
            } else {
                merged.append(stretch)
            }
        }
        return merged
    }

    /// The active runs of `envelope[range]` (values above `threshold`), each padded by `pad`
    /// seconds and merged with the previous one when less than `mergeGap` apart, clamped to
    /// 0…`duration`; times count from the envelope's first value.
    public static func stretches(_ envelope: [Float], in range: Range<Int>, above threshold: Float, rate: Double = 10,
                                 pad: Double = SilenceGate.pad, mergeGap: Double = SilenceGate.mergeGap,
                                 duration: Double) -> [TimeRange] {
        var padded: [TimeRange] = []
        var runStart: Int?
        for i in range.lowerBound...range.upperBound {
            // Non-finite values (a damaged file) never count as active.
            let active = i < range.upperBound && envelope[i].isFinite && envelope[i] > threshold
            if active, runStart == nil { runStart = i }
            if !active, let s = runStart {
                padded.append(TimeRange(start: max(0, Double(s) / rate - pad), end: min(duration, Double(i) / rate + pad)))
                runStart = nil
            }
        }
        return merged(padded, gap: mergeGap)
    }

    /// The room's floor: the `p` quantile of the levels other than digital silence (exactly 0) or
    /// damaged values; 0 when there are none.
    public static func roomFloor(_ levels: [Float], _ p: Double) -> Float {
        percentile(levels.filter { $0 > 0 }, p)
    }

    /// The `p` quantile (0…1) of the finite values, nearest rank; 0 when there are none.
    public static func percentile(_ values: [Float], _ p: Double) -> Float {
        var finite = values.filter(\.isFinite)
        guard !finite.isEmpty else { return 0 }
        let rank = TimeRange.index(p * Double(finite.count - 1), .toNearestOrAwayFromZero, limit: finite.count - 1)
        return smallest(rank, of: &finite)
    }

    /// The value sorting would put at `k`, found by partitioning around a median of three
    /// (Hoare's selection) instead of sorting: the snoring rules take a local floor of ±15 s
    /// for every span and gap in every round around snoring, and sorting those frames was a
    /// sixth of a fan night's analysis. `values` is left partly reordered.
    static func smallest(_ k: Int, of values: inout [Float]) -> Float {
        var low = 0, high = values.count - 1
        while low < high {
            let a = values[low], b = values[low + (high - low) / 2], c = values[high]
            let pivot = max(min(a, b), min(max(a, b), c))
            var i = low, j = high
            while i <= j {
                while values[i] < pivot { i += 1 }
                while values[j] > pivot { j -= 1 }
                if i <= j { values.swapAt(i, j); i += 1; j -= 1 }
            }
            // Now low...j ≤ pivot, i...high ≥ pivot, and anything between equals it.
            if k <= j { high = j } else if k >= i { low = i } else { return values[k] }
        }
        return values[k]
    }
}
