import Foundation
import SomniCore

/// Wall-clock times of a night in the recording's own UTC offset (from `Session.startedAt`), so a
/// night recorded in Taipei reads 23:10 wherever the report is opened. Given the zone the start was
/// written in (`Session.timeZone`), times after a daylight-saving change read as the bedroom's
/// clock did: a night across the autumn change reads 02:59, then 02:00 again.
///
/// Plain calendar arithmetic (proleptic Gregorian, fixed offset) instead of Calendar and
/// DateFormatter: those cost a fraction of a millisecond each on Linux, which made listing 1,000
/// nights take a second.
public struct NightClock: Sendable, Equatable {
    public let start: Date
    /// The UTC offset at the start.
    public let offsetSeconds: Int
    /// The zone's offset changes in the week from the start, in order: from `after` seconds
    /// after the start the offset is `offsetSeconds` (the same unit as above). The first may come
    /// at or before the start (`after` ≤ 0): the clocks went back just before a night that began
    /// in the hour they repeat (02:30 after 03:00 went back to 02:00), whose times until the
    /// repeat ends are the second showing of their clock time.
    public let offsetChanges: [OffsetChange]
    /// The UTC offset before the first change: the start's, unless that change came before it.
    public let offsetBeforeChanges: Int

    public struct OffsetChange: Sendable, Equatable {
        public let after: Double
        public let offsetSeconds: Int
    }

    /// The change the clocks made just before the start, when the night began in the hour they repeat.
    public var changeBeforeStart: OffsetChange? { offsetChanges.first.flatMap { $0.after <= 0 ? $0 : nil } }

    /// How far ahead of the start offset changes are looked for: longer than any night.
    static let changeHorizon: TimeInterval = 7 * 86_400

    /// The clock of an analysed night: its start, in the zone it was written in.
    public init?(of session: Session) {
        self.init(iso: session.startedAt, timeZone: session.timeZone)
    }

    /// As `init?(iso:)`, following `timeZone`'s daylight-saving changes after the start. A zone this
    /// machine does not know, or whose offset at the start is not the ISO text's (the night was
    /// written elsewhere), is left out: the start's offset holds for the whole night.
    public init?(iso: String?, timeZone identifier: String?) {
        guard let fixed = NightClock(iso: iso) else { return nil }
        guard let identifier, let zone = TimeZone(identifier: identifier),
              zone.secondsFromGMT(for: fixed.start) == fixed.offsetSeconds else {
            self = fixed
            return
        }
        // The longest repeat a zone has had is two hours (double summer time); none starts earlier.
        var changes: [OffsetChange] = []
        var offsetBefore = fixed.offsetSeconds
        if let last = zone.nextDaylightSavingTimeTransition(after: fixed.start.addingTimeInterval(-3 * 3600)),
           last <= fixed.start {
            let earlier = zone.secondsFromGMT(for: last.addingTimeInterval(-1))
            if earlier > fixed.offsetSeconds, fixed.start.timeIntervalSince(last) < Double(earlier - fixed.offsetSeconds) {
                changes.append(OffsetChange(after: last.timeIntervalSince(fixed.start), offsetSeconds: fixed.offsetSeconds))
                offsetBefore = earlier
            }
        }
        var from = fixed.start
        while let next = zone.nextDaylightSavingTimeTransition(after: from), next.timeIntervalSince(fixed.start) < NightClock.changeHorizon {
            changes.append(OffsetChange(after: next.timeIntervalSince(fixed.start), offsetSeconds: zone.secondsFromGMT(for: next)))
            from = next
        }
        self.init(start: fixed.start, offsetSeconds: fixed.offsetSeconds, offsetChanges: changes, offsetBeforeChanges: offsetBefore)
    }

