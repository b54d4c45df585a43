import Foundation
import SomniAudio
import SomniCore

/// Runs the built `somni` executable and the PulseAudio tools for the end-to-end capture tests.
enum CLIHarness {
    /// The `somni` built beside the test bundle, when there is one.
    static var somni: URL? {
        let bundle = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        let candidate = bundle.appendingPathComponent("somni")
        return FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
    }

    /// The private sound server scripts/start-test-audio.sh starts.
    static let pulseServer = "unix:/tmp/somni-test-pulse/native"

    static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["PULSE_SERVER"] = pulseServer
        return env
    }

    /// A really full disk: a small tmpfs mounted in a private user and mount namespace.
    static let fullDiskAvailable: Bool = {
        let ok = (try? run("/usr/bin/unshare", ["--user", "--map-root-user", "--mount", "/bin/sh", "-c",
                                                "mount -t tmpfs -o size=1m tmpfs /mnt"]))?.status == 0
        if !ok { print("SKIPPED: a really full disk needs unshare (util-linux) and unprivileged user and mount namespaces") }
        return ok
    }()

    /// True when the test sound server answers; otherwise says how to start it.
    static var pulseAvailable: Bool {
        guard somni != nil else { print("skipped: somni is not built beside the tests"); return false }
        guard let result = try? run("/usr/bin/env", ["pactl", "info"]), result.status == 0 else {
            print("skipped: no test sound server; run scripts/start-test-audio.sh first")
            return false
        }
        return true
    }

    /// strace, which watches the recorder's system calls; otherwise says what is missing.
    static var straceAvailable: Bool {
        guard somni != nil, let result = try? run("/usr/bin/env", ["strace", "-qq", "-o", "/dev/null", "/bin/true"]),
              result.status == 0 else {
            print("skipped: watching system calls needs somni built, strace (scripts/install-deps.sh) and ptrace allowed")
            return false
        }
        return true
    }

    /// ALSA's pulse plugin (libasound2-plugins), which lets the ALSA backend reach the test server.
    static var alsaPulsePluginInstalled: Bool {
        let libs = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? []
        return libs.contains { FileManager.default.fileExists(atPath: "/usr/lib/\($0)/alsa-lib/libasound_module_pcm_pulse.so") }
    }

    /// Pearson correlation of two equally long series.
    static func correlation(_ a: [Float], _ b: [Float]) -> Double {
        let n = min(a.count, b.count)
        guard n > 1 else { return 0 }
        let x = a.prefix(n).map(Double.init), y = b.prefix(n).map(Double.init)
        let mx = x.reduce(0, +) / Double(n), my = y.reduce(0, +) / Double(n)
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for i in 0..<n { sxy += (x[i] - mx) * (y[i] - my); sxx += (x[i] - mx) * (x[i] - mx); syy += (y[i] - my) * (y[i] - my) }
        return sxx > 0 && syy > 0 ? sxy / (sxx * syy).squareRoot() : 0
    }

    struct Result { var status: Int32; var output: String; var error: String }

    /// Runs to completion, capturing both streams.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let p = try start(executable, arguments)
        let out = p.stdout.fileHandleForReading.readDataToEndOfFile()
        let err = p.stderr.fileHandleForReading.readDataToEndOfFile()
        p.process.waitUntilExit()
        return Result(status: p.process.terminationStatus, output: String(decoding: out, as: UTF8.self),
                      error: String(decoding: err, as: UTF8.self))
    }

    static func somni(_ arguments: [String]) throws -> Result {
        guard let somni else { throw SomniError(.internalError, "somni is not built") }
        return try run(somni.path, arguments)
    }

    struct Running {
        let process: Process
        let stdout: Pipe
        let stderr: Pipe
        /// Waits for the exit and returns the result.
        func finish() -> Result {
            let out = stdout.fileHandleForReading.readDataToEndOfFile()
            let err = stderr.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Result(status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
                          error: String(decoding: err, as: UTF8.self))
        }
    }

    /// Starts `executable` with the test environment, `overrides` replacing its variables.
    static func start(_ executable: String, _ arguments: [String], overrides: [String: String] = [:]) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment.merging(overrides) { _, override in override }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return Running(process: process, stdout: out, stderr: err)
    }

    static func startSomni(_ arguments: [String], overrides: [String: String] = [:]) throws -> Running {
        guard let somni else { throw SomniError(.internalError, "somni is not built") }
        return try start(somni.path, arguments, overrides: overrides)
    }

    /// Polls `condition` every 50 ms for at most `timeout` seconds.
    @discardableResult
    static func wait(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }

    /// The one night folder under `root`.
    static func nightFolder(under root: URL) -> URL? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return names.filter { $0.hasPrefix("night-") }.sorted().last.map { root.appendingPathComponent($0) }
    }

    /// A synthesised night (audio + reference CSV) from `somni synth`.
    static func synthesise(hours: Double, seed: Int, in folder: URL) throws -> (wav: URL, reference: URL) {
        let wav = folder.appendingPathComponent("night.wav")
        let result = try somni(["synth", "--out", wav.path, "--hours", String(hours), "--seed", String(seed)])
        guard result.status == 0 else { throw SomniError(.internalError, "synth failed: \(result.error)") }
        return (wav, folder.appendingPathComponent("night.csv"))
    }

    /// `somni evaluate --json`: the segment F1 of one class.
    static func segmentF1(reference: URL, night: URL, eventClass: String) throws -> Double {
        let result = try somni(["evaluate", "--json", "--reference", reference.path, night.path])
        guard result.status == 0,
              let json = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any],
              let classes = json["classes"] as? [[String: Any]],
              let entry = classes.first(where: { $0["eventClass"] as? String == eventClass }),
              let segments = entry["segments"] as? [String: Any], let f1 = segments["f1"] as? Double else {
            throw SomniError(.internalError, "evaluate failed: \(result.error)")
        }
        return f1
    }

    /// Decodes a file to 16 kHz mono Float.
    static func decode(_ url: URL) throws -> [Float] {
        try readAll(AudioDecoder(url: url))
    }

    /// Every sample a source delivers.
    static func readAll(_ source: some AudioSource) throws -> [Float] {
        var all: [Float] = []
        var buffer = [Float](repeating: 0, count: 16_000)
        while true {
            let n = try buffer.withUnsafeMutableBufferPointer { try source.read(into: $0) }
            if n == 0 { return all }
            all += buffer[0..<n]
        }
    }
}

