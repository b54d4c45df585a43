import Foundation
import SomniCore
import SomniReport
import SomniStore

/// `--store DIR` and `--json`, shared by the commands that read or change the night store.
struct StoreOptions {
    var store: String?
    var json: Bool
    /// The command's name, for the warning a read-only store prints.
    var command: String

    /// The options' lines, their descriptions starting at `column` as the command's own do.
    static func help(column: Int = 16) -> String {
        HelpText.option("--store DIR", column: column, "the night store (default: $SOMNI_STORE when set, else",
                        "$XDG_DATA_HOME/somni, else ~/.local/share/somni)")
    }
    static func jsonHelp(column: Int = 16, holding what: String? = nil) -> String {
        HelpText.option("--json", column: column, "print JSON instead of a table" + (what.map { ": \($0)" } ?? ""))
    }

    init(_ a: inout Arguments, command: String, acceptsJSON: Bool = true) throws {
        self.command = command
        store = try a.option("--store")
        // An empty one (an unset variable, `--store "$DIR"`) was the default store, which a
        // delete --yes meant for another would then empty.
        if store?.isEmpty == true { throw UsageError("--store needs a folder") }
        json = acceptsJSON ? a.flag("--json") : false
    }

    var directory: URL { NightStore.defaultDirectory(explicit: store) }

    /// Commands that only read (and `delete`, which frees space first) still open a store on a
    /// full disk, read-only; those that add nights ask for `.readWrite`, and make the store when
    /// there is none. Reading never makes one: a mistyped --store is named as holding no store,
    /// not made into an empty one that looks like a store whose nights are gone.
    /// `delete` says nothing of a read-only store: it frees space itself.
    func open(access: NightStore.Access = .readOnlyIfDiskFull, warnIfReadOnly: Bool = true) throws -> NightStore {
        guard let opened = try openIfPresent(access: access, warnIfReadOnly: warnIfReadOnly) else {
            throw SomniError(.badInput, "there is no night store at \(directory.path) (no \(NightStore.databaseName) there): "
                             + "check the path; 'somni analyze FILE' or 'somni import FOLDER' makes it")
        }
        return opened
    }

    /// As `open`, but nil, with nothing made, when reading a store that does not exist yet.
    func openIfPresent(access: NightStore.Access = .readOnlyIfDiskFull, warnIfReadOnly: Bool = true) throws -> NightStore? {
        let directory = directory
        // Not a store "not made yet" (which analyze was then offered to make, and could not).
        try NightStore.refuseAFile(at: directory)
        if access == .readOnlyIfDiskFull,
           !FileManager.default.fileExists(atPath: directory.appendingPathComponent(NightStore.databaseName).path) {
            return nil
        }
        let opened = try NightStore(directory: directory, access: access)
        if opened.readOnlyBecause == .notWritable {
            printError("somni \(command): note: the night store \(opened.directory.path) cannot be written (a read-only disk, "
                       + "or another user's folder), so it is only read")
        } else if opened.isReadOnly, warnIfReadOnly {
            printError("somni \(command): warning: the disk holding the night store \(opened.directory.path) is full, so the store "
                       + "is only read; 'somni delete NIGHT' frees a night's space even now")
        }
        return opened
    }

    /// Refuses an output file (`-o`) that would land on the store's own database (written
    /// there, an export replaced the index of every night) or on a stored night's own files. A
    /// page of its own in a night's folder is fine: the report links the clips from there.
    func refuseOverwritingTheStore(_ output: URL) throws {
        let path = output.standardizedFileURL.resolvingSymlinksInPath().path
        let store = directory.standardizedFileURL.resolvingSymlinksInPath().path
        let database = store + "/" + NightStore.databaseName
        let inNights = ["nights", "staging", "incoming"].contains { path.hasPrefix(store + "/" + $0 + "/") }
        let nightsOwn = [Session.fileName, EnvelopeFile.fileName].contains(output.lastPathComponent) || path.contains("/clips/")
        if path.hasPrefix(database) || (inNights && nightsOwn) {
            throw UsageError("-o \(output.path) would write over the night store's own files; write it elsewhere")
        }
    }
}

/// Refuses a bare night folder (`--out`) inside the default night store's own folders: the
/// store would take it for a leftover of its own, or for a night it does not list. Links are
/// followed as far as the path exists (one through a link to the store got in, into staging/,
/// and the next store command swept it away). `instead`: what the command does without --out.
func refuseNightFolderInsideTheStore(_ out: String, instead: String) throws {
    let path = resolvedAsFarAsItExists(URL(fileURLWithPath: out)).path
    let store = resolvedAsFarAsItExists(NightStore.defaultDirectory(explicit: nil)).path
    if ["nights", "staging", "incoming", "recording"].contains(where: { path == store + "/" + $0 || path.hasPrefix(store + "/" + $0 + "/") }) {
        throw UsageError("--out \(out) is inside the night store's own folders; \(instead)")
    }
}

/// `url` with every link followed in the part of it that exists, the rest appended as given:
/// Foundation leaves a path through a link unresolved when its last parts are not made yet.
func resolvedAsFarAsItExists(_ url: URL) -> URL {
    var existing = url.standardizedFileURL, rest: [String] = []
    while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
        rest.insert(existing.lastPathComponent, at: 0)
        existing.deleteLastPathComponent()
    }
    return rest.reduce(existing.resolvingSymlinksInPath()) { $0.appendingPathComponent($1) }
}

/// Prints a value as pretty JSON with sorted keys.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    do { print(String(decoding: try encoder.encode(value), as: UTF8.self)) } catch {
        throw SomniError(.internalError, "cannot encode JSON output", cause: error)
    }
}

/// A plain text table: columns padded to their widest cell, numbers right-aligned.
struct TextTable {
    var headers: [String]
    /// Indexes of right-aligned (numeric) columns.
    var numeric: Set<Int>
    var rows: [[String]] = []

    func render() -> String {
        var widths = headers.map(\.count)
        for r in rows { for (i, cell) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            let joined = cells.enumerated().map { i, c in
                let pad = String(repeating: " ", count: max(0, widths[i] - c.count))
                return numeric.contains(i) ? pad + c : c + pad
            }.joined(separator: "  ")
            return String(joined.reversed().drop { $0 == " " }.reversed())
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}