    /// Parses ISO 8601 with an offset: "2026-11-28T23:10:00+01:00", "…T23:10:00.250Z", "…+0100".
    /// Nil when absent, invalid, or without an offset (a local time that cannot be placed).
    public init?(iso: String?) {
        guard let iso else { return nil }
        let c = Array(iso.utf8)
        func digits(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= c.count else { return nil }
            var v = 0
            for b in c[from..<(from + count)] {
                guard b >= 48 && b <= 57 else { return nil }
                v = v * 10 + Int(b - 48)
            }
            return v
        }
        guard c.count >= 20, c[4] == UInt8(ascii: "-"), c[7] == UInt8(ascii: "-"), c[10] == UInt8(ascii: "T") || c[10] == UInt8(ascii: " "),
              c[13] == UInt8(ascii: ":"), c[16] == UInt8(ascii: ":"),
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
              let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        var fraction = 0.0
        if i < c.count, c[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            while i < c.count, c[i] >= 48, c[i] <= 57 {
                fraction += Double(c[i] - 48) * scale
                scale /= 10
                i += 1
            }
        }
        guard i < c.count else { return nil }
        let offset: Int
        if c[i] == UInt8(ascii: "Z") || c[i] == UInt8(ascii: "z") {
            guard i + 1 == c.count else { return nil }
            offset = 0
        } else if c[i] == UInt8(ascii: "+") || c[i] == UInt8(ascii: "-") {
            let colon = i + 3 < c.count && c[i + 3] == UInt8(ascii: ":")
            guard let hh = digits(i + 1, 2), let mm = digits(i + (colon ? 4 : 3), 2), i + (colon ? 6 : 5) == c.count,
                  hh < 24, mm < 60 else { return nil }
            offset = (c[i] == UInt8(ascii: "-") ? -1 : 1) * (hh * 3600 + mm * 60)
        } else {
            return nil
        }
        let local = NightClock.daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        start = Date(timeIntervalSince1970: Double(local - offset) + fraction)
        offsetSeconds = offset
        offsetChanges = []
        offsetBeforeChanges = offset
    }

    public init(start: Date, offsetSeconds: Int, offsetChanges: [OffsetChange] = [], offsetBeforeChanges: Int? = nil) {
        self.start = start
        self.offsetSeconds = offsetSeconds
        self.offsetChanges = offsetChanges
        self.offsetBeforeChanges = offsetBeforeChanges ?? offsetSeconds
    }

