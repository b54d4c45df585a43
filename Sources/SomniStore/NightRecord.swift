import Foundation
import SomniCore

/// One stored night as the database lists it: enough for `somni nights` and the trends without
/// opening any night folder.
public struct NightRecord: Codable, Sendable, Equatable {
    /// "yyyyMMdd-HHmm" of the start in the recording's own offset ("-2", "-3"… when taken).
    public var id: String
    /// ISO 8601 with offset, as in session.json; nil when the start is unknown.
    public var startedAt: String?
    /// "YYYY-MM-DD" of the evening the night began (a start before noon counts for the day before).
    public var nightDate: String?
    public var source: String
    public var duration: Double
    public var analysedSeconds: Double
    public var activeShare: Double
    public var sensitivity: Int
    public var classifier: String
    public var snoringMinutes: Double
    public var snoringPercent: Double
    public var snoringEpisodes: Int
    /// Event counts keyed by EventClass raw value.
    public var eventCounts: [String: Int]
    /// Unix seconds when the night entered the store.
    public var addedAt: Double
    /// The recording's `RecordingFingerprint`; nil for live nights and those stored before stop 38.
    public var sourceFingerprint: String? = nil
    /// `Session.timeZone`; nil for nights analysed before stop 39.
    public var timeZone: String? = nil
    /// `Session.secondsNotRecorded`: the night's gaps, together.
    public var secondsNotRecorded: Double = 0

    public init(id: String, startedAt: String?, nightDate: String?, source: String, duration: Double,
                analysedSeconds: Double, activeShare: Double, sensitivity: Int, classifier: String,
                snoringMinutes: Double, snoringPercent: Double, snoringEpisodes: Int,
                eventCounts: [String: Int], addedAt: Double, sourceFingerprint: String? = nil, timeZone: String? = nil,
                secondsNotRecorded: Double = 0) {
        self.id = id; self.startedAt = startedAt; self.nightDate = nightDate; self.source = source
        self.duration = duration; self.analysedSeconds = analysedSeconds; self.activeShare = activeShare
        self.sensitivity = sensitivity; self.classifier = classifier; self.snoringMinutes = snoringMinutes
        self.snoringPercent = snoringPercent; self.snoringEpisodes = snoringEpisodes
        self.eventCounts = eventCounts; self.addedAt = addedAt; self.sourceFingerprint = sourceFingerprint
        self.timeZone = timeZone; self.secondsNotRecorded = secondsNotRecorded
    }

    public var clock: NightClock? { NightClock(iso: startedAt, timeZone: timeZone) }
    /// When the recording started; its zone's clock changes are not needed for that.
    public var start: Date? { NightClock(iso: startedAt)?.start }
    /// "HH:MM" at the start and the end, on the recording's clock.
    public var bedtime: String? { clock?.time() }
    public var wake: String? { clock?.time(at: duration) }

    public func count(_ c: EventClass) -> Int { eventCounts[c.rawValue] ?? 0 }
    /// The night's time with a recording, over which its rates are.
    public var recordedSeconds: Double { max(0, duration - secondsNotRecorded) }
    /// Events of the class per hour recorded.
    public func rate(_ c: EventClass) -> Double { SessionSummary.rate(count(c), over: recordedSeconds) }
    public var eventTotal: Int { eventCounts.values.reduce(0, +) }
}
