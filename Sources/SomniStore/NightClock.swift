import Foundation

/// Wall-clock times of a night in the recording's own UTC offset (from `Session.startedAt`), so a
/// night recorded in Taipei reads 23:10 wherever the report is opened.
public struct NightClock: Sendable, Equatable {
    public let start: Date
    public let offsetSeconds: Int

    /// Parses ISO 8601 with an offset ("2026-11-28T23:10:00+01:00", "…Z"); nil when absent or invalid.
    public init?(iso: String?) {
        guard let iso, let offset = NightClock.offset(in: iso) else { return nil }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var date = f.date(from: iso)
        if date == nil {
            f.formatOptions = [.withInternetDateTime]
            date = f.date(from: iso)
        }
        guard let date else { return nil }
        start = date
        offsetSeconds = offset
    }

    public init(start: Date, offsetSeconds: Int) {
        self.start = start
        self.offsetSeconds = offsetSeconds
    }

    private static func offset(in iso: String) -> Int? {
        if iso.hasSuffix("Z") || iso.hasSuffix("z") { return 0 }
        let chars = Array(iso)
        // "+HH:MM" or "+HHMM" at the end.
        for length in [6, 5] where chars.count > length {
            let tail = chars[(chars.count - length)...]
            guard let sign = tail.first, sign == "+" || sign == "-" else { continue }
            let digits = tail.dropFirst().filter { $0 != ":" }
            guard digits.count == 4, let hhmm = Int(String(digits)) else { continue }
            let seconds = (hhmm / 100) * 3600 + (hhmm % 100) * 60
            return sign == "-" ? -seconds : seconds
        }
        return nil
    }

    private var calendar: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(secondsFromGMT: offsetSeconds) ?? TimeZone(identifier: "UTC") ?? c.timeZone
        return c
    }

    private func components(at seconds: Double) -> DateComponents {
        calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                from: start.addingTimeInterval(seconds))
    }

    /// "YYYY-MM-DD" of the moment `seconds` after the start.
    public func date(at seconds: Double = 0) -> String {
        let c = components(at: seconds)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// "HH:MM" of the moment `seconds` after the start.
    public func time(at seconds: Double = 0) -> String {
        let c = components(at: seconds)
        return String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
    }

    /// "HH:MM:SS" of the moment `seconds` after the start.
    public func timeWithSeconds(at seconds: Double) -> String {
        let c = components(at: seconds)
        return String(format: "%02d:%02d:%02d", c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }

    /// A long, readable date of the night ("Sat 28 Nov 2026").
    public var nightTitle: String {
        var c = calendar
        c.locale = Locale(identifier: "en_US_POSIX")
        let f = DateFormatter()
        f.calendar = c
        f.timeZone = c.timeZone
        f.locale = c.locale
        f.dateFormat = "EEE d MMM yyyy"
        return f.string(from: start.addingTimeInterval(-12 * 3600))
    }

    /// "yyyyMMdd-HHmm" of the start, the base of a night id.
    func compactDateTime() -> String {
        let c = components(at: 0)
        return String(format: "%04d%02d%02d-%02d%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }

    /// The date a person calls "the night of": a start before noon belongs to the evening before.
    public var nightDate: String { date(at: -12 * 3600) }

    /// Seconds since local midnight at the start (for placing hour rows on the clock).
    public var secondsIntoDay: Double {
        let c = components(at: 0)
        return Double((c.hour ?? 0) * 3600 + (c.minute ?? 0) * 60 + (c.second ?? 0))
            + start.timeIntervalSince1970.truncatingRemainder(dividingBy: 1)
    }
}
