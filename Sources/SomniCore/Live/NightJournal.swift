import Foundation

/// A stretch of the night with no audio (the capture device vanished or failed), filled with
/// silence so that times after it still match the clock.
public struct RecordingGap: Codable, Sendable, Equatable {
    /// Seconds from the start of the recording.
    public var start: Double
    public var duration: Double
    public var reason: String
    public init(start: Double, duration: Double, reason: String) {
        self.start = start; self.duration = duration; self.reason = reason
    }

    /// The time the gaps leave unrecorded in a night `duration` long: each cut to the night and
    /// overlapping ones counted once (summed as given, a gap past the end, or two overlapping,
    /// left a night with events 0 % snoring); a gap with a time that is not a number says nothing.
    public static func unrecorded(in duration: Double, by gaps: [RecordingGap]) -> Double {
        guard duration.isFinite, duration > 0 else { return 0 }
        let spans = gaps.compactMap { gap -> (Double, Double)? in
            guard gap.start.isFinite, gap.duration.isFinite, gap.duration > 0 else { return nil }
            let start = max(0, gap.start), end = min(duration, gap.start + gap.duration)
            return start < end ? (start, end) : nil
        }.sorted { $0.0 < $1.0 }
        var total = 0.0, reached = 0.0
        for (start, end) in spans where end > reached {
            total += end - max(start, reached)
            reached = end
        }
        return total
    }

    /// The time of a night `duration` long that its gaps leave recorded.
    public static func recorded(of duration: Double, less gaps: [RecordingGap]) -> Double {
        max(0, duration - unrecorded(in: duration, by: gaps))
    }
}

/// A closed (or, after a crash, still open) live episode and the clip written for it.
public struct LiveEpisodeRecord: Codable, Sendable, Equatable {
    public var episode: LiveEpisode
    /// Clip file relative to the night folder.
    public var clip: String?
    /// Where the clip begins, in seconds from the start of the recording (the pre-roll).
    public var clipStart: Double
    public var peakDBFS: Double
    public var meanDBFS: Double
    public init(episode: LiveEpisode, clip: String?, clipStart: Double, peakDBFS: Double, meanDBFS: Double) {
        self.episode = episode; self.clip = clip; self.clipStart = clipStart
        self.peakDBFS = peakDBFS; self.meanDBFS = meanDBFS
    }
}

/// recording.json: the recorder's small state file in the night folder, rewritten atomically
/// with every 30 s envelope flush. After kill -9 or a power cut it says what is on disk and how
/// far it goes, so `somni recover` can close the night.
public struct NightJournal: Codable, Sendable, Equatable {
    public static let fileName = "recording.json"
    public static let currentVersion = 1

    public enum Mode: String, Codable, Sendable, CaseIterable {
        /// Cheap at night (envelope + master), thorough in the morning.
        case night
        /// Classifier on the stream, only episode audio written.
        case live
    }

    public enum Status: String, Codable, Sendable {
        /// The recorder is (or was, when it died) capturing.
        case recording
        /// Capture is over; the morning analysis has not finished.
        case captured
        /// session.json is written; nothing left to do.
        case analysed
    }

    public var version: Int
    public var status: Status
    public var mode: Mode
    /// ISO 8601 with offset.
    public var startedAt: String
    /// The zone `startedAt` is written in (`Session.timeZone`); nil in journals from before stop 39.
    public var timeZone: String? = nil
    public var device: String
    public var captureRate: Int
    /// The master recording's file name in night mode.
    public var master: String?
    public var keepAudio: Bool
    /// The classifier live mode ran (its `name`); nil in night mode, where the morning chooses.
    public var classifier: String?
    /// Seconds of the night, its gaps included, flushed to disk as of `updatedAt` (envelope, journal).
    public var secondsFlushed: Double
    /// Unix seconds of the last flush.
    public var updatedAt: Double
    public var gaps: [RecordingGap]
    /// Seconds into the night at which audio stopped being written (the disk filled), if it did.
    public var audioStoppedAt: Double?
    public var episodes: [LiveEpisodeRecord]
    /// The episode being recorded at the last flush (live mode).
    public var openEpisode: LiveEpisodeRecord?
    public var warnings: [String]
    /// The process writing the night, so that `recover` (and a recorder starting) tells a live
    /// recorder from a dead one whatever recording lock each was given; nil in journals from
    /// before stop 43.
    public var recorder: RecorderIdentity? = nil

