import Foundation

/// Live mode's snoring segmenter (Snore Detector's hysteresis): fed classifier windows as they
/// arrive, it opens an episode after `windowsToStart` consecutive snoring windows and closes it
/// once `hangover` seconds pass without one. The start is backdated to the first window that
/// triggered it (the recorder's 10 s pre-roll holds that audio); the end is the last snoring
/// window's end, not where the wait ran out.
public struct LiveEpisodeSegmenter: Sendable {
    public enum Change: Sendable, Equatable {
        /// An episode opened; `at` is its backdated start.
        case started(at: Double)
        /// An episode closed. `eventCount` counts runs of consecutive snoring windows (≈ snores).
        case ended(SnoringEpisode)
    }

    public let threshold: Float
    public let windowsToStart: Int
    public let hangover: Double

    private var consecutive = 0
    private var candidateStart = 0.0
    private var open: SnoringEpisode?
    private var lastPositiveEnd = 0.0
    private var previousWasPositive = false

    public init(threshold: Float = 0.6, windowsToStart: Int = 2, hangover: Double = 10) {
        self.threshold = threshold
        self.windowsToStart = max(windowsToStart, 1)
        self.hangover = hangover
    }

    public var isInEpisode: Bool { open != nil }

    /// A window counts when any snoring-class label in it reaches `threshold`.
    public func isSnoring(_ window: WindowLabels) -> Bool {
        window.ranked.contains { ClassSets.eventClass(forLabel: $0.label) == .snoring && $0.confidence >= threshold }
    }

    /// Takes the next window (in time order) and says what changed, if anything.
    public mutating func feed(_ window: WindowLabels) -> [Change] {
        var changes: [Change] = []
        // Checked on every window, so a gap in the stream (no windows at all) also ends it.
        if let episode = open, window.start - lastPositiveEnd >= hangover {
            changes.append(.ended(episode))
            open = nil
        }
        guard isSnoring(window) else {
            consecutive = 0
            previousWasPositive = false
            return changes
        }
        if var episode = open {
            if !previousWasPositive { episode.eventCount += 1 }
            episode.end = max(episode.end, window.end)
            open = episode
        } else {
            if consecutive == 0 { candidateStart = window.start }
            consecutive += 1
            if consecutive >= windowsToStart {
                open = SnoringEpisode(start: candidateStart, end: window.end, eventCount: 1)
                changes.append(.started(at: candidateStart))
            }
        }
        lastPositiveEnd = window.end
        previousWasPositive = true
        return changes
    }

    /// Closes an open episode at the end of the stream.
    public mutating func finish() -> SnoringEpisode? {
        defer { open = nil; consecutive = 0; previousWasPositive = false }
        return open
    }
}
