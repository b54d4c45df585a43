import Foundation
import Testing

/// Where a command's output goes when it is not a plain terminal or file: standard streams
/// closed or full, and `-o` naming a link or a pipe.
@Suite struct OutputStreamsTests {
    /// Runs somni through bash with `redirection` ("2>&-", ">/dev/full") applied.
    func run(_ arguments: [String], _ redirection: String, environment: [String: String] = [:]) throws -> CLIResult {
        try CLI.run(executable: URL(fileURLWithPath: "/bin/bash"),
                    ["-c", "exec \"$0\" \"$@\" \(redirection)", CLI.executable.path] + arguments, environment: environment)
    }

    /// A closed or full standard error loses the message, not the command: writing it had
    /// trapped (SIGILL, exit 132) whatever the command's own outcome.
    @Test func aClosedOrFullStandardErrorCostsTheMessageNotTheExitStatus() throws {
        let missing = try CLI.run(["analyze", "/nonexistent/night.wav"])
        #expect(missing.status == 65 && missing.stderr.contains("no such file"))
        for redirection in ["2>&-", "2>/dev/full"] {
            #expect(try run(["bogus"], redirection).status == 64, "\(redirection)")
            #expect(try run(["analyze", "/nonexistent/night.wav"], redirection).status == missing.status, "\(redirection)")
        }
    }

    /// Output that cannot be written is one error and exit 74, not a silent success; and with
    /// standard output closed, what a command prints never lands in a file it opens (the store's
    /// database took the closed stream's number).
    @Test func standardOutputThatCannotBeWrittenIsAnError() throws {
        let full = try run(["--version"], ">/dev/full")
        #expect(full.status == 74 && full.stderr.contains("could not write to standard output: No space left on device"),
                "\(full.status) \(full.stderr)")
        let closed = try run(["--version"], ">&-")
        #expect(closed.status == 74 && closed.stderr.contains("could not write to standard output: it is closed"), "\(closed.stderr)")

        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        let analysed = try run(["analyze", audio.path, "--classifier", "heuristic", "--no-clips", "--started", "2026-11-28 23:00"],
                               ">&-", environment: store)
        #expect(analysed.status == 74, "the night is saved, its summary could not be shown: \(analysed.stderr)")
        let listed = try CLI.run(["nights", "--json"], environment: store)
        let ids = try CLI.nightIDs(listed.stdout)
        #expect(listed.status == 0 && ids.count == 1, "\(listed.stderr)")

        // An export or a page larger than stdio's buffer is written past it, so a failed write
        // left nothing for the last flush to fail on: both said they succeeded.
        for arguments in [["export", "--all", "--format", "json"], ["report", "--all", "-o", "-"]] {
            let r = try run(arguments, ">/dev/full", environment: store)
            #expect(r.status == 74 && r.errorLines.count == 1
                    && r.stderr.contains("could not write to standard output: No space left on device"), "\(arguments): \(r.stderr)")
        }
    }

    /// A pipe whose reader has gone (`| head`, a `tee` that Ctrl-C ended first) is a closed output:
    /// the work goes on and is saved, and the exit says the output was lost. SIGPIPE killed the
    /// command (exit 141) at its next message, a recorder before its morning analysis.
    @Test func aPipeWhoseReaderIsGoneCostsTheOutputNotTheWork() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        // Both streams into a pipe that is closed at once: every message fails to be written.
        let r = try CLI.run(executable: URL(fileURLWithPath: "/bin/bash"),
                            ["-c", "\"$0\" analyze \"$1\" --classifier heuristic --started '2026-11-28 23:00' 2>&1 | true; "
                             + "echo \"status ${PIPESTATUS[0]}\"", CLI.executable.path, audio.path], environment: store)
        #expect(r.stdout.contains("status 74"), "\(r.stdout) \(r.stderr)")
        let listed = try CLI.run(["nights", "--json"], environment: store)
        #expect(try CLI.nightIDs(listed.stdout).count == 1, "the night is saved: \(listed.stdout) \(listed.stderr)")
    }

    /// `-o` through a link writes the link's target and keeps the link; `-o` a pipe streams into
    /// it. Both had been replaced by a plain file (as root, `-o /dev/full` replaced the device).
    @Test func anOutputThatIsALinkOrAPipeIsWrittenThroughNotReplaced() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        #expect(try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--no-clips", "--started", "2026-11-28 23:00"],
                            environment: store).status == 0)
        let expected = try CLI.run(["export", "--all"], environment: store).stdout
        #expect(expected.contains("2026-11-28"))
        let fm = FileManager.default

        let real = dir.appendingPathComponent("real.csv"), link = dir.appendingPathComponent("link.csv")
        try Data("old".utf8).write(to: real)
        try fm.createSymbolicLink(at: link, withDestinationURL: real)
        #expect(try CLI.run(["export", "--all", "-o", link.path], environment: store).status == 0)
        #expect(try fm.destinationOfSymbolicLink(atPath: link.path) == real.path)
        #expect(try String(contentsOf: real, encoding: .utf8) == expected)

        let fifo = dir.appendingPathComponent("fifo.csv")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        final class Box: @unchecked Sendable { var data = Data() }
        let read = Box(), done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            read.data = FileHandle(forReadingAtPath: fifo.path)?.readDataToEndOfFile() ?? Data()
            done.signal()
        }
        let exported = try CLI.run(["export", "--all", "-o", fifo.path], environment: store)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(String(decoding: read.data, as: UTF8.self) == expected)
        #expect((try fm.attributesOfItem(atPath: fifo.path)[.type] as? FileAttributeType) != .typeRegular, "still a pipe")
    }

    /// `-o -` is standard output, as for most tools: it had written a file named "-". A report
    /// there carries its clips inside it, since there is no folder beside it to copy them to.
    @Test func aDashForTheOutputIsStandardOutput() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        #expect(try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--started", "2026-11-28 23:00"],
                            environment: store).status == 0)
        let expected = try CLI.run(["export", "--all"], environment: store).stdout
        let exported = try CLI.run(["export", "--all", "-o", "-"], in: dir, environment: store)
        #expect(exported.status == 0 && exported.stdout == expected, "\(exported.stderr)")

        let page = try CLI.run(["report", "-o", "-"], in: dir, environment: store)
        #expect(page.status == 0, "\(page.stderr)")
        #expect(page.stdout.hasPrefix("<!doctype html>") && page.stdout.contains("data:audio/"), "clips embedded")
        #expect(page.stderr.contains("Wrote the page to standard output (1 night)"), "\(page.stderr)")
        let copied = try CLI.run(["report", "-o", "-", "--clips", "copy"], in: dir, environment: store)
        #expect(copied.status == 64 && copied.stdout.isEmpty && copied.stderr.contains("--clips embed"), "\(copied.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(!left.contains("-") && !left.contains { $0.hasSuffix("_clips") }, "\(left)")
    }
}
