import Foundation
import SomniCapture
import SomniCore

/// CPU seconds used by this process so far.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Resident memory in MB, from /proc (Linux).
private func residentMB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return .nan }
    return kb / 1024
}

private func bytes(under folder: URL) -> Int {
    let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])
    var total = 0
    while let url = files?.nextObject() as? URL {
        total += (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) ?? 0
    }
    return total
}

/// A synthesised night (snoring episodes, talk, coughs over a quiet room), as the microphone.
private func syntheticNight(hours: Double) throws -> NightSynthesizer {
    try NightSynthesizer(configuration: NightConfiguration(hours: hours, seed: 42), bank: GeneratedSoundBank())
}

/// The overnight recorder on a synthesised night played as a 48 kHz microphone, faster than
/// real time: CPU share of one core while recording (the cost of generating the night is
/// measured separately and subtracted), resident memory hour by hour, and bytes written per
/// hour, for night mode and live mode (heuristic classifier). The morning analysis is not
/// included (it is `somni analyze`'s benchmark).
/// Hours from $SOMNI_BENCH_RECORD_HOURS, default 10.
func runRecordBenchmark() throws {
    let hours = Double(ProcessInfo.processInfo.environment["SOMNI_BENCH_RECORD_HOURS"] ?? "") ?? 10

    // The stand-in microphone's own cost: generating the night.
    let generation: Double = try {
        let night = try syntheticNight(hours: hours)
        var buffer = [Float](repeating: 0, count: 1_600)
        let before = processCPUSeconds()
        while try buffer.withUnsafeMutableBufferPointer({ try night.read(into: $0) }) > 0 {}
        return processCPUSeconds() - before
    }()
    print(String(format: "record: generating %.0f h of synthetic night costs %.1f s CPU (subtracted below)", hours, generation))

    try measure(.night, classifier: HeuristicClassifier(), label: "night", hours: hours, generation: generation)
    try measure(.live, classifier: HeuristicClassifier(), label: "live (heuristic)", hours: hours, generation: generation)
    do {
        let model = try CNNClassifier.bundled()
        try measure(.live, classifier: model, label: "live (model)", hours: hours, generation: generation)
    } catch {
        print("record live (model): skipped: \(error)")
    }
}

private func measure<C: SoundClassifier>(_ mode: NightJournal.Mode, classifier: C, label: String, hours: Double,
                                         generation: Double) throws {
    let audioSeconds = hours * 3600
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-recordbench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var rssByHour: [Double] = []
    let night = try syntheticNight(hours: hours)
    let recorder = try NightRecorder(
        folder: folder, settings: RecorderSettings(mode: mode, duration: audioSeconds, keepAudio: true),
        classifier: classifier, device: "synthetic", captureRate: 48_000,
        openCapture: { try CaptureStream(device: SourceAsDevice(night)) },
        observe: { event in
            if case .status(let s) = event, Int(s.elapsed) % 3600 == 0 { rssByHour.append(residentMB()) }
        })
    let residentBefore = residentMB()
    let before = processCPUSeconds()
    let wallStart = Date()
    let journal = try recorder.run()
    let cpu = processCPUSeconds() - before - generation
    let wall = Date().timeIntervalSince(wallStart)
    let written = Double(bytes(under: folder))
    let master = journal.master.flatMap {
        try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent($0).path)[.size] as? Int
    }.map(Double.init) ?? 0
    print(String(format: "record %@: %.0f h of 48 kHz capture in %.1f s CPU (%.0f s wall) = %.2f %% of one core; %d episodes",
                 label, hours, cpu, wall, 100 * cpu / audioSeconds, journal.episodes.count))
    print(String(format: "record %@: written %.2f MB per hour (master %.2f MB/h, envelope, journal and clips %.2f MB/h)",
                 label, written / hours / 1e6, master / hours / 1e6, (written - master) / hours / 1e6))
    print(String(format: "record %@: resident MB before %.1f, then at each hour: ", label, residentBefore)
          + rssByHour.map { String(format: "%.1f", $0) }.joined(separator: ", "))
}
