import Foundation
import SomniAudio
import SomniCore

/// How a night is recorded.
public struct RecorderSettings: Sendable {
    public var mode: NightJournal.Mode
    /// Seconds of night to record (the recorder also stops when asked to, or when a finite source ends).
    public var duration: Double
    /// The night-mode master: a format that stays readable if the process dies. FLAC (Somni's own
    /// writer, frame by frame) loses at most its last 0.26 s frame on kill -9; Ogg/Opus is about
    /// 5× smaller, and written out at each flush (FFmpeg's Ogg muxer holds a page until full).
    public var masterFormat: EncodedAudioWriter.Format
    /// Live-mode episode clips, written as they happen (FLAC by default, for the same reason).
    public var clipFormat: EncodedAudioWriter.Format
    public var keepAudio: Bool
    /// Seconds between envelope, journal and master flushes (a crash loses at most this much).
    public var flushInterval: Double
    public var live: LiveEpisodeSettings
    /// Waits between attempts to reopen a failed device: doubling from the first to the last.
    public var retryDelay: ClosedRange<Double>
    /// Sound this many seconds behind the clock, once the device has given what it held, was
    /// never given (the computer asleep with its lid shut, a stalled sound server): the time is
    /// filled with silence and recorded as a gap. Well above a sound card's drift from the
    /// system clock (0.1 % is 29 s in 8 hours) and the device's own latency.
    public var stallGap: Double
    /// Whether the device keeps time as a microphone does (a sound server, a sound card; not a
    /// file played as fast as it reads): sound more than `mostAhead` seconds ahead of the clock,
    /// and more than twice the time it took, then ends the night, said. ALSA's `null` device
    /// recorded "2:00:00" in 7 s, a night with its wake hours in the future.
    public var keepsTime: Bool = false
    public static let mostAhead: Double = 20
    /// Called, from a thread of its own, once a read of the device has not returned for
    /// `hungAfter` seconds: a driver that hung inside a read (ALSA's pulse plugin deadlocks when
    /// the sound server dies) held the night for good, past --until, unstoppable but by signals.
    /// The loop cannot go on; the caller says so and ends the process, leaving what was flushed
    /// for `recover`.
    public var deviceHung: (@Sendable (Double) -> Void)?
    public var hungAfter: Double = 60

    public init(mode: NightJournal.Mode = .night, duration: Double, masterFormat: EncodedAudioWriter.Format = .flac,
                clipFormat: EncodedAudioWriter.Format = .flac, keepAudio: Bool = false, flushInterval: Double = 30,
                live: LiveEpisodeSettings = LiveEpisodeSettings(), retryDelay: ClosedRange<Double> = 1...30,
                stallGap: Double = 30) {
        self.mode = mode; self.duration = duration; self.masterFormat = masterFormat; self.clipFormat = clipFormat
        self.keepAudio = keepAudio; self.flushInterval = flushInterval; self.live = live; self.retryDelay = retryDelay
        self.stallGap = stallGap
    }
}

/// What the live line shows, once a second of audio.
public struct RecorderStatus: Sendable {
    public var elapsed: Double
    /// RMS level of the last second, dBFS.
    public var levelDBFS: Double
    /// Live mode: the last window's top label and its confidence.
    public var topLabel: String?
    public var topConfidence: Double
    public var episodes: Int
    public var gaps: Int
    public var audioStopped: Bool
}

/// What the recorder tells whoever watches it.
public enum RecorderEvent: Sendable {
    case status(RecorderStatus)
    /// Something a person should know: a device lost or back, the disk full, an episode.
    case note(String)
}

/// The overnight loop. Night mode: frame features + 10 Hz envelope, the audio to a streamable
/// master. Live mode: the classifier on 50 %-overlapping windows, the hysteresis segmenter, and
/// only episode audio (with its pre-roll) on disk. Both flush the envelope and the journal every
/// `flushInterval` seconds, survive the capture device failing (retry with backoff, gap filled
/// with silence and recorded) and a full disk (audio stops, the rest goes on).
public final class NightRecorder<C: SoundClassifier> {
    public let folder: URL
    public let settings: RecorderSettings
    public private(set) var journal: NightJournal

