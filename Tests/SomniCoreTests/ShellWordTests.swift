import Foundation
import Testing
import SomniCore

/// A command a message gives is pasted into a shell: each path in it must come back whole.
struct ShellWordTests {
    @Test(arguments: ["/plain/path-1.2", "with space", "it's", "a\"b", "$HOME", "back`tick`", "back\\slash",
                      "Nights!2026", "it's!", "", "Schlafzimmer Nächte", "tab\there"])
    func aWordComesBackWholeFromTheShell(_ text: String) throws {
        let word = shellWord(text)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "printf %s " + word]
        let output = Pipe()
        shell.standardOutput = output
        try shell.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        shell.waitUntilExit()
        #expect(String(decoding: data, as: UTF8.self) == text, "\(text) written \(word)")
        // An interactive shell expands ! inside double quotes, not inside single ones.
        if text.contains("!") { #expect(word.hasPrefix("'") && word.hasSuffix("'"), "\(word)") }
    }

    @Test func aPlainPathIsLeftAsItIs() {
        #expect(shellWord("/home/u/.local/share/somni") == "/home/u/.local/share/somni")
        #expect(shellWord("my nights") == "\"my nights\"")
    }
}
