import Foundation

/// Live mode's detection, portable: fed 16 kHz mono samples as they arrive, in blocks of any
/// length, it classifies 50 %-overlapping windows and runs Snore Detector's hysteresis
/// (`LiveEpisodeSegmenter`), saying for each window what it heard and when a snoring episode
/// starts (backdated) or ends.
///
/// It keeps one window of audio, the last half minute of the 50 ms frames' band levels for
/// bridging the snores the classifier misses (`SnoreBandBursts`), and the last half hour of
/// their loudness for a classifier that reads the room's noise floor (the heuristic), given it
/// every half minute: the pre-roll and the clips are the caller's (`somni record --mode live`
/// keeps both; an app that only counts episodes keeps neither). Allocation-free per window
/// apart from the segmenter's list of changes.
public final class LiveSnoreDetector<Classifier: SoundClassifier> {
    /// What one window heard. Times are seconds from the first sample fed.
    public struct Window: Sendable {
        public var start: Double
        public var end: Double
        /// The window's end as a count of samples fed.
        public var endSample: Int
        /// The highest confidence of a snoring label ("snoring", "snort").
        public var snoring: Float
        /// The top label and its confidence, for a live display.
        public var top: LabelConfidence
        /// The highest snoring confidence of the run of windows at the threshold this window
        /// belongs to (0 outside one): what an episode that starts here is given as its peak.
        public var runPeak: Float
        /// An episode started (at its backdated start) or ended at this window.
        public var changes: [LiveEpisodeSegmenter.Change]
        /// The open episode took this window as one of its snoring windows (it started or went
        /// on with it): the episode's end is now this window's.
        public var isEpisodeSnoring: Bool
    }

    public private(set) var classifier: Classifier
    public private(set) var segmenter: LiveEpisodeSegmenter
    private let snoringLabels: [Int]
    private let history: UnsafeMutableBufferPointer<Float>
    private let scores: UnsafeMutableBufferPointer<Float>
    private var filled = 0
    private var nextWindowEnd: Int
    private var runPeak: Float = 0
    private let features = FeatureExtractor(keepsZeroCrossingRate: false)
    private var bursts: SnoreBandBursts
    /// Frames of `features` already passed to `bursts`.
    private var framesHeard = 0
    /// The last 30 min of the heard stream's 10 Hz envelope, for the classifier's noise floor (the
    /// morning pass gives it the whole night's; live, only the night so far is known).
    private var recentEnvelope: [Float] = []

    /// The segmenter is the one `settings` describe, its backdating bounded so a pre-roll of
    /// `settings.preRoll` seconds still holds the episode's start and its clip's lead-in.
    public init(classifier: Classifier, settings: LiveEpisodeSettings = LiveEpisodeSettings()) throws {
        let length = classifier.windowLength
        guard length > 0 else { throw SomniError(.badModel, "the classifier's window is empty") }
        snoringLabels = classifier.labels.indices.filter {
            ClassSets.eventClass(forLabel: classifier.labels[$0]) == .snoring
        }
        guard !snoringLabels.isEmpty else {
            throw SomniError(.badModel, "the classifier \(classifier.name) has no snoring label (labels: \(classifier.labels.joined(separator: ", ")))")
        }
        self.classifier = classifier
        segmenter = LiveEpisodeSegmenter(threshold: settings.threshold, windowsToStart: settings.windowsToStart,
                                         hangover: settings.endAfter,
                                         continuation: settings.threshold * settings.continuationShare,
                                         leadIn: settings.threshold * settings.leadInShare,
                                         lookBack: max(0, settings.preRoll - LiveEpisodeSettings.clipLeadIn),
                                         bridgeReach: settings.bridgeReach)
        // Bursts are kept as far back as a bridge can reach from the last snoring window.
        bursts = SnoreBandBursts(memory: settings.bridgeReach + settings.endAfter)
        history = .allocate(capacity: length)
        history.initialize(repeating: 0)
        scores = .allocate(capacity: classifier.labels.count)
        scores.initialize(repeating: 0)
        nextWindowEnd = length
    }

    deinit { history.deallocate(); scores.deallocate() }

    /// Windows advance by half a window (7,800 samples for the 0.975 s window).
    public var hop: Int { max(1, history.count / 2) }

    /// Takes the next samples and calls `body` for each window they complete, in time order.
    public func feed(_ samples: UnsafeBufferPointer<Float>, _ body: (Window) throws -> Void) rethrows {
        let length = history.count
        var offset = 0
        while offset < samples.count {
            let n = min(length - filled, samples.count - offset)
            hearBands(UnsafeBufferPointer(rebasing: samples[offset..<(offset + n)]))
            _ = UnsafeMutableBufferPointer(rebasing: history[filled..<(filled + n)])
                .initialize(from: UnsafeBufferPointer(rebasing: samples[offset..<(offset + n)]))
            filled += n
            offset += n
            guard filled == length else { continue }
            try body(classifyWindow())
            // Keep the window's second half as the next one's first.
            let kept = length - hop
            history.baseAddress!.update(from: history.baseAddress! + hop, count: kept)
            filled = kept
            nextWindowEnd += hop
        }
    }

    /// Ends the open episode, if any, as the stream ends. The detector is then done with that
    /// stream: samples fed after it continue its clock, so a new stream takes a new detector.
    public func finish() -> SnoringEpisode? { segmenter.finish() }

    /// Takes the samples' band levels in, frame by frame; every half minute gives the classifier
    /// the floor of what it heard and forgets the frames.
    private func hearBands(_ samples: UnsafeBufferPointer<Float>) {
        features.process(samples)
        do {
            let frames = features.frames
            while framesHeard < frames.count {
                bursts.feed(low: frames.low[framesHeard], mid: frames.mid[framesHeard])
                framesHeard += 1
            }
        }
        if framesHeard >= Int(30 * FrameTrack.rate) {
            let fresh = features.takeNewEnvelopeValues()
            if classifier.readsNoiseFloor {
                recentEnvelope += fresh
                let keep = Int(30 * 60 * FeatureExtractor.envelopeRate)
                if recentEnvelope.count > keep { recentEnvelope.removeFirst(recentEnvelope.count - keep) }
                classifier.prepare(noiseFloor: SilenceGate.roomFloor(recentEnvelope, SilenceGate.floorPercentile))
            }
            let before = features.frames.count
            features.forgetTakenFrames()
            framesHeard -= before - features.frames.count
        }
    }

    private func classifyWindow() -> Window {
        classifier.classify(UnsafeBufferPointer(history), scores: scores)
        var snoring: Float = 0
        for i in snoringLabels { snoring = max(snoring, scores[i]) }
        var best = 0
        for i in scores.indices where scores[i] > scores[best] { best = i }
        runPeak = snoring >= segmenter.threshold ? max(runPeak, snoring) : 0
        let rate = Double(analysisSampleRate)
        let start = Double(nextWindowEnd - history.count) / rate, end = Double(nextWindowEnd) / rate
        let changes = segmenter.feed(WindowLabels(start: start, end: end,
                                                  ranked: [LabelConfidence(label: "snoring", confidence: snoring)]),
                                     chainEnd: { bursts.chainEnd(from: $0, gap: $1) })
        return Window(start: start, end: end, endSample: nextWindowEnd, snoring: snoring,
                      top: LabelConfidence(label: classifier.labels[best], confidence: scores[best]),
                      runPeak: runPeak, changes: changes, isEpisodeSnoring: segmenter.openEpisode?.end == end)
    }
}