    private let openCapture: () throws -> any AudioSource
    private let observe: (RecorderEvent) -> Void
    private let shouldStop: () -> Bool
    private let heartbeat: () throws -> Void

    private let rate = analysisSampleRate
    private let targetSamples: Int
    private var processed = 0
    private var features = FeatureExtractor()
    private var pendingEnvelope: [Float] = []
    private let envelopeURL: URL
    private var envelopeGoodLength: UInt64 = 0
    private var lastFlush = 0
    private var master: CrashSafeWriter?

    // The live line: level over the last second, about its mean (a DC offset is not a level).
    private var levelSum: Double = 0
    private var levelSquares: Double = 0
    private var levelCount = 0
    private var lastStatus = 0
    private var top: LabelConfidence?

    // Live mode.
    private let ring: PreRollBuffer
    private let detector: LiveSnoreDetector<C>?
    /// Mains hum taken out of what the detector hears and the clips keep, as the morning pass
    /// does: hum filled the pauses between snores, and the live detector started episodes up to
    /// 5 s early (quiet nights with −45 dBFS hum: episode F1 1.00 → 0.29–0.50). The detector,
    /// the pre-roll and the clips run one block (16 s) behind the microphone.
    private let humRemover: HumRemover?
    /// The hum warning as the journal holds it now: said once hum is first heard (a recorder
    /// killed later keeps it), brought up to date as more harmonics are heard.
    private var humWarning: String?
    private var clip: OpenClip?
    private var clipsStopped = false

    private let block: UnsafeMutableBufferPointer<Float>
    private let silence: UnsafeMutableBufferPointer<Float>
    private let constructedAt = BootClock.now()

    /// - Parameters:
    ///   - startedAt: the night's start as of now; `run` moves it on by the time the microphone
    ///     takes to open (a sound server's connection took 2 s), so that event times on the clock
    ///     are those of the first sample.
    ///   - openCapture: opens the microphone; called again after it fails.
    ///   - heartbeat: called with every status tick (the recording lock's heartbeat).
    public init(folder: URL, settings: RecorderSettings, classifier: C, device: String, captureRate: Int,
                startedAt: Date = Date(), openCapture: @escaping () throws -> any AudioSource,
                heartbeat: @escaping () throws -> Void = {}, shouldStop: @escaping () -> Bool = { false },
                observe: @escaping (RecorderEvent) -> Void = { _ in }) throws {
        guard settings.duration > 0 else { throw SomniError(.badInput, "the night must last longer than 0 s") }
        guard [.flac, .opus].contains(settings.masterFormat), [.flac, .opus].contains(settings.clipFormat) else {
            throw SomniError(.badInput, "masters and live clips must be flac or opus: formats still readable if the recorder dies")
        }
        guard classifier.windowLength > 0 else { throw SomniError(.badModel, "the classifier's window is empty") }
        self.folder = folder
        self.settings = settings
        self.openCapture = openCapture
        self.heartbeat = heartbeat
        self.shouldStop = shouldStop
        self.observe = observe
        targetSamples = Int(settings.duration * Double(analysisSampleRate))
        envelopeURL = folder.appendingPathComponent(EnvelopeFile.fileName)
        let masterName = settings.mode == .night ? "master.\(settings.masterFormat.fileExtension)" : nil
        journal = NightJournal(mode: settings.mode, startedAt: startedAt, device: device, captureRate: captureRate,
                               master: masterName, keepAudio: settings.keepAudio)
        if settings.mode == .live { journal.classifier = classifier.name }
        journal.recorder = LocalProcess.identity

        let live = settings.live
        // Pre-roll before a trigger, or the hangover (or the bridge) after the last positive
        // window, plus slack: a bridged episode's clip is written on from that window.
        ring = PreRollBuffer(capacity: settings.mode == .live
            ? Int((max(live.preRoll, live.endAfter, live.bridgeReach) + 2) * Double(rate)) + 3 * classifier.windowLength : 1)
        detector = settings.mode == .live ? try LiveSnoreDetector(classifier: classifier, settings: live) : nil
        humRemover = settings.mode == .live ? HumRemover() : nil
        block = .allocate(capacity: rate / 10)
        block.initialize(repeating: 0)
        silence = .allocate(capacity: rate / 10)
        silence.initialize(repeating: 0)
    }

