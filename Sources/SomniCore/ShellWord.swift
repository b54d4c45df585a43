import Foundation

/// `text` as one word for a POSIX shell, for a command a message gives to be pasted: as it is
/// when it holds nothing a shell reads specially; else in double quotes (messages put whole
/// commands in single ones) with the four characters special there escaped; and in single
/// quotes when it holds a `!`, which an interactive shell expands even inside double ones.
public func shellWord(_ text: String) -> String {
    let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,")
    if !text.isEmpty, text.allSatisfy(plain.contains) { return text }
    if text.contains("!") { return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    var quoted = "\""
    for character in text {
        if "\\\"$`".contains(character) { quoted.append("\\") }
        quoted.append(character)
    }
    return quoted + "\""
}
