import Foundation

/// Many nights scored together, as a study reports them: each night's headline figures, how each
/// figure spreads over the nights (a median says more than one lucky night), and every night's
/// counts pooled into one report (so a long night weighs more than a short one).
public struct NightsEvaluation: Codable, Sendable, Equatable {
    /// The figures the quality targets are stated in, one value per night.
    public enum Measure: String, Codable, Sendable, CaseIterable {
        case snoringEpisodes = "snoring episodes F1"
        case snoringTime = "snoring time F1"
        case sleepTalk = "sleep_talk F1"
        case cough = "cough F1"
        case falseEventsPerHour = "false events/h"

        /// A night's value; nil for an F1 when the night has no reference event of the class (on a
        /// night of noise alone only false events count).
        func value(in report: EvaluationReport) -> Double? {
            func result(_ c: EventClass) -> EvaluationReport.ClassResult? {
                report.classes.first { $0.eventClass == c && $0.referenceCount > 0 }
            }
            switch self {
            case .snoringEpisodes: return result(.snoring)?.events.f1
            case .snoringTime: return result(.snoring)?.segments.f1
            case .sleepTalk: return result(.sleepTalk)?.events.f1
            case .cough: return result(.cough)?.events.f1
            case .falseEventsPerHour: return report.falseEventsPerHour
            }
        }

        /// Lower is better only for false events.
        var higherIsBetter: Bool { self != .falseEventsPerHour }
        /// The lines nights are counted against: F1 at 0.8 and 0.9, false events at 1 an hour.
        var lines: [Double] { higherIsBetter ? [0.8, 0.9] : [1] }
    }

    public struct Night: Codable, Sendable, Equatable {
        public var name: String
        public var report: EvaluationReport
    }

    /// One measure over the nights that score it.
    public struct Spread: Codable, Sendable, Equatable {
        public var measure: Measure
        public var nights: Int
        public var median: Double
        public var mean: Double
        public var lowest: Double
        public var highest: Double
        /// How many nights reach each line (at least it for F1, at most it for false events).
        public var reaching: [Line]

        public struct Line: Codable, Sendable, Equatable {
            public var line: Double
            public var nights: Int
        }
    }

    /// How far a pooled figure could move with other nights like these: the 2.5th to 97.5th
    /// percentile of the figure pooled over the nights drawn again with replacement (a bootstrap
    /// over nights, which keeps each night's events together). Seeded, so a study run again gives
    /// the same interval.
    public struct Interval: Codable, Sendable, Equatable {
        public var measure: Measure
        public var pooled: Double
        public var low: Double
        public var high: Double
        /// The draws the interval is taken from (those holding a reference event of the class).
        public var draws: Int
    }

    public var nights: [Night]
    public var spreads: [Spread]
    public var pooled: EvaluationReport
    /// Each pooled figure's interval, for the measures scored on at least `nightsForInterval` nights.
    public var intervals: [Interval]

    /// Fewer nights than this give an interval too rough to print.
    public static let nightsForInterval = 5
    static let draws = 2_000

    public init(nights: [(name: String, report: EvaluationReport)]) {
        self.nights = nights.map { Night(name: $0.name, report: $0.report) }
        spreads = Measure.allCases.compactMap { measure in
            let values = nights.compactMap { measure.value(in: $0.report) }.sorted()
            guard let median = Evaluator.median(values) else { return nil }
            let reaching = measure.lines.map { line in
                Spread.Line(line: line, nights: values.count { measure.higherIsBetter ? $0 >= line : $0 <= line })
            }
            return Spread(measure: measure, nights: values.count, median: median,
                          mean: values.reduce(0, +) / Double(values.count), lowest: values[0], highest: values[values.count - 1],
                          reaching: reaching)
        }
        pooled = Self.pool(nights.map(\.report))
        intervals = Self.intervals(nights.map(\.report), pooled: pooled,
                                   measures: spreads.filter { $0.nights >= Self.nightsForInterval }.map(\.measure))
    }