    /// The file's keys: `secondsFlushed` keeps the name journals on disk have always had.
    enum CodingKeys: String, CodingKey {
        case version, status, mode, startedAt, timeZone, device, captureRate, master, keepAudio, classifier
        case secondsFlushed = "recordedSeconds"
        case updatedAt, gaps, audioStoppedAt, episodes, openEpisode, warnings, recorder
    }

    /// A process on a host, in one boot of it (Linux's boot_id): after a reboot its pid may name
    /// another process.
    public struct RecorderIdentity: Codable, Sendable, Equatable {
        public var pid: Int32
        public var host: String
        public var boot: String?
        public init(pid: Int32, host: String, boot: String?) { self.pid = pid; self.host = host; self.boot = boot }
    }

    public init(mode: Mode, startedAt: Date, device: String, captureRate: Int, master: String?, keepAudio: Bool) {
        version = NightJournal.currentVersion
        status = .recording
        self.mode = mode
        self.startedAt = NightJournal.isoString(startedAt)
        timeZone = TimeZone.current.identifier
        self.device = device
        self.captureRate = captureRate
        self.master = master
        self.keepAudio = keepAudio
        secondsFlushed = 0
        updatedAt = startedAt.timeIntervalSince1970
        gaps = []
        episodes = []
        warnings = []
    }

