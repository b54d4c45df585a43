import Foundation

/// When a recording started, and how that is known: the night's date, bedtime and wake time in
/// the store come from it. A recording analysed from a file says so itself more often than not:
/// an M4A from a phone carries its creation time, and recorder apps put the date and time in the
/// file's name ("Recording_20261128_231402.m4a", "2026-11-28 23.14.02.m4a").
public struct RecordingStart: Sendable, Equatable {
    public enum Origin: String, Codable, Sendable {
        /// `somni record`'s own clock.
        case recorder
        /// Given by the user (`somni analyze --started`).
        case given
        /// The container's creation time (MP4/M4A/MOV `creation_time`, a WAV's broadcast extension).
        case creationTime = "creation time"
        /// The container's creation time less the recording's length: the app wrote it when it
        /// stopped, as the file's last change shows.
        case creationTimeAtEnd = "creation time, written when it stopped"
        /// A recording date with a time of day in the file's tags (an MP3's ID3 TDRC, an Ogg or
        /// FLAC DATE comment), which recorders write but tagging tools overwrite.
        case dateTag = "recording date tag"
        /// A date and time in the file's name.
        case fileName = "file name"
    }

    public var date: Date
    public var origin: Origin
    /// The clock the night is read on (its bedtime, its date, session.json's offsets) when it is
    /// not this machine's: a time given with an offset of its own ("23:00+13:00", a night
    /// recorded abroad). Nil: the process's zone, `TimeZone.current`.
    public var clock: TimeZone?

    public init(date: Date, origin: Origin, clock: TimeZone? = nil) { self.date = date; self.origin = origin; self.clock = clock }

    private static let dateTimePattern = #"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?$"#

    /// "2026-11-28T23:14", "2026-11-28 23:14:05", "2026-11-28T22:14:02.000000Z", "…+01:00": a date
    /// and a time to the minute at least, in `timeZone` when the text has no offset of its own.
    public static func parse(_ text: String, timeZone: TimeZone = .current) -> Date? {
        guard let groups = match(dateTimePattern, in: text.trimmingCharacters(in: .whitespaces)) else { return nil }
        var zone = timeZone
        if let offset = groups[7] {
            if offset == "Z" {
                zone = TimeZone(secondsFromGMT: 0)!
            } else {
                let digits = offset.dropFirst().filter(\.isNumber)
                guard digits.count == 4, let hh = Int(digits.prefix(2)), let mm = Int(digits.suffix(2)), hh < 24, mm < 60,
                      let fixed = TimeZone(secondsFromGMT: (offset.hasPrefix("-") ? -1 : 1) * (hh * 3600 + mm * 60)) else { return nil }
                zone = fixed
            }
        }
        return date(groups, in: zone)
    }

    /// The clock a numeric offset in `text` names ("+13:00"), when it is not the offset
    /// `timeZone` has at that moment: the time was read off another clock than this machine's,
    /// and the night is to read as that clock did (nil: `timeZone`'s own, which knows its clock
    /// changes). "Z" names a moment, not a clock (a time copied from a file's `creation_time`).
    public static func clock(of text: String, timeZone: TimeZone = .current) -> TimeZone? {
        guard let groups = match(dateTimePattern, in: text.trimmingCharacters(in: .whitespaces)), let written = groups[7], written != "Z",
              let moment = parse(text, timeZone: timeZone), let asIfUTC = date(groups, in: TimeZone(secondsFromGMT: 0)!) else { return nil }
        let offset = Int(asIfUTC.timeIntervalSince(moment).rounded())
        return offset == timeZone.secondsFromGMT(for: moment) ? nil : TimeZone(secondsFromGMT: offset)
    }

    /// The moments a date and time without an offset names in `timeZone`, earliest first: one;
    /// two in the hour the clocks go back (02:30 happens twice); none in the hour they skip. Nil
    /// when `text` is not a date and time, or carries an offset of its own (then `parse` is exact).
    public static func moments(_ text: String, timeZone: TimeZone = .current) -> [Date]? {
        guard let groups = match(dateTimePattern, in: text.trimmingCharacters(in: .whitespaces)), groups[7] == nil,
              let asIfUTC = date(groups, in: TimeZone(secondsFromGMT: 0)!) else { return nil }
        // Offsets run from −12 h to +14 h (Kiribati; Chatham is +13:45 in summer), so the moment
        // lies between 14 h before and 12 h after the time read as UTC: the offsets in force
        // across that span hold every one it could have. Each names a moment, which is real when
        // the zone has that offset then.
        let offsets = Set([-50_400.0, -25_200, 0, 43_200].map { timeZone.secondsFromGMT(for: asIfUTC + $0) })
        return offsets.filter { timeZone.secondsFromGMT(for: asIfUTC - TimeInterval($0)) == $0 }
            .map { asIfUTC - TimeInterval($0) }.sorted()
    }

