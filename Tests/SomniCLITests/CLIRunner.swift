import Foundation
import Testing

/// Runs the built `somni` binary the way a person would, capturing its output.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Standard error's lines, blank ones left out.
    var errorLines: [Substring] { stderr.split(separator: "\n").filter { !$0.isEmpty } }
}

enum CLI {
    /// The `somni` executable built beside the test bundle.
    static var executable: URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On Linux the test runner is `<products>/SomniPackageTests.xctest`; on Darwin it is inside a bundle.
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("somni")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/somni")
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// ../shared/data beside the package, when present.
    static var sharedData: URL? {
        let url = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    @discardableResult
    /// `fileSizeLimitKiB` runs it under `ulimit -f`: no file it writes may grow past that, and
    /// since somni ignores SIGXFSZ its writes fail there as they would on a full disk. The signal
    /// is set back to its default first, in case the test runner ignores it (children inherit that).
    /// `program` is another executable built beside `somni`.
    /// `input` is written to its standard input (otherwise it reads nothing).
    static func run(executable program: URL? = nil, _ arguments: [String], in directory: URL? = nil,
                    environment: [String: String] = [:], fileSizeLimitKiB: Int? = nil, input: Data? = nil) throws -> CLIResult {
        let executable = program ?? executable
        let p = Process()
        if let limit = fileSizeLimitKiB {
            p.executableURL = URL(fileURLWithPath: "/bin/bash")
            p.arguments = ["-c", "ulimit -f \(limit) && exec env --default-signal=XFSZ \"$@\"", "bash", executable.path] + arguments
        } else {
            p.executableURL = executable
            p.arguments = arguments
        }
        if let directory { p.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let stdin = input.map { _ in Pipe() }
        p.standardInput = stdin ?? FileHandle.nullDevice
        try p.run()
        if let stdin, let input {
            // From another thread, so a program that writes much before reading all never blocks both.
            signal(SIGPIPE, SIG_IGN)   // a program that stops reading early fails the write, not this process
            let writer = stdin.fileHandleForWriting
            DispatchQueue.global().async { try? writer.write(contentsOf: input); try? writer.close() }
        }
        // Read both pipes while the process runs so a full pipe never blocks it.
        final class Box: @unchecked Sendable { var data = Data() }
        let outBox = Box()
        let group = DispatchGroup()
        group.enter()
        let reader = out.fileHandleForReading
        DispatchQueue.global().async { outBox.data = reader.readDataToEndOfFile(); group.leave() }
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        let outData = outBox.data
        p.waitUntilExit()
        return CLIResult(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
    }

    /// A 3-minute night of generated sounds at `url` (`somni synth --hours 0.05`).
    static func synthesiseShortNight(at url: URL, seed: Int = 5) throws {
        let synth = try run(["synth", "--out", url.path, "--hours", "0.05", "--seed", "\(seed)"])
        #expect(synth.status == 0, "\(synth.stderr)")
    }

    /// The ids of the nights `somni nights --json` listed, in its order.
    static func nightIDs(_ json: String) throws -> [String] {
        let nights = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]
        return (nights ?? []).compactMap { $0["id"] as? String }
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
