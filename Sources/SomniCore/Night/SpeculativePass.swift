import Foundation

/// Work the morning pass does while the source is still being read, in the time the reading
/// thread leaves the analysing thread idle.
///
/// Decoding a compressed night is the floor of its analysis, and the gate can only be drawn once
/// the whole envelope exists, so otherwise the second core would wait for the decoder and only
/// then classify and write clips. From the envelope so far this guesses the stretches the gate
/// will pass (a floor from the values seen, the threshold lowered a little), classifies their
/// grid windows, finds the events of what it has classified and writes the clips of those far
/// enough from either edge to be settled.
///
/// Results are kept by exact position, a window by its grid index and a clip by its sample
/// range, and the final pass takes one only where it would have asked for the same thing. A
/// night therefore never depends on what was guessed (a wrong guess costs only its time), and a
/// failure here (a full disk) stops the guessing and is left for the final pass to report.
final class SpeculativePass<Classifier: SoundClassifier> {
    /// Scores of the windows classified so far, `labelCount` per grid index (start ÷
    /// `WindowPlanner.hop`), NaN where a window was not classified: 16 bytes a window for a
    /// four-label model, while FFmpeg may still hold a compressed night's index.
    private var scores: [Float] = []
    private let labelCount: Int
    private(set) var windowsClassified = 0
    /// The sample ranges whose clips have been written (`clipURL(for:)`).
    private(set) var clips: Set<Range<Int>> = []

    private var classifier: WindowClassifier<Classifier>
    private let windowLength: Int
    private let sensitivity: Int
    private let clipEncoder: (any ClipEncoder)?
    private let clipFolder: URL
    private let snapshot: () throws -> PCM16Samples
    /// What had been read at the last plan; windows and clips are read only from it.
    private var samples: PCM16Samples?
    private var levels = LevelHistogram(), bandLevels = LevelHistogram()
    private var levelsCounted = 0
    private var stopped = false

    /// Envelope values (10 Hz) whose stretches have been planned.
    private var plannedUpTo = 0
    private var planned: Set<Int> = []
    private var windowQueue: [Int] = []
    private var windowHead = 0
    /// Seconds up to which events have been looked for and their clips queued.
    private var settledUpTo = 0.0
    private var clipQueue: [Range<Int>] = []
    private var clipHead = 0
    private var queuedClips: Set<Range<Int>> = []
    private var clipBuffer: [Float] = []

    /// Plans are made every 30 s of envelope, 10 s behind what has been read (a stretch's
    /// padding and merging reach that far), re-reading the last 20 s of the previous plan.
    private let planEvery = 300, planLag = 100, planOverlap = 200
    /// The guessed threshold is this share of floor × factor: a floor read from part of the
    /// night may be a little high, and a missed window costs the final pass more than an extra
    /// one costs here.
    private let thresholdMargin: Float = 0.8
    /// Events are looked for every 2 minutes of classified audio, with a minute of context
    /// before the new part; those ending within 30 s of the classified edge wait for the next
    /// round (the event rules look up to 10–15 s around an event).
    private let settleEvery = 120.0, settleContext = 60.0, settleMargin = 30.0

    init(classifier: Classifier, sensitivity: Int, clipEncoder: (any ClipEncoder)?, clipFolder: URL,
         expectedDuration: Double?, samples snapshot: @escaping () throws -> PCM16Samples) {
        self.classifier = WindowClassifier(classifier)
        labelCount = classifier.labels.count
        if let expectedDuration, expectedDuration.isFinite, expectedDuration > 0 {
            scores.reserveCapacity(Int(min(expectedDuration, 24 * 3600) * Double(analysisSampleRate)) / WindowPlanner.hop * labelCount)
        }
        windowLength = classifier.windowLength
        self.sensitivity = sensitivity
        self.clipEncoder = clipEncoder
        self.clipFolder = clipFolder
        self.snapshot = snapshot
    }

