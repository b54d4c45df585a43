/// Option lines for help texts shared by several commands, aligned to the column each command's
/// own options use.
enum HelpText {
    /// "  NAME" padded to `column`, then the description's lines, each further one indented to it.
    static func option(_ name: String, column: Int, _ lines: String...) -> String {
        let first = ("  " + name + " ").padding(toLength: max(column, name.count + 3), withPad: " ", startingAt: 0)
        let indent = String(repeating: " ", count: column)
        return first + lines.joined(separator: "\n" + indent)
    }
}
