import Foundation

/// Ends a recorded night, cleanly or after a crash: runs the morning step, writes session.json,
/// removes the master unless it is to be kept, and marks the journal analysed.
public enum NightCloser {
    /// The morning pipeline on a night-mode master: (master file, night folder, journal) → Session.
    public typealias MorningAnalysis = (URL, URL, NightJournal) throws -> Session

    /// Seconds at the end of a night whose recorder died that may be lost: what came since the
    /// last flush, and in live mode the hum remover's block the detector had not heard yet.
    public static func mostLost(_ mode: NightJournal.Mode) -> Double {
        NightRecorderDefaults.flushInterval + (mode == .live ? Double(HumRemover.blockSeconds) : 0)
    }

    /// - Parameters:
    ///   - recovered: true when the recorder died and the night is closed from what is on disk.
    ///   - analysed: called once the journal says "analysed" on the disk, before the master goes.
    @discardableResult
    public static func close(folder: URL, classifierName: String, sensitivity: Int, recovered: Bool,
                             analysed: () -> Void = {}, morning: MorningAnalysis) throws -> Session {
        var journal = try NightJournal.load(in: folder)
        adoptPartialFiles(in: folder)
        adoptPartialFiles(in: folder.appendingPathComponent("clips"))
        let duration = max(journal.secondsFlushed, envelopeSeconds(at: folder.appendingPathComponent(EnvelopeFile.fileName)))
        var session: Session
        switch journal.mode {
        case .live:
            if let open = journal.openEpisode { finishOpenClip(open, end: journal.end(of: open.episode), in: folder) }
            session = journal.liveSession(duration: duration, classifierName: journal.classifier ?? classifierName,
                                          sensitivity: sensitivity)
        case .night:
            // The morning pass writes its own envelope from the master; when the master stopped
            // early (a full disk) the overnight one covers more of the night and is kept.
            let envelope = folder.appendingPathComponent(EnvelopeFile.fileName)
            let overnight = folder.appendingPathComponent(".overnight-" + EnvelopeFile.fileName)
            try? FileManager.default.removeItem(at: overnight)
            try? FileManager.default.copyItem(at: envelope, to: overnight)
            do {
                guard let master = masterFile(in: folder, journal: journal) else {
                    throw SomniError(.badInput, "its master recording \(journal.master ?? "") is missing")
                }
                session = try morning(master, folder, journal)
            } catch let error as SomniError where error.code == .badInput {
                // A master with no sound in it (a recorder killed before its first frame, an Opus
                // master whose muxer held the first minute) cannot be analysed, and failing
                // here failed every `recover` and every later `record` for good. The night is
                // closed with the levels recorded overnight and no events, and says why.
                session = journal.levelsOnlySession(duration: duration, classifierName: classifierName, sensitivity: sensitivity,
                                                    why: error.message)
            }
            // rename(2), which puts the overnight one in place in one step: Foundation's
            // replaceItemAt on Linux left the morning's at the overnight one's name, which the
            // next line removed, and the night had no envelope at all.
            let overnightSeconds = envelopeSeconds(at: overnight)
            if overnightSeconds > envelopeSeconds(at: envelope) {
                _ = rename(overnight.path, envelope.path)
            }
            try? FileManager.default.removeItem(at: overnight)
            session.source = "microphone (\(journal.device))"
            session.startedAt = journal.startedAt
            session.warnings += journal.warnings
            // A master cut short by a full disk or a crash: the journal's words say what
            // happened; the reader's "the file ends early" named a file the user never gave.
            if journal.audioStoppedAt != nil || journal.status != .captured {
                session.warnings.removeAll { $0.hasPrefix(endsEarlyWarningPrefix) }
            }
            // The recorder's gaps, cut where the audio a crash left ends (the analysis knew them).
            session.setGaps(journal.gaps)
            // The audio stopped before the night did (a full disk): the rest of the night, its
            // levels in the envelope, is a gap, where before the night ended with its audio.
            // A journal that could not say so (the disk still full when the recorder last wrote
            // it) leaves the envelope going on past the audio: the audio and the envelope reach
            // the disk together at each flush, so more than a few seconds more is that.
            if journal.audioStoppedAt != nil {
                session.extend(to: duration, notRecordedBecause: audioNotSaved)
            } else if overnightSeconds > session.duration + audioBehindEnvelope {
                session.extend(to: duration, notRecordedBecause: audioEnded)
            }
        }
        session.startedFrom = session.startedAt == nil ? nil : .recorder
        session.timeZone = journal.timeZone
        // A night with no master to fingerprint (live mode, one too short to analyse) is known by
        // the recorder that made it: without, nights begun in one second were listed as copies.
        if session.sourceFingerprint == nil {
            let recorder = journal.recorder.map { "\($0.host) pid \($0.pid) boot \($0.boot ?? "?")" } ?? folder.lastPathComponent
            session.sourceFingerprint = "recorded \(journal.startedAt) by \(recorder)"
        }
        if recovered {
            // A recorder that ended its capture (the journal says captured) lost no sound: only
            // its morning analysis did not finish (a full disk, a signal during it).
            session.warnings.append(journal.status == .captured
                ? "the morning analysis did not finish when the night ended; it was run later, by somni recover, on the whole recording"
                : "the recorder stopped unexpectedly; this night was closed from what was on disk "
                    + "(up to the last \(Int(Self.mostLost(journal.mode))) s may be missing)")
        }
        let url = folder.appendingPathComponent(Session.fileName)
        do { try session.jsonData().write(to: url, options: .atomic) } catch {
            throw SomniError(.io, "cannot write \(url.path)", cause: error)
        }
        // The master is the night's only other copy: what was made from it, and the journal
        // saying so, reach the disk before it goes. (Marked analysed only after, a night killed
        // in between was closed again by recover from no master: no events.)
        try NightFolder.flushToDisk(folder)
        journal.status = .analysed
        try journal.save(in: folder)
        analysed()
        removeMaster(of: journal, in: folder)
        return session
    }

