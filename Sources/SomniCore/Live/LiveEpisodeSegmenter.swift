import Foundation

/// Snore Detector's tuning knobs for live episodes.
public struct LiveEpisodeSettings: Sendable, Equatable, Codable {
    /// A window counts as positive when its target confidence is at least this.
    public var threshold: Float
    /// Consecutive positive windows that start an episode (debounces one-off false positives).
    public var windowsToStart: Int
    /// Seconds without a positive window that end an episode (merges snores 3–6 s apart).
    public var endAfter: Double
    /// Seconds of audio kept in memory before a trigger and written into the clip.
    public var preRoll: Double
    /// Length of one classifier window in seconds.
    public var windowDuration: Double

    public init(threshold: Float = 0.6, windowsToStart: Int = 2, endAfter: Double = 10,
                preRoll: Double = 10, windowDuration: Double = Double(classifierWindowLength) / Double(analysisSampleRate)) {
        self.threshold = threshold; self.windowsToStart = windowsToStart; self.endAfter = endAfter
        self.preRoll = preRoll; self.windowDuration = windowDuration
    }
}

/// One live episode. Times are seconds from the start of the recording.
public struct LiveEpisode: Sendable, Equatable, Codable {
    /// Start of the first window of the triggering run (backdated to cover the trigger windows).
    public var start: Double
    /// End of the last positive window.
    public var end: Double
    public var peakConfidence: Double
    public var positiveWindows: Int

    public init(start: Double, end: Double, peakConfidence: Double, positiveWindows: Int) {
        self.start = start; self.end = end; self.peakConfidence = peakConfidence
        self.positiveWindows = positiveWindows
    }
}

/// Hysteresis on a stream of window confidences: an episode starts after `windowsToStart`
/// consecutive positive windows and ends `endAfter` seconds after its last positive window.
///
/// Fed one window at a time in order; it never looks back, so it runs on a live stream.
public struct LiveEpisodeSegmenter: Sendable {
    public enum Change: Sendable, Equatable {
        /// An episode began; `end` is the end of the triggering window.
        case started(LiveEpisode)
        /// A positive window inside the open episode moved its end.
        case extended(LiveEpisode)
        /// The episode is over (its end is the last positive window's end).
        case ended(LiveEpisode)
    }

    public let settings: LiveEpisodeSettings
    /// The open episode, if any.
    public private(set) var current: LiveEpisode?
    private var runStart = 0.0
    private var runLength = 0
    private var runPeak: Float = 0

    public init(settings: LiveEpisodeSettings = LiveEpisodeSettings()) { self.settings = settings }

    /// Adds the window starting at `windowStart` seconds; windows must come in time order.
    public mutating func add(windowStart: Double, confidence: Float) -> [Change] {
        let windowEnd = windowStart + settings.windowDuration
        let positive = confidence >= settings.threshold
        var changes: [Change] = []
        if var episode = current {
            if positive && windowStart - episode.end < settings.endAfter {
                episode.end = windowEnd
                episode.peakConfidence = max(episode.peakConfidence, Double(confidence))
                episode.positiveWindows += 1
                current = episode
                return [.extended(episode)]
            }
            guard positive || windowEnd - episode.end >= settings.endAfter else { return [] }
            current = nil
            runLength = 0
            changes.append(.ended(episode))
        }
        guard positive else {
            runLength = 0
            return changes
        }
        if runLength == 0 { runStart = windowStart; runPeak = 0 }
        runLength += 1
        runPeak = max(runPeak, confidence)
        if runLength >= settings.windowsToStart {
            let episode = LiveEpisode(start: runStart, end: windowEnd, peakConfidence: Double(runPeak),
                                      positiveWindows: runLength)
            current = episode
            runLength = 0
            changes.append(.started(episode))
        }
        return changes
    }

    /// Ends the stream: returns the open episode, if any, closed at its last positive window.
    public mutating func finish() -> LiveEpisode? {
        defer { current = nil; runLength = 0 }
        return current
    }
}
