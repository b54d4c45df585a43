import Foundation
import SomniCore
import SomniStore

/// `--from DATE` and `--to DATE`: which nights, by the evening each began, a listing covers, for
/// a study's weeks among a year of nights.
struct NightRange {
    var from: String?
    var to: String?

    static func help(column: Int) -> String {
        HelpText.option("--from DATE", column: column, "only the nights from this date on (YYYY-MM-DD: the evening a night began)")
            + "\n" + HelpText.option("--to DATE", column: column, "only the nights up to this date, itself included; with either,",
                                     "undated nights are left out")
    }

    init(_ a: inout Arguments) throws {
        from = try a.option("--from").map { try Self.checked($0, "--from") }
        to = try a.option("--to").map { try Self.checked($0, "--to") }
        if let from, let to, from > to { throw UsageError("--from \(from) is after --to \(to)") }
    }

    var isGiven: Bool { from != nil || to != nil }
    /// "from 2026-11-01 to the last", for messages.
    var span: String { "from \(from ?? "the first") to \(to ?? "the last")" }

    func filter(_ nights: [NightRecord]) -> [NightRecord] {
        guard isGiven else { return nights }
        return nights.filter { night in
            guard let date = night.nightDate else { return false }
            return from.map { date >= $0 } ?? true && to.map { date <= $0 } ?? true
        }
    }

    /// A real calendar date written YYYY-MM-DD, which then sorts as text.
    private static func checked(_ text: String, _ option: String) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.isLenient = false
        guard text.utf8.count == 10, let date = formatter.date(from: text), formatter.string(from: date) == text else {
            throw UsageError("\(option) takes a date as YYYY-MM-DD, not '\(text)'")
        }
        return text
    }
}