    /// Removes the master of an analysed night-mode night that is not to be kept, left there by
    /// a process killed between marking the night analysed and removing it.
    public static func removeMasterOnceAnalysed(in folder: URL) {
        if let journal = try? NightJournal.load(in: folder) { removeMaster(of: journal, in: folder) }
    }

    private static func removeMaster(of journal: NightJournal, in folder: URL) {
        guard journal.status == .analysed, journal.mode == .night, !journal.keepAudio,
              let master = masterFile(in: folder, journal: journal) else { return }
        try? FileManager.default.removeItem(at: master)
    }

    /// The reason of the gap at the end of a night whose audio stopped being saved.
    static let audioNotSaved = "audio not saved: the disk was full or the file too large"
    static let audioEnded = "audio not saved: the recording ends here while its levels go on (a full disk, most likely)"
    /// How far the envelope may run past the audio before the rest is taken for audio not saved.
    static let audioBehindEnvelope = 5.0

    static func masterFile(in folder: URL, journal: NightJournal) -> URL? {
        guard let name = journal.master else { return nil }
        let url = folder.appendingPathComponent(name)
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    /// The hidden name ".NAME.partial" the recorder's encoders write `url` under while it grows.
    public static func partialURL(of url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent("." + url.lastPathComponent + partialSuffix)
    }

    private static let partialSuffix = ".partial"

    /// The clip of an episode still open when the recorder died, as the recorder would have
    /// left it had the episode ended: up to 1 s after its last snoring window and levelled to
    /// 0.9 peak. It was streamed raw as it happened, on to the moment of the crash, with no
    /// length in its header (readers that need one refused it). Only Somni's own FLAC is
    /// read back here; an Opus clip, or one that cannot be read, is left as it was recorded.
    static func finishOpenClip(_ record: LiveEpisodeRecord, end: Double, in folder: URL) {
        guard let name = record.clip, name.hasSuffix(".flac") else { return }
        let url = folder.appendingPathComponent(name)
        let keep = max(0, Int(((end + LiveEpisodeSettings.clipLeadIn - record.clipStart) * Double(analysisSampleRate)).rounded()))
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4_096)
        defer { block.deallocate() }
        /// Reads up to `keep` samples of the clip in blocks, handing each to `body`.
        func pass(_ body: (UnsafeBufferPointer<Float>) throws -> Void) throws {
            let reader = try FLACStreamReader(url: url)
            var read = 0
            while read < keep {
                let n = try reader.read(into: UnsafeMutableBufferPointer(rebasing: block[0..<min(block.count, keep - read)]))
                if n == 0 { break }
                try body(UnsafeBufferPointer(rebasing: block[0..<n]))
                read += n
            }
        }
        let staging = url.deletingLastPathComponent().appendingPathComponent(".levelled-" + url.lastPathComponent)
        do {
            var peak: Float = 0
            try pass { piece in for x in piece where x.isFinite { peak = max(peak, abs(x)) } }
            let gain = peak > 0 ? ClipMaker.peak / peak : 1
            let writer = try FLACStreamWriter(url: staging, sampleRate: analysisSampleRate)
            try pass { piece in
                for i in piece.indices { block[i] = piece[i] * gain }
                try writer.write(UnsafeBufferPointer(rebasing: block[0..<piece.count]))
            }
            try writer.finish()
            guard rename(staging.path, url.path) == 0 else { throw SomniError(.io, "cannot replace \(name)") }
        } catch {
            try? FileManager.default.removeItem(at: staging)  // the clip stays as it was recorded
        }
    }

    /// Encoders write under `partialURL` and the recorder links NAME to it; after a crash one or
    /// both names are left. Keep NAME, holding whatever reached the disk. A clip's levelled copy
    /// still being written (".levelled-NAME", or its encoder's own hidden name) goes: the clip
    /// itself is whole, and the copy was carried into the store with the night.
    static func adoptPartialFiles(in folder: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for hidden in names where hidden.hasPrefix(".levelled-") || hidden.hasPrefix("..levelled-") {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(hidden))
        }
        for hidden in names where hidden.hasPrefix(".") && hidden.hasSuffix(partialSuffix) && !hidden.contains(".levelled-") {
            let partial = folder.appendingPathComponent(hidden)
            let final = folder.appendingPathComponent(String(hidden.dropFirst().dropLast(partialSuffix.count)))
            if FileManager.default.fileExists(atPath: final.path) {
                try? FileManager.default.removeItem(at: partial)
            } else {
                try? FileManager.default.moveItem(at: partial, to: final)
            }
        }
    }

    static func envelopeSeconds(at url: URL) -> Double {
        guard let envelope = try? EnvelopeFile.read(from: url),
              envelope.rate > 0 else { return 0 }
        return Double(envelope.values.count) / envelope.rate
    }
}

/// Defaults shared by the recorder and the closer.
public enum NightRecorderDefaults {
    /// Seconds between flushes of the envelope, the journal and the master.
    public static let flushInterval = 30.0
}
