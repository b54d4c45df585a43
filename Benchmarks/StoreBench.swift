// The store and the report at their target sizes: an 8-hour night with 500 events (report written
// in < 2 s, opened in a browser in < 2 s) and a store of 1,000 nights (`nights` in < 200 ms).
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SomniAudio
import SomniCore
import SomniReport
import SomniStore

/// Writes the report of an 8-hour night with 500 events (real AAC clips) and, when Chromium is
/// installed, opens it headless and reads how long the page took to draw.
func runReportBenchmark(events eventCount: Int = 500) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-report-bench-\(ProcessInfo.processInfo.processIdentifier)")
    try? FileManager.default.removeItem(at: folder)
    defer { try? FileManager.default.removeItem(at: folder) }
    let night = folder.appendingPathComponent("night")
    let duration = 8 * 3600.0
    print("report benchmark: \(Int(duration / 3600)) h night, \(eventCount) events")
    try writeBenchNight(at: night, duration: duration, events: eventCount, startedAt: "2026-11-28T23:10:00+01:00",
                        clips: M4AClipEncoder())

    let page = folder.appendingPathComponent("out/report.html")
    try FileManager.default.createDirectory(at: page.deletingLastPathComponent(), withIntermediateDirectories: true)
    var html = ""
    let writeTime = try benchSeconds {
        let n = try ReportNight.load(id: "bench", folder: night,
                                     clips: .copied(into: page.deletingLastPathComponent().appendingPathComponent("report_clips"),
                                                    reportDirectory: page.deletingLastPathComponent()))
        html = NightReport.html(nights: [n])
        try Data(html.utf8).write(to: page, options: .atomic)
    }
    print(String(format: "  report written (load night, copy %d clips, build, write %.1f MB): %.3f s (goal < 2 s)",
                 eventCount, Double(html.utf8.count) / 1e6, writeTime))

    guard let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first(where: FileManager.default.isExecutableFile) else {
        print("  chromium not installed: opening time not measured (scripts/install-deps.sh installs it)")
        return
    }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: chromium)
    let profile = folder.appendingPathComponent("profile")
    p.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile.path)",
                   "--disable-background-networking", "--proxy-server=http://127.0.0.1:9", "--window-size=1280,900",
                   "--dump-dom", page.absoluteString]
    let out = folder.appendingPathComponent("dom.html")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    p.standardOutput = try FileHandle(forWritingTo: out)
    p.standardError = FileHandle.nullDevice
    let browserTime = try benchSeconds {
        try p.run()
        p.waitUntilExit()
    }
    let dom = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
    func attribute(_ name: String) -> String {
        guard let r = dom.range(of: " \(name)=\"") else { return "?" }
        return String(dom[r.upperBound...].prefix { $0 != "\"" })
    }
    print("  opened in headless Chromium: page drawn \(attribute("data-rendered-ms")) ms after navigation (goal < 2000 ms), "
          + "errors \(attribute("data-errors")); whole browser run incl. start-up \(String(format: "%.2f", browserTime)) s")
}

/// Fills a store with 1,000 nights and times opening it and listing them, as `somni nights` does.
func runStoreBenchmark(nights count: Int = 1000) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-store-bench-\(ProcessInfo.processInfo.processIdentifier)")
    try? FileManager.default.removeItem(at: folder)
    defer { try? FileManager.default.removeItem(at: folder) }
    print("store benchmark: \(count) nights")
    let template = folder.appendingPathComponent("template")
    let base = Date(timeIntervalSince1970: 1_767_222_000)  // 2025-12-31 23:00 UTC
    // Nights in a zone with daylight saving, the dearer case for every clock the listing reads.
    let berlin = ISO8601DateFormatter()
    berlin.timeZone = TimeZone(identifier: "Europe/Berlin")
    let fill = try benchSeconds {
        let store = try NightStore(directory: folder.appendingPathComponent("store"))
        for i in 0..<count {
            let start = berlin.string(from: base.addingTimeInterval(Double(i) * 86_400 + Double(i % 60) * 60))
            try? FileManager.default.removeItem(at: template)
            try writeBenchNight(at: template, duration: 7.5 * 3600, events: 40, startedAt: start, clips: nil)
            try store.add(nightFolder: template, moving: true)
        }
    }
    print(String(format: "  filled in %.1f s (%.1f ms per saved night)", fill, fill * 1000 / Double(count)))
    var listed = 0
    var best = Double.infinity
    for _ in 0..<5 {
        let t = try benchSeconds {
            let store = try NightStore(directory: folder.appendingPathComponent("store"))
            listed = try store.nights().count
        }
        best = min(best, t)
    }
    print(String(format: "  open + list %d nights in-process: %.1f ms best of 5", listed, best * 1000))

    let store = try NightStore(directory: folder.appendingPathComponent("store"))
    var pageBytes = 0
    let allReport = try benchSeconds {
        let records = try store.nights()
        let full = try records.suffix(7).map { try ReportNight.load(id: $0.id, folder: store.folder(of: $0), clips: .embedded) }
        pageBytes = NightReport.html(nights: full, trends: records.map { TrendNight(record: $0) }).utf8.count
    }
    print(String(format: "  report --all (%d nights in the trends, 7 in full, %.1f MB): %.3f s", listed, Double(pageBytes) / 1e6, allReport))

    // The whole command, process start to exit, when the somni binary sits beside this one.
    let somni = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("somni")
    guard FileManager.default.isExecutableFile(atPath: somni.path) else {
        print("  (build the somni product in the same configuration to time `somni nights` itself)")
        return
    }
    unsetenv("SOMNI_STORE")  // it would win over --store
    var bestCommand = Double.infinity
    for json in [false, true] {
        for _ in 0..<5 {
            let arguments = ["nights", "--store", folder.appendingPathComponent("store").path] + (json ? ["--json"] : [])
            bestCommand = min(bestCommand, try benchSeconds { try spawnQuietly(somni.path, arguments) })
        }
        print(String(format: "  `somni nights%@` over %d nights: %.1f ms best of 5 (goal < 200 ms)",
                     json ? " --json" : "", listed, bestCommand * 1000))
        bestCommand = .infinity
    }
}

