import Foundation

/// How well a classifier hears one class, window by window, before any event rule: of the
/// reference events in each level bin, how many a window overlapping them scores at or above a
/// threshold for their class; and how often a window far from every reference event does so.
/// An event night's recall mixes what the classifier hears with what the rules keep; this
/// separates the two (a faint snore no window hears cannot be found by any rule).
public struct ClassifierHearing: Codable, Sendable, Equatable {
    public struct Bin: Codable, Sendable, Equatable {
        /// Rise in dB, from (inclusive) to (exclusive); nil = unbounded on that side.
        public var fromDB: Double?
        public var toDB: Double?
        public var referenceCount: Int
        /// References a window scored at or above the threshold, among the windows that hold half
        /// of the event or are half filled by it.
        public var heardCount: Int
        public var recall: Double? { referenceCount > 0 ? Double(heardCount) / Double(referenceCount) : nil }
    }

    public var eventClass: EventClass
    /// The band each reference's rise is measured in (Hz), as for `LevelRecall`.
    public var bandHz: ClosedRange<Double>
    public var threshold: Float
    /// Every reference event of the class on its own (snores one by one, not as episodes).
    public var bins: [Bin]
    /// References past the end of the audio: not measured.
    public var unmeasuredCount: Int
    /// Windows more than `falseWindowMargin` from every reference event of any class, and how
    /// many of them scored at or above the threshold for this class.
    public var windowsAway: Int
    public var falseWindows: Int
    /// Hours of audio those windows step over (one hop each).
    public var hoursAway: Double
    public var falseWindowsPerHour: Double? { hoursAway > 0 ? Double(falseWindows) / hoursAway : nil }

    public var referenceCount: Int { bins.reduce(0) { $0 + $1.referenceCount } }
    public var heardCount: Int { bins.reduce(0) { $0 + $1.heardCount } }

    /// A window closer than this to a reference event may hold part of it: never a false window.
    public static let falseWindowMargin = 1.0
}

/// One classified window: where it lies and the classifier's score for each label.
public struct ScoredWindow: Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var scores: [Float]
    public init(start: Double, end: Double, scores: [Float]) {
        self.start = start; self.end = end; self.scores = scores
    }
}

extension Evaluator {
    /// Hearing by level for each event class the classifier has a label for (`ClassSets`); a
    /// window's score for a class is the highest of its labels'. `windows` are in time order,
    /// one hop apart; `frames` are the recording's 50 ms band levels, as for `recallByLevel`.
    public static func hearingByLevel(reference: [ReferenceEvent], windows: [ScoredWindow], labels: [String],
                                      frames: FrameTrack, threshold: Float) -> [ClassifierHearing] {
        let hop = windows.count > 1 ? windows[1].start - windows[0].start : windows.first.map { $0.end - $0.start } ?? 0
        let timed = reference.filter { $0.start.isFinite && $0.end.isFinite }.sorted { $0.start < $1.start }
        let margin = ClassifierHearing.falseWindowMargin
        // Windows far from every reference, found by walking both lists in time order.
        var away = [Bool](repeating: true, count: windows.count)
        var first = 0, latestEnd = -Double.infinity
        var ends: [Double] = []  // running maximum of the ends, so events inside longer ones are covered
        for e in timed { latestEnd = max(latestEnd, e.end); ends.append(latestEnd) }
        for (i, w) in windows.enumerated() {
            while first < timed.count, ends[first] + margin <= w.start { first += 1 }
            if first < timed.count, timed[first].start - margin < w.end { away[i] = false }
        }
        let windowsAway = away.filter { $0 }.count

        return EventClass.allCases.compactMap { eventClass in
            let columns = labels.indices.filter { ClassSets.eventClass(forLabel: labels[$0]) == eventClass }
            guard !columns.isEmpty else { return nil }
            func score(_ w: ScoredWindow) -> Float { columns.reduce(-Float.infinity) { Swift.max($0, w.scores[$1]) } }

            let levels = BandLevels(eventClass, reference: reference, frames: frames)
            var bins = LevelRecall.emptyBins().map { ClassifierHearing.Bin(fromDB: $0.fromDB, toDB: $0.toDB, referenceCount: 0, heardCount: 0) }
            var unmeasured = 0
            var firstWindow = 0
            for e in timed where e.eventClass == eventClass {
                guard let rise = levels.rise(of: e, over: levels.background(around: levels.frameRange(e))) else {
                    unmeasured += 1; continue
                }
                while firstWindow < windows.count, windows[firstWindow].end <= e.start { firstWindow += 1 }
                // A window hears an event that fills half of it, or half of which it holds: one that
                // only grazes it may hold the next cough of a bout instead.
                var best: Float = 0, i = firstWindow
                while i < windows.count, windows[i].start < e.end {
                    let w = windows[i]
                    let overlap = min(w.end, e.end) - max(w.start, e.start)
                    if overlap >= 0.5 * min(e.end - e.start, w.end - w.start) { best = max(best, score(w)) }
                    i += 1
                }
                let bin = BandLevels.bin(of: rise)
                bins[bin].referenceCount += 1
                if best >= threshold { bins[bin].heardCount += 1 }
            }
            let falseWindows = zip(windows, away).filter { $0.1 && score($0.0) >= threshold }.count
            return ClassifierHearing(eventClass: eventClass, bandHz: BoundaryRefiner.bandHz(for: eventClass), threshold: threshold,
                                     bins: bins, unmeasuredCount: unmeasured, windowsAway: windowsAway,
                                     falseWindows: falseWindows, hoursAway: Double(windowsAway) * hop / 3600)
        }
    }
}

extension [ClassifierHearing] {
    /// A table a person reads: heard / reference per level bin, a line per class.
    public func text() -> String {
        guard let firstClass = first else { return "The classifier has no snoring, speech or cough label to measure.\n" }
        let names = firstClass.bins.map { LevelRecall.heading(fromDB: $0.fromDB, toDB: $0.toDB) } + ["all", "false/h"]
        func row(_ first: String, _ second: String, _ rest: [String]) -> String {
            LevelRecall.tableRow(first, second, rest, cellWidth: 11)
        }
        var lines = [String(format: "Classifier hearing: reference events some window scores >= %.2f for, by each event's rise", firstClass.threshold),
                     "over its background in its band (events one by one, snores too); false/h: windows that reach it",
                     String(format: "more than %g s from every reference event, per hour of such audio (%.1f h)",
                            ClassifierHearing.falseWindowMargin, firstClass.hoursAway),
                     row("class", "band", names)]
        for h in self {
            let perHour = h.falseWindowsPerHour.map { String(format: "%.2f", $0) } ?? "-"
            var line = row(h.eventClass.rawValue, LevelRecall.bandLabel(h.bandHz),
                           h.bins.map { "\($0.heardCount)/\($0.referenceCount)" } + ["\(h.heardCount)/\(h.referenceCount)", perHour])
            if h.unmeasuredCount > 0 { line += "  (\(h.unmeasuredCount) past the audio's end)" }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
