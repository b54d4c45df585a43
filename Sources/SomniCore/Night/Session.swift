import Foundation

/// The three kinds of event Somni reports.
public enum EventClass: String, Codable, Sendable, CaseIterable, Comparable {
    case snoring
    case sleepTalk = "sleep_talk"
    case cough

    public static func < (a: EventClass, b: EventClass) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// One found event, as written in session.json. Times are seconds from the start of the recording.
public struct SessionEvent: Codable, Sendable, Equatable {
    public var id: String
    public var eventClass: EventClass
    public var start: Double
    public var end: Double
    /// Peak classifier confidence over the event's windows.
    public var confidence: Double
    public var peakDBFS: Double
    public var meanDBFS: Double
    /// 0–100: 0.6 × loudness (−50 → −10 dBFS) + 0.4 × duration (0 → 20 s).
    public var severity: Double
    /// Path of the clip relative to the night folder ("clips/evt-0001.m4a"), nil when none was written.
    public var clip: String?
    /// Index into `Session.episodes` for snoring events.
    public var episode: Int?

    enum CodingKeys: String, CodingKey {
        case id, eventClass = "class", start, end, confidence, peakDBFS, meanDBFS, severity, clip, episode
    }

    public init(id: String, eventClass: EventClass, start: Double, end: Double, confidence: Double,
                peakDBFS: Double, meanDBFS: Double, severity: Double, clip: String? = nil, episode: Int? = nil) {
        self.id = id; self.eventClass = eventClass; self.start = start; self.end = end
        self.confidence = confidence; self.peakDBFS = peakDBFS; self.meanDBFS = meanDBFS
        self.severity = severity; self.clip = clip; self.episode = episode
    }

    public var duration: Double { end - start }
}

/// Snoring events less than 10 s apart, grouped (Snore Detector's hangover).
public struct SnoringEpisode: Codable, Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var eventCount: Int
    public init(start: Double, end: Double, eventCount: Int) {
        self.start = start; self.end = end; self.eventCount = eventCount
    }
}

/// The numbers a person reads first.
public struct SessionSummary: Codable, Sendable, Equatable {
    public var duration: Double
    public var analysedSeconds: Double
    public var activeShare: Double
    /// True when more than 70 % of the night was active and everything was classified.
    public var gateBypassed: Bool
    public var snoringMinutes: Double
    public var snoringPercent: Double
    public var snoringEpisodes: Int
    /// Keyed by EventClass raw value.
    public var eventCounts: [String: Int]
    /// Per hour recorded, as `snoringPercent` is a share of the time recorded.
    public var eventsPerHour: [String: Double]
    /// The time recorded: the night less its gaps (a joined night's pauses, a lost microphone),
    /// over which the rates and the snoring share are. Nil in a session.json written before
    /// stop 48, whose rates were over the whole night (`Session.load` puts them right).
    public var recordedSeconds: Double?

    public init(duration: Double, analysedSeconds: Double, activeShare: Double, gateBypassed: Bool,
                snoringMinutes: Double, snoringPercent: Double, snoringEpisodes: Int,
                eventCounts: [String: Int], eventsPerHour: [String: Double], recordedSeconds: Double? = nil) {
        self.duration = duration; self.analysedSeconds = analysedSeconds; self.activeShare = activeShare
        self.gateBypassed = gateBypassed; self.snoringMinutes = snoringMinutes
        self.snoringPercent = snoringPercent; self.snoringEpisodes = snoringEpisodes
        self.eventCounts = eventCounts; self.eventsPerHour = eventsPerHour; self.recordedSeconds = recordedSeconds
    }

    /// Events per hour of `seconds`; 0 when nothing was recorded. A night's gaps tell nothing of
    /// what happened in them, so rates are over the time recorded, as cough monitors give them.
    public static func rate(_ count: Int, over seconds: Double) -> Double {
        seconds > 0 ? Double(count) / (seconds / 3600) : 0
    }

