import Foundation

/// Counts and the precision, recall and F1 they give; a ratio is nil when its denominator is 0.
public struct DetectionScores: Codable, Sendable, Equatable {
    public var truePositives: Int
    public var falsePositives: Int
    public var falseNegatives: Int
    public var precision: Double?
    public var recall: Double?
    public var f1: Double?

    public init(truePositives: Int, falsePositives: Int, falseNegatives: Int) {
        self.truePositives = truePositives; self.falsePositives = falsePositives
        self.falseNegatives = falseNegatives
        let tp = Double(truePositives)
        precision = truePositives + falsePositives > 0 ? tp / Double(truePositives + falsePositives) : nil
        recall = truePositives + falseNegatives > 0 ? tp / Double(truePositives + falseNegatives) : nil
        let denominator = 2 * truePositives + falsePositives + falseNegatives
        f1 = denominator > 0 ? 2 * tp / Double(denominator) : nil
    }

    static func + (a: DetectionScores, b: DetectionScores) -> DetectionScores {
        DetectionScores(truePositives: a.truePositives + b.truePositives,
                        falsePositives: a.falsePositives + b.falsePositives,
                        falseNegatives: a.falseNegatives + b.falseNegatives)
    }
}

/// The scores of one night against its reference, per class and in total (micro-averaged).
public struct EvaluationReport: Codable, Sendable, Equatable {
    public struct ClassResult: Codable, Sendable, Equatable {
        public var eventClass: EventClass
        public var settings: ClassProtocol
        /// Events as given, before any merging.
        public var referenceCount: Int
        public var foundCount: Int
        /// Units scored event by event: episodes when the class merges, else the events.
        public var scoredReferenceCount: Int
        public var scoredFoundCount: Int
        public var events: DetectionScores
        public var segments: DetectionScores
        /// Unmatched found (scored) events per hour recorded.
        public var falseEventsPerHour: Double
        /// Seconds the class's reference and found events cover (overlaps counted once): the
        /// night's snoring minutes against the truth, which the segment F1 (10 s for snoring)
        /// does not show.
        public var referenceSeconds: Double
        public var foundSeconds: Double
    }

    public var duration: Double
    /// The seconds of `duration` recorded, for a night with gaps (a joined night's pause, a lost
    /// microphone); nil when all of it was. False events per hour are over these, as every rate
    /// Somni gives: a gap is not an hour in which nothing was falsely found.
    public var recordedSeconds: Double?
    public var classes: [ClassResult]
    public var totalEvents: DetectionScores
    public var totalSegments: DetectionScores
    public var falseEventsPerHour: Double
    /// Recall by each reference's rise above its background, when the recording was given.
    public var levels: [LevelRecall]?
    /// Where each class's event score was lost, when asked for (`Evaluator.scoringErrors`).
    public var errors: [ScoringError]?