    deinit {
        block.deallocate(); silence.deallocate()
    }

    /// Records until the duration is reached, `shouldStop` says so, or a finite source ends.
    /// Returns the journal with status `.captured`; the morning step is `NightCloser`'s job.
    public func run() throws -> NightJournal {
        var source: (any AudioSource)? = try openCapture()
        let opening = BootClock.now() - constructedAt
        if opening >= 0.5, let start = journal.startDate {
            journal.startedAt = NightJournal.isoString(start.addingTimeInterval(opening))
            journal.updatedAt += opening
        }
        try prepareFolder()
        // Touched each minute from a thread of its own, so that no one takes a night whose
        // microphone gives nothing for a while for one whose recorder died.
        let touching = LocalProcess.keepTouching(journalIn: folder)
        defer { touching.cancel() }
        var clockZero = BootClock.now()
        var heard = false
        let watch = settings.deviceHung.map { ReadWatch(limit: settings.hungAfter, hung: $0) }
        defer { watch?.stop() }
        while processed < targetSamples && !shouldStop() {
            guard let current = source else { break }
            let want = min(block.count, targetSamples - processed)
            let n: Int
            let asked = BootClock.now()
            do {
                watch?.begin()
                defer { watch?.end() }
                n = try current.read(into: UnsafeMutableBufferPointer(rebasing: block[0..<want]))
            } catch {
                source = nil
                source = try reopenAfterFailure(error)
                continue
            }
            if n == 0 { break }
            if !heard {
                heard = true
                // The night starts at its first sound, not when the device opened: a monitor
                // source gives its first some 2 s later, and every event sat that much early.
                // (Unless a gap already holds that time: a device that stalled from the start.)
                let waited = BootClock.now() - Double(n) / Double(rate) - clockZero
                if waited >= 0.5, processed == 0 {
                    try startLater(by: waited)
                    clockZero += waited
                }
            }
            if let gap = openGap {
                openGap = nil
                observe(.note("sound back after \(Int(journal.gaps[gap].duration.rounded())) s; the gap is recorded in the night"))
            }
            // A read that waited for its sound is the device's present: what the clock has run
            // past it was never given.
            if BootClock.now() - asked >= 0.5 * Double(n) / Double(rate) {
                try fillTimeNeverGiven(since: clockZero, arriving: n)
            }
            // How the device is being read (its channels found in opposite phase) belongs in the night.
            for warning in current.warnings { noteOnce(warning) }
            process(UnsafeBufferPointer(rebasing: block[0..<n]))
            try tick()
            let given = Double(processed) / Double(rate), elapsed = BootClock.now() - clockZero
            if settings.keepsTime, given - elapsed > RecorderSettings.mostAhead, given > 2 * elapsed {
                let took = elapsed < 1 ? "under a second" : "\(Int(elapsed.rounded())) s"
                noteOnce("the capture device gave \(Int(given.rounded())) s of sound in \(took): it does not keep "
                         + "time as a microphone does (ALSA's null device?), so the night ends here; choose a microphone with "
                         + "--device ('pactl list short sources', 'arecord -L')")
                break
            }
        }
        try finishNight()
        return journal
    }

    // MARK: - The loop

