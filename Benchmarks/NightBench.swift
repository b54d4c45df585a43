// The issue-2 figures for a whole night: decode-only time (the floor) and end-to-end analyse time
// for an 8-hour 16 kHz WAV and a 48 kHz M4A, × real time on one core, peak memory, gate share.
import Foundation
import SomniAudio
import SomniCore

/// Where the generated nights are cached between runs (they take minutes to encode).
private var benchDirectory: URL {
    let path = ProcessInfo.processInfo.environment["SOMNI_BENCH_DIR"] ?? "/tmp/somni-bench"
    return URL(fileURLWithPath: path)
}

/// The synthesised quiet-bedroom night of `hours` as a 16 kHz WAV with its reference CSV, and
/// the same night upsampled to 48 kHz as AAC in M4A; generated on first use, cached after.
func cachedNight(hours: Double) throws -> (wav: URL, reference: URL, m4a: URL) {
    let fm = FileManager.default
    try fm.createDirectory(at: benchDirectory, withIntermediateDirectories: true)
    let tag = String(format: "%gh", hours)
    let wav = benchDirectory.appendingPathComponent("night-\(tag).wav")
    let reference = wav.deletingPathExtension().appendingPathExtension("csv")
    let m4a = benchDirectory.appendingPathComponent("night-\(tag)-48k.m4a")
    if !fm.fileExists(atPath: wav.path) || !fm.fileExists(atPath: reference.path) {
        print("generating \(wav.path) (synthesised quiet-bedroom night, generated sounds) …")
        let synth = try NightSynthesizer(configuration: NightConfiguration(hours: hours, seed: 2026, scene: .quiet),
                                         bank: GeneratedSoundBank())
        try synth.render(to: WAVWriter(url: wav))
        try ReferenceCSV.write(synth.plan.events).write(to: reference, atomically: true, encoding: .utf8)
    }
    if !fm.fileExists(atPath: m4a.path) {
        print("generating \(m4a.path) (the same night, upsampled to 48 kHz, AAC) …")
        try writeUpsampled(from: wav, to: m4a)
    }
    return (wav, reference, m4a)
}

