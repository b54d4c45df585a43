import Foundation

/// Live mode's snoring segmenter (Snore Detector's hysteresis): fed classifier windows as they
/// arrive, it opens an episode after `windowsToStart` consecutive snoring windows and closes it
/// once `hangover` seconds pass without one. The start is backdated to the first window that
/// triggered it (the recorder's 10 s pre-roll holds that audio); the end is the last snoring
/// window's end, not where the wait ran out.
///
/// Two refinements make it agree with the morning pass (`EventDetector`), both off by default:
/// - `continuation`: a lower confidence that still counts as snoring next to a sure window, as
///   the morning pass's `snoringContinuationShare` does. The triggering run needs one window at
///   `threshold`, the others at `continuation` (a calibrated model is sure of the window holding
///   most of a snore, less of its neighbour holding the snore's edge); an open episode goes on
///   with windows at `continuation`, so one quieter snore does not split a train of snores.
///   With `continuation == threshold` (the default) every window needs the threshold.
/// - `lookBack`: when an episode starts, earlier windows at the `leadIn` level (by default the
///   continuation level), chained less than `hangover` apart, within `lookBack` seconds before
///   the trigger, move the start back (the first snores of a train are often the quiet ones, as
///   the morning pass's `snoringLeadInShare` says). Bounded so the pre-roll still holds them.
/// - `bridgeReach`: an open episode whose snoring windows stop for `hangover` or longer stays
///   open while the snore band's bursts (`SnoreBandBursts`, passed to `feed` as `chainEnd`)
///   chain on from its last snoring window, every step shorter than `hangover`, up to
///   `bridgeReach` seconds after that window: the morning pass's bridge
///   (`EventDetector.bridgedSnores`) between trains. When a sure snoring window (at
///   `threshold`) comes, the episode goes on; when the chain breaks or the reach runs out first,
///   it ends at its last snoring window, as it would have.
public struct LiveEpisodeSegmenter: Sendable {
    public enum Change: Sendable, Equatable {
        /// An episode opened; `at` is its backdated start.
        case started(at: Double)
        /// An episode closed. `eventCount` counts runs of consecutive snoring windows (≈ snores).
        case ended(SnoringEpisode)
    }

    public let threshold: Float
    public let continuation: Float
    /// The confidence an earlier window needs to move an episode's start back over it.
    public let leadIn: Float
    public let windowsToStart: Int
    public let hangover: Double
    public let lookBack: Double
    public let bridgeReach: Double

    /// The run of consecutive windows at the continuation level, and whether one reached the threshold.
    private var consecutive = 0
    private var runReachedThreshold = false
    private var candidateStart = 0.0
    private var open: SnoringEpisode?
    private var lastPositiveEnd = 0.0
    private var previousWasPositive = false
    /// Recent windows at the lead-in level (start, end), oldest first, for backdating.
    private var recent: [(start: Double, end: Double)] = []

    public init(threshold: Float = 0.6, windowsToStart: Int = 2, hangover: Double = 10,
                continuation: Float? = nil, leadIn: Float? = nil, lookBack: Double = 0, bridgeReach: Double = 0) {
        self.threshold = threshold
        self.continuation = min(continuation ?? threshold, threshold)
        self.leadIn = min(leadIn ?? self.continuation, threshold)
        self.windowsToStart = max(windowsToStart, 1)
        self.hangover = hangover
        self.lookBack = max(0, lookBack)
        self.bridgeReach = max(0, bridgeReach)
        recent.reserveCapacity(64)
    }

    public var isInEpisode: Bool { open != nil }
    /// The episode open now: its start, and its end so far (its last snoring window's).
    public var openEpisode: SnoringEpisode? { open }

    /// Takes the next window (in time order) and says what changed, if anything. `chainEnd`
    /// says how far the snore band's bursts chain on from a time (`SnoreBandBursts.chainEnd`);
    /// without it, or with `bridgeReach` 0, nothing is bridged.
    public mutating func feed(_ window: WindowLabels, chainEnd: (_ from: Double, _ gap: Double) -> Double = { from, _ in from })
        -> [Change] {
        var changes: [Change] = []
        // Checked on every window, so a gap in the stream (no windows at all) also ends it.
        if let episode = open, window.start - lastPositiveEnd >= hangover, !bridged(to: window.start, chainEnd) {
            changes.append(.ended(episode))
            open = nil
        }
        let confidence = EventDetector.snoringConfidence(window)
        if var episode = open {
            // Across a bridge only a sure window goes on: a stray one at the continuation level
            // a minute later is not the train's next snore (the morning pass bridges trains).
            let needed = window.start - lastPositiveEnd >= hangover ? threshold : continuation
            guard confidence >= needed else {
                previousWasPositive = false
                return changes
            }
            if !previousWasPositive { episode.eventCount += 1 }
            episode.end = max(episode.end, window.end)
            open = episode
        } else {
            remember(window, confidence: confidence)
            guard confidence >= continuation else {
                consecutive = 0
                runReachedThreshold = false
                previousWasPositive = false
                return changes
            }
            if consecutive == 0 { candidateStart = window.start }
            consecutive += 1
            runReachedThreshold = runReachedThreshold || confidence >= threshold
            if consecutive >= windowsToStart, runReachedThreshold {
                let start = backdated(candidateStart, triggerEnd: window.end)
                open = SnoringEpisode(start: start, end: window.end, eventCount: 1)
                changes.append(.started(at: start))
                consecutive = 0
                runReachedThreshold = false
                recent.removeAll(keepingCapacity: true)
            }
        }
        lastPositiveEnd = window.end
        previousWasPositive = true
        return changes
    }

    /// Closes an open episode at the end of the stream.
    public mutating func finish() -> SnoringEpisode? {
        defer {
            open = nil; consecutive = 0; runReachedThreshold = false; previousWasPositive = false
            recent.removeAll(keepingCapacity: true)
        }
        return open
    }

    /// Whether the snore band's bursts carry the open episode from its last snoring window to `time`.
    private func bridged(to time: Double, _ chainEnd: (Double, Double) -> Double) -> Bool {
        time - lastPositiveEnd <= bridgeReach && time - chainEnd(lastPositiveEnd, hangover) < hangover
    }

    /// Keeps the windows at the lead-in level from the last `lookBack` seconds.
    private mutating func remember(_ window: WindowLabels, confidence: Float) {
        guard lookBack > 0 else { return }
        let oldest = window.end - lookBack
        if let first = recent.first, first.start < oldest { recent.removeAll { $0.start < oldest } }
        if confidence >= leadIn { recent.append((window.start, window.end)) }
    }

    /// The trigger's start moved back over a chain of earlier lead-in-level windows.
    private func backdated(_ start: Double, triggerEnd: Double) -> Double {
        var start = start
        let limit = triggerEnd - lookBack
        for w in recent.reversed() where w.start < start {
            guard w.start >= limit else { break }
            if start - w.end < hangover { start = w.start }
        }
        return start
    }
}