    /// Moves the night's start `seconds` later, before any sound is in it: the journal's, and
    /// the envelope's header, written when the folder was made.
    private func startLater(by seconds: Double) throws {
        guard let start = journal.startDate else { return }
        journal.startedAt = NightJournal.isoString(start.addingTimeInterval(seconds))
        journal.updatedAt += seconds
        do {
            let header = try EnvelopeFile.header(rate: FeatureExtractor.envelopeRate, start: Date(timeIntervalSince1970: journal.updatedAt))
            let handle = try FileHandle(forWritingTo: envelopeURL)
            defer { try? handle.close() }
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: header)
        } catch {
            throw SomniError(.io, "cannot write \(envelopeURL.path)", cause: error)
        }
        try journal.save(in: folder)
    }

    private func prepareFolder() throws {
        do {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("clips"), withIntermediateDirectories: true)
            try EnvelopeFile.header(rate: FeatureExtractor.envelopeRate, start: Date(timeIntervalSince1970: journal.updatedAt))
                .write(to: envelopeURL)
            envelopeGoodLength = UInt64(EnvelopeFile.headerSize)
        } catch {
            throw SomniError(.io, "cannot create the night folder \(folder.path)", cause: error)
        }
        if let name = journal.master {
            let url = folder.appendingPathComponent(name)
            master = try openWriter(url, format: settings.masterFormat)
        }
        try journal.save(in: folder)
    }

    private func process(_ samples: UnsafeBufferPointer<Float>) {
        features.process(samples)
        for x in samples { levelSum += Double(x); levelSquares += Double(x * x) }
        levelCount += samples.count
        if let writer = master {
            do { try writer.sink.write(samples) } catch { stopAudio(error) }
        }
        if let detector, let humRemover { detect(humRemover.process(samples), with: detector) }
        processed += samples.count
    }

    /// Status once a second of audio, flush every `flushInterval`.
    private func tick() throws {
        if processed - lastStatus >= rate {
            lastStatus = processed
            let n = Double(max(levelCount, 1)), mean = levelSum / n
            let level = EventDetector.dbfs(max(levelSquares / n - mean * mean, 0).squareRoot())
            levelSum = 0; levelSquares = 0; levelCount = 0
            observe(.status(RecorderStatus(
                elapsed: Double(processed) / Double(rate), levelDBFS: level, topLabel: top?.label,
                topConfidence: Double(top?.confidence ?? 0), episodes: journal.episodes.count + (clip == nil ? 0 : 1),
                gaps: journal.gaps.count, audioStopped: journal.audioStoppedAt != nil)))
            try heartbeat()
        }
        if Double(processed - lastFlush) >= settings.flushInterval * Double(rate) { flush() }
    }

    /// The gap (its index in the journal) that no sound has closed yet, and the retry delay it
    /// reached: a device reopened that still gives nothing (a suspended source) fails again,
    /// and that failure goes on the same gap, backing off further, rather than opening a new
    /// gap, and a new note, every few seconds all night.
    private var openGap: Int?
    private var retryDelay: Double = 0

    /// The device failed, or gave nothing for its stall limit: retry with backoff until it is
    /// back (or the night is over), then fill the time it was away with silence so later times
    /// still match the clock.
    private func reopenAfterFailure(_ error: any Error) throws -> (any AudioSource)? {
        let lostAt = BootClock.now() - ((error as? CaptureStalled)?.seconds ?? 0)
        let start = Double(processed) / Double(rate)
        if openGap == nil {
            observe(.note("capture device lost at \(clock(start)): \(error); retrying"))
            retryDelay = settings.retryDelay.lowerBound
        }
        var delay = retryDelay
        var reopened: (any AudioSource)?
        // The night's end cuts a wait short: --for and --until ended the night only at the next
        // try, up to the longest wait (30 s) late.
        let nightEnds = lostAt + Double(targetSamples - processed) / Double(rate)
        while reopened == nil && !shouldStop() {
            let waitUntil = min(BootClock.now() + delay, nightEnds)
            while BootClock.now() < waitUntil && !shouldStop() { Thread.sleep(forTimeInterval: min(0.05, delay)) }
            // The lock's lease must outlive a long absence of the device.
            try heartbeat()
            if processed + Int((BootClock.now() - lostAt) * Double(rate)) >= targetSamples { break }
            do { reopened = try openCapture() } catch { delay = min(delay * 2, settings.retryDelay.upperBound) }
        }
        let filled = try processSilence(min(Int((BootClock.now() - lostAt) * Double(rate)), targetSamples - processed))
        if let gap = openGap {
            journal.gaps[gap].duration += Double(filled) / Double(rate)
        } else {
            journal.gaps.append(RecordingGap(start: start, duration: Double(filled) / Double(rate), reason: "\(error)"))
            openGap = journal.gaps.count - 1
        }
        // Back only once sound comes: the loop says so then.
        retryDelay = min(delay * 2, settings.retryDelay.upperBound)
        if reopened == nil { observe(.note("no sound from the capture device until the end of the night")) }
        flush()
        return reopened
    }

    /// The device's usual lag behind the clock: the least seen at reads that waited.
    private var usualLag: Double?

    /// Sound behind the clock by more than `stallGap` beyond the device's usual lag was never
    /// given: while the computer slept, or the sound server stalled, the night's time (its count
    /// of samples) stood still, so every later event sat early by the time lost (59 s after a
    /// minute's stall, an hour after an hour's sleep), no gap was said, and `--until` came late
    /// by as much. That time is now silence, recorded as a gap, as a lost device's is.
    private func fillTimeNeverGiven(since clockZero: Double, arriving n: Int) throws {
        let lag = BootClock.now() - clockZero - Double(processed + n) / Double(rate)
        let usual = min(usualLag ?? lag, lag)
        usualLag = usual
        guard lag - usual > settings.stallGap else { return }
        let start = Double(processed) / Double(rate)
        let missing = min(Int((lag - usual) * Double(rate)), targetSamples - processed - n)
        guard missing > 0 else { return }
        let seconds = Double(try processSilence(missing)) / Double(rate)
        journal.gaps.append(RecordingGap(start: start, duration: seconds,
                                         reason: "no sound came from the microphone (the computer asleep, or the sound server stalled)"))
        observe(.note("no sound came from the microphone for \(Int(seconds.rounded())) s before \(clock(start + seconds)) "
                      + "(the computer asleep?); the gap is recorded in the night"))
        flush()
    }

    /// Time no sound came for, as silence: so later times still match the clock. Returns the samples given.
    private func processSilence(_ count: Int) throws -> Int {
        var filled = 0
        while filled < count {
            let n = min(silence.count, count - filled)
            process(UnsafeBufferPointer(rebasing: silence[0..<n]))
            filled += n
            try tick()
        }
        return filled
    }

    private func finishNight() throws {
        features.finish()
        if let detector, let humRemover {
            detect(humRemover.finish(), with: detector)
            updateHumWarning()
            if let episode = detector.finish() { closeClip(lastPositiveEnd: episode.end) }
        }
        flush()
        if let writer = master {
            do { try writer.sink.finish() } catch { stopAudio(error) }
            master = nil
        }
        journal.status = .captured
        journal.secondsFlushed = Double(processed) / Double(rate)
        try journal.save(in: folder)
    }

    // MARK: - Crash safety

    /// Envelope values appended to envelope.bin, the master forced to disk, the journal rewritten.
    private func flush() {
        let fresh = features.takeNewEnvelopeValues()
        pendingEnvelope += fresh
        if settings.mode == .live { updateHumWarning() }
        // The extractor keeps every frame until told to forget them. Starting a fresh one only
        // when the count of samples fell on a frame pair never happened again after a gap's
        // silence of any length, and the frames then grew all night.
        features.forgetTakenFrames()
        if appendEnvelope(pendingEnvelope) { pendingEnvelope.removeAll(keepingCapacity: true) }
        master?.synchronize()
        lastFlush = processed
        journal.secondsFlushed = Double(processed) / Double(rate)
        journal.updatedAt = Date().timeIntervalSince1970
        journal.openEpisode = clip?.record()
        do { try journal.save(in: folder) } catch {
            if !journal.warnings.contains(where: { $0.hasPrefix("cannot update recording.json") }) {
                journal.warnings.append("cannot update recording.json: \(error)")
                observe(.note("cannot update \(NightJournal.fileName): \(error)"))
            }
        }
    }

    /// Appends to envelope.bin; on failure cuts the file back to its last whole value and
    /// returns false so the values are tried again at the next flush.
    private func appendEnvelope(_ values: [Float]) -> Bool {
        guard !values.isEmpty else { return true }
        do {
            let handle = try FileHandle(forWritingTo: envelopeURL)
            defer { try? handle.close() }
            do {
                try handle.seek(toOffset: envelopeGoodLength)
                try handle.write(contentsOf: EnvelopeFile.encode(values: values))
                try handle.synchronize()
                envelopeGoodLength += UInt64(values.count * 4)
                return true
            } catch {
                try? handle.truncate(atOffset: envelopeGoodLength)
                throw error
            }
        } catch {
            // The system's reason ("no space left on device"), not Foundation's dump of its error.
            let why = SomniError(.io, "cannot write \(folder.appendingPathComponent(EnvelopeFile.fileName).path)", cause: error)
            noteOnce("\(why); keeping the values in memory")
            return false
        }
    }

    /// The disk is full (or the file too large): stop writing audio, keep what is saved.
    private func stopAudio(_ error: any Error) {
        master = nil   // what reached the disk stays readable under the final name
        if journal.audioStoppedAt == nil {
            journal.audioStoppedAt = Double(processed) / Double(rate)
            let why = (error as? SomniError)?.description ?? SomniError(.io, "writing it failed", cause: error).description
            let message = "audio stopped being saved at about \(clock(Double(processed) / Double(rate))) (\(why)); "
                + "everything that reached the disk is kept and the envelope goes on"
            journal.warnings.append(message)
            observe(.note(message))
        }
    }

    private func noteOnce(_ message: String) {
        guard !journal.warnings.contains(message) else { return }
        // What the mix says of a silent channel or of the phase is of the whole night so far: a
        // later word (the channel came back part-way) replaces the earlier ("used alone").
        journal.warnings.removeAll { StereoDownmix.replaces(message, $0) }
        journal.warnings.append(message)
        observe(.note(message))
    }

    /// A writer whose file is readable under its final name whatever happens to the process.
    /// FLAC: Somni's own stream writer, which writes there frame by frame. Opus: FFmpeg's, which
    /// writes under a hidden temporary name; that file gets its final name as well (a hard link),
    /// so what reached the disk survives kill -9 or a write error.
    private func openWriter(_ url: URL, format: EncodedAudioWriter.Format) throws -> CrashSafeWriter {
        if format == .flac {
            let writer = try FLACStreamWriter(url: url, sampleRate: rate)
            return CrashSafeWriter(sink: writer, synchronize: { try? writer.synchronize() })
        }
        // Under the fixed hidden name `NightCloser.adoptPartialFiles` looks for after a crash.
        let partial = NightCloser.partialURL(of: url)
        let writer = try EncodedAudioWriter(url: url, format: format, sampleRate: rate, temporaryURL: partial)
        do {
            try? FileManager.default.removeItem(at: url)
            try FileManager.default.linkItem(at: partial, to: url)
            let handle = try FileHandle(forReadingFrom: url)
            return CrashSafeWriter(sink: writer, synchronize: { writer.flushBuffered(); try? handle.synchronize() })
        } catch {
            noteOnce("\(url.lastPathComponent) is not crash-safe: cannot link it while it is written (\(error))")
            return CrashSafeWriter(sink: writer, synchronize: { writer.flushBuffered() })
        }
    }

    private func clock(_ seconds: Double) -> String {
        let t = Date(timeIntervalSince1970: (journal.startDate?.timeIntervalSince1970 ?? 0) + seconds)
        let f = DateFormatter()
        f.dateFormat = "HH:mm:ss"
        return f.string(from: t)
    }

    // MARK: - Live mode

    /// The pre-roll takes the samples first: an episode's clip reaches back into it. They come
    /// from the hum remover a 16 s block at a time, and go in a capture block's worth at a time:
    /// the pre-roll is sized for the windows heard after each piece, and a whole block at once
    /// pushed out up to 16 s the clips still needed (every clip cut short with `--bridge 0`).
    private func detect(_ samples: UnsafeBufferPointer<Float>, with detector: LiveSnoreDetector<C>) {
        var offset = 0
        while offset < samples.count {
            let n = min(block.count, samples.count - offset)
            detectPiece(UnsafeBufferPointer(rebasing: samples[offset..<(offset + n)]), with: detector)
            offset += n
        }
    }

    private func detectPiece(_ samples: UnsafeBufferPointer<Float>, with detector: LiveSnoreDetector<C>) {
        ring.append(samples)
        detector.feed(samples) { window in
            top = window.top
            var started = false
            for change in window.changes {
                switch change {
                case .ended(let episode): closeClip(lastPositiveEnd: episode.end)
                case .started(let at):
                    started = true
                    openClip(LiveEpisode(start: at, end: window.end, peakConfidence: Double(window.runPeak),
                                         positiveWindows: detector.segmenter.windowsToStart), upTo: window.endSample)
                }
            }
            if !started, window.isEpisodeSnoring, var c = clip {
                c.episode.end = window.end
                c.episode.peakConfidence = max(c.episode.peakConfidence, Double(window.snoring))
                c.episode.positiveWindows += 1
                clip = c
                writeClip(upTo: window.endSample)
            }
        }
    }

    /// Puts the hum heard so far in the journal's warnings (saved with it at each flush), said as
    /// a note the first time only.
    private func updateHumWarning() {
        guard let text = humRemover?.hum?.warning, text != humWarning else { return }
        if let old = humWarning, let i = journal.warnings.firstIndex(of: old) {
            journal.warnings[i] = text
        } else {
            noteOnce(text)
        }
        humWarning = text
    }

    /// Opens the episode's clip at its backdated start less the lead-in (the pre-roll still holds
    /// that audio) and writes it up to `end`.
    private func openClip(_ episode: LiveEpisode, upTo end: Int) {
        let number = journal.episodes.count + 1
        let name = String(format: "clips/evt-%04d.%@", number, settings.clipFormat.fileExtension)
        let episodeStart = Int(episode.start * Double(rate))
        let start = max(ring.startIndex, episodeStart - Int(LiveEpisodeSettings.clipLeadIn * Double(rate)))
        var writer: (any AudioSink)?
        if !clipsStopped {
            do { writer = try openWriter(folder.appendingPathComponent(name), format: settings.clipFormat).sink } catch { stopClips(error) }
        }
        clip = OpenClip(name: writer == nil ? nil : name, writer: writer, episode: episode, start: start,
                        episodeStart: episodeStart)
        observe(.note("snoring episode \(number) started at \(clock(episode.start))"))
        writeClip(upTo: end)
    }

    private func writeClip(upTo end: Int) {
        guard var c = clip else { return }
        // From where the pre-roll's audio begins, should it no longer reach back to `written`.
        var from = max(c.written, ring.startIndex)
        ring.read(from: c.written, to: end) { piece in
            c.measure(piece, from: from)
            from += piece.count
            if let w = c.writer {
                do { try w.write(piece) } catch { c.writer = nil; stopClips(error) }
            }
            c.written += piece.count
        }
        c.written = max(c.written, end)
        clip = c
    }

    private func closeClip(lastPositiveEnd end: Double) {
        // The levels end with the episode; the clip's last second after it is padding.
        clip?.meter.end(at: Int((end * Double(rate)).rounded(.up)))
        writeClip(upTo: min(ring.endIndex, Int((end + LiveEpisodeSettings.clipLeadIn) * Double(rate))))
        guard var c = clip else { return }
        c.episode.end = end
        var record = c.record()
        if let w = c.writer {
            do {
                try w.finish()
                try normalise(folder.appendingPathComponent(c.name ?? ""), peak: c.clipPeak)
            } catch { record.clip = nil; stopClips(error) }
        }
        journal.episodes.append(record)
        clip = nil
        observe(.note(String(format: "snoring episode %d: %@, %.0f s, peak %.0f dBFS", journal.episodes.count,
                             clock(c.episode.start), c.episode.end - c.episode.start, record.peakDBFS)))
    }

    /// Rewrites a finished clip at 0.9 peak, as the morning clips are. The clip was streamed as it
    /// happened (so a crash keeps it); its peak is only known now. Read back and re-encoded in
    /// blocks (FLAC by Somni's own reader: FFmpeg's decoder kept 7 MB more resident), then renamed
    /// over the original in one step.
    private func normalise(_ url: URL, peak: Float) throws {
        guard peak > 0, peak.isFinite else { return }
        let gain = ClipMaker.peak / peak
        let staging = url.deletingLastPathComponent().appendingPathComponent(".levelled-\(url.lastPathComponent)")
        let flac = settings.clipFormat == .flac
        let decoder: any AudioSource = try flac ? FLACStreamReader(url: url) : AudioDecoder(url: url)
        let writer: any AudioSink = try flac
            ? FLACStreamWriter(url: staging, sampleRate: rate)
            : EncodedAudioWriter(url: staging, format: settings.clipFormat, sampleRate: rate)
        while true {
            let n = try decoder.read(into: block)
            if n == 0 { break }
            for i in 0..<n { block[i] *= gain }
            try writer.write(UnsafeBufferPointer(rebasing: block[0..<n]))
        }
        try writer.finish()
        guard rename(staging.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: staging)
            throw SomniError(.io, "cannot replace \(url.lastPathComponent) with its levelled copy (errno \(errno))")
        }
    }

    private func stopClips(_ error: any Error) {
        guard !clipsStopped else { return }
        clipsStopped = true
        if journal.audioStoppedAt == nil { journal.audioStoppedAt = Double(processed) / Double(rate) }
        noteOnce("episode clips stopped being saved at \(clock(Double(processed) / Double(rate))): \(error). "
            + "Episodes are still detected and listed")
    }
}

