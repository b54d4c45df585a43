// Somni's engine from Swift with the portable core alone (no FFmpeg, no SQLite, no sound
// server): what an app that records or decodes its own audio does with it. docs/engine.md
// walks through it.
//
//   swift run -c release somni-engine-example RECORDING.wav [--out NIGHT_DIR]
//
// RECORDING is a 16 kHz mono 16-bit WAV (`somni synth --out night.wav` makes one). An app wraps
// its own decoder or recorder instead (AVAudioFile on Apple platforms, say), converted to 16 kHz
// mono Float.
import Foundation
import SomniCore

/// 1. The audio, as an `AudioSource`: 16 kHz mono Float samples in [-1, 1], pulled in blocks.
/// The core never asks for the whole recording at once.
final class WAVRecording: AudioSource {
    private let samples: PCM16Samples
    private var position = 0
    let warnings: [String] = []
    var expectedDuration: Double? { Double(samples.count) / Double(analysisSampleRate) }

    init(_ url: URL) throws {
        guard let samples = PCM16Samples.wavFile(url) else {
            throw SomniError(.badInput, "\(url.path) is not a readable 16 kHz mono 16-bit WAV")
        }
        self.samples = samples
    }

    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        let n = min(buffer.count, samples.count - position)
        guard n > 0 else { return 0 }
        try samples.read(from: position, into: UnsafeMutableBufferPointer(rebasing: buffer[..<n]))
        position += n
        return n
    }

    /// The samples can be read again where they lie, so the analyser keeps no copy of the night
    /// for its clips and second looks (without this it spools one beside the night folder).
    func rereadableSamples() -> PCM16Samples? { samples }
}

func run(_ arguments: [String]) throws {
    guard let path = arguments.first, !path.hasPrefix("-") else {
        throw SomniError(.badInput, "usage: somni-engine-example RECORDING.wav [--out NIGHT_DIR]")
    }
    let recording = URL(fileURLWithPath: path)
    let nightFolder = arguments.firstIndex(of: "--out").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        .map { URL(fileURLWithPath: $0) } ?? recording.deletingPathExtension().appendingPathExtension("night")

    // The shipped classifier: two small networks, the second asked about windows the first is unsure of.
    let classifier = try CNNClassifier.bundled()

    // 2. The morning pass: gate, windows, classifier, events, clips, session.json. The night
    // folder is built beside its destination and renamed into place only when complete.
    var analyzer = NightAnalyzer(classifier: classifier, sensitivity: 5, clipEncoder: WAVClipEncoder())
    let session = try NightFolder.writeAtomically(to: nightFolder) { folder in
        try analyzer.analyze(source: WAVRecording(recording), sourceName: recording.lastPathComponent, into: folder)
    }
    let summary = session.summary
    print(String(format: "morning: %.1f min of snoring (%.1f %% of the night) in %d episodes; %@",
                 summary.snoringMinutes, summary.snoringPercent, summary.snoringEpisodes,
                 EventClass.allCases.map { "\(summary.eventCounts[$0.rawValue] ?? 0) \($0.rawValue)" }.joined(separator: ", ")))
    for event in session.events.prefix(5) {
        print(String(format: "  %@ %.1f–%.1f s, peak %.0f dBFS, severity %.0f, clip %@", event.eventClass.rawValue,
                     event.start, event.end, event.peakDBFS, event.severity, event.clip ?? "none"))
    }
    print("night folder: \(nightFolder.path)")

    // 3. Live: the same classifier fed 0.1 s blocks as a recorder's callback delivers them;
    // snoring episodes start after two snoring windows and end after 10 s without one.
    let detector = try LiveSnoreDetector(classifier: classifier)
    let source = try WAVRecording(recording)
    var block = [Float](repeating: 0, count: analysisSampleRate / 10)
    func report(_ change: LiveEpisodeSegmenter.Change) {
        switch change {
        case .started(let at): print(String(format: "live: snoring from %.1f s", at))
        case .ended(let episode):
            print(String(format: "live: snoring episode %.1f–%.1f s, %d snores", episode.start, episode.end, episode.eventCount))
        }
    }
    while true {
        let n = try block.withUnsafeMutableBufferPointer { try source.read(into: $0) }
        if n == 0 { break }
        block.withUnsafeBufferPointer { samples in
            detector.feed(UnsafeBufferPointer(rebasing: samples[..<n])) { window in window.changes.forEach(report) }
        }
    }
    if let last = detector.finish() { report(.ended(last)) }
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("somni-engine-example: \(error)\n".utf8))
    exit(1)
}