/// A virtual microphone: PulseAudio's module-pipe-source reading 16 kHz float samples
/// (interleaved when it has two channels) from a FIFO that the test writes, paced at `speed` ×
/// real time. The server resamples it to the recorder's 48 kHz, as it would a real microphone.
final class PipeMicrophone {
    let name: String
    let fifo: URL
    let channels: Int
    /// The source's channel positions ("aux0,aux1,…"), else the server's default for `channels`.
    let channelMap: String?
    private(set) var module: String
    private var descriptor: Int32 = -1

    /// Samples a second the source gives (a Bluetooth headset's microphone: 8000).
    let rate: Int

    init(folder: URL, channels: Int = 1, channelMap: String? = nil, rate: Int = 16_000) throws {
        name = "somni_test_\(UUID().uuidString.prefix(8).lowercased())"
        fifo = folder.appendingPathComponent("mic.fifo")
        self.channels = channels
        self.channelMap = channelMap
        self.rate = rate
        module = ""
        try load()
    }

    func load() throws {
        let r = try CLIHarness.run("/usr/bin/env", ["pactl", "load-module", "module-pipe-source", "source_name=\(name)",
                                                   "file=\(fifo.path)", "format=float32le", "rate=\(rate)", "channels=\(channels)"]
                                                   + (channelMap.map { ["channel_map=\($0)"] } ?? []))
        guard r.status == 0 else { throw SomniError(.internalError, "cannot load module-pipe-source: \(r.error)") }
        module = r.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The source disappears, as an unplugged USB microphone does.
    func unplug() throws {
        closeFIFO()
        try CLIHarness.run("/usr/bin/env", ["pactl", "unload-module", module])
    }

    /// True while some client records from this source.
    var hasListener: Bool {
        guard let r = try? CLIHarness.run("/usr/bin/env", ["pactl", "list", "short", "source-outputs"]),
              let sources = try? CLIHarness.run("/usr/bin/env", ["pactl", "list", "short", "sources"]) else { return false }
        // source-outputs name their source by index: find ours.
        guard let line = sources.output.split(separator: "\n").first(where: { $0.split(separator: "\t").dropFirst().first.map(String.init) == name }),
              let index = line.split(separator: "\t").first else { return false }
        return r.output.split(separator: "\n").contains { $0.split(separator: "\t").dropFirst().first == index }
    }

    /// Plays the samples, then silence until `done` (at most `timeout` seconds more): the server
    /// drops what a slow (debug-built, busy) recorder cannot take, and a recorder that got less
    /// than it asked for would otherwise wait for ever.
    func play(_ samples: ArraySlice<Float>, speed: Double, thenSilenceUntil done: () -> Bool, timeout: Double = 120) throws {
        try play(samples, speed: speed, stop: done)
        let silence = [Float](repeating: 0, count: 16_000 * channels)
        let deadline = Date().addingTimeInterval(timeout)
        while !done() && Date() < deadline { try play(silence[...], speed: 1, stop: done) }
    }

    /// Writes samples paced at `speed` × real time, 100 ms at a time; stops early when `stop` says
    /// so. Non-blocking: once nobody records, the server stops reading the FIFO and a blocking
    /// write would hang the test.
    func play(_ samples: ArraySlice<Float>, speed: Double, stop: () -> Bool = { false }) throws {
        if descriptor < 0 {
            descriptor = open(fifo.path, O_WRONLY | O_NONBLOCK)
            guard descriptor >= 0 else { throw SomniError(.io, "cannot open \(fifo.path)") }
        }
        let chunk = 1_600 * channels
        let began = Date()
        var offset = samples.startIndex
        while offset < samples.endIndex && !stop() {
            let end = min(offset + chunk, samples.endIndex)
            var pending = samples[offset..<end].withUnsafeBytes { Data($0) }
            let giveUp = Date().addingTimeInterval(10)
            while !pending.isEmpty && !stop() {
                let n = pending.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if n > 0 { pending.removeFirst(n); continue }
                guard Date() < giveUp else { throw SomniError(.io, "nobody reads the microphone FIFO (did the recorder exit?)") }
                Thread.sleep(forTimeInterval: 0.01)
            }
            offset = end
            let due = Double((offset - samples.startIndex) / channels) / 16_000 / speed
            let ahead = due - Date().timeIntervalSince(began)
            if ahead > 0 { Thread.sleep(forTimeInterval: ahead) }
        }
    }

    private func closeFIFO() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    deinit {
        closeFIFO()
        _ = try? CLIHarness.run("/usr/bin/env", ["pactl", "unload-module", module])
    }
}