    /// The share of `recordedSeconds` that `snoringMinutes` is, in percent (at most 100).
    public static func snoringPercent(_ minutes: Double, over recordedSeconds: Double) -> Double {
        recordedSeconds > 0 ? min(100, 100 * minutes * 60 / recordedSeconds) : 0
    }

    /// Computes the summary from events and episodes; `recordedSeconds` is the night's time less
    /// its gaps (the whole night when nil).
    public init(duration: Double, analysedSeconds: Double, activeShare: Double, gateBypassed: Bool,
                events: [SessionEvent], episodes: [SnoringEpisode], recordedSeconds: Double? = nil) {
        // The time the snoring events cover, each moment once, should any two overlap (events
        // from elsewhere: an engine caller's own, a night folder made by an older Somni).
        var snoringSeconds = 0.0, coveredUntil = -Double.infinity
        for e in events.filter({ $0.eventClass == .snoring }).sorted(by: { $0.start < $1.start }) {
            snoringSeconds += max(0, e.end - max(e.start, coveredUntil))
            coveredUntil = max(coveredUntil, e.end)
        }
        let counts = Dictionary(uniqueKeysWithValues: EventClass.allCases.map { c in (c.rawValue, events.count(of: c)) })
        self.init(duration: duration, analysedSeconds: analysedSeconds, activeShare: activeShare,
                  gateBypassed: gateBypassed, snoringMinutes: snoringSeconds / 60, snoringPercent: 0,
                  snoringEpisodes: episodes.count, eventCounts: counts, eventsPerHour: [:])
        self = overRecordedTime(recordedSeconds ?? duration)
    }

    /// This summary with its rates and snoring share over `recordedSeconds` (at most the night):
    /// the one computation of both, also for a session.json from before stop 48, whose night has
    /// gaps its rates were spread over.
    func overRecordedTime(_ recordedSeconds: Double) -> SessionSummary {
        var s = self
        let recorded = min(max(recordedSeconds, 0), duration)
        for (c, n) in eventCounts { s.eventsPerHour[c] = Self.rate(n, over: recorded) }
        s.snoringPercent = Self.snoringPercent(snoringMinutes, over: recorded)
        s.recordedSeconds = recorded
        return s
    }
}

/// The settings a night was analysed with, kept so a number can be reproduced.
public struct AnalysisSettings: Codable, Sendable, Equatable {
    public var sensitivity: Int
    /// "heuristic" or the learned model's name and version.
    public var classifier: String
    /// The Somni that analysed the night ("somni 0.38"); nil in nights from before stop 38.
    public var analyser: String?
    public init(sensitivity: Int, classifier: String, analyser: String? = SomniVersion.name) {
        self.sensitivity = sensitivity; self.classifier = classifier; self.analyser = analyser
    }
}

/// session.json: one analysed night.
public struct Session: Codable, Sendable, Equatable {
    public static let currentVersion = 1

    public var version: Int
    /// Where the audio came from (file name, "microphone", "synthesised").
    public var source: String
    /// ISO 8601 with offset, when known.
    public var startedAt: String?
    /// The time zone `startedAt` was written in ("Europe/Berlin"), so times after a daylight-saving
    /// change in the night read as the clock did; nil when undated or analysed before stop 39.
    public var timeZone: String? = nil
    public var duration: Double
    public var analysedSeconds: Double
    public var activeShare: Double
    public var settings: AnalysisSettings
    public var summary: SessionSummary
    public var episodes: [SnoringEpisode]
    public var events: [SessionEvent]
    public var warnings: [String]
    /// Stretches with no audio (capture device lost), filled with silence; nil when none.
    public var gaps: [RecordingGap]? = nil
    /// The night's time without a recording: its gaps, together.
    public var secondsNotRecorded: Double { RecordingGap.unrecorded(in: duration, by: gaps ?? []) }
    /// The night's time with a recording, over which its rates are.
    public var recordedSeconds: Double { RecordingGap.recorded(of: duration, less: gaps ?? []) }
    /// How `startedAt` is known: the recorder's clock, given, the file's creation time, its
    /// recording date tag or its name; nil when not said (nights analysed before stop 37) or not known.
    public var startedFrom: RecordingStart.Origin? = nil
    /// The recording's `RecordingFingerprint`, by which the store knows it again; nil for a
    /// night recorded live or analysed before stop 38.
    public var sourceFingerprint: String? = nil

