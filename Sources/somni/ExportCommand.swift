import Foundation
import SomniCore
import SomniReport
import SomniStore

struct ExportCommand: Command {
    static let name = "export"
    static let summary = "Export one night or all nights as CSV (one row per event) or JSON"
    static let help = """
    Usage: somni export NIGHT|--all [--format csv|json] [-o FILE] [--store DIR]

    CSV has one row per event: night, night_date, event, class, start_s, end_s, clock, duration_s,
    confidence, peak_dbfs, mean_dbfs, severity, clip. JSON holds each night's record and its full
    session.json.

      --all            every night in the store
      --format KIND    csv (default) or json
      -o FILE          write to FILE instead of standard output
    \(StoreOptions.help(column: 19))
    """

    var options: StoreOptions
    var key: String?
    var all: Bool
    var format: NightExport.Format
    var output: String?

    init(_ a: inout Arguments) throws {
        options = try StoreOptions(&a, acceptsJSON: false)
        all = a.flag("--all")
        let f = try a.option("--format") ?? "csv"
        guard let format = NightExport.Format(rawValue: f.lowercased()) else {
            throw UsageError("--format must be csv or json, not '\(f)'")
        }
        self.format = format
        output = try a.option("-o")
        key = a.positional()
    }

    func validate() throws {
        if all == (key != nil) { throw UsageError("give either a NIGHT or --all") }
    }

    func run() throws {
        let store = try options.open()
        let records = try all ? store.nights() : [store.night(matching: key ?? "")]
        let nights = try records.map { (record: $0, session: try store.session(of: $0)) }
        let text = try NightExport.render(nights, as: format)
        guard let output else { return print(text, terminator: "") }
        let url = URL(fileURLWithPath: output)
        do { try Data(text.utf8).write(to: url, options: .atomic) } catch {
            throw SomniError(.io, "cannot write \(url.path)", cause: error)
        }
        printError("Exported \(nights.count) night\(nights.count == 1 ? "" : "s") to \(url.path)")
    }
}
