import Foundation
import SomniCore
import SomniReport
import SomniStore

struct ExportCommand: Command {
    static let name = "export"
    static let summary = "Export one night or all nights as CSV (one row per event) or JSON"
    static let help = """
    Usage: somni export NIGHT|--all [--from DATE] [--to DATE] [--format csv|json] [--rows event|night] [-o FILE] [--store DIR]

    CSV has one row per event: night, night_date, event, class, start_s, end_s, clock, duration_s,
    confidence, peak_dbfs, mean_dbfs, severity, clip, started_at (the event's start in ISO 8601
    with the bedroom clock's offset, for joining with other records). With --rows night it has
    one row per night instead: night, night_date, started_at, bedtime, wake, source, duration_h,
    analysed_h, active_share, sensitivity, classifier, snoring_minutes, snoring_percent,
    snoring_episodes, snoring/sleep_talk/cough _events and _per_h (per hour recorded), recorded_h
    (the night less its gaps). JSON holds each night's record and its full session.json.

      --all            every night in the store
    \(NightRange.help(column: 19))
      --format KIND    csv (default) or json
      --rows WHAT      csv: a row per event (default) or per night
      -o FILE          write to FILE instead of standard output ('-': standard output)
    \(StoreOptions.help(column: 19))
    """

    var options: StoreOptions
    var key: String?
    var all: Bool
    var format: NightExport.Format
    var output: String?
    var rowPerNight: Bool
    var range: NightRange

    init(_ a: inout Arguments) throws {
        options = try StoreOptions(&a, command: Self.name, acceptsJSON: false)
        all = a.flag("--all")
        let f = try a.option("--format") ?? "csv"
        guard let format = NightExport.Format(rawValue: f.lowercased()) else {
            throw UsageError("--format must be csv or json, not '\(f)'")
        }
        self.format = format
        output = try a.fileOption("-o")
        if output == "-" { output = nil }
        range = try NightRange(&a)
        let rows = try a.option("--rows") ?? "event"
        guard ["event", "night"].contains(rows) else { throw UsageError("--rows must be event or night, not '\(rows)'") }
        rowPerNight = rows == "night"
        key = a.positional()
    }

    func validate() throws {
        if all == (key != nil) { throw UsageError("give either a NIGHT or --all") }
        if range.isGiven, !all { throw UsageError("--from and --to go with --all") }
        if rowPerNight, format != .csv { throw UsageError("--rows night is for CSV; JSON holds each night's record already") }
    }

    func run() throws {
        if let output { try options.refuseOverwritingTheStore(URL(fileURLWithPath: output)) }
        // Every night of a store not made yet is none: an empty export, and a word on where.
        let store = all ? try options.openIfPresent() : try options.open()
        if store == nil { printError("somni export: no night store at \(options.directory.path) yet: nothing to export") }
        let records = try store.map { s in try all ? range.filter(s.nights()) : [s.night(matching: key ?? "")] } ?? []
        let text: String
        let exported: Int  // nights in the export: not one left out for a lost folder
        var deletedMeanwhile = 0  // nights another somni deleted since they were listed: not in the store
        if rowPerNight {
            text = NightExport.nightsCSV(records)  // the store's records alone
            exported = records.count
            // Its row needs no folder, but a night whose folder is lost is said, as every other
            // export and the report say it.
            for record in records {
                do { _ = try store?.existingFolder(of: record) } catch is NightStore.NightGone {} catch {
                    printError("somni export: warning: night \(record.id) has lost its folder; its row is from the store's "
                               + "index alone: put the folder back, or 'somni delete \(record.id)' forgets the night")
                }
            }
        } else {
            // With --all, a night whose folder is lost (or unreadable) is left out with a word, not
            // every other night with it.
            let nights = try store.map { s in
                try records.compactMap { record -> (record: NightRecord, session: Session)? in
                    do { return (record, try s.session(of: record)) } catch is NightStore.NightGone where all {
                        deletedMeanwhile += 1  // by another somni since the nights were listed: not in the store
                        return nil
                    } catch where all {
                        printError("somni export: warning: night \(record.id) is left out: \(error)")
                        return nil
                    }
                }
            } ?? []
            text = try NightExport.render(nights, as: format)
            exported = nights.count
        }
        if let output {
            let url = URL(fileURLWithPath: output)
            do { try writeOutputFile(Data(text.utf8), to: url) } catch let error as SomniError { throw error } catch {
                throw SomniError(.io, "cannot write \(url.path)", cause: error)
            }
            printError("Exported \(exported) night\(exported == 1 ? "" : "s") to \(url.path)")
        } else {
            print(text, terminator: "")
            StandardStreams.flushOutput()
        }
        // Output that could not be written is said once, by the end of main, with exit 74.
        guard StandardStreams.outputFailure == nil else { return }
        // The rest is written, and the exit says the export is not whole: a script or a cron job
        // reading only the status took it for every night.
        if exported < records.count - deletedMeanwhile {
            throw SomniError(.badInput, "\(records.count - deletedMeanwhile - exported) of \(records.count - deletedMeanwhile) "
                             + "nights left out of the export (named above); the rest is written")
        }
    }
}