    /// Does one small piece of work (a few windows, one clip or one plan) and returns true, or
    /// returns false when there is nothing to do until more has been read.
    func step(features: FeatureExtractor) -> Bool {
        guard !stopped else { return false }
        do {
            if windowHead < windowQueue.count {
                try classifyQueuedWindows()
            } else if clipHead < clipQueue.count {
                try writeQueuedClip()
            } else if classifiedEdge >= settledUpTo + settleEvery {
                settle(features.frames)
            } else if features.envelope.count - planLag >= plannedUpTo + planEvery {
                try plan(features.envelope, features.frames)
            } else {
                return false
            }
            return true
        } catch {
            stopped = true
            return false
        }
    }

    /// The labels of the window at grid index `index`, if it was classified.
    func labels(atGridIndex index: Int) -> WindowLabels? {
        let first = index * labelCount
        guard index >= 0, first + labelCount <= scores.count, !scores[first].isNaN else { return nil }
        return scores.withUnsafeBufferPointer {
            classifier.labels(at: index * WindowPlanner.hop, scores: UnsafeBufferPointer(rebasing: $0[first..<first + labelCount]))
        }
    }

    /// Seconds up to which every window the plans asked for is known (a plan's last seconds may
    /// hold the start of a stretch whose windows come with the next one).
    private var classifiedEdge: Double {
        Double(plannedUpTo - planLag) / FeatureExtractor.envelopeRate
    }

    /// Where the clip of `range` was written, if it was.
    func clipURL(for range: Range<Int>) -> URL? {
        guard clips.contains(range), let encoder = clipEncoder else { return nil }
        return clipURL(range, encoder)
    }

    private func clipURL(_ range: Range<Int>, _ encoder: any ClipEncoder) -> URL {
        clipFolder.appendingPathComponent("\(range.lowerBound)-\(range.upperBound).\(encoder.fileExtension)")
    }

    /// Removes the clips the final pass did not take.
    func discardClips() {
        try? FileManager.default.removeItem(at: clipFolder)
    }

    /// Queues the windows of the stretches the gate will probably pass, on the raw level and
    /// on the snore band as `SilenceGate.run` does.
    private func plan(_ envelope: [Float], _ frames: FrameTrack) throws {
        let counted = min(envelope.count, frames.count / 2)
        for i in levelsCounted..<counted { levels.add(envelope[i]) }
        for level in SilenceGate.snoreBandEnvelope(frames, frames: 2 * levelsCounted..<2 * counted) { bandLevels.add(level) }
        levelsCounted = counted
        let end = counted - planLag
        let start = max(0, plannedUpTo - planOverlap)
        let rate = FeatureExtractor.envelopeRate
        func threshold(_ levels: LevelHistogram) -> Float {
            max(levels.quantile(SilenceGate.floorPercentile) * SilenceGate.factor, SilenceGate.absoluteMinimum) * thresholdMargin
        }
        let band = SilenceGate.snoreBandEnvelope(frames, frames: 2 * start..<2 * end)
        let bandStretches = SilenceGate.stretches(band, in: band.indices, above: threshold(bandLevels), rate: rate,
                                                  duration: Double(band.count) / rate)
            .map { TimeRange(start: $0.start + Double(start) / rate, end: $0.end + Double(start) / rate) }
        let stretches = SilenceGate.union(
            SilenceGate.stretches(envelope, in: start..<end, above: threshold(levels), rate: rate, duration: Double(end) / rate),
            bandStretches, mergeGap: SilenceGate.mergeGap)
        let samples = try snapshot()
        self.samples = samples
        let hop = WindowPlanner.hop
        for start in WindowPlanner.windowStarts(stretches: stretches, totalSamples: samples.count, windowLength: windowLength)
        where start % hop == 0 && start + windowLength <= samples.count && planned.insert(start / hop).inserted {
            windowQueue.append(start / hop)
        }
        // The re-read overlap can add windows before those still queued: keep the queue in order,
        // so consecutive windows share their overlapping half.
        windowQueue[windowHead...].sort()
        if windowHead > 4096 { windowQueue.removeFirst(windowHead); windowHead = 0 }
        plannedUpTo = end
    }