    /// To the nearest second, as every reader of `startedAt` reads it: cut to the second, as
    /// the formatter cuts, a night's every event sat up to a second early on the clock.
    public static func isoString(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone.current
        return f.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded()))
    }

    /// `startedAt` as a Date.
    public var startDate: Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: startedAt)
    }

    public func save(in folder: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let url = folder.appendingPathComponent(NightJournal.fileName)
        // Durably: after a power cut the journal is how the night is found and closed.
        do { try NightFolder.replaceDurably(url, with: encoder.encode(self)) } catch {
            throw SomniError(.io, "cannot write \(url.path)", cause: error)
        }
    }

    public static func load(in folder: URL) throws -> NightJournal {
        let url = folder.appendingPathComponent(fileName)
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SomniError(.io, "cannot read \(url.path)", cause: error)
        }
        do { return try JSONDecoder().decode(NightJournal.self, from: data) } catch {
            throw SomniError(.badInput, "\(url.path) is not a valid recording journal", cause: error)
        }
    }

    /// A night folder of its own under `root`, made here: "night-STAMP", or "-2", "-3"… when
    /// another recorder (under another --lock) started in the same second and made that one.
    /// Before, two such recorders wrote into one folder and one night was lost.
    public static func claimFolder(under root: URL, stamp: String) throws -> URL {
        let fm = FileManager.default
        do { try fm.createDirectory(at: root, withIntermediateDirectories: true) } catch {
            throw SomniError(.io, "cannot create \(root.path)", cause: error)
        }
        for n in 1...100 {
            let folder = root.appendingPathComponent("night-" + stamp + (n == 1 ? "" : "-\(n)"), isDirectory: true)
            do {
                try fm.createDirectory(at: folder, withIntermediateDirectories: false)
                return folder
            } catch where fm.fileExists(atPath: folder.path) {
                continue
            } catch {
                throw SomniError(.io, "cannot create \(folder.path)", cause: error)
            }
        }
        throw SomniError(.io, "cannot make a night folder under \(root.path): night-\(stamp) to -100 are all taken")
    }

    /// Night folders directly under `root` whose journal says the night was never finished.
    public static func unfinishedNights(under root: URL) -> [URL] {
        nights(under: root) { $0.status != .analysed }
    }

    /// Night folders directly under `root` whose morning analysis finished. Under a store's
    /// recording/ folder, nights the store never took in: their save failed, or died part-way
    /// and the store put the folder back.
    public static func analysedNights(under root: URL) -> [URL] {
        nights(under: root) { $0.status == .analysed }
            .filter { FileManager.default.fileExists(atPath: $0.appendingPathComponent(Session.fileName).path) }
    }

    private static func nights(under root: URL, where wanted: (NightJournal) -> Bool) -> [URL] {
        let entries = (try? FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil)) ?? []
        return entries.filter { folder in
            guard let j = try? load(in: folder) else { return false }
            return wanted(j)
        }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// A night-mode night whose master holds no sound: its overnight levels (envelope.bin), its
    /// length and gaps, and no events. (The journal's own warnings are the closer's to add.)
    public func levelsOnlySession(duration: Double, classifierName: String, sensitivity: Int, why: String) -> Session {
        let summary = SessionSummary(duration: duration, analysedSeconds: 0, activeShare: 0, gateBypassed: false,
                                     events: [], episodes: [], recordedSeconds: RecordingGap.recorded(of: duration, less: gaps))
        var session = Session(source: "microphone (\(device))", startedAt: startedAt, duration: duration, analysedSeconds: 0,
                              activeShare: 0, settings: AnalysisSettings(sensitivity: sensitivity, classifier: classifierName),
                              summary: summary, episodes: [], events: [],
                              warnings: ["the night's recording could not be analysed (\(why)): only its levels "
                                         + "through the night are kept, and no events"])
        session.gaps = gaps.isEmpty ? nil : gaps
        return session
    }

    /// Where an episode ends in the night: an episode open when the microphone went ends where
    /// its sound did, not in the gap (its last window straddled the gap's start).
    public func end(of e: LiveEpisode) -> Double {
        gaps.filter { $0.start > e.start && $0.start < e.end }.map(\.start).min() ?? e.end
    }

    /// The live episodes as a Session: one snoring event per episode, grouped as episodes.
    /// An episode still open at a crash is closed at its last positive window.
    public func liveSession(duration: Double, classifierName: String, sensitivity: Int) -> Session {
        var records = episodes
        if let open = openEpisode { records.append(open) }
        var events: [SessionEvent] = []
        var grouped: [SnoringEpisode] = []
        for (i, r) in records.enumerated() {
            let e = r.episode
            let end = end(of: e)
            events.append(SessionEvent(
                id: String(format: "evt-%04d", i + 1), eventClass: .snoring, start: e.start, end: end,
                confidence: e.peakConfidence, peakDBFS: r.peakDBFS, meanDBFS: r.meanDBFS,
                severity: Severity.score(peakDBFS: r.peakDBFS, duration: end - e.start),
                clip: r.clip, episode: i))
            grouped.append(SnoringEpisode(start: e.start, end: end, eventCount: 1))
        }
        // Live mode hears all the time it records, and nothing of its gaps.
        let recorded = RecordingGap.recorded(of: duration, less: gaps)
        let summary = SessionSummary(duration: duration, analysedSeconds: recorded, activeShare: 1,
                                     gateBypassed: false, events: events, episodes: grouped,
                                     recordedSeconds: recorded)
        var warnings = self.warnings
        if openEpisode != nil { warnings.append("the recorder stopped during an episode; it was closed at its last positive window") }
        var session = Session(source: "microphone (\(device), live)", startedAt: startedAt, duration: duration,
                              analysedSeconds: recorded, activeShare: 1,
                              settings: AnalysisSettings(sensitivity: sensitivity, classifier: classifierName),
                              summary: summary, episodes: grouped, events: events, warnings: warnings)
        session.gaps = gaps.isEmpty ? nil : gaps
        return session
    }
}
