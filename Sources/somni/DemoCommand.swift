import Foundation
import SomniCore

struct DemoCommand: Command {
    static let name = "demo"
    static let summary = "Synthesise a short night from generated sounds, analyse it, print the summary"
    static let help = """
    Usage: somni demo [--out DIR]

    Builds a short night from sounds generated in code (no recordings needed), analyses it and
    prints the summary and where the night folder is.

      --out DIR   where to write the demo night (default: a folder under the system temp dir)
    """
    var out: String?
    init(_ a: inout Arguments) throws { out = try a.option("--out") }
    func run() throws {
        print("somni demo: not yet wired")
    }
}