    private func classifyQueuedWindows() throws {
        guard let samples else { return }
        for _ in 0..<16 where windowHead < windowQueue.count {
            let index = windowQueue[windowHead]
            windowHead += 1
            let first = index * labelCount
            if scores.count < first + labelCount {
                scores.append(contentsOf: repeatElement(.nan, count: first + labelCount - scores.count))
            }
            try scores.withUnsafeMutableBufferPointer {
                try classifier.classify(at: index * WindowPlanner.hop, of: samples,
                                        into: UnsafeMutableBufferPointer(rebasing: $0[first..<first + labelCount]))
            }
            windowsClassified += 1
        }
    }

    /// Finds the events of the newly classified minutes and queues the clips of settled ones.
    private func settle(_ frames: FrameTrack) {
        guard let samples else { return }
        let end = classifiedEdge
        let from = max(0, settledUpTo - settleContext)
        let hop = Double(WindowPlanner.hop) / Double(analysisSampleRate)
        let known = (Int(from / hop)..<Int(end / hop)).compactMap { labels(atGridIndex: $0) }
        let duration = Double(samples.count) / Double(analysisSampleRate)
        let upper = end - settleMargin
        for event in EventDetector.detect(windows: known, frames: frames, sensitivity: sensitivity, duration: duration)
        where event.end > settledUpTo && event.end <= upper && (from == 0 || event.start >= from + settleMargin) {
            let range = ClipMaker.clipSamples(start: event.start, end: event.end, duration: duration,
                                              totalSamples: samples.count)
            if queuedClips.insert(range).inserted { clipQueue.append(range) }
        }
        settledUpTo = max(settledUpTo, upper)
    }

    private func writeQueuedClip() throws {
        let range = clipQueue[clipHead]
        clipHead += 1
        guard let encoder = clipEncoder, let samples, range.upperBound <= samples.count else { return }
        if clips.isEmpty {
            try FileManager.default.createDirectory(at: clipFolder, withIntermediateDirectories: true)
        }
        try writeClip(range, of: samples, buffer: &clipBuffer, encoder: encoder, to: clipURL(range, encoder))
        // A long event's buffer is not kept while FFmpeg may still hold a compressed night's
        // index: most clips are a few seconds.
        if clipBuffer.count > 8 * analysisSampleRate { clipBuffer = [] }
        clips.insert(range)
    }
}

/// Writes the samples of `range`, normalised to the clip peak, with `encoder`; `buffer` grows to
/// the longest clip and is reused (per-clip arrays fragment the heap between encoder calls).
func writeClip(_ range: Range<Int>, of samples: PCM16Samples, buffer: inout [Float],
               encoder: any ClipEncoder, to url: URL) throws {
    if buffer.count < range.count { buffer = [Float](repeating: 0, count: range.count) }
    try buffer.withUnsafeMutableBufferPointer { all in
        let clip = UnsafeMutableBufferPointer(rebasing: all[0..<range.count])
        try samples.read(from: range.lowerBound, into: clip)
        ClipMaker.normalise(clip)
        try encoder.writeClip(UnsafeBufferPointer(clip), sampleRate: analysisSampleRate, to: url)
    }
}

/// Envelope levels counted in bins of 1/8 dB from −160 dBFS: a growing night's floor
/// percentile without sorting it again each time.
struct LevelHistogram {
    private static let lowest: Float = -160
    private static let binsPerDecibel: Float = 8
    private var counts = [Int](repeating: 0, count: 160 * 8 + 1)
    private(set) var total = 0

    mutating func add(_ level: Float) {
        guard level.isFinite, level > 0 else { return }  // as the gate's room floor, which counts neither
        let decibels = 20 * log10(level)
        let bin = Int(min(max(0, (decibels - Self.lowest) * Self.binsPerDecibel), Float(counts.count - 1)))
        counts[bin] += 1
        total += 1
    }

    /// The `p` quantile by nearest rank, as `SilenceGate.roomFloor`, to within a bin (its top).
    func quantile(_ p: Double) -> Float {
        guard total > 0 else { return 0 }
        let rank = TimeRange.index(p * Double(total - 1), .toNearestOrAwayFromZero, limit: total - 1)
        var seen = 0
        for (bin, n) in counts.enumerated() {
            seen += n
            if seen > rank { return pow(10, (Self.lowest + Float(bin + 1) / Self.binsPerDecibel) / 20) }
        }
        return 0
    }
}
