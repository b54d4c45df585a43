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
}

extension Evaluator {
    /// Recall by level for every class, with the scoring units and matching of `evaluate` (snoring
    /// as episodes under the default protocol). A unit's rise is the median over the reference
    /// events in it of 10·log10((P − B) / B): P the mean power of the event's loudest 250 ms in
    /// its class's band, B the median power of the frames within 60 s that no reference event of
    /// any class touches — an estimate of the event's signal-to-noise ratio in that band.
    public static func recallByLevel(reference: [ReferenceEvent], found: [ReferenceEvent], frames: FrameTrack,
                                     protocol rules: EvaluationProtocol = .somniDefault) -> [LevelRecall] {
        let rate = FrameTrack.rate
        func frameRange(_ e: ReferenceEvent) -> Range<Int> {
            let first = max(0, Int((e.start * rate).rounded(.down)))
            let end = min(frames.count, max(first + 1, Int((e.end * rate).rounded(.up))))
            return first..<max(first, end)
        }
        var busy = [Bool](repeating: false, count: frames.count)
        for e in reference where e.start.isFinite && e.end.isFinite {
            for i in frameRange(e) { busy[i] = true }
        }
        return EventClass.allCases.map { eventClass in
            let settings = rules.settings(for: eventClass)
            let hz = BoundaryRefiner.bandHz(for: eventClass)
            let power = BoundaryRefiner.band(for: eventClass, in: frames).map { Double($0) * Double($0) }
            let quietPower = zip(power, busy).filter { !$0.1 }.map(\.0)
            let recordingBackground = median(quietPower) ?? 0

            let (ref, units) = scoringUnits(reference, of: eventClass, settings: settings)
            let matching = eventMatching(reference: units, found: scoringUnits(found, of: eventClass, settings: settings).units,
                                         settings: settings)
            var bins = (0...LevelRecall.edges.count).map { i in
                LevelRecall.Bin(fromDB: i == 0 ? nil : LevelRecall.edges[i - 1],
                                toDB: i < LevelRecall.edges.count ? LevelRecall.edges[i] : nil,
                                referenceCount: 0, foundCount: 0)
            }
            var unmeasured = 0
            let reach = Int(LevelRecall.backgroundReach * rate)
            for (unit, match) in zip(units, matching) {
                let members = ref.filter { $0.start >= unit.start && $0.end <= unit.end && !frameRange($0).isEmpty }
                guard !members.isEmpty else { unmeasured += 1; continue }
                let span = frameRange(unit)
                let around = max(0, span.lowerBound - reach)..<min(frames.count, span.upperBound + reach)
                let nearby = around.filter { !busy[$0] }.map { power[$0] }
                let background = nearby.count >= LevelRecall.minimumBackgroundFrames ? median(nearby)! : recordingBackground
                let rises = members.map { e in
                    let loudest = frameRange(e).map { power[$0] }.sorted().suffix(LevelRecall.peakFrames)
                    return rise(peak: loudest.reduce(0, +) / Double(loudest.count), background: background)
                }
                let level = median(rises)!
                let bin = LevelRecall.edges.firstIndex { level < $0 } ?? LevelRecall.edges.count
                bins[bin].referenceCount += 1
                if match != nil { bins[bin].foundCount += 1 }
            }
            return LevelRecall(eventClass: eventClass, bandHz: hz, bins: bins, unmeasuredCount: unmeasured)
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