/// Each measurement runs in a child process, so its peak memory is its own: pinned to one core
/// (its CPU seconds are the "one core" cost), and for the analysis once more on every core
/// (its wall-clock seconds are what a user waits with the reading thread and the workers spread).
func runNightBenchmark(hours: Double, classifiers: [String], rounds: Int = 1) throws {
    let tag = String(format: "%gh", hours)
    let (wav, _, m4a) = try cachedNight(hours: hours)
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let rounds = max(1, rounds)

    print("night benchmark: \(tag) synthesised night, release build, each run in its own process, \(rounds) round(s)")
    print("one core: CPU seconds (user + system) of the step pinned to one core; \(cores) cores: wall-clock seconds unpinned")
    if rounds > 1 { print("seconds: the median of the rounds (their range in brackets); × decode: median ÷ median") }
    // The night folders stay until the end: on an ext4 disk without a journal, creating a file
    // skips every inode deleted in the last seconds to minutes, so deleting one run's 1,700 clips
    // would slow the next run's file creation (by up to a second here) and measure the disk.
    let nights = benchDirectory.appendingPathComponent("analysed-\(getpid())")
    try FileManager.default.createDirectory(at: nights, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: nights) }
    var run = 0
    func analyse(_ file: URL, _ classifier: String, pinned: Bool, speculating: Bool = true, keepsClips: Bool = true) throws -> [String: Double] {
        run += 1
        // Pinned, the analysis is told it has one core, as it would be on a one-core machine.
        return try child(["_analyze", file.path, classifier, nights.appendingPathComponent("\(run)").path,
                          "\(pinned ? 1 : cores)", speculating ? "speculating" : "plain", keepsClips ? "clips" : "no-clips"],
                         pinned: pinned)
    }
    /// Every step's runs, in the order the steps were first made; the rounds interleave the
    /// steps, so a slow spell of the machine falls on all of them.
    var steps: [(file: URL, name: String, key: String, runs: [[String: Double]])] = []
    func record(_ file: URL, _ name: String, key: String, _ r: [String: Double]) {
        if let i = steps.firstIndex(where: { $0.file == file && $0.name == name }) { steps[i].runs.append(r) }
        else { steps.append((file, name, key, [r])) }
    }
    for _ in 0..<rounds {
        for file in [wav, m4a] {
            record(file, "decode only, one core", key: "seconds", try child(["_decode", file.path], pinned: true))
            for c in classifiers {
                record(file, "analyze (\(c)), one core", key: "seconds", try analyse(file, c, pinned: true))
                // What the clips cost: `somni analyze --no-clips`, for nights analysed for their figures.
                if c == "model" {
                    record(file, "analyze (\(c)), no clips, one core", key: "seconds",
                           try analyse(file, c, pinned: true, keepsClips: false))
                }
                let spread = try analyse(file, c, pinned: false)
                record(file, "analyze (\(c)), \(cores) cores", key: "wallSeconds", spread)
                if (spread["speculation.windowsClassified"] ?? 0) > 0 {
                    record(file, "analyze (\(c)), \(cores) cores, not ahead", key: "wallSeconds",
                           try analyse(file, c, pinned: false, speculating: false))
                }
            }
        }
    }
    func median(_ values: [Double]) -> Double {
        let v = values.sorted()
        return v.isEmpty ? 0 : v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2
    }
    print("file                         step                                  seconds  × real time  × decode peak MiB  gate passed")
    for step in steps {
        let seconds = step.runs.map { $0[step.key] ?? 0 }
        let decode = steps.first { $0.file == step.file && $0.name.hasPrefix("decode") }
        let floor = max(median(decode?.runs.map { $0["seconds"] ?? 0 } ?? [1]), 1e-9)
        let audioSeconds = decode?.runs.first?["audioSeconds"] ?? 0
        let gate = step.runs.first?["activeShare"].map { String(format: "%5.1f %%", 100 * $0) } ?? "     -"
        let spread = rounds > 1 ? String(format: " [%.2f–%.2f]", seconds.min() ?? 0, seconds.max() ?? 0) : ""
        print(String(format: "%@ %@ %8.2f %12.0f %9.2f %8.0f  %@%@",
                     step.file.lastPathComponent.padding(toLength: 28, withPad: " ", startingAt: 0),
                     step.name.padding(toLength: 36, withPad: " ", startingAt: 0),
                     median(seconds), audioSeconds / max(median(seconds), 1e-9), median(seconds) / floor,
                     step.runs.compactMap { $0["peakMB"] }.max() ?? 0, gate, spread))
        if step.key == "wallSeconds", let ahead = step.runs.last, (ahead["speculation.windowsClassified"] ?? 0) > 0 {
            print(String(format: "%@ ahead of the gate (last round): %.0f windows classified (%.0f used), %.0f clips written (%.0f used)",
                         "".padding(toLength: 28, withPad: " ", startingAt: 0), ahead["speculation.windowsClassified"] ?? 0,
                         ahead["speculation.windowsUsed"] ?? 0, ahead["speculation.clipsWritten"] ?? 0,
                         ahead["speculation.clipsUsed"] ?? 0))
        }
    }
}

/// Runs this benchmark binary again with a private verb and reads the one JSON line it prints.
private func child(_ arguments: [String], pinned: Bool) throws -> [String: Double] {
    let p = Process()
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    if pinned, FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset") {
        p.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        p.arguments = ["-c", "0", me.path] + arguments
    } else {
        p.executableURL = me
        p.arguments = arguments
    }
    let pipe = Pipe()
    p.standardOutput = pipe
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0,
          let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
          let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double] else {
        throw SomniError(.internalError, "benchmark step \(arguments) failed")
    }
    return object
}

/// User + system CPU time of this process: the "one core" cost, robust to other load on the machine.
func processorSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

private func emit(_ values: [String: Double]) {
    let data = try! JSONSerialization.data(withJSONObject: values)
    print(String(decoding: data, as: UTF8.self))
}

