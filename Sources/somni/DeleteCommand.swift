import Foundation
import SomniCore
import SomniStore

struct DeleteCommand: Command {
    static let name = "delete"
    static let summary = "Delete a stored night with its events and its folder (clips included)"
    static let help = """
    Usage: somni delete NIGHT [--store DIR]

    NIGHT is a night id or a date (YYYY-MM-DD). Removes the night's rows (events, stages and cough
    checks go with it) and its folder, clips included. There is no undo.

    \(StoreOptions.help())
    """

    var options: StoreOptions
    var key: String
    init(_ a: inout Arguments) throws {
        options = try StoreOptions(&a, acceptsJSON: false)
        key = try a.requiredPositional("NIGHT (an id or a date)")
    }

    func run() throws {
        let store = try options.open()
        let night = try store.night(matching: key)
        let hadFolder = FileManager.default.fileExists(atPath: store.folder(of: night).path)
        try store.delete(night)
        print("Deleted night \(night.id) (\(night.eventTotal) events) " + (hadFolder ? "and its folder." : "(its folder was already gone)."))
    }
}
