import Foundation
import SomniReport
import SomniCore

/// A small argument reader in swift-argument-parser's shape: each subcommand pulls its options and
/// positionals out of the list in `init`, and anything left over is an error.
struct Arguments {
    private var items: [String]
    /// What follows `--`: positionals only, a file named `--x` among them.
    private var afterDoubleDash: [String] = []
    /// Flags and options already read, so one given twice is named as such by `finish()`.
    private var read: Set<String> = []

    init(_ items: [String]) {
        guard let end = items.firstIndex(of: "--") else {
            self.items = items
            return
        }
        self.items = Array(items[..<end])
        afterDoubleDash = Array(items[(end + 1)...])
    }

    /// `--name` present?
    mutating func flag(_ name: String) -> Bool {
        read.insert(name)
        guard let i = items.firstIndex(of: name) else { return false }
        items.remove(at: i)
        return true
    }

    /// `--name VALUE` or `--name=VALUE`.
    mutating func option(_ name: String) throws -> String? {
        read.insert(name)
        if let i = items.firstIndex(where: { $0.hasPrefix(name + "=") }) {
            let v = String(items[i].dropFirst(name.count + 1))
            items.remove(at: i)
            return v
        }
        guard let i = items.firstIndex(of: name) else { return nil }
        guard i + 1 < items.count else { throw UsageError("\(name) needs a value") }
        let v = items[i + 1]
        items.removeSubrange(i...(i + 1))
        return v
    }

    /// An option naming a file to write (`-o FILE`, `--out MODEL`). An empty name, or one ending
    /// in '/' (a folder was meant), is refused before any work: it was written as a file named
    /// like the folder, or refused only after a whole training run.
    mutating func fileOption(_ name: String) throws -> String? {
        guard let value = try option(name) else { return nil }
        if value.isEmpty { throw UsageError("\(name) needs a file name") }
        if value.hasSuffix("/") { throw UsageError("\(name) needs a file name, not a folder ('\(value)')") }
        return value
    }

    /// Every `--name VALUE` of an option that may be given more than once, in order.
    mutating func repeatedOption(_ name: String) throws -> [String] {
        var values: [String] = []
        while let v = try option(name) { values.append(v) }
        return values
    }

    mutating func option<T: LosslessStringConvertible>(_ name: String, as: T.Type) throws -> T? {
        guard let s = try option(name) else { return nil }
        // Swift reads "0x32" as 50 and "nan" as a number: an option takes decimals only.
        let decimal = !(T.self is any BinaryFloatingPoint.Type) || Arguments.decimal(s) != nil
        guard decimal, let v = T(s) else {
            let kind = T.self is any BinaryFloatingPoint.Type ? "a number"
                : T.self is any UnsignedInteger.Type ? "a whole number from 0" : T.self is any BinaryInteger.Type ? "a whole number" : "\(T.self)"
            throw UsageError("\(name) takes \(kind), not '\(s)'")
        }
        return v
    }

    /// `text` as a finite number written in decimal ("45", "-0.5", "1e3"); nil for anything else,
    /// hexadecimal ("0x32"), "nan" and "inf" included.
    static func decimal(_ text: String) -> Double? {
        let allowed = Set("0123456789.+-eE")
        guard !text.isEmpty, text.allSatisfy(allowed.contains), let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `--sensitivity N` for the analysis (analyze, record, recover): 1…10, 5 when not given.
    mutating func sensitivity() throws -> Int {
        let level = try option("--sensitivity", as: Int.self) ?? Sensitivity.standard
        guard Sensitivity.range.contains(level) else { throw UsageError("--sensitivity must be 1…10, not \(level)") }
        return level
    }

    /// The next positional argument, if any (options must have been read first).
    mutating func positional() -> String? {
        guard let i = items.firstIndex(where: { !$0.hasPrefix("--") || $0 == "-" }) else {
            return afterDoubleDash.isEmpty ? nil : afterDoubleDash.removeFirst()
        }
        return items.remove(at: i)
    }

    mutating func requiredPositional(_ what: String) throws -> String {
        guard let v = positional() else { throw UsageError("missing \(what)") }
        return v
    }

    /// Throws when anything was not consumed.
    func finish() throws {
        guard let extra = items.first ?? afterDoubleDash.first else { return }
        let name = String(extra.prefix { $0 != "=" })
        if read.contains(name) { throw UsageError("\(name) is given more than once") }
        throw UsageError("unexpected argument '\(extra)'" + (extra.hasPrefix("-") ? " (no option of this command; a file name that begins with - goes after --)" : ""))
    }
}

/// A mistake in how the command was called: exit code 64, with a pointer to --help.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// One subcommand: read arguments in `init`, check them in `validate`, do the work in `run`.
protocol Command {
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// Full help: usage line and every flag.
    static var help: String { get }
    init(_ arguments: inout Arguments) throws
    func validate() throws
    func run() throws
}

extension Command {
    func validate() throws {}
}

/// Prints a line to standard error.
/// A message for a person: control characters from a file's name (an escape sequence that
/// clears the screen) are written out, its own line breaks kept.
func printError(_ message: String) {
    writeToStandardError(Format.printable(message, keepingLineBreaks: true) + "\n")
}

/// Writes to standard error, and never stops the command when that fails: with standard error
/// closed or full (`2>&-`, `2>/dev/full`) a message is lost, not the command's work with it
/// (`FileHandle.write(_:)` traps on a failed write).
func writeToStandardError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
}

/// True when standard output is a terminal (progress bars only then).
var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
