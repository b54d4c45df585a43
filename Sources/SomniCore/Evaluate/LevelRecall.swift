import Foundation

/// Recall of one class by how far its reference events rise above the background around them:
/// where a detector stops hearing, which a single F1 hides. A night's F1 depends as much on the
/// levels it was made at as on the detector.
public struct LevelRecall: Codable, Sendable, Equatable {
    public struct Bin: Codable, Sendable, Equatable {
        /// Rise in dB, from (inclusive) to (exclusive); nil = unbounded on that side.
        public var fromDB: Double?
        public var toDB: Double?
        public var referenceCount: Int
        /// References matched by a found event in the event-based scoring.
        public var foundCount: Int
        public var recall: Double? { referenceCount > 0 ? Double(foundCount) / Double(referenceCount) : nil }
    }

    public var eventClass: EventClass
    /// The band the rise is measured in (Hz): the snore band for snoring, the voice band for talk
    /// and coughs, as `BoundaryRefiner` reads them.
    public var bandHz: ClosedRange<Double>
    public var bins: [Bin]
    /// For a class scored as merged units (snoring as episodes), the same units binned by the
    /// rise of their first reference event instead of the median of all of them. An episode is
    /// matched only when its onset is found within the collar, so its first snore's level is
    /// what decides it: over a fan, trains whose first snore rises a few dB are found a
    /// breathing period late although their other snores are heard. nil for a class scored one
    /// event at a time.
    public var firstEventBins: [Bin]?
    /// Scored references (episodes for snoring) that lie past the end of the audio: not measured.
    public var unmeasuredCount: Int

    /// Bin edges in dB: under 3, 3–6, 6–9, 9–12, 12–18, 18 and over.
    public static let edges: [Double] = [3, 6, 9, 12, 18]
    /// Background: event-free frames this many seconds either side of the reference.
    static let backgroundReach = 60.0
    /// Fewer event-free frames than this nearby, and the whole recording's are used.
    static let minimumBackgroundFrames = 20
    /// The loudest this many 50 ms frames (250 ms) stand for an event's level.
    static let peakFrames = 5

    /// A bin's column heading: "< 3 dB", "3-6 dB", ">= 18 dB".
    static func heading(fromDB: Double?, toDB: Double?) -> String {
        func dB(_ v: Double) -> String { String(format: "%g", v) }
        switch (fromDB, toDB) {
        case (nil, let to?): return "< \(dB(to)) dB"
        case (let from?, nil): return ">= \(dB(from)) dB"
        case (let from?, let to?): return "\(dB(from))-\(dB(to)) dB"
        case (nil, nil): return "all"
        }
    }

    /// A line of a level table: class and band left-aligned, the cells right-aligned in `cellWidth`.
    static func tableRow(_ first: String, _ second: String, _ cells: [String], cellWidth: Int) -> String {
        first.padding(toLength: 11, withPad: " ", startingAt: 0) + second.padding(toLength: 12, withPad: " ", startingAt: 0)
            + cells.map { String(repeating: " ", count: max(0, cellWidth - $0.count)) + $0 }.joined()
    }

    /// A band's label in a level table: "40-400 Hz".
    static func bandLabel(_ hz: ClosedRange<Double>) -> String { String(format: "%g-%g Hz", hz.lowerBound, hz.upperBound) }

    static func emptyBins() -> [Bin] {
        (0...edges.count).map { i in
            Bin(fromDB: i == 0 ? nil : edges[i - 1], toDB: i < edges.count ? edges[i] : nil, referenceCount: 0, foundCount: 0)
        }
    }
}

/// Each frame's power in one class's band, which frames a reference event touches, and from those
/// the rise of an event over the background around it.
struct BandLevels {
    let power: [Double]
    let busy: [Bool]
    let recordingBackground: Double

    init(_ eventClass: EventClass, reference: [ReferenceEvent], frames: FrameTrack) {
        power = BoundaryRefiner.band(for: eventClass, in: frames).map { Double($0) * Double($0) }
        var busy = [Bool](repeating: false, count: frames.count)
        for e in reference where e.start.isFinite && e.end.isFinite {
            for i in Self.frameRange(e, count: frames.count) { busy[i] = true }
        }
        self.busy = busy
        recordingBackground = Evaluator.median(zip(power, busy).filter { !$0.1 }.map(\.0)) ?? 0
    }