    public init(source: String, startedAt: String?, duration: Double, analysedSeconds: Double,
                activeShare: Double, settings: AnalysisSettings, summary: SessionSummary,
                episodes: [SnoringEpisode], events: [SessionEvent], warnings: [String]) {
        self.version = Session.currentVersion
        self.source = source; self.startedAt = startedAt; self.duration = duration
        self.analysedSeconds = analysedSeconds; self.activeShare = activeShare
        self.settings = settings; self.summary = summary; self.episodes = episodes
        self.events = events; self.warnings = warnings
    }

    public static let fileName = "session.json"

    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    public static func load(from url: URL) throws -> Session {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SomniError(.io, "cannot read \(url.path)", cause: error)
        }
        var session: Session
        do { session = try JSONDecoder().decode(Session.self, from: data) } catch let error as DecodingError {
            throw SomniError(.badInput, "\(url.path) is not a valid session.json: \(Self.plainWords(error))", cause: error)
        } catch {
            throw SomniError(.badInput, "\(url.path) is not a valid session.json", cause: error)
        }
        guard (1...currentVersion).contains(session.version) else {
            throw SomniError(.unsupported, "\(url.path) is session.json version \(session.version); this Somni reads version \(currentVersion)")
        }
        if session.summary.recordedSeconds == nil, session.secondsNotRecorded > 0 {
            session.summary = session.summary.overRecordedTime(session.recordedSeconds)
        }
        return session
    }

    /// What a decoder found wrong, where in the file: "it lacks \"source\"" said what the bare
    /// "is not a valid session.json" left the user to guess.
    static func plainWords(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            path.reduce("") { text, key in key.intValue.map { text + "[\($0)]" } ?? (text.isEmpty ? key.stringValue : text + "." + key.stringValue) }
        }
        switch error {
        case .keyNotFound(let key, let context): return "it lacks \"\(place(context.codingPath + [key]))\""
        case .valueNotFound(_, let context): return "\"\(place(context.codingPath))\" is null"
        case .typeMismatch(_, let context) where context.codingPath.isEmpty: return "it is not a JSON object"
        case .typeMismatch(let type, let context):
            let kind = type == String.self ? "text" : [Double.self, Float.self, Int.self].contains { $0 == type } ? "a number"
                : type == Bool.self ? "true or false" : "of the kind it must be"
            return "\"\(place(context.codingPath))\" is not \(kind)"
        case .dataCorrupted(let context) where context.codingPath.last?.stringValue == "class":
            return "\"\(place(context.codingPath))\" is not one of \(EventClass.allCases.map(\.rawValue).joined(separator: ", "))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "it is not JSON" : "\"\(place(context.codingPath))\": \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    /// Throws unless the session is one Somni could have written (`inconsistency`): what reads a
    /// night folder made elsewhere checks it before its numbers size anything.
    public func refuseIfInconsistent(readFrom url: URL) throws {
        if let problem = inconsistency {
            throw SomniError(.badInput, "\(url.path) is not a night Somni could have written: \(problem)")
        }
    }

    /// The longest night a session may say it is: 31 days.
    public static let longestPlausible: Double = 31 * 86_400

    /// The first thing in the night that no analysis writes, said for the user; nil when none.
    /// A night made elsewhere is checked before the store takes it: its numbers become the
    /// store's rows and the report's timeline. Times may pass the night's end by a second
    /// (rounding, a live episode's last window).
    public var inconsistency: String? {
        let end = duration + 1
        func badTime(_ start: Double, _ stop: Double) -> Bool { !(start >= 0 && start <= stop && stop <= end) }
        // A month is far past any recording (a night is at most a day; joined parts a few), and
        // reports lay a night out in 10 s cells: 1e12 s asked for 1.6 TB.
        guard duration >= 0, duration <= Self.longestPlausible else { return "its duration is \(duration) s" }
        if let startedAt, startDate == nil { return "its start '\(startedAt)' is not an ISO 8601 time" }
        // The ISO reader rolls a day past its month's end on ("2026-02-30" read as 2 March), and
        // the night would be filed under another date than its start says.
        if let startedAt, !Self.isCalendarDay(startedAt) { return "its start '\(startedAt)' is not a day of the calendar" }
        if let timeZone, TimeZone(identifier: timeZone) == nil { return "its time zone '\(timeZone)' is not one this system knows" }
        guard analysedSeconds >= 0, analysedSeconds <= end else {
            return "it analysed \(analysedSeconds) s of a \(duration) s night"
        }
        guard (0...1).contains(activeShare), (0...1).contains(summary.activeShare) else {
            return "its active share \(activeShare) is not between 0 and 1"
        }
        guard summary.snoringMinutes >= 0, summary.snoringMinutes * 60 <= end, (0...100).contains(summary.snoringPercent) else {
            return "its summary says \(summary.snoringMinutes) min (\(summary.snoringPercent) %) of snoring in a \(duration) s night"
        }
        if let recorded = summary.recordedSeconds, !(abs(recorded - recordedSeconds) <= 1) {
            return "its summary says \(recorded) s were recorded of a \(duration) s night"
                + (secondsNotRecorded > 0 ? " with \(secondsNotRecorded) s not recorded" : "")
        }
        guard summary.snoringEpisodes == episodes.count else {
            return "its summary says \(summary.snoringEpisodes) snoring episodes and it lists \(episodes.count)"
        }
        guard summary.snoringEpisodes >= 0, summary.eventCounts.values.allSatisfy({ $0 >= 0 }),
              summary.eventsPerHour.values.allSatisfy({ $0 >= 0 && $0.isFinite }) else {
            return "its summary counts less than nothing"
        }
        var ids = Set<String>()
        for e in events {
            guard !e.id.isEmpty else { return "an event has no id" }
            // An id names the event's row on the page and in the store: a carriage return there
            // became a line feed in the page's markup, and the page's script stopped at the row.
            guard !e.id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                return "event id \(e.id.debugDescription) holds a control character"
            }
            guard ids.insert(e.id).inserted else { return "event \(e.id) is listed twice" }
            guard !badTime(e.start, e.end) else {
                return "event \(e.id) runs \(e.start)–\(e.end) s, outside the \(duration) s night or backwards"
            }
            // A clip is a file of the night's own folder: a report copying or embedding
            // "../../notes.txt" read, or replaced, a file beside the report.
            if let clip = e.clip {
                let parts = clip.split(separator: "/")
                guard !clip.hasPrefix("/"), !parts.contains(".."), !parts.isEmpty else {
                    return "event \(e.id) names clip '\(clip)' outside the night folder"
                }
            }
            guard (0...1).contains(e.confidence) else { return "event \(e.id) has confidence \(e.confidence)" }
            guard (0...100).contains(e.severity) else { return "event \(e.id) has severity \(e.severity)" }
            // Levels are floored at −120 dBFS; float audio may pass 0 dBFS, but not by 100 dB.
            guard (-200...100).contains(e.peakDBFS), (-200...100).contains(e.meanDBFS) else {
                return "event \(e.id) has levels \(e.peakDBFS) / \(e.meanDBFS) dBFS"
            }
        }
        for e in episodes where badTime(e.start, e.end) || e.eventCount < 0 {
            return "a snoring episode runs \(e.start)–\(e.end) s, outside the \(duration) s night or backwards"
        }
        for g in gaps ?? [] where badTime(g.start, g.start + g.duration) {
            return "a recording gap at \(g.start) s of \(g.duration) s lies outside the \(duration) s night"
        }
        // Gaps are times without a recording: one at a time, and nothing heard in them.
        let sortedGaps = (gaps ?? []).sorted { $0.start < $1.start }
        for (a, b) in zip(sortedGaps, sortedGaps.dropFirst()) where b.start < a.start + a.duration - 0.01 {
            return "its recording gaps at \(a.start) s and \(b.start) s overlap"
        }
        for g in sortedGaps {
            if let e = events.first(where: { $0.start >= g.start + 1 && $0.end <= g.start + g.duration - 1 }) {
                return "event \(e.id) lies in the recording gap at \(g.start) s, where there was no sound"
            }
        }
        // The snoring figures every list and page shows are the summary's: they must be the
        // events' (a folder saying 5.9 min of snoring over 1 min of events was shown so). Older
        // Somnis summed overlapping events where this one counts each moment once.
        let snoring = events.filter { $0.eventClass == .snoring }
        let covered = SessionSummary(duration: duration, analysedSeconds: 0, activeShare: 0, gateBypassed: false,
                                     events: snoring, episodes: []).snoringMinutes
        let summed = snoring.reduce(0) { $0 + $1.duration } / 60
        guard min(abs(summary.snoringMinutes - covered), abs(summary.snoringMinutes - summed)) <= 0.05 else {
            return "its summary says \(String(format: "%.2f", summary.snoringMinutes)) min of snoring and its snoring events "
                + "cover \(String(format: "%.2f", covered)) min"
        }
        let share = SessionSummary.snoringPercent(summary.snoringMinutes, over: summary.recordedSeconds ?? recordedSeconds)
        guard abs(summary.snoringPercent - share) <= 0.05 else {
            return "its summary says \(String(format: "%.1f", summary.snoringPercent)) % of the night was snoring and its "
                + "\(String(format: "%.2f", summary.snoringMinutes)) min are \(String(format: "%.1f", share)) %"
        }
        return nil
    }

    /// Makes the night `length` long when it went on after its audio ended (a master that
    /// stopped when the disk filled): the time after is a gap for `reason`, taking in the gaps
    /// there were in it, and the summary's rates are over the time recorded. A second or less
    /// past the end is the encoder's last frame, not a gap.
    public mutating func extend(to length: Double, notRecordedBecause reason: String) {
        let end = duration
        guard length > end + 1 else { return }
        duration = length
        summary.duration = length
        setGaps(Self.cut(gaps ?? [], at: end) + [RecordingGap(start: end, duration: length - end, reason: reason)])
    }

    /// Takes `given` as the night's gaps (the recorder's, which may run past the audio a crash
    /// left), cut at its end, and its summary's rates over the time recorded.
    public mutating func setGaps(_ given: [RecordingGap]) {
        let kept = Self.cut(given, at: duration)
        gaps = kept.isEmpty ? nil : kept
        summary = summary.overRecordedTime(recordedSeconds)
    }

    /// The gaps before `end`, each ending there at the latest.
    private static func cut(_ gaps: [RecordingGap], at end: Double) -> [RecordingGap] {
        gaps.filter { $0.start < end }.map { g in
            RecordingGap(start: g.start, duration: min(g.duration, end - g.start), reason: g.reason)
        }
    }

    /// The loudest event (by peak level) of each snoring episode, keyed by the episode's index.
    public var loudestEventOfEachEpisode: [Int: SessionEvent] {
        var loudest: [Int: SessionEvent] = [:]
        for e in events {
            guard let i = e.episode else { continue }
            if loudest[i].map({ e.peakDBFS > $0.peakDBFS }) ?? true { loudest[i] = e }
        }
        return loudest
    }

    /// Whether an ISO time's "YYYY-MM-DD" is a day of the Gregorian calendar.
    static func isCalendarDay(_ iso: String) -> Bool {
        let parts = iso.prefix(10).split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              year >= 1, (1...12).contains(month) else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    /// The start as a Date, when known.
    public var startDate: Date? {
        guard let s = startedAt else { return nil }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: s)
    }
}

extension Array where Element == SessionEvent {
    /// How many of the events are of class `c`: the count every view of a night gives, from the
    /// events themselves.
    public func count(of c: EventClass) -> Int { self.count { $0.eventClass == c } }
}
