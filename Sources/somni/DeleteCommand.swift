import Foundation
import SomniCore
import SomniStore

struct DeleteCommand: Command {
    static let name = "delete"
    static let summary = "Delete stored nights with their events and folders (clips included)"
    static let help = """
    Usage: somni delete NIGHT [--store DIR]
           somni delete [--from DATE] [--to DATE] [--yes] [--store DIR]

    NIGHT is a night id or a date (YYYY-MM-DD: the evening the night began; a night begun after
    midnight is deleted by its id, not by that day's date). Removes the night's rows (events, stages and cough
    checks go with it) and its folder, clips included. There is no undo.

    With --from and --to instead, the dated nights between them (by the evening each began) are
    listed with the space they take; --yes deletes them. A year of nights with their clips can
    fill a small disk: 'somni delete --to 2026-06-30 --yes' frees the first half of the year.

    \(NightRange.help(column: 16))
      --yes         delete the nights the dates pick (without it they are only listed)
    \(StoreOptions.help())
    """

    var options: StoreOptions
    var key: String?
    var range: NightRange
    var confirmed: Bool
    init(_ a: inout Arguments) throws {
        options = try StoreOptions(&a, command: Self.name, acceptsJSON: false)
        range = try NightRange(&a)
        confirmed = a.flag("--yes")
        key = a.positional()
    }

    func validate() throws {
        if (key != nil) == range.isGiven { throw UsageError("give a NIGHT, or --from and/or --to") }
        if confirmed, !range.isGiven { throw UsageError("--yes goes with --from and --to; a NIGHT is deleted without it") }
    }

    func run() throws {
        let store = try options.open(warnIfReadOnly: false)
        guard range.isGiven else {
            let night = try store.night(matching: key ?? "", byEveningOnly: true)
            let hadFolder = FileManager.default.fileExists(atPath: store.folder(of: night).path)
            guard try store.delete(night) else { throw Self.changedMeanwhile(night) }
            return print("Deleted night \(night.id) (\(night.eventTotal) events) "
                         + (hadFolder ? "and its folder." : "(its folder was already gone)."))
        }
        let nights = range.filter(try store.nights())
        let span = range.span
        guard !nights.isEmpty else { return print("No dated night \(span).") }
        let sizes = nights.map { Self.size(of: store.folder(of: $0)) }
        func spoken(_ bytes: Int) -> String { ByteCountFormatter.string(fromByteCount: Int64(bytes), countStyle: .file) }
        let size = spoken(sizes.reduce(0, +))
        guard confirmed else {
            var table = TextTable(headers: ["Night", "Date", "Events", "Size"], numeric: [2, 3])
            table.rows = zip(nights, sizes).map { [$0.id, $0.nightDate ?? "–", String($0.eventTotal), spoken($1)] }
            print(table.render())
            // A store on a read-only disk, or another user's, is listed but cannot be changed.
            let advice = store.readOnlyBecause == .notWritable
                ? "the night store cannot be written (a read-only disk, or another user's folder), so they cannot be deleted from here"
                : "run again with --yes to delete them"
            return print("\(nights.count) night\(nights.count == 1 ? "" : "s") \(span), \(size): \(advice).")
        }
        var kept: [NightRecord] = [], freed = 0
        for (night, bytes) in zip(nights, sizes) {
            if try store.delete(night) { freed += bytes } else { kept.append(night) }
        }
        let deleted = nights.count - kept.count
        print("Deleted \(deleted) night\(deleted == 1 ? "" : "s") \(span) and their folders, \(spoken(freed)).")
        if !kept.isEmpty {
            printError("somni delete: \(kept.map(\.id).joined(separator: ", ")): "
                       + "deleted or analysed again by another command meanwhile, so not deleted here")
        }
    }

    /// A night another command deleted, or saved again (`analyze --replace`), between its
    /// reading and its deletion: the new analysis is kept.
    static func changedMeanwhile(_ night: NightRecord) -> SomniError {
        SomniError(.badInput, "night \(night.id) was deleted or analysed again by another command meanwhile; "
                   + "nothing was deleted here (see 'somni nights')")
    }

    /// The bytes of the files under `folder` (0 when it is gone).
    static func size(of folder: URL) -> Int {
        guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey]) else { return 0 }
        return files.reduce(0) { total, item in
            total + ((item as? URL).flatMap { try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize } ?? 0)
        }
    }
}
