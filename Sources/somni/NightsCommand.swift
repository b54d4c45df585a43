import Foundation
import SomniCore
import SomniReport
import SomniStore

struct NightsCommand: Command {
    static let name = "nights"
    static let summary = "List the nights in the store: date, bedtime, wake, time in bed, snoring"
    static let help = """
    Usage: somni nights [--from DATE] [--to DATE] [--store DIR] [--json]

    Lists every stored night, oldest first: id, date (the evening it began), bedtime, wake, time in
    bed, snoring episodes, snoring minutes and share of the night (of the time recorded, where a
    night has gaps). Use the id or the date as NIGHT in show, delete, export and report. Nights
    that repeat a recording stored before them (analysed twice before stop 38, when Somni did not
    yet know a recording again, or dated by hand and then analysed again without the date before
    stop 44) are named below it.

    \(NightRange.help(column: 16))
    \(StoreOptions.help())
    \(StoreOptions.jsonHelp())
    """

    /// One line of the listing; the same fields in the table and in --json.
    struct Row: Encodable {
        var id: String
        var date: String?
        var bedtime: String?
        var wake: String?
        var durationSeconds: Double
        var episodes: Int
        var snoringMinutes: Double
        var snoringPercent: Double
        var events: [String: Int]
        var source: String

        init(_ r: NightRecord) {
            id = r.id; date = r.nightDate; bedtime = r.bedtime; wake = r.wake; durationSeconds = r.duration
            episodes = r.snoringEpisodes; snoringMinutes = r.snoringMinutes; snoringPercent = r.snoringPercent
            events = r.eventCounts; source = r.source
        }
    }

    var options: StoreOptions
    var range: NightRange
    init(_ a: inout Arguments) throws {
        options = try StoreOptions(&a, command: Self.name)
        range = try NightRange(&a)
    }

    func run() throws {
        let store = try options.openIfPresent()
        let listed = range.filter(try store?.nights() ?? [])
        let rows = listed.map(Row.init)
        // With no database at all (removed), every folder there is one no night names.
        let unlisted = try store?.unlistedFolders() ?? NightStore.nightFolders(inStoreAt: options.directory)
        if !unlisted.isEmpty {
            printError("somni nights: warning: \(unlisted.count == 1 ? "a folder" : "\(unlisted.count) folders") in the store's "
                       + "nights folder no stored night names (put there by hand, or kept from before an older database "
                       + "was put back), left as \(unlisted.count == 1 ? "it is" : "they are"): "
                       + unlisted.map(\.path).joined(separator: ", ")
                       + "; a night folder moved out of the store is added back by 'somni import FOLDER --move'")
        }
        // Nights recorded into the store that are not in it yet: being recorded, or left by a
        // recorder that died (or a save that did) for recover to close and save.
        let recording = options.directory.appendingPathComponent("recording", isDirectory: true)
        let waiting = NightJournal.unfinishedNights(under: recording) + NightJournal.analysedNights(under: recording)
        if !waiting.isEmpty {
            printError("somni nights: \(waiting.count == 1 ? "a night" : "\(waiting.count) nights") in \(recording.path) "
                       + "\(waiting.count == 1 ? "is" : "are") not in the store yet (being recorded, or waiting for "
                       + "'somni recover --store \(shellWord(options.directory.path))' to close and save \(waiting.count == 1 ? "it" : "them"))")
        }
        if options.json { return try printJSON(rows) }
        guard !rows.isEmpty else {
            if range.isGiven { return print("No dated night \(range.span).") }
            let noStore = store == nil && waiting.isEmpty
            return print("No nights stored yet\(noStore ? " (no store at \(options.directory.path) yet)" : ""). "
                         + "'somni analyze FILE' or 'somni import FOLDER' adds one.")
        }
        var table = TextTable(headers: ["Night", "Date", "Bedtime", "Wake", "In bed", "Episodes", "Snoring", "%"],
                              numeric: [4, 5, 6, 7])
        for r in rows {
            table.rows.append([r.id, r.date ?? "–", r.bedtime ?? "–", r.wake ?? "–", Format.duration(r.durationSeconds),
                               String(r.episodes), Format.minutes(r.snoringMinutes), Format.percent(r.snoringPercent)])
        }
        print(table.render())
        let copies = NightStore.copies(among: listed)
        if !copies.isEmpty {
            print("\n\(copies.count) night\(copies.count == 1 ? " repeats" : "s repeat") a recording stored before "
                  + "(analysed again before Somni knew it again), and the trends count each copy: "
                  + copies.map { "\($0.copy.id) (of \($0.of))" }.joined(separator: ", ")
                  + ". 'somni delete ID' removes one.")
        }
    }
}
