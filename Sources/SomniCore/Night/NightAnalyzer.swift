import Foundation

/// The morning pass: one decode, then gate → windows → classifier → events → clips → session.json.
///
/// Generic over the classifier so the per-window call is static, not an existential.
public struct NightAnalyzer<Classifier: SoundClassifier> {
    public var classifier: Classifier
    public var sensitivity: Int
    public var clipEncoder: (any ClipEncoder)?
    /// Samples read from the source per block (1 s).
    public var blockLength = analysisSampleRate
    /// Threads that classify windows and write clips at once (the source is read on one more).
    /// Results do not depend on it.
    public var workers = ProcessInfo.processInfo.activeProcessorCount

    public init(classifier: Classifier, sensitivity: Int = 5, clipEncoder: (any ClipEncoder)?) {
        self.classifier = classifier
        self.sensitivity = sensitivity
        self.clipEncoder = clipEncoder
    }

    /// The stage a progress report belongs to.
    public enum Stage: String, Sendable { case reading, classifying, clips }

    /// Analyses `source` and writes session.json, envelope.bin and clips/ into `folder`, which
    /// must exist (the caller makes it a temporary folder and renames it when this returns).
    public mutating func analyze<Source: AudioSource>(source: Source, sourceName: String, startedAt: Date? = nil,
                                                      into folder: URL,
                                                      progress: (Stage, Double) -> Void = { _, _ in }) throws -> Session {
        // 1. The single decode pass: frame features, envelope, and the samples kept for later
        //    (spooled, unless the source can give them again itself).
        let extractor = FeatureExtractor()
        let spool = source.rereadableSamples() == nil
            ? try SampleSpool(url: folder.appendingPathComponent(".samples.spool")) : nil
        let expected = source.expectedDuration
        var delivered = 0
        var lastReported = -1.0
        let reader = ReadAhead(source, blockLength: blockLength)
        defer { reader.stop() }
        while true {
            let chunk = try reader.next()
            if chunk.isEmpty { break }
            extractor.process(chunk)
            try spool?.append(chunk)
            delivered += chunk.count
            if let expected, expected > 0 {
                let f = min(1, Double(delivered) / Double(analysisSampleRate) / expected)
                if f - lastReported >= 0.005 { progress(.reading, f); lastReported = f }
            }
        }
        extractor.finish()
        guard delivered > 0 else {
            throw SomniError(.badInput, "\(sourceName) holds no audio")
        }
        // Read back from the source now that it has been read to its end, so a file that grew
        // while it was read is seen whole; one that shrank cannot give back what it delivered.
        guard let samples = try spool?.samples() ?? source.rereadableSamples(), samples.count >= delivered else {
            throw SomniError(.io, "\(sourceName) changed while it was being analysed; analyse it again once it is complete")
        }
        let totalSamples = delivered
        let duration = Double(totalSamples) / Double(analysisSampleRate)
        var warnings = source.warnings

        let envelope = extractor.envelope
        let frames = extractor.frames
        try EnvelopeFile.write(values: envelope, rate: 10, start: startedAt,
                               to: folder.appendingPathComponent(EnvelopeFile.fileName))
        if (envelope.max() ?? 0) < silentNightPeak {
            warnings.append("the recording is silent or nearly so (peak below −60 dBFS): the microphone may not have been recording")
        }

        // 2. Gate and windows at their true positions.
        let gate = SilenceGate.run(envelope: envelope, duration: duration)
        let starts = WindowPlanner.windowStarts(stretches: gate.stretches, totalSamples: totalSamples,
                                                windowLength: classifier.windowLength)
        classifier.prepare(noiseFloor: gate.floor)

        // 3. Classify, the windows dealt out to the workers; each has its own copy of the
        //    classifier (its buffers) and one window and one score buffer for the whole night.
        let labelled = try classifyWindows(at: starts, of: samples) { progress(.classifying, $0) }
        progress(.classifying, 1)

        // 4. Events and episodes.
        let detected = EventDetector.detect(windows: labelled, frames: frames, sensitivity: sensitivity,
                                            duration: duration)
        let episodes = EventDetector.episodes(of: detected)
        var events: [SessionEvent] = []
        for (i, d) in detected.enumerated() {
            let episode = d.eventClass == .snoring
                ? episodes.firstIndex { d.start >= $0.start - 1e-6 && d.end <= $0.end + 1e-6 } : nil
            events.append(SessionEvent(id: String(format: "evt-%04d", i + 1), eventClass: d.eventClass,
                                       start: d.start, end: d.end, confidence: Double(d.confidence),
                                       peakDBFS: d.peakDBFS, meanDBFS: d.meanDBFS, severity: d.severity,
                                       episode: episode))
        }

        // 5. Clips: event ± 1 s, normalised to 0.9 peak.
        if let encoder = clipEncoder, !events.isEmpty {
            let names = try writeClips(of: events, from: samples, duration: duration, encoder: encoder,
                                       into: folder.appendingPathComponent("clips")) { progress(.clips, $0) }
            for i in events.indices { events[i].clip = "clips/\(names[i])" }
        }

        let analysed = gate.stretches.reduce(0) { $0 + ($1.end - $1.start) }
        let summary = SessionSummary(duration: duration, analysedSeconds: analysed, activeShare: gate.activeShare,
                                     gateBypassed: gate.bypassed, events: events, episodes: episodes)
        let session = Session(source: sourceName, startedAt: startedAt.map(isoDateString), duration: duration,
                              analysedSeconds: analysed, activeShare: gate.activeShare,
                              settings: AnalysisSettings(sensitivity: sensitivity, classifier: classifier.name),
                              summary: summary, episodes: episodes, events: events, warnings: warnings)
        do {
            try session.jsonData().write(to: folder.appendingPathComponent(Session.fileName), options: .atomic)
        } catch {
            throw SomniError(.io, "cannot write session.json in \(folder.path)", cause: error)
        }
        return session
    }

