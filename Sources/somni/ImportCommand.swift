import Foundation
import SomniReport
import SomniCore
import SomniStore

struct ImportCommand: Command {
    static let name = "import"
    static let summary = "Add a night folder made elsewhere (session.json, envelope.bin, clips/) to the store"
    static let help = """
    Usage: somni import NIGHT_FOLDER [--move] [--replace] [--store DIR] [--json]

    Copies a night folder (as written by 'somni analyze --out') into the store and prints its id.
    Every clip session.json names must be inside the folder. The store is unchanged if anything fails.
    A night of a recording already in the store (the same content, and the same start where both
    say one) is refused.

      --move        remove the folder once it is safely in the store (it is copied first, so a
                    crash part-way never loses it)
      --replace     put it in place of the stored night of the same recording
    \(StoreOptions.help())
      --json        print the stored night's record as JSON
    """

    var options: StoreOptions
    var folder: String
    var move: Bool
    var replace: Bool
    init(_ a: inout Arguments) throws {
        options = try StoreOptions(&a, command: Self.name)
        move = a.flag("--move")
        replace = a.flag("--replace")
        folder = try a.requiredPositional("NIGHT_FOLDER")
    }

    func run() throws {
        let store = try options.open(access: .readWrite)
        let source = URL(fileURLWithPath: folder, isDirectory: true)
        // The folder's own problems (no session.json, a broken one) are add's to report.
        let session = try? Session.load(from: source.appendingPathComponent(Session.fileName))
        let earlier = try session.map { s in
            try store.nights(recordedFrom: s.source, startedAt: NightClock(iso: s.startedAt)?.start, fingerprint: s.sourceFingerprint)
        } ?? []
        if let stored = earlier.first, !replace {
            throw SomniError(.badInput, "\(source.path) is a night of \(Format.printable(stored.source)), already in the store as \(stored.id); "
                             + "--replace puts it in that night's place")
        }
        // An undated folder of a recording stored dated keeps that start, as analyze --replace
        // does: it stayed undated under a new id, and left every dated list.
        let datedLike = session?.startedAt == nil ? try earlier.first { $0.start != nil }.map { try store.session(of: $0) } : nil
        let record: NightRecord, replaced: [NightRecord]
        do {
            (record, replaced) = try store.save(nightFolder: source, moving: false, replacing: earlier, unlessStored: true,
                                                datedLike: datedLike)
        } catch let saved as NightStore.AlreadyStored {
            throw SomniError(.badInput, "\(source.path) is a night of \(Format.printable(saved.night.source)), stored as \(saved.night.id) while this "
                             + "import ran; --replace puts it in that night's place")
        }
        if move {
            // Renamed out of the way first, then removed: a kill part-way through the removal left
            // a folder holding only clips/ under the night's name, "not a night folder" to a
            // second import, though the night was stored. A hidden leftover is swept by the next
            // removal beside it once six hours old.
            let going = PartialFile.url(for: source)
            PartialFile.removeAbandoned(of: source)
            do {
                if rename(source.path, going.path) == 0 {
                    try FileManager.default.removeItem(at: going)
                } else {
                    try FileManager.default.removeItem(at: source)
                }
            } catch {
                printError("somni import: warning: the night is stored, but \(source.path) could not be removed: \(error)")
            }
        }
        if options.json { return try printJSON(record) }
        print("Imported night \(record.id)" + (record.nightDate.map { " (night of \($0))" } ?? "")
              + ": \(record.eventTotal) events, stored in \(store.folder(of: record).path)"
              + Self.replacing(replaced.map(\.id), by: record.id)
              + (datedLike != nil && record.start != nil ? "; it keeps the start stored before, as the folder gives none" : ""))
    }

    /// What the import says of the nights it replaced.
    private static func replacing(_ ids: [String], by id: String) -> String {
        let others = ids.filter { $0 != id }
        return (others.count < ids.count ? "; it replaces the night stored before under that id" : "")
            + (others.isEmpty ? "" : "; it replaces \(others.joined(separator: ", "))")
    }
}