/// A night folder with evenly spread events of all classes; clips are encoded when an encoder is given.
private func writeBenchNight(at url: URL, duration: Double, events count: Int, startedAt: String, clips: (any ClipEncoder)?) throws {
    let fm = FileManager.default
    try fm.createDirectory(at: url.appendingPathComponent("clips"), withIntermediateDirectories: true)
    var generator = SystemRandomNumberGenerator()
    let classes: [EventClass] = [.snoring, .snoring, .snoring, .sleepTalk, .cough]
    var events: [SessionEvent] = []
    for i in 0..<count {
        let start = duration * (Double(i) + 0.2) / Double(count)
        let length = Double.random(in: 0.5...12, using: &generator)
        let peak = Double.random(in: -45 ... -8, using: &generator)
        let clip = clips.map { "clips/evt-\(String(format: "%04d", i + 1)).\($0.fileExtension)" }
        events.append(SessionEvent(id: String(format: "evt-%04d", i + 1), eventClass: classes[i % classes.count],
                                   start: start, end: start + length, confidence: 0.7, peakDBFS: peak, meanDBFS: peak - 8,
                                   severity: Double.random(in: 10...90, using: &generator), clip: clip))
    }
    let summary = SessionSummary(duration: duration, analysedSeconds: duration / 5, activeShare: 0.2, gateBypassed: false,
                                 events: events, episodes: [])
    var session = Session(source: "bench.m4a", startedAt: startedAt, duration: duration, analysedSeconds: duration / 5,
                          activeShare: 0.2, settings: AnalysisSettings(sensitivity: 5, classifier: "heuristic"),
                          summary: summary, episodes: [], events: events, warnings: [])
    session.timeZone = "Europe/Berlin"
    try session.jsonData().write(to: url.appendingPathComponent(Session.fileName))
    var envelope = [Float](repeating: 0.002, count: Int(duration * 10))
    for e in events {
        for i in Int(e.start * 10)..<min(envelope.count, Int(e.end * 10)) { envelope[i] = Float(pow(10, e.peakDBFS / 20)) }
    }
    try EnvelopeFile.write(values: envelope, rate: 10, start: session.startDate, to: url.appendingPathComponent(EnvelopeFile.fileName))
    guard let clips else { return }
    for e in events {
        guard let clip = e.clip else { continue }
        let n = Int((e.duration + 2) * 16_000)
        let samples = (0..<n).map { Float(sin(Double($0) * 2 * .pi * 150 / 16_000) * 0.9) }
        try clips.writeClip(samples, sampleRate: 16_000, to: url.appendingPathComponent(clip))
    }
}

/// Runs a program with standard output to /dev/null and waits for it with waitpid (Foundation's
/// Process adds tens of milliseconds of its own to a short command on Linux).
private func spawnQuietly(_ path: String, _ arguments: [String]) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else {
        throw SomniError(.io, "cannot start \(path)")
    }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
}

private func benchSeconds(_ body: () throws -> Void) throws -> Double {
    let start = Date()
    try body()
    return Date().timeIntervalSince(start)
}