    /// The UTC offset `seconds` after the start.
    public func offset(at seconds: Double) -> Int {
        var offset = offsetSeconds
        for change in offsetChanges {
            guard seconds >= change.after else { break }
            offset = change.offsetSeconds
        }
        return offset
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    static func civil(fromDays z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private struct Moment {
        var days: Int, year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    }

    private func moment(at seconds: Double) -> Moment {
        let local = Int((start.timeIntervalSince1970 + seconds).rounded(.down)) + offset(at: seconds)
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let inDay = local - days * 86_400
        let (y, m, d) = NightClock.civil(fromDays: days)
        return Moment(days: days, year: y, month: m, day: d, hour: inDay / 3600, minute: inDay / 60 % 60, second: inDay % 60)
    }

    /// "HH:MM:SS" for a person: a time in the hour the clocks showed again after going back reads
    /// "02:10:08 (2nd)", since the first 02:10:08 came an hour before it.
    public func displayTime(at seconds: Double) -> String {
        timeWithSeconds(at: seconds) + (isInRepeatedHour(seconds) ? " (2nd)" : "")
    }

    /// "HH:MM" for a person, marked as `displayTime` is: a wake at "02:14 (2nd)".
    public func displayHourMinute(at seconds: Double = 0) -> String {
        time(at: seconds) + (isInRepeatedHour(seconds) ? " (2nd)" : "")
    }

    /// Whether the moment `seconds` after the start is in an hour the clocks showed again.
    private func isInRepeatedHour(_ seconds: Double) -> Bool {
        var before = offsetBeforeChanges
        for change in offsetChanges {
            if change.offsetSeconds < before, seconds >= change.after, seconds < change.after + Double(before - change.offsetSeconds) {
                return true
            }
            before = change.offsetSeconds
        }
        return false
    }

    /// The clock changes in the first `duration` seconds, said for a person: "at 03:00 the clocks
    /// went back to 02:00", so a time read twice in the repeated hour can be placed.
    public func changes(within duration: Double) -> [String] {
        var before = offsetBeforeChanges
        var said: [String] = []
        for change in offsetChanges where change.after < duration {
            let unix = Int((start.timeIntervalSince1970 + change.after).rounded())
            func clockTime(_ offset: Int) -> String {
                let inDay = ((unix + offset) % 86_400 + 86_400) % 86_400
                return "\(padded(inDay / 3600)):\(padded(inDay / 60 % 60))"
            }
            let direction = change.offsetSeconds < before ? "back" : "forward"
            said.append("at \(clockTime(before)) the clocks went \(direction) to \(clockTime(change.offsetSeconds))"
                        + (change.after <= 0 ? ", just before the night began: its first times are their 2nd showing" : ""))
            before = change.offsetSeconds
        }
        return said
    }

    /// ISO 8601 with the clock's offset then, to the second: "2026-10-25T02:03:20+01:00".
    public func iso(at seconds: Double) -> String {
        let m = moment(at: seconds)
        return "\(padded(m.year, 4))-\(padded(m.month))-\(padded(m.day))T\(padded(m.hour)):\(padded(m.minute)):\(padded(m.second))"
            + NightClock.offsetText(offset(at: seconds))
    }

    /// A UTC offset as ISO 8601 writes it: "+01:00", "-03:30".
    public static func offsetText(_ seconds: Int) -> String {
        (seconds < 0 ? "-" : "+") + padded(abs(seconds) / 3600) + ":" + padded(abs(seconds) / 60 % 60)
    }

    /// "YYYY-MM-DD" of the moment `seconds` after the start.
    public func date(at seconds: Double = 0) -> String {
        let m = moment(at: seconds)
        return "\(padded(m.year, 4))-\(padded(m.month))-\(padded(m.day))"
    }

    /// "HH:MM" of the moment `seconds` after the start.
    public func time(at seconds: Double = 0) -> String {
        let m = moment(at: seconds)
        return "\(padded(m.hour)):\(padded(m.minute))"
    }

    /// "HH:MM:SS" of the moment `seconds` after the start.
    public func timeWithSeconds(at seconds: Double) -> String {
        let m = moment(at: seconds)
        return "\(padded(m.hour)):\(padded(m.minute)):\(padded(m.second))"
    }

    /// A readable date of the night, the evening it began ("Sat 28 Nov 2026").
    public var nightTitle: String {
        let m = moment(at: -12 * 3600)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[((m.days % 7) + 7) % 7]
        return "\(weekday) \(m.day) \(months[m.month - 1]) \(m.year)"
    }

    /// "yyyyMMdd-HHmm" of the start, the base of a night id.
    func compactDateTime() -> String {
        let m = moment(at: 0)
        return "\(padded(m.year, 4))\(padded(m.month))\(padded(m.day))-\(padded(m.hour))\(padded(m.minute))"
    }

    /// The date a person calls "the night of": a start before noon belongs to the evening before.
    public var nightDate: String { date(at: -12 * 3600) }

    /// Seconds since local midnight at the start (for placing hour rows on the clock).
    public var secondsIntoDay: Double {
        let local = start.timeIntervalSince1970 + Double(offsetSeconds)
        return local - (local / 86_400).rounded(.down) * 86_400
    }
}

/// Zero-padded decimal digits. String(format:) is slow on Linux, and `nights` formats thousands of these.
@inlinable
public func padded(_ value: Int, _ width: Int = 2) -> String {
    let digits = String(abs(value))
    let pad = String(repeating: "0", count: max(0, width - digits.count))
    return (value < 0 ? "-" : "") + pad + digits
}