    static func intervals(_ reports: [EvaluationReport], pooled: EvaluationReport, measures: [Measure]) -> [Interval] {
        guard !measures.isEmpty else { return [] }
        var random = SeededRandom(seed: 0x5EED_0F_4E16)
        var values = [[Double]](repeating: [], count: measures.count)
        var drawn: [EvaluationReport] = []
        drawn.reserveCapacity(reports.count)
        for _ in 0..<draws {
            drawn.removeAll(keepingCapacity: true)
            for _ in reports.indices { drawn.append(reports[random.int(0...(reports.count - 1))]) }
            let again = pool(drawn)
            for (m, measure) in measures.enumerated() {
                if let value = measure.value(in: again) { values[m].append(value) }
            }
        }
        return zip(measures, values).compactMap { measure, drawnValues in
            guard let value = measure.value(in: pooled), drawnValues.count * 2 >= draws else { return nil }
            let sorted = drawnValues.sorted()
            func percentile(_ p: Double) -> Double { sorted[Int((p * Double(sorted.count - 1)).rounded())] }
            return Interval(measure: measure, pooled: value, low: percentile(0.025), high: percentile(0.975), draws: sorted.count)
        }
    }

    /// Every night's counts summed, class by class; false events per hour over all the hours recorded.
    static func pool(_ reports: [EvaluationReport]) -> EvaluationReport {
        let zero = DetectionScores(truePositives: 0, falsePositives: 0, falseNegatives: 0)
        let duration = reports.reduce(0) { $0 + $1.duration }
        let recorded = reports.contains { $0.recordedSeconds != nil }
            ? reports.reduce(0) { $0 + ($1.recordedSeconds ?? $1.duration) } : nil
        let classes: [EvaluationReport.ClassResult] = EventClass.allCases.compactMap { eventClass in
            let results = reports.compactMap { $0.classes.first { $0.eventClass == eventClass } }
            guard let first = results.first else { return nil }
            let events = results.reduce(zero) { $0 + $1.events }
            return EvaluationReport.ClassResult(
                eventClass: eventClass, settings: first.settings,
                referenceCount: results.reduce(0) { $0 + $1.referenceCount }, foundCount: results.reduce(0) { $0 + $1.foundCount },
                scoredReferenceCount: results.reduce(0) { $0 + $1.scoredReferenceCount },
                scoredFoundCount: results.reduce(0) { $0 + $1.scoredFoundCount },
                events: events, segments: results.reduce(zero) { $0 + $1.segments },
                falseEventsPerHour: SessionSummary.rate(events.falsePositives, over: recorded ?? duration),
                referenceSeconds: results.reduce(0) { $0 + $1.referenceSeconds },
                foundSeconds: results.reduce(0) { $0 + $1.foundSeconds })
        }
        return EvaluationReport(duration: duration, recordedSeconds: recorded, classes: classes)
    }

    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// A night per line, the spread of each measure, then the pooled report's table.
    public func text() -> String {
        func cell(_ value: Double?, _ measure: Measure) -> String {
            guard let value else { return "-" }
            return String(format: measure.higherIsBetter ? "%.3f" : "%.2f", value)
        }
        let nameWidth = max(12, nights.map(\.name.count).max() ?? 0)
        let widths = Measure.allCases.map { max($0.rawValue.count, 6) }
        func row(_ first: String, _ cells: [String]) -> String {
            ([first.padded(to: nameWidth)]
                + zip(cells, widths).map { String(repeating: " ", count: max(0, $1 - $0.count)) + $0 }).joined(separator: "  ")
        }
        let hours = pooled.duration / 3600
        var lines = [String(format: "%d nights, %.1f h in all (somni evaluate's protocol, as for one night)", nights.count, hours),
                     row("night", Measure.allCases.map(\.rawValue))]
        for night in nights {
            lines.append(row(night.name, Measure.allCases.map { cell($0.value(in: night.report), $0) }))
        }
        lines += ["", "Over the nights (an F1 over the nights with reference events of its class):"]
        for s in spreads {
            let reached = s.reaching.map { line in
                String(format: "%d at %@ %g", line.nights, s.measure.higherIsBetter ? "≥" : "≤", line.line)
            }.joined(separator: ", ")
            lines.append(s.measure.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)
                + " median \(cell(s.median, s.measure)), mean \(cell(s.mean, s.measure)), "
                + "\(cell(s.lowest, s.measure))–\(cell(s.highest, s.measure)) over \(s.nights) night\(s.nights == 1 ? "" : "s"); \(reached)")
        }
        lines += ["", intervals.isEmpty
            ? "Pooled, with a 95 % interval: needs \(Self.nightsForInterval) nights or more scoring a figure"
            : "Pooled, with a 95 % interval (the nights drawn again with replacement, \(Self.draws) times):"]
        for i in intervals {
            lines.append(i.measure.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)
                + " \(cell(i.pooled, i.measure))  (\(cell(i.low, i.measure))–\(cell(i.high, i.measure)))")
        }
        lines += ["", "Pooled: every night's counts summed"]
        return lines.joined(separator: "\n") + "\n" + pooled.text()
    }
}