    /// A report whose totals are its classes' summed, false events per hour over the time recorded.
    init(duration: Double, recordedSeconds: Double? = nil, classes: [ClassResult]) {
        let zero = DetectionScores(truePositives: 0, falsePositives: 0, falseNegatives: 0)
        self.duration = duration
        self.recordedSeconds = recordedSeconds
        self.classes = classes
        totalEvents = classes.reduce(zero) { $0 + $1.events }
        totalSegments = classes.reduce(zero) { $0 + $1.segments }
        falseEventsPerHour = SessionSummary.rate(totalEvents.falsePositives, over: recordedSeconds ?? duration)
    }

    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// A table a person reads: one line per class and a total line.
    public func text() -> String {
        func ratio(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "  -  " }
        func pad(_ s: String, _ width: Int) -> String {
            s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
        }
        let header = ["class", "ref", "found", "TP", "FP", "FN", "ev P", "ev R", "ev F1",
                      "seg P", "seg R", "seg F1", "FP/h"]
        let widths = [10, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 7]
        func row(_ cells: [String]) -> String {
            zip(cells, widths).enumerated().map { i, cell in
                i == 0 ? cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0) : pad(cell.0, cell.1)
            }.joined(separator: " ")
        }
        func cells(_ name: String, _ ref: Int, _ found: Int, _ e: DetectionScores, _ s: DetectionScores,
                   _ perHour: Double) -> [String] {
            [name, "\(ref)", "\(found)", "\(e.truePositives)", "\(e.falsePositives)", "\(e.falseNegatives)",
             ratio(e.precision), ratio(e.recall), ratio(e.f1), ratio(s.precision), ratio(s.recall), ratio(s.f1),
             String(format: "%.2f", perHour)]
        }
        // Under six minutes in seconds: "0.0 h" beside a rate per hour read as nothing recorded.
        func span(_ seconds: Double) -> String {
            seconds >= 360 ? String(format: "%.1f h", seconds / 3600) : String(format: "%.0f s", seconds)
        }
        let recorded = recordedSeconds.map { ", \(span($0)) of it recorded" } ?? ""
        var lines = ["Evaluation over \(span(duration))\(recorded) (event scores on scored units; segments per class)", row(header)]
        for c in classes {
            lines.append(row(cells(c.eventClass.rawValue, c.scoredReferenceCount, c.scoredFoundCount,
                                   c.events, c.segments, c.falseEventsPerHour)))
        }
        lines.append(row(cells("total", classes.reduce(0) { $0 + $1.scoredReferenceCount },
                               classes.reduce(0) { $0 + $1.scoredFoundCount },
                               totalEvents, totalSegments, falseEventsPerHour)))
        for c in classes {
            var rule = c.eventClass.rawValue
                + String(format: ": collar %.3g s, segments %.3g s", c.settings.collar, c.settings.segmentLength)
            if let gap = c.settings.mergeGap {
                rule += String(format: ", events < %.3g s apart merged (%d reference, %d found before merging)",
                               gap, c.referenceCount, c.foundCount)
            }
            lines.append(rule)
        }
        lines.append("Time in events, found / reference: " + classes.map { c in
            var part = c.eventClass.rawValue + String(format: " %.1f / %.1f min", c.foundSeconds / 60, c.referenceSeconds / 60)
            if c.referenceSeconds > 0 {
                part += String(format: " (%+.0f %%)", 100 * (c.foundSeconds / c.referenceSeconds - 1))
            }
            return part
        }.joined(separator: ", "))
        if let levels { lines += levelLines(levels) }
        if let errors {
            lines.append("Scoring errors (\(errors.count); scored units, so snoring as episodes under the default protocol):")
            lines += errors.map(\.line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Found / scored references in each level bin, a line per class.
    private func levelLines(_ levels: [LevelRecall]) -> [String] {
        let names = (levels.first?.bins ?? []).map { LevelRecall.heading(fromDB: $0.fromDB, toDB: $0.toDB) }
        func row(_ first: String, _ second: String, _ rest: [String]) -> String {
            LevelRecall.tableRow(first, second, rest, cellWidth: 10)
        }
        var lines = ["", "Recall by level: found / reference, by each reference's rise over its background in its band",
                     "(loudest 250 ms against the median of event-free 50 ms frames within 60 s; snoring by episode,",
                     "at the median of its snores, then at its first snore, which decides whether its onset is found)",
                     row("class", "band", names)]
        for l in levels {
            var line = row(l.eventClass.rawValue, LevelRecall.bandLabel(l.bandHz), l.bins.map { "\($0.foundCount)/\($0.referenceCount)" })
            if l.unmeasuredCount > 0 { line += "  (\(l.unmeasuredCount) past the audio's end)" }
            lines.append(line)
            if let first = l.firstEventBins {
                lines.append(row("", "by 1st \(l.eventClass == .snoring ? "snore" : "event")",
                                 first.map { "\($0.foundCount)/\($0.referenceCount)" }))
            }
        }
        return lines
    }
}

/// DCASE-style scoring with sed_eval's semantics: event-based scores with an optimal one-to-one
/// matching, segment-based scores on fixed segments, and false events per hour.
public enum Evaluator {
    /// `recordedSeconds`: the part of `duration` recorded, for a night with gaps (nil: all of it).
    public static func evaluate(reference: [ReferenceEvent], found: [ReferenceEvent], duration: Double,
                                recordedSeconds: Double? = nil,
                                protocol rules: EvaluationProtocol = .somniDefault) -> EvaluationReport {
        var results: [EvaluationReport.ClassResult] = []
        for eventClass in EventClass.allCases {
            let settings = rules.settings(for: eventClass)
            let (ref, scoredRef) = scoringUnits(reference, of: eventClass, settings: settings)
            let (hyp, scoredHyp) = scoringUnits(found, of: eventClass, settings: settings)
            let events = eventScores(reference: scoredRef, found: scoredHyp, settings: settings)
            let segments = segmentScores(reference: ref, found: hyp, duration: duration,
                                         segmentLength: settings.segmentLength)
            results.append(.init(
                eventClass: eventClass, settings: settings, referenceCount: ref.count, foundCount: hyp.count,
                scoredReferenceCount: scoredRef.count, scoredFoundCount: scoredHyp.count,
                events: events, segments: segments,
                falseEventsPerHour: SessionSummary.rate(events.falsePositives, over: recordedSeconds ?? duration),
                referenceSeconds: coveredSeconds(ref), foundSeconds: coveredSeconds(hyp)))
        }
        return EvaluationReport(duration: duration, recordedSeconds: recordedSeconds, classes: results)
    }

    /// One class's events sorted by start (the longer first of two starting together), and the
    /// units its event scores count: those events merged when the class merges (snoring
    /// episodes), else the events themselves. The longer first, so that a point label at another
    /// event's start joins it at a merge gap of 0 whichever line of the file comes first.
    static func scoringUnits(_ events: [ReferenceEvent], of eventClass: EventClass,
                             settings: ClassProtocol) -> (events: [ReferenceEvent], units: [ReferenceEvent]) {
        let sorted = events.filter { $0.eventClass == eventClass }.sorted { ($0.start, -$0.end) < ($1.start, -$1.end) }
        return (sorted, settings.mergeGap.map { merged(sorted, gap: $0) } ?? sorted)
    }

    /// The seconds `events` (sorted by start) cover, overlaps counted once; events with times
    /// that are not finite are left out.
    static func coveredSeconds(_ events: [ReferenceEvent]) -> Double {
        var total = 0.0, covered = -Double.infinity
        for e in events where e.start.isFinite && e.end.isFinite && e.end > e.start {
            let from = max(e.start, covered)
            if e.end > from { total += e.end - from }
            covered = max(covered, e.end)
        }
        return total
    }

    /// How near two times in seconds (or segment positions) count as the same: decimal times in a
    /// file are not exact in binary, so 16.4 − 6.4 is 9.999999999999998, which is not 10 s apart.
    static let sameTime = 1e-6

    /// Joins events (sorted by start) whose gap to the running group is below `gap` seconds;
    /// a gap of `gap` give or take `sameTime` is not below it.
    static func merged(_ events: [ReferenceEvent], gap: Double) -> [ReferenceEvent] {
        var out: [ReferenceEvent] = []
        for e in events {
            if let last = out.last, e.start - last.end < gap - sameTime {
                out[out.count - 1].end = max(last.end, e.end)
            } else {
                out.append(e)
            }
        }
        return out
    }

    /// Event-based counts: a maximum one-to-one matching over pairs that satisfy the onset collar
    /// and the offset rule, so one reference never takes two found events.
    static func eventScores(reference: [ReferenceEvent], found: [ReferenceEvent],
                            settings: ClassProtocol) -> DetectionScores {
        let matches = eventMatching(reference: reference, found: found, settings: settings).count { $0 != nil }
        return DetectionScores(truePositives: matches, falsePositives: found.count - matches,
                               falseNegatives: reference.count - matches)
    }

    /// The found event each reference is matched to in the event-based scoring (nil: missed).
    static func eventMatching(reference: [ReferenceEvent], found: [ReferenceEvent],
                              settings: ClassProtocol) -> [Int?] {
        let foundStarts = found.map(\.start)
        let adjacency: [[Int]] = reference.map { r in
            let offsetTolerance = max(settings.collar, settings.offsetShareOfLength * r.duration)
            var candidates: [Int] = []
            // Onsets compared as sed_eval compares them, |found - reference| <= collar: at exactly
            // the collar apart in decimal times (0.58 and 1.08) the rounding must go its way. The
            // scan's bounds are wide of that by a microsecond, so no such pair falls outside them.
            let slack = 1e-6
            var j = lowerBound(foundStarts, r.start - settings.collar - slack)
            while j < found.count, found[j].start <= r.start + settings.collar + slack {
                if abs(found[j].start - r.start) <= settings.collar, abs(found[j].end - r.end) <= offsetTolerance {
                    candidates.append(j)
                }
                j += 1
            }
            return candidates
        }
        return maximumMatching(adjacency: adjacency, rightCount: found.count).map { $0 < 0 ? nil : $0 }
    }

    /// Segment-based counts: a segment is active for a side when any of its events overlaps it.
    static func segmentScores(reference: [ReferenceEvent], found: [ReferenceEvent], duration: Double,
                              segmentLength: Double) -> DetectionScores {
        guard segmentLength.isFinite, segmentLength > 0 else { return DetectionScores(truePositives: 0, falsePositives: 0, falseNegatives: 0) }
        // The timeline runs to the recording's end or the last event, whichever is later, but no
        // more than a day past the recording, and the recording is no longer than a night may
        // be: absurd times in a file, or a duration in the wrong unit, must not allocate the world.
        let safeDuration = duration.isFinite ? min(max(0, duration), Session.longestPlausible) : 0
        let lastEnd = (reference + found).map(\.end).filter(\.isFinite).max() ?? 0
        let timeline = min(max(safeDuration, lastEnd), safeDuration + 86_400)
        let count = Int((timeline / segmentLength).rounded(.up))
        guard count > 0 else { return DetectionScores(truePositives: 0, falsePositives: 0, falseNegatives: 0) }
        /// Where `seconds` falls in segments, a boundary taken as one within `sameTime`: with
        /// 0.2 s segments 0.6 / 0.2 is 2.9999999999999996, which put an event starting at 0.6 s
        /// into the segment before.
        func position(_ seconds: Double) -> Double {
            let q = seconds / segmentLength
            return abs(q - q.rounded()) < sameTime ? q.rounded() : q
        }
        func segment(_ seconds: Double, _ rule: FloatingPointRoundingRule) -> Int {
            Int(min(Double(count), max(0, position(seconds).rounded(rule))))
        }
        func activity(_ events: [ReferenceEvent]) -> [Bool] {
            var active = [Bool](repeating: false, count: count)
            for e in events where e.start.isFinite && e.end.isFinite {
                // The segments from the one its start is in to the one its end is in, as
                // sed_eval's event roll: an event that ends exactly on a boundary does not touch
                // the next segment, and one of no length on a boundary touches none.
                guard position(e.end).rounded(.up) > position(e.start).rounded(.down) else { continue }
                // One past the timeline (a day after the recording) still counts, in its last segment.
                let first = min(count - 1, segment(e.start, .down))
                for i in first..<max(first + 1, segment(e.end, .up)) { active[i] = true }
            }
            return active
        }
        let ref = activity(reference), hyp = activity(found)
        var tp = 0, fp = 0, fn = 0
        for i in 0..<count {
            switch (ref[i], hyp[i]) {
            case (true, true): tp += 1
            case (false, true): fp += 1
            case (true, false): fn += 1
            case (false, false): break
            }
        }
        return DetectionScores(truePositives: tp, falsePositives: fp, falseNegatives: fn)
    }

    /// First index whose value is >= `value` in an ascending array.
    private static func lowerBound(_ values: [Double], _ value: Double) -> Int {
        var low = 0, high = values.count
        while low < high {
            let mid = (low + high) / 2
            if values[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// A maximum bipartite matching, as the right vertex of each left one (−1: unmatched).
    /// Augmenting paths are found breadth-first, so deep chains need no recursion.
    static func maximumMatching(adjacency: [[Int]], rightCount: Int) -> [Int] {
        var matchOfRight = [Int](repeating: -1, count: rightCount)
        var matchOfLeft = [Int](repeating: -1, count: adjacency.count)
        var visitedBy = [Int](repeating: -1, count: rightCount)
        var reachedFrom = [Int](repeating: -1, count: rightCount)
        var queue: [Int] = []
        for root in adjacency.indices where !adjacency[root].isEmpty {
            queue.removeAll(keepingCapacity: true)
            queue.append(root)
            var head = 0
            var freeRight = -1
            search: while head < queue.count {
                let left = queue[head]
                head += 1
                for right in adjacency[left] where visitedBy[right] != root {
                    visitedBy[right] = root
                    reachedFrom[right] = left
                    if matchOfRight[right] < 0 { freeRight = right; break search }
                    queue.append(matchOfRight[right])
                }
            }
            guard freeRight >= 0 else { continue }
            var right = freeRight
            while right >= 0 {
                let left = reachedFrom[right]
                let previous = matchOfLeft[left]
                matchOfLeft[left] = right
                matchOfRight[right] = left
                right = previous
            }
        }
        return matchOfLeft
    }
}