    /// The ranked labels of the window at each start, in order.
    private func classifyWindows(at starts: [Int], of samples: PCM16Samples,
                                 progress: (Double) -> Void) throws -> [WindowLabels] {
        var labelled = [WindowLabels](repeating: WindowLabels(start: 0, end: 0, ranked: []), count: starts.count)
        let windowSeconds = Double(classifier.windowLength) / Double(analysisSampleRate)
        let workers = max(1, min(self.workers, starts.count / 64 + 1))
        let classifier = self.classifier
        try labelled.withUnsafeMutableBufferPointer { out in
            try forEachWorker(workers) { worker in
                // Each worker takes a run of consecutive windows, so a window that starts where
                // the previous one's second half began reads only its new samples (windows
                // overlap by half: reading each whole would copy the active night twice).
                let mine = starts.count * worker / workers..<starts.count * (worker + 1) / workers
                var classifier = classifier  // this worker's own buffers
                var window = [Float](repeating: 0, count: classifier.windowLength)
                var scores = [Float](repeating: 0, count: classifier.labels.count)
                var previous = -classifier.windowLength  // no window yet: nothing to keep
                for i in mine {
                    let start = starts[i]
                    try window.withUnsafeMutableBufferPointer { w in
                        let kept = max(0, previous + w.count - start)
                        if kept > 0, kept < w.count, start > previous, let base = w.baseAddress {
                            base.update(from: base + (start - previous), count: kept)  // memmove: may overlap
                            try samples.read(from: start + kept, into: UnsafeMutableBufferPointer(rebasing: w[kept...]))
                        } else {
                            try samples.read(from: start, into: w)
                        }
                    }
                    previous = start
                    window.withUnsafeBufferPointer { w in
                        scores.withUnsafeMutableBufferPointer { s in classifier.classify(w, scores: s) }
                    }
                    let t = Double(start) / Double(analysisSampleRate)
                    out[i] = WindowLabels(start: t, end: t + windowSeconds,
                                          ranked: scores.withUnsafeBufferPointer { classifier.ranked($0, top: 5) })
                    if worker == 0, i % 256 == 0 { progress(Double(i - mine.lowerBound) / Double(mine.count)) }
                }
            }
        }
        return labelled
    }

    /// Writes each event's clip into `clips` and returns the file names, in event order.
    private func writeClips(of events: [SessionEvent], from samples: PCM16Samples, duration: Double,
                            encoder: any ClipEncoder, into clips: URL, progress: (Double) -> Void) throws -> [String] {
        do { try FileManager.default.createDirectory(at: clips, withIntermediateDirectories: true) } catch {
            throw SomniError(.io, "cannot create \(clips.path)", cause: error)
        }
        let ranges = events.map {
            ClipMaker.sampleRange(ClipMaker.clipRange(start: $0.start, end: $0.end, duration: duration),
                                  totalSamples: samples.count)
        }
        let names = events.map { "\($0.id).\(encoder.fileExtension)" }
        let longest = ranges.map(\.count).max() ?? 0
        let workers = max(1, min(self.workers, events.count))
        try forEachWorker(workers) { worker in
            // One buffer per worker for all its clips: per-clip arrays fragment the heap
            // between encoder calls.
            var buffer = [Float](repeating: 0, count: longest)
            for i in stride(from: worker, to: events.count, by: workers) {
                try buffer.withUnsafeMutableBufferPointer { all in
                    let clip = UnsafeMutableBufferPointer(rebasing: all[0..<ranges[i].count])
                    try samples.read(from: ranges[i].lowerBound, into: clip)
                    ClipMaker.normalise(clip)
                    try encoder.writeClip(UnsafeBufferPointer(clip), sampleRate: analysisSampleRate,
                                          to: clips.appendingPathComponent(names[i]))
                }
                if worker == 0 { progress(Double(i + 1) / Double(events.count)) }
            }
        }
        progress(1)
        return names
    }
}

/// ISO 8601 with the local offset, as session.json's startedAt.
func isoDateString(_ date: Date) -> String {
    let f = ISO8601DateFormatter()
    f.timeZone = .current
    f.formatOptions = [.withInternetDateTime]
    return f.string(from: date)
}

/// Below this peak envelope level (about −60 dBFS) a night is called near-silent.
let silentNightPeak: Float = 0.001

/// Builds a night folder beside its destination and renames it into place only when complete,
/// so a failure never leaves a half-written night.
public enum NightFolder {
    public static func writeAtomically<T>(to destination: URL, _ body: (URL) throws -> T) throws -> T {
        let fm = FileManager.default
        if fm.fileExists(atPath: destination.path) {
            throw SomniError(.badInput, "\(destination.path) already exists; choose another --out or remove it")
        }
        let parent = destination.deletingLastPathComponent()
        let temporary = parent.appendingPathComponent(".\(destination.lastPathComponent).partial-\(UUID().uuidString.prefix(8))")
        do { try fm.createDirectory(at: temporary, withIntermediateDirectories: true) } catch {
            throw SomniError(.io, "cannot create \(temporary.path)", cause: error)
        }
        do {
            let result = try body(temporary)
            try fm.moveItem(at: temporary, to: destination)
            return result
        } catch {
            try? fm.removeItem(at: temporary)
            if error is SomniError { throw error }
            throw SomniError(.io, "cannot finish the night folder \(destination.path)", cause: error)
        }
    }
}
