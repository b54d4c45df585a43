/// A classifier with the buffers one thread needs to label the windows of a night.
struct WindowClassifier<Classifier: SoundClassifier> {
    private var classifier: Classifier
    private var feed: WindowFeed
    private var scores: [Float]

    init(_ classifier: Classifier) {
        self.classifier = classifier
        feed = WindowFeed(length: classifier.windowLength)
        scores = [Float](repeating: 0, count: classifier.labels.count)
    }

    /// The ranked labels of the window that starts at sample `start`.
    mutating func labels(at start: Int, of samples: PCM16Samples) throws -> WindowLabels {
        // Moved out, not copied: a copy would be written to, and so allocated, every window.
        var scores: [Float] = []
        swap(&scores, &self.scores)
        defer { swap(&scores, &self.scores) }
        try scores.withUnsafeMutableBufferPointer { try classify(at: start, of: samples, into: $0) }
        return scores.withUnsafeBufferPointer { labels(at: start, scores: $0) }
    }

    /// Writes the scores of the window that starts at sample `start` into `scores`.
    mutating func classify(at start: Int, of samples: PCM16Samples, into scores: UnsafeMutableBufferPointer<Float>) throws {
        try feed.load(from: start, of: samples)
        feed.window.withUnsafeBufferPointer { classifier.classify($0, scores: scores) }
    }

    /// The window at `start` with the given scores ranked.
    func labels(at start: Int, scores: UnsafeBufferPointer<Float>) -> WindowLabels {
        let t = Double(start) / Double(analysisSampleRate)
        return WindowLabels(start: t, end: t + Double(classifier.windowLength) / Double(analysisSampleRate),
                            ranked: classifier.ranked(scores, top: EventDetector.scanDepth))
    }
}

/// One window's samples, read so that a window starting where the previous one's second half
/// began reads only its new samples: windows overlap by half, and reading each whole would copy
/// the active night twice.
struct WindowFeed {
    private(set) var window: [Float]
    private var previous: Int

    init(length: Int) {
        window = [Float](repeating: 0, count: length)
        previous = -length  // no window yet: nothing to keep
    }

    /// Fills `window` with the samples from `start`.
    mutating func load(from start: Int, of samples: PCM16Samples) throws {
        let previous = self.previous
        self.previous = -window.count  // until this read has succeeded
        try window.withUnsafeMutableBufferPointer { w in
            let kept = max(0, previous + w.count - start)
            if kept > 0, kept < w.count, start > previous, let base = w.baseAddress {
                base.update(from: base + (start - previous), count: kept)  // memmove: may overlap
                try samples.read(from: start + kept, into: UnsafeMutableBufferPointer(rebasing: w[kept...]))
            } else {
                try samples.read(from: start, into: w)
            }
        }
        self.previous = start
    }
}
