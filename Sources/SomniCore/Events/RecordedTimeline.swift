import Foundation

/// A night's time with the stretches that were not recorded taken out, and back again.
///
/// The event rules measure time between sounds (three snores under 10 s apart make a train,
/// same-class windows within 2 s merge). Across a pause between a night's parts, or a capture
/// gap, that time ran on through silence that was never the room, and a 20 s pause broke the
/// trains around it: snores up to 40 s from it were lost. So events are found on the recorded
/// time alone and placed back on the night's clock. Each stretch is cut on the 50 ms frame grid,
/// so the frames and the times agree.
struct RecordedTimeline {
    /// A stretch taken out: its frames, where it starts and ends in night time, and where it
    /// falls in recorded time.
    private struct Cut {
        var frames: Range<Int>, at: Double
        var start: Double { Double(frames.lowerBound) / FrameTrack.rate }
        var end: Double { Double(frames.upperBound) / FrameTrack.rate }
        var length: Double { end - start }
    }
    private let cuts: [Cut]
    /// The frames kept, by index into the night's; nil when nothing is cut.
    private let keptFrames: [Int]?

    /// `notRecorded` in night time; `frameCount` the night's frames.
    init(notRecorded: [TimeRange], frameCount: Int) {
        let rate = FrameTrack.rate
        var cuts: [Cut] = [], kept: [Int] = []
        var removed = 0.0, next = 0
        for range in SilenceGate.union(notRecorded, [], mergeGap: 0) {
            // The frames whose start lies in the stretch (1 µs of slack for decimals).
            let first = max(0, Int((range.start * rate - 1e-6).rounded(.up)))
            let end = min(frameCount, Int((range.end * rate - 1e-6).rounded(.up)))
            guard end > first else { continue }
            let cut = Cut(frames: first..<end, at: Double(first) / rate - removed)
            cuts.append(cut)
            removed += cut.length
            kept += next..<first
            next = end
        }
        self.cuts = cuts
        keptFrames = cuts.isEmpty ? nil : kept + (next..<frameCount)
    }

    /// Night time → recorded time; a time inside a cut goes to where the cut falls.
    func recorded(_ t: Double) -> Double {
        var removed = 0.0
        for cut in cuts {
            if t >= cut.end { removed += cut.length } else if t > cut.start { return cut.at } else { break }
        }
        return t - removed
    }

    /// Recorded time → night time. At a cut's place, a start goes after the cut and an end
    /// before it.
    func night(_ t: Double, isEnd: Bool) -> Double {
        var added = 0.0
        for cut in cuts where t > cut.at + 1e-9 || (!isEnd && t >= cut.at - 1e-9) { added += cut.length }
        return t + added
    }

    /// The frames outside the cuts, in order.
    func frames(_ track: FrameTrack) -> FrameTrack {
        guard let keptFrames else { return track }
        func pick(_ values: [Float]) -> [Float] { values.isEmpty ? [] : keptFrames.map { values[$0] } }
        return FrameTrack(raw: pick(track.raw), low: pick(track.low), mid: pick(track.mid), zcr: pick(track.zcr))
    }

    /// The windows in recorded time, over the recorded audio they heard (one reaching into a
    /// cut ends, or starts, at its place); one wholly inside a cut (silence) is left out.
    func windows(_ windows: [WindowLabels]) -> [WindowLabels] {
        guard !cuts.isEmpty else { return windows }
        return windows.compactMap { w in
            if cuts.contains(where: { w.start >= $0.start && w.end <= $0.end }) { return nil }
            let start = recorded(w.start)
            return WindowLabels(start: start, end: max(start, recorded(w.end)), ranked: w.ranked)
        }
    }

    /// Events in recorded time.
    func recorded(_ events: [DetectedEvent]) -> [DetectedEvent] {
        guard !cuts.isEmpty else { return events }
        return events.map { e in
            var e = e
            e.start = recorded(e.start)
            e.end = max(e.start, recorded(e.end))
            return e
        }
    }

    /// Stretches in recorded time; one wholly inside a cut is left out.
    func recorded(_ ranges: [TimeRange]) -> [TimeRange] {
        guard !cuts.isEmpty else { return ranges }
        return ranges.compactMap { r in
            let mapped = TimeRange(start: recorded(r.start), end: recorded(r.end))
            return mapped.end > mapped.start ? mapped : nil
        }
    }

    /// Stretches in recorded time placed back on the night's clock, each split at a cut's place.
    func night(_ ranges: [TimeRange]) -> [TimeRange] {
        guard !cuts.isEmpty else { return ranges }
        return ranges.flatMap { r in
            pieces(from: r.start, to: r.end).map { TimeRange(start: night($0.from, isEnd: false), end: night($0.to, isEnd: true)) }
        }
    }

    /// `from`–`to` in recorded time, split at every cut's place inside it.
    private func pieces(from: Double, to: Double) -> [(from: Double, to: Double)] {
        var bounds = [from]
        for cut in cuts where cut.at > from + 1e-9 && cut.at < to - 1e-9 { bounds.append(cut.at) }
        bounds.append(to)
        return Array(zip(bounds, bounds.dropFirst()))
    }

    /// Events found in recorded time, placed back on the night's clock. One that runs across a
    /// cut's place (two snores either side of a pause, merged) is two, one each side, each
    /// measured over its own frames (`frames`, in recorded time): spanning the pause, it counted
    /// time never recorded as snoring. A piece under a frame goes.
    func night(_ events: [DetectedEvent], frames: FrameTrack) -> [DetectedEvent] {
        guard !cuts.isEmpty else { return events }
        return events.flatMap { e -> [DetectedEvent] in
            let split = pieces(from: e.start, to: e.end)
            return split.compactMap { from, to in
                guard split.count == 1 || to - from >= FrameTrack.duration - 1e-9 else { return nil }
                var piece = split.count == 1 ? e : EventDetector.resized(e, to: TimeRange(start: from, end: to), frames: frames)
                piece.start = night(from, isEnd: false)
                piece.end = max(piece.start, night(to, isEnd: true))
                return piece
            }
        }
    }
}
