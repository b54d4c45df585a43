import Foundation
import SomniCore
import SomniStore

/// Exports of stored nights: CSV with one row per event, or JSON with each night's record and session.
public enum NightExport {
    public enum Format: String, Sendable, CaseIterable {
        case csv, json
    }

    public static let csvHeader = "night,night_date,event,class,start_s,end_s,clock,duration_s,confidence,peak_dbfs,mean_dbfs,severity,clip,"
        + "started_at"

    /// One row per event, nights in the order given, events in time order. Times are seconds from the
    /// start of the recording; `clock` is the wall-clock time on the bedroom's clock when known, and
    /// `started_at` the event's start as ISO 8601 with that clock's offset, which places it without
    /// doubt (the date, and which 02:30 after the clocks went back) for joining with other records.
    public static func csv(_ nights: [(record: NightRecord, session: Session)]) -> String {
        var out = csvHeader + "\n"
        for (record, session) in nights {
            let clock = NightClock(of: session)
            for e in session.events.sorted(by: { $0.start < $1.start }) {
                let fields: [String] = [
                    record.id, record.nightDate ?? "", e.id, e.eventClass.rawValue,
                    number(e.start, 3), number(e.end, 3), clock?.timeWithSeconds(at: e.start) ?? "",
                    number(e.duration, 3), number(e.confidence, 4), number(e.peakDBFS, 2), number(e.meanDBFS, 2),
                    number(e.severity, 1), e.clip ?? "", clock?.iso(at: e.start) ?? "",
                ]
                out += fields.map(csvField).joined(separator: ",") + "\n"
            }
        }
        return out
    }

    public static let nightsCSVHeader = "night,night_date,started_at,bedtime,wake,source,duration_h,analysed_h,active_share,"
        + "sensitivity,classifier,snoring_minutes,snoring_percent,snoring_episodes,snoring_events,sleep_talk_events,"
        + "cough_events,snoring_per_h,sleep_talk_per_h,cough_per_h,recorded_h"

    /// One row per night, from the store's records alone: the figures a study tabulates across
    /// nights. Events per hour and the snoring share are over the time recorded (`recorded_h`: the
    /// night less its gaps), as the summary gives them. Hours to 4 decimals and snoring minutes to
    /// 3, finer than `show` gives them: a short night's 2.6 s of snoring read "0.0", its rates
    /// could not be worked out again from the hours, and a study's sums drifted by the rounding.
    public static func nightsCSV(_ records: [NightRecord]) -> String {
        var out = nightsCSVHeader + "\n"
        for r in records {
            let hours = r.duration / 3600
            let perHour = { (c: EventClass) in r.recordedSeconds > 0 ? number(r.rate(c), 2) : "" }
            let fields: [String] = [
                r.id, r.nightDate ?? "", r.startedAt ?? "", r.bedtime ?? "", r.wake ?? "", r.source,
                number(hours, 4), number(r.analysedSeconds / 3600, 4), number(r.activeShare, 3),
                String(r.sensitivity), r.classifier, number(r.snoringMinutes, 3), number(r.snoringPercent, 2),
                String(r.snoringEpisodes), String(r.count(.snoring)), String(r.count(.sleepTalk)), String(r.count(.cough)),
                perHour(.snoring), perHour(.sleepTalk), perHour(.cough), number(r.recordedSeconds / 3600, 4),
            ]
            out += fields.map(csvField).joined(separator: ",") + "\n"
        }
        return out
    }

    private struct JSONNight: Encodable {
        var night: NightRecord
        var session: Session
    }

    private struct JSONExport: Encodable {
        var format = "somni-export"
        var version = 1
        var nights: [JSONNight]
    }

    public static func json(_ nights: [(record: NightRecord, session: Session)]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let data = try encoder.encode(JSONExport(nights: nights.map { JSONNight(night: $0.record, session: $0.session) }))
            return String(decoding: data, as: UTF8.self) + "\n"
        } catch {
            throw SomniError(.internalError, "cannot encode the export", cause: error)
        }
    }

    public static func render(_ nights: [(record: NightRecord, session: Session)], as format: Format) throws -> String {
        switch format {
        case .csv: return csv(nights)
        case .json: return try json(nights)
        }
    }

    /// Rounded as `nights`, `show` and the report round (half away from zero): printf's half to
    /// even gave 15 s of snoring as 0.2 min here and 0.3 min there.
    private static func number(_ v: Double, _ decimals: Int) -> String {
        v.isFinite ? SomniReport.Format.fixed(v, decimals) : ""
    }

    /// RFC 4180: quote fields holding a comma, quote or line break; double inner quotes. A leading
    /// = + - @ tab or carriage return is prefixed with ' so spreadsheets do not run a file name as
    /// a formula. Scalars, not Characters: "\r\n" is one Character, equal to neither.
    static func csvField(_ s: String) -> String {
        var v = s
        if let first = v.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), Double(v) == nil { v = "'" + v }
        guard v.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return v }
        return "\"" + v.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
