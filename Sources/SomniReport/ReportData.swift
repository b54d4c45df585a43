import Foundation
import SomniCore
import SomniStore

/// What the page's script draws, computed here so the page stays small and dumb. Encoded as JSON
/// into the page.
struct PageData: Encodable {
    var nights: [NightData]
    /// One point per night, for reports over several nights.
    var trends: [TrendPoint]?
}

struct TrendPoint: Encodable {
    var label: String
    var minutes: Double
    var percent: Double
    /// Events per hour keyed by EventClass raw value.
    var rates: [String: Double]
}

struct NightData: Encodable {
    var id: String
    var duration: Double
    /// Seconds from the first ribbon row's clock hour to the start (0 when the start is unknown).
    var offset: Double
    /// Clock hour of the first ribbon row (0–23), nil when the start is unknown (rows count hours from the start).
    var firstHour: Int?
    /// Daylight-saving changes in the night: from `at` seconds after the start the clock reads
    /// `by` seconds more than the first row's hour counts (−3600 after the autumn change).
    var shifts: [ClockShift]
    /// Stretches not recorded (a pause between joined parts, a microphone away), [start, end]
    /// in seconds from the start: drawn and read as such, not as a silent room.
    var gaps: [[Double]]
    /// The night's timeline loudness: max-pooled envelope columns spread over the night, 0–100 of
    /// the 95th percentile; nil where the envelope does not reach (a file cut short).
    var envelope: [Int?]
    var ribbon: RibbonData
    /// Events starting in each hour row (the ribbon's rows), counted per class in EventClass order.
    var hours: [[Int]]
    var events: [EventData]
}

struct ClockShift: Encodable, Equatable {
    var at: Double
    var by: Int
}

/// Ribbon cells on the clock's 10-second grid: cell k covers [offset rounded down to 10 s + 10 k, +10 s).
struct RibbonData: Encodable {
    static let cellSeconds = 10.0
    /// Index (from the first row's hour) of the first cell that holds part of the night.
    var first: Int
    /// dBFS of the loudest envelope value in each cell, rounded; nil without an envelope.
    var level: [Int?]
    /// One letter per cell: "." nothing, "s" snoring, "t" sleep-talk, "c" cough, "g" not
    /// recorded (wholly inside a gap).
    var cls: String
}

struct EventData: Encodable {
    var id: String
    var c: String
    var s: Double
    var e: Double
    var pk: Double
    var sev: Double
    var conf: Double
    /// Bar height in the timeline, 0–100 of the 95th percentile of the night's event peaks.
    var h: Int
    /// 96 peak bins, 0–100 of the clip's loudest bin; empty when there is nothing to draw from.
    var bins: [Int]
}

enum ReportMath {
    static let waveformBins = 96
    static let timelineColumns = 720
    /// The level an empty cell or a silent envelope maps to.
    static let floorDBFS = -100.0

    static func dBFS(_ amplitude: Float) -> Double {
        amplitude > 0 ? max(floorDBFS, 20 * log10(Double(amplitude))) : floorDBFS
    }

    static func amplitude(dBFS: Double) -> Double { pow(10, dBFS / 20) }

    /// The p-th percentile (0–1) by nearest rank; 0 for no values.
    static func percentile<Value: BinaryFloatingPoint>(_ values: [Value], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((p * Double(sorted.count - 1)).rounded())
        return Double(sorted[min(max(rank, 0), sorted.count - 1)])
    }

    static func scaled(_ value: Double, by reference: Double) -> Int {
        guard reference > 0 else { return value > 0 ? 100 : 0 }
        return Int((min(1, value / reference) * 100).rounded())
    }

    static func night(_ n: ReportNight) -> NightData {
        let s = n.session
        let clock = NightClock(of: s)
        // Rows start at the clock hour the night began in, so rows from different nights line up.
        let intoHour = clock.map { $0.secondsIntoDay.truncatingRemainder(dividingBy: 3600) } ?? 0
        let firstHour = clock.map { Int($0.secondsIntoDay / 3600) % 24 }
        let env = n.envelope.flatMap { $0.values.isEmpty || !($0.rate > 0) ? nil : $0 }

        return NightData(
            id: n.id, duration: s.duration, offset: intoHour, firstHour: firstHour,
            shifts: clock.map { c in
                // A night begun in the hour the clocks repeat: its change just before the start
                // is given as the clock it left (ahead of the start's) and then the start's own,
                // so the page marks its first times "(2nd)" as the event list does.
                let before = c.changeBeforeStart.map {
                    [ClockShift(at: $0.after, by: c.offsetBeforeChanges - c.offsetSeconds), ClockShift(at: $0.after, by: 0)]
                } ?? []
                return before + c.offsetChanges.filter { $0.after > 0 && $0.after < s.duration }
                    .map { ClockShift(at: $0.after, by: $0.offsetSeconds - c.offsetSeconds) }
            } ?? [],
            gaps: (s.gaps ?? []).map { [$0.start, $0.start + $0.duration] },
            envelope: env.map { timeline($0.values, rate: $0.rate, duration: s.duration, columns: timelineColumns) } ?? [],
            ribbon: ribbon(duration: s.duration, offset: intoHour, envelope: env, events: s.events, gaps: s.gaps ?? []),
            hours: hourCounts(duration: s.duration, offset: intoHour, events: s.events),
            events: events(n, envelope: env))
    }