/// `_decode FILE`: decode to 16 kHz mono and throw the samples away.
func childDecode(_ path: String) throws {
    let start = Date()
    let decoder = try AudioDecoder(url: URL(fileURLWithPath: path))
    var block = [Float](repeating: 0, count: analysisSampleRate)
    var total = 0
    while true {
        let n = try block.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }
        if n == 0 { break }
        total += n
    }
    emit(["seconds": processorSeconds(), "wallSeconds": Date().timeIntervalSince(start),
          "audioSeconds": Double(total) / Double(analysisSampleRate), "peakMB": Double(peakResidentMegabytes())])
}

/// `_analyze FILE CLASSIFIER FOLDER [WORKERS [speculating|plain [clips|no-clips]]]`: the whole morning pass into a
/// new night folder, which the caller removes.
func childAnalyze(_ path: String, classifier: String, into folderPath: String, workers: Int?, speculating: Bool,
                  keepsClips: Bool) throws {
    let folder = URL(fileURLWithPath: folderPath)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let start = Date()
    let source = try AudioDecoder(url: URL(fileURLWithPath: path))
    let session: Session
    // When each stage was first reported: where the time goes. Progress comes from the
    // analysing threads, so the times are kept under a lock.
    final class StageStarts: @unchecked Sendable {
        private let lock = NSLock()
        private var times: [String: Double] = [:]
        func note(_ stage: String, at t: Double) { lock.withLock { if times[stage] == nil { times[stage] = t } } }
        var all: [String: Double] { lock.withLock { times } }
    }
    let stageStarts = StageStarts()
    var speculation = SpeculationCounts()
    func run<C: SoundClassifier>(_ classifier: C) throws -> Session {
        var analyzer = NightAnalyzer(classifier: classifier, clipEncoder: keepsClips ? MP3ClipEncoder() : nil)
        if let workers { analyzer.workers = workers }
        analyzer.speculates = speculating
        defer { speculation = analyzer.speculation }
        return try analyzer.analyze(source: source, sourceName: path, into: folder) { stage, _ in
            stageStarts.note(stage.rawValue, at: Date().timeIntervalSince(start))
        }
    }
    switch classifier {
    case "heuristic": session = try run(HeuristicClassifier())
    case "model": session = try run(CNNClassifier.bundled())
    default: throw SomniError(.badInput, "unknown classifier \(classifier)")
    }
    var figures = ["seconds": processorSeconds(), "wallSeconds": Date().timeIntervalSince(start), "peakMB": Double(peakResidentMegabytes()),
                   "activeShare": session.activeShare, "events": Double(session.events.count)]
    for (stage, t) in stageStarts.all { figures["start." + stage] = t }
    figures["speculation.windowsClassified"] = Double(speculation.windowsClassified)
    figures["speculation.windowsUsed"] = Double(speculation.windowsUsed)
    figures["speculation.clipsWritten"] = Double(speculation.clipsWritten)
    figures["speculation.clipsUsed"] = Double(speculation.clipsUsed)
    emit(figures)
}

/// The 16 kHz night at 48 kHz (linear interpolation is enough: this file exists to be decoded).
private func writeUpsampled(from wav: URL, to m4a: URL) throws {
    let source = try AudioDecoder(url: wav)
    let writer = try EncodedAudioWriter(url: m4a, format: .m4a, sampleRate: 48_000)
    var block = [Float](repeating: 0, count: analysisSampleRate)
    var up = [Float](repeating: 0, count: 3 * analysisSampleRate)
    var previous: Float = 0
    while true {
        let n = try block.withUnsafeMutableBufferPointer { try source.read(into: $0) }
        if n == 0 { break }
        for i in 0..<n {
            let x = block[i]
            up[3 * i] = previous + (x - previous) / 3
            up[3 * i + 1] = previous + 2 * (x - previous) / 3
            up[3 * i + 2] = x
            previous = x
        }
        try up.withUnsafeBufferPointer { try writer.write(UnsafeBufferPointer(rebasing: $0[0..<(3 * n)])) }
    }
    try writer.finish()
}