/// An open master or clip and how to force it to disk.
private struct CrashSafeWriter {
    let sink: any AudioSink
    let synchronize: () -> Void
}

/// The clip of the episode being recorded, and its loudness so far.
private struct OpenClip {
    var name: String?
    var writer: (any AudioSink)?
    var episode: LiveEpisode
    /// Absolute sample indices: where the clip starts, and how far it is written.
    var start: Int
    var written: Int
    /// The episode's level as a morning event's is measured, so live and morning nights compare.
    var meter: FrameLevelMeter
    /// The largest magnitude in the whole clip, lead-in included: what normalising scales to 0.9.
    var clipPeak: Float = 0

    init(name: String?, writer: (any AudioSink)?, episode: LiveEpisode, start: Int, episodeStart: Int) {
        self.name = name; self.writer = writer; self.episode = episode
        self.start = start; written = start
        meter = FrameLevelMeter(from: episodeStart)
    }

    /// Takes in a piece of the clip that starts at absolute index `from`.
    mutating func measure(_ piece: UnsafeBufferPointer<Float>, from: Int) {
        for x in piece where x.isFinite { clipPeak = max(clipPeak, abs(x)) }
        meter.measure(piece, at: from)
    }

    func record() -> LiveEpisodeRecord {
        let levels = meter.levels
        return LiveEpisodeRecord(episode: episode, clip: name, clipStart: Double(start) / Double(analysisSampleRate),
                                 peakDBFS: levels.peakDBFS, meanDBFS: levels.meanDBFS)
    }
}

