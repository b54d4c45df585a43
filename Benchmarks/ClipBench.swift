import Foundation
import SomniAudio
import SomniCore

/// CPU time and size of event clips as the morning pass writes them: the planted events of the
/// cached 1-hour synthesised night, each ± 1 s and normalised to 0.9 peak, through each clip
/// encoder in turn. The per-clip cost (setting up an encoder and a file) and the per-second cost
/// (encoding) both matter: an 8-hour night writes about 1,800 clips of about 3.4 s.
func runClipBenchmark(count: Int) throws {
    let night = try cachedNight(hours: 1)
    let reference = try ReferenceCSV.parse(String(contentsOf: night.reference, encoding: .utf8))
    let spool = try SampleSpool(url: FileManager.default.temporaryDirectory
        .appendingPathComponent("somni-clip-bench-\(getpid()).spool"))
    let decoder = try AudioDecoder(url: night.wav)
    var block = [Float](repeating: 0, count: analysisSampleRate)
    while true {
        let n = try block.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }
        if n == 0 { break }
        try block.withUnsafeBufferPointer { try spool.append(UnsafeBufferPointer(rebasing: $0[0..<n])) }
    }
    try spool.flush()
    let duration = Double(spool.count) / Double(analysisSampleRate)
    var clips: [[Float]] = []
    for event in reference.prefix(count) {
        let range = ClipMaker.sampleRange(ClipMaker.clipRange(start: event.start, end: event.end, duration: duration),
                                          totalSamples: spool.count)
        var clip = [Float](repeating: 0, count: range.count)
        try clip.withUnsafeMutableBufferPointer { try spool.read(from: range.lowerBound, into: $0) }
        clip.withUnsafeMutableBufferPointer { ClipMaker.normalise($0) }
        clips.append(clip)
    }
    let clipSeconds = Double(clips.reduce(0) { $0 + $1.count }) / Double(analysisSampleRate)
    print(String(format: "clips: %d planted events of a synthesised night, %.1f s of audio (%.2f s a clip), one core (CPU time)",
                 clips.count, clipSeconds, clipSeconds / Double(max(clips.count, 1))))

    // The clip encoders Somni ships, then other formats FFmpeg can write, for comparison.
    let encoders: [(String, any ClipEncoder)] = [
        ("mp3 40 kb/s (the default)", MP3ClipEncoder()),
        ("m4a (AAC) 48 kb/s", M4AClipEncoder()),
        ("opus 24 kb/s", OpusClipEncoder()),
        ("flac (lossless)", FLACClipEncoder()),
    ]
    for (name, encoder) in encoders {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-clip-bench-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let start = processorSeconds()
        for (i, clip) in clips.enumerated() {
            try encoder.writeClip(clip, sampleRate: analysisSampleRate,
                                  to: folder.appendingPathComponent("c\(i).\(encoder.fileExtension)"))
        }
        let cpu = processorSeconds() - start
        let bytes = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.fileSizeKey])
            .reduce(0) { $0 + ((try $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
        print(String(format: "  %@ %6.2f ms a clip, %5.2f ms a second of clip, %5.1f kb/s on disk (%.1f KB a clip)",
                     name.padding(toLength: 28, withPad: " ", startingAt: 0), 1000 * cpu / Double(clips.count),
                     1000 * cpu / clipSeconds, Double(bytes) * 8 / clipSeconds / 1000, Double(bytes) / 1000 / Double(clips.count)))
    }
}

private struct OpusClipEncoder: FormatClipEncoder {
    static let format = EncodedAudioWriter.Format.opus
    var bitRate = 24_000
}

private struct FLACClipEncoder: FormatClipEncoder {
    static let format = EncodedAudioWriter.Format.flac
    var bitRate = 0  // lossless: no bit rate to ask for
}