    /// Envelope max-pooled into `columns` that each cover an equal part of the night, scaled to
    /// its 95th percentile (so one bang does not flatten the rest of the night). Columns are laid
    /// out by time, not by how many values there are: an envelope cut short was stretched over
    /// the whole night, its loudness drawn hours away from the events it belongs to.
    static func timeline(_ values: [Float], rate: Double, duration: Double, columns: Int) -> [Int?] {
        let nightValues = Int((max(duration, 0) * rate).rounded(.up))
        let n = min(columns, max(1, nightValues))
        let reference = percentile(Array(values.prefix(max(min(values.count, nightValues), 1))), 0.95)
        let valuesPerColumn = max(duration, 0) * rate / Double(n)
        return (0..<n).map { col in
            let lo = Int((Double(col) * valuesPerColumn).rounded(.down))
            guard lo < values.count else { return nil }
            let hi = min(values.count, max(lo + 1, Int((Double(col + 1) * valuesPerColumn).rounded(.down))))
            var peak: Float = 0
            for i in lo..<hi { peak = max(peak, values[i]) }
            return scaled(Double(peak), by: reference)
        }
    }

    static func hourCounts(duration: Double, offset: Double, events: [SessionEvent]) -> [[Int]] {
        let rows = max(1, Int(((offset + max(duration, 0)) / 3600).rounded(.up)))
        var counts = [[Int]](repeating: [Int](repeating: 0, count: EventClass.allCases.count), count: rows)
        for e in events {
            let row = min(rows - 1, max(0, Int(((offset + e.start) / 3600).rounded(.down))))
            counts[row][EventClass.allCases.firstIndex(of: e.eventClass) ?? 0] += 1
        }
        return counts
    }

    static func ribbon(duration: Double, offset: Double, envelope: EnvelopeFile.Contents?,
                       events: [SessionEvent], gaps: [RecordingGap] = []) -> RibbonData {
        let cell = RibbonData.cellSeconds
        let first = Int((offset / cell).rounded(.down))
        let last = max(first, Int(((offset + max(duration, 0)) / cell).rounded(.up)) - 1)
        let count = last - first + 1
        var level = [Int?](repeating: nil, count: count)
        if let env = envelope {
            var peak = [Float](repeating: -1, count: count)
            for (i, v) in env.values.enumerated() {
                let k = Int(((offset + Double(i) / env.rate) / cell).rounded(.down)) - first
                if k >= 0 && k < count && v > peak[k] { peak[k] = v }
            }
            level = peak.map { $0 < 0 ? nil : Int(dBFS($0).rounded()) }
        }
        // Rarer classes win a shared cell, so a cough inside a snoring stretch stays visible.
        let letter: [EventClass: UInt8] = [.snoring: UInt8(ascii: "s"), .sleepTalk: UInt8(ascii: "t"), .cough: UInt8(ascii: "c")]
        var cls = [UInt8](repeating: UInt8(ascii: "."), count: count)
        var rank = [Int](repeating: -1, count: count)
        for e in events {
            let lo = max(0, Int(((offset + e.start) / cell).rounded(.down)) - first)
            let hi = min(count - 1, Int(((offset + e.end) / cell).rounded(.up)) - 1 - first)
            guard lo <= hi, let mark = letter[e.eventClass] else { continue }
            let r = EventClass.allCases.firstIndex(of: e.eventClass) ?? 0
            for k in lo...hi where r > rank[k] {
                rank[k] = r
                cls[k] = mark
            }
        }
        // A cell wholly inside a gap heard nothing: its envelope is the silence the gap was
        // filled with (−100 dBFS read as a measured, silent moment).
        for gap in gaps {
            let lo = max(0, Int(((offset + gap.start) / cell).rounded(.up)) - first)
            let hi = min(count - 1, Int(((offset + gap.start + gap.duration) / cell).rounded(.down)) - 1 - first)
            guard lo <= hi else { continue }
            for k in lo...hi where cls[k] == UInt8(ascii: ".") {
                cls[k] = UInt8(ascii: "g")
                level[k] = nil
            }
        }
        return RibbonData(first: first, level: level, cls: String(decoding: cls, as: UTF8.self))
    }

    static func events(_ n: ReportNight, envelope: EnvelopeFile.Contents?) -> [EventData] {
        let events = n.session.events.sorted { $0.start < $1.start }
        let reference = percentile(events.map { amplitude(dBFS: $0.peakDBFS) }, 0.95)
        return events.map { e in
            // The waveform spans what the clip plays: the event ± 1 s within the recording, so
            // that the page's playhead, which maps the width onto the clip's length, is in step.
            let clip = ClipMaker.clipRange(start: e.start, end: e.end, duration: n.session.duration)
            let bins = envelope.map { peakBins($0, from: clip.start, to: clip.end, count: waveformBins) } ?? []
            let loudest = bins.max() ?? 0
            return EventData(
                id: e.id, c: e.eventClass.rawValue, s: e.start, e: e.end, pk: e.peakDBFS, sev: e.severity,
                conf: e.confidence, h: max(8, scaled(amplitude(dBFS: e.peakDBFS), by: reference)),
                bins: bins.map { scaled(Double($0), by: Double(loudest)) })
        }
    }

    /// `count` peak bins of the envelope between two times; a bin between two samples takes the
    /// nearer one, so short clips still get a full waveform.
    static func peakBins(_ env: EnvelopeFile.Contents, from start: Double, to end: Double, count: Int) -> [Float] {
        let values = env.values
        guard !values.isEmpty, end > start, count > 0 else { return [] }
        let span = end - start
        return (0..<count).map { b in
            let t0 = start + span * Double(b) / Double(count)
            let t1 = start + span * Double(b + 1) / Double(count)
            let lo = max(0, Int((t0 * env.rate).rounded(.up)))
            let hi = min(values.count - 1, Int((t1 * env.rate).rounded(.down)))
            if lo <= hi {
                var peak: Float = 0
                for i in lo...hi { peak = max(peak, values[i]) }
                return peak
            }
            let nearest = min(values.count - 1, max(0, Int(((t0 + t1) / 2 * env.rate).rounded())))
            return values[nearest]
        }
    }
}