    /// A date and time in a file name, read in `timeZone` (a phone names its files in local time).
    /// The date as year-month-day, with or without separators, or as day.month.year with dots
    /// (as European phones write it: "Aufnahme 28.11.2026 23-14.m4a"), then the time to the
    /// minute at least; a date alone is not enough for a bedtime, and digits run on either side
    /// mean the number is something else. A time more than a day ahead of `now` is passed over,
    /// as a file's own time is and as `--started` refuses it: it would be "the latest night" for years.
    public static func inFileName(_ name: String, timeZone: TimeZone = .current, now: Date = Date()) -> Date? {
        anyTimeInFileName(name, timeZone: timeZone).flatMap { isPlausible($0, now: now) ? $0 : nil }
    }

    /// A time in a file's name that `inFileName` passes over for lying more than a day ahead of
    /// `now` (a phone whose clock was set a year on): to be said, not dropped without a word.
    public static func aheadInFileName(_ name: String, timeZone: TimeZone = .current, now: Date = Date()) -> Date? {
        anyTimeInFileName(name, timeZone: timeZone).flatMap { $0 > now.addingTimeInterval(86_400) ? $0 : nil }
    }

    private static func anyTimeInFileName(_ name: String, timeZone: TimeZone) -> Date? {
        let time = #"(?:[ _T-]|[ _-]?at[ _-]?|, )?(\d{2})[-_.:h]?(\d{2})(?:[-_.:m]?(\d{2}))?(?!\d)"#
        var found: Date?
        if let groups = match(#"(?<!\d)(20\d{2})[-_.]?(\d{2})[-_.]?(\d{2})"# + time, in: name) {
            found = date(groups, in: timeZone)
        } else if let g = match(#"(?<![\d.])(\d{2})\.(\d{2})\.(20\d{2})"# + time, in: name) {
            // Day first only with dots and a four-digit year: with slashes (not allowed in a file
            // name) or a two-digit year, the order would be a guess.
            found = date([g[0], g[3], g[2], g[1], g[4], g[5], g[6]], in: timeZone)
        }
        return found
    }

    /// The start a file says of itself, from its own time (`fileTime`: a creation time or a
    /// recording date tag), a time in its name and when it was last changed (`modified`), for a
    /// recording `duration` seconds long. Recorder apps name a file when they start it, but many
    /// write an MP4's index, and the creation time in it, when they stop (Android's MediaRecorder
    /// does). So, give or take two minutes or 1 % of the recording:
    /// - a file time one recording's length after the name's is the end, and the name's time is
    ///   the start;
    /// - with no time in the name, a creation time at the file's last change is the end (a
    ///   recording written from its start would have changed last one recording later), and the
    ///   start is one recording before it.
    /// Otherwise the file's own time stands, as the more exact; the name's when the file has none.
    public static func reconciled(fileTime: RecordingStart?, nameTime: Date?, modified: Date? = nil,
                                  duration: Double?) -> RecordingStart? {
        guard let fileTime else { return nameTime.map { RecordingStart(date: $0, origin: .fileName) } }
        guard let duration, duration.isFinite else { return fileTime }
        let slack = max(120, duration / 100)
        // A recording shorter than this could have started or stopped at either time.
        guard duration >= 3 * slack else { return fileTime }
        if let nameTime {
            let after = fileTime.date.timeIntervalSince(nameTime)
            return abs(after - duration) <= slack ? RecordingStart(date: nameTime, origin: .fileName) : fileTime
        }
        if fileTime.origin == .creationTime, let modified, abs(modified.timeIntervalSince(fileTime.date)) <= slack {
            return RecordingStart(date: fileTime.date - duration, origin: .creationTimeAtEnd)
        }
        return fileTime
    }

    /// A time a recording can have started at: this century, and not in the future (a day's
    /// slack for a clock set wrong). An MP4 whose muxer left its creation time at 0 reads 1904
    /// or 1970.
    public static func isPlausible(_ date: Date, now: Date = Date()) -> Bool {
        date >= Date(timeIntervalSince1970: 946_684_800) && date <= now.addingTimeInterval(86_400)
    }

    private static func match(_ pattern: String, in text: String) -> [String?]? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let m = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        return (0..<m.numberOfRanges).map { i in Range(m.range(at: i), in: text).map { String(text[$0]) } }
    }

    /// Groups 1–6 (year, month, day, hour, minute, second) as a date in `zone`; nil for a
    /// day or time that does not exist (the 30th of February, 25 o'clock).
    private static func date(_ g: [String?], in zone: TimeZone) -> Date? {
        guard let year = g[1].flatMap({ Int($0) }), let month = g[2].flatMap({ Int($0) }), let day = g[3].flatMap({ Int($0) }),
              let hour = g[4].flatMap({ Int($0) }), let minute = g[5].flatMap({ Int($0) }) else { return nil }
        let second = g[6].flatMap { Int($0) } ?? 0
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60,
              let date = calendar.date(from: parts) else { return nil }
        // The calendar rolls the 30th of February over into March: such a name is not a date.
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        guard back.year == year, back.month == month, back.day == day else { return nil }
        return date
    }
}