    static func frameRange(_ e: ReferenceEvent, count: Int) -> Range<Int> {
        let rate = FrameTrack.rate
        // Clamped before the conversion: a reference may say 1e18 s, which no Int holds.
        let first = TimeRange.index(e.start * rate, .down, limit: count)
        let end = min(count, max(first + 1, TimeRange.index(e.end * rate, .up, limit: count)))
        return first..<max(first, end)
    }

    func frameRange(_ e: ReferenceEvent) -> Range<Int> { Self.frameRange(e, count: power.count) }

    /// The median power of the event-free frames within 60 s of `span`, or of the whole
    /// recording's when there are too few.
    func background(around span: Range<Int>) -> Double {
        let reach = Int(LevelRecall.backgroundReach * FrameTrack.rate)
        let around = max(0, span.lowerBound - reach)..<min(power.count, span.upperBound + reach)
        let nearby = around.filter { !busy[$0] }.map { power[$0] }
        return nearby.count >= LevelRecall.minimumBackgroundFrames ? Evaluator.median(nearby)! : recordingBackground
    }

    /// The rise of the event's loudest 250 ms over `background`, in dB; nil past the audio's end.
    func rise(of e: ReferenceEvent, over background: Double) -> Double? {
        let range = frameRange(e)
        guard !range.isEmpty else { return nil }
        let loudest = range.map { power[$0] }.sorted().suffix(LevelRecall.peakFrames)
        return Evaluator.rise(peak: loudest.reduce(0, +) / Double(loudest.count), background: background)
    }

    /// The index of the level bin `rise` falls in.
    static func bin(of rise: Double) -> Int { LevelRecall.edges.firstIndex { rise < $0 } ?? LevelRecall.edges.count }

    /// Counts one scored reference at `rise` in `bins`, and as found when it was matched.
    static func tally(_ bins: inout [LevelRecall.Bin], rise: Double, found: Bool) {
        let bin = bin(of: rise)
        bins[bin].referenceCount += 1
        if found { bins[bin].foundCount += 1 }
    }
}

extension Evaluator {
    /// Recall by level for every class, with the scoring units and matching of `evaluate` (snoring
    /// as episodes under the default protocol). A unit's rise is the median over the reference
    /// events in it of 10·log10((P − B) / B): P the mean power of the event's loudest 250 ms in
    /// its class's band, B the median power of the frames within 60 s that no reference event of
    /// any class touches — an estimate of the event's signal-to-noise ratio in that band.
    public static func recallByLevel(reference: [ReferenceEvent], found: [ReferenceEvent], frames: FrameTrack,
                                     protocol rules: EvaluationProtocol = .somniDefault) -> [LevelRecall] {
        EventClass.allCases.map { eventClass in
            let settings = rules.settings(for: eventClass)
            let levels = BandLevels(eventClass, reference: reference, frames: frames)
            let (ref, units) = scoringUnits(reference, of: eventClass, settings: settings)
            let matching = eventMatching(reference: units, found: scoringUnits(found, of: eventClass, settings: settings).units,
                                         settings: settings)
            var bins = LevelRecall.emptyBins()
            var firstBins = settings.mergeGap == nil ? nil : LevelRecall.emptyBins()
            var unmeasured = 0
            for (unit, match) in zip(units, matching) {
                let members = ref.filter { $0.start >= unit.start && $0.end <= unit.end && !levels.frameRange($0).isEmpty }
                guard !members.isEmpty else { unmeasured += 1; continue }
                let background = levels.background(around: levels.frameRange(unit))
                // `members` keep the reference's order of time, so the first rise is the first event's.
                let rises = members.compactMap { levels.rise(of: $0, over: background) }
                BandLevels.tally(&bins, rise: median(rises)!, found: match != nil)
                if firstBins != nil { BandLevels.tally(&firstBins!, rise: rises[0], found: match != nil) }
            }
            return LevelRecall(eventClass: eventClass, bandHz: BoundaryRefiner.bandHz(for: eventClass), bins: bins,
                               firstEventBins: firstBins, unmeasuredCount: unmeasured)
        }
    }

    /// 10·log10((peak − background) / background), kept within ±120 dB: a sound no louder than
    /// its background reads −30 dB, digital silence around it reads very high.
    static func rise(peak: Double, background: Double) -> Double {
        let floor = max(background, 1e-12)
        let value = 10 * log10(max(peak - background, floor * 1e-3) / floor)
        return min(max(value, -120), 120)
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}
