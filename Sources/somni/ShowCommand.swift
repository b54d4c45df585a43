import Foundation
import SomniCore
import SomniReport
import SomniStore

struct ShowCommand: Command {
    static let name = "show"
    static let summary = "Show one stored night: summary numbers and the event log"
    static let help = """
    Usage: somni show NIGHT [--class CLASS]... [--store DIR] [--json]

    NIGHT is a night id or a date (YYYY-MM-DD: the evening the night began). Prints time in bed,
    snoring time and share, events per hour per class, the snoring episodes (when each began and
    ended, how many snores, the loudest), and every event with its clip.

      --class CLASS  list only this class's events: snoring, sleep_talk or cough (repeatable)
    \(StoreOptions.help(column: 17))
    \(StoreOptions.jsonHelp(column: 17, holding: "the night's record and its full session.json"))
    """

    struct Output: Encodable {
        var night: NightRecord
        var folder: String
        var session: Session
    }

    var options: StoreOptions
    var key: String
    /// The classes whose events are listed; all when none was asked for.
    var classes: Set<EventClass>
    init(_ a: inout Arguments) throws {
        options = try StoreOptions(&a, command: Self.name)
        classes = Set(try a.repeatedOption("--class").map { name in
            guard let c = EventClass(rawValue: name.replacingOccurrences(of: "-", with: "_")) else {
                throw UsageError("--class takes snoring, sleep_talk or cough, not '\(name)'")
            }
            return c
        })
        if !classes.isEmpty, options.json {
            throw UsageError("--class chooses the events listed in the text; --json gives the whole session.json")
        }
        if classes.isEmpty { classes = Set(EventClass.allCases) }
        key = try a.requiredPositional("NIGHT (an id or a date)")
    }

    func run() throws {
        let store = try options.open()
        let night = try store.night(matching: key)
        let session = try store.session(of: night)
        let folder = store.folder(of: night)
        if options.json { return try printJSON(Output(night: night, folder: folder.path, session: session)) }

        let clock = night.clock
        let s = session.summary
        var lines = ["Night \(night.id)" + (clock.map { " · night of \($0.nightTitle), \($0.displayHourMinute()) → \($0.displayHourMinute(at: session.duration))" } ?? "")]
        lines.append("  source \(session.source) · sensitivity \(session.settings.sensitivity) · classifier \(session.settings.classifier)"
                     + (session.settings.analyser.map { " · \($0)" } ?? ""))
        lines.append("  time in bed   \(Format.duration(session.duration))")
        if let gaps = session.gaps, !gaps.isEmpty {
            let starts = gaps.prefix(3).map { Format.time($0.start, on: clock) }.joined(separator: ", ") + (gaps.count > 3 ? ", …" : "")
            lines.append("  not recorded  \(Format.elapsed(session.secondsNotRecorded)) in \(gaps.count) gap\(gaps.count == 1 ? "" : "s") (from \(starts))")
        }
        for change in clock?.changes(within: session.duration) ?? [] { lines.append("  clock         \(change)") }
        // Rates and the share are over the time recorded; a night with gaps says so.
        let gapped = session.secondsNotRecorded > 0
        lines.append("  snoring       \(Format.minutes(s.snoringMinutes)) · \(Format.percent(s.snoringPercent)) "
                     + (gapped ? "of the time recorded · " : "of the night · ")
                     + "\(s.snoringEpisodes) episode\(s.snoringEpisodes == 1 ? "" : "s")")
        let rates = NightReport.rates(session)
        lines.append("  per hour      " + EventClass.allCases.map { c in
            "\(Format.className(c).lowercased()) \(session.events.count(of: c)) "
                + "(\(Format.fixed(rates[c.rawValue] ?? 0, 1))/h\(gapped ? " recorded" : ""))"
        }.joined(separator: " · "))
        for w in session.warnings { lines.append("  warning: \(w)") }
        lines.append("  folder        \(folder.path)")
        // A night imported from elsewhere names its recording: written out, not run by the terminal.
        print(lines.map { Format.printable($0) }.joined(separator: "\n"))
        func at(_ seconds: Double) -> String { Format.time(seconds, on: clock) }

        // The episodes first: when a night snored, in a few lines rather than hundreds of snores.
        if classes.contains(.snoring), !session.episodes.isEmpty {
            var episodes = TextTable(headers: ["Episode", "From", "To", "Length", "Snores", "Loudest dBFS"], numeric: [0, 3, 4, 5])
            let loudestOf = session.loudestEventOfEachEpisode
            for (i, episode) in session.episodes.enumerated() {
                episodes.rows.append([String(i + 1), at(episode.start), at(episode.end), Format.elapsed(episode.end - episode.start),
                                      String(episode.eventCount), loudestOf[i].map { Format.fixed($0.peakDBFS, 1) } ?? "–"])
            }
            print("\n" + episodes.render())
        }
        let listed = session.events.filter { classes.contains($0.eventClass) }
        guard !listed.isEmpty else {
            let which = classes.count == EventClass.allCases.count ? "" : " of " + classes.sorted().map(\.rawValue).joined(separator: " or ")
            return print("\nNo events\(which).")
        }
        var table = TextTable(headers: ["Event", "Time", "Class", "Duration", "Peak dBFS", "Severity", "Clip"],
                              numeric: [3, 4, 5])
        for e in listed.sorted(by: { $0.start < $1.start }) {
            table.rows.append([Format.printable(e.id), at(e.start),
                               // Rounded as the report rounds them (half away from zero; printf's %.1f made 1.25 s "1.2").
                               Format.className(e.eventClass), Format.fixed(e.duration, 1) + " s",
                               Format.fixed(e.peakDBFS, 1), Format.fixed(e.severity, 0), e.clip.map { Format.printable($0) } ?? "–"])
        }
        print("\n" + table.render())
    }
}