/// Seconds on the boot clock, for the recorder's lags and absences: it runs on through a
/// suspend, which a lag must count, and is never stepped, as the wall clock is (an NTP
/// correction, `date -s`, a Raspberry Pi without a clock of its own setting it late). Measured
/// on the wall clock, a step forward of a minute mid-night became a minute of silence said to
/// be the computer asleep, and `--until` ended the night a minute early.
enum BootClock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }
}

/// Watches the recorder's reads from a thread of its own and calls `hung` once, should one not
/// return within `limit` seconds of the watch's own time: it counts its wake-ups rather than
/// reading a clock, so that time the process did not run (stopped with Ctrl-Z, the computer
/// asleep) is not taken for a hang (a night paused for 70 s was ended as a hung driver).
private final class ReadWatch: @unchecked Sendable {
    private let lock = NSLock()
    /// Reads begun so far, and whether one is under way.
    private var reads = 0
    private var reading = false
    private var stopped = false
    private let wake = DispatchSemaphore(value: 0)

    init(limit: Double, hung: @escaping @Sendable (Double) -> Void) {
        let interval = min(1, limit / 4)
        let thread = Thread { [self] in
            var watched = -1, ticks = 0
            while true {
                _ = wake.wait(timeout: .now() + interval)
                let (read, underWay, done) = lock.withLock { (reads, reading, stopped) }
                if done { return }
                if underWay && read == watched { ticks += 1 } else { watched = read; ticks = 0 }
                if underWay, Double(ticks) * interval >= limit {
                    hung(Double(ticks) * interval)
                    return
                }
            }
        }
        thread.name = "somni-read-watch"
        thread.start()
    }

    func begin() { lock.withLock { reads += 1; reading = true } }
    func end() { lock.withLock { reading = false } }

    func stop() {
        lock.withLock { stopped = true }
        wake.signal()
    }
}
