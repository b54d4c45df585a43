import Foundation
import Testing

/// Each command's --help: how it is used, and every option it names there explained, in a column.
@Suite struct HelpTests {
    static func commands() throws -> [String] {
        let listing = try CLI.run(["--help"]).stdout
        return listing.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  "), let first = line.split(separator: " ").first,
                  first.allSatisfy({ $0.isLetter }) else { return nil }
            return String(first)
        }
    }

    @Test func everyCommandExplainsTheOptionsItsUsageNamesInOneColumn() throws {
        let commands = try Self.commands()
        #expect(commands.count >= 14 && commands.contains("analyze") && commands.contains("report"), "\(commands)")
        for command in commands {
            let help = try CLI.run([command, "--help"])
            #expect(help.status == 0, "\(command)")
            let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.first?.hasPrefix("Usage: somni \(command)") == true, "\(command): \(lines.first ?? "")")

            let usage = lines.prefix { !$0.isEmpty }.joined(separator: " ")
            let words = usage.split { !($0.isLetter || $0.isNumber || $0 == "-") }
            let named = Set(words.filter { $0.hasPrefix("--") && $0.count > 2 }.map(String.init))
            let optionLines = lines.filter { $0.hasPrefix("  -") }
            let explained = Set(optionLines.compactMap { $0.dropFirst(2).split(separator: " ").first.map(String.init) })
            #expect(named.subtracting(explained).isEmpty, "\(command) --help leaves unexplained: \(named.subtracting(explained).sorted())")

            // Where each description starts: after the option's name and a gap of two spaces or more.
            let columns = Set(optionLines.compactMap { line -> Int? in
                guard let gap = line.dropFirst(2).firstRange(of: "  ") else { return nil }
                let rest = line[gap.upperBound...]
                guard let text = rest.firstIndex(where: { $0 != " " }) else { return nil }
                return line.distance(from: line.startIndex, to: text)
            })
            #expect(columns.count == 1, "\(command) --help: descriptions start at columns \(columns.sorted())")

            // A description that runs on over more lines keeps to its column (or goes deeper).
            guard let column = columns.first else { continue }
            var inOption = false
            for line in lines {
                if line.hasPrefix("  -") { inOption = true; continue }
                guard inOption, line.hasPrefix("   ") else { inOption = false; continue }
                let indent = line.prefix { $0 == " " }.count
                #expect(indent >= column, "\(command) --help: '\(line)' starts at column \(indent), left of the descriptions' \(column)")
            }
        }
    }
}
