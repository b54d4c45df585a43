import Foundation

/// Snore Detector's tuning knobs for live episodes (the hysteresis itself is
/// `LiveEpisodeSegmenter`; the recorder adds the pre-roll).
public struct LiveEpisodeSettings: Sendable, Equatable, Codable {
    /// A window is sure snoring at this confidence; an episode needs one (see `continuationShare`).
    public var threshold: Float
    /// Consecutive snoring windows that start an episode (debounces one-off false positives).
    public var windowsToStart: Int
    /// Seconds without a positive window that end an episode (merges snores 3–6 s apart).
    public var endAfter: Double
    /// Seconds of audio kept in memory before a trigger: the clip reaches back into it to the
    /// episode's backdated start (less one second of lead-in, as the morning clips have).
    public var preRoll: Double
    /// Share of `threshold` that counts as snoring beside a sure window: the second window of a
    /// trigger and the windows that keep an open episode going. The morning pass's hysteresis
    /// (`EventDetector.snoringContinuationShare`), so live and morning agree on where a train of
    /// snores begins and ends.
    public var continuationShare: Float
    /// Share of `threshold` that an earlier window needs for a trigger's start to be backdated
    /// over it: the morning pass's lead-in (`EventDetector.snoringLeadInShare`).
    public var leadInShare: Float
    /// Seconds after an episode's last snoring window that the snore band's bursts may carry it
    /// to the next one (`LiveEpisodeSegmenter.bridgeReach`); 0 ends every episode `endAfter`
    /// after its last snoring window, as Snore Detector does.
    public var bridgeReach: Double

    /// Seconds of audio before an episode's start and after its last snoring window in its clip,
    /// as the morning clips have.
    public static let clipLeadIn = 1.0

    public init(threshold: Float = 0.6, windowsToStart: Int = 2, endAfter: Double = 10,
                preRoll: Double = 10, continuationShare: Float = EventDetector.snoringContinuationShare,
                leadInShare: Float = EventDetector.snoringLeadInShare, bridgeReach: Double = 60) {
        self.threshold = threshold; self.windowsToStart = windowsToStart; self.endAfter = endAfter
        self.preRoll = preRoll; self.continuationShare = continuationShare; self.leadInShare = leadInShare
        self.bridgeReach = bridgeReach
    }
}

/// One live episode. Times are seconds from the start of the recording.
public struct LiveEpisode: Sendable, Equatable, Codable {
    /// Start of the first window of the triggering run, backdated over the quieter snoring windows
    /// chained just before it (within the pre-roll).
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
