import Foundation
import SomniAudio
import SomniCore

/// CPU time and size of event clips as the morning pass writes them: the planted events of the
/// cached 1-hour synthesised night, each ± 1 s and normalised to 0.9 peak, through each clip
/// encoder in turn. The per-clip cost (setting up an encoder and a file) and the per-second cost
/// (encoding) both matter: an 8-hour night writes about 1,800 clips of about 3.4 s.
/// `only` picks one encoder by its file extension (mp3, m4a, opus, flac), for profiling.
func runClipBenchmark(count: Int, only: String? = nil) throws {
    let night = try cachedNight(hours: 1)
    let reference = try ReferenceCSV.parse(String(contentsOf: night.reference, encoding: .utf8))
    guard let night16k = PCM16Samples.wavFile(night.wav) else {
        throw SomniError(.internalError, "\(night.wav.path) is not a 16 kHz mono 16-bit WAV")
    }
    let duration = Double(night16k.count) / Double(analysisSampleRate)
    var clips: [[Float]] = []
    for event in reference.prefix(count) {
        let range = ClipMaker.sampleRange(ClipMaker.clipRange(start: event.start, end: event.end, duration: duration),
                                          totalSamples: night16k.count)
        var clip = [Float](repeating: 0, count: range.count)
        try clip.withUnsafeMutableBufferPointer { try night16k.read(from: range.lowerBound, into: $0) }
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
    for (name, encoder) in encoders where only == nil || only == encoder.fileExtension {
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
        let fidelity = try signalToNoise(of: clips, decodedFrom: folder, fileExtension: encoder.fileExtension)
        print(String(format: "  %@ %6.2f ms a clip, %5.2f ms a second of clip, %5.1f kb/s on disk (%.1f KB a clip), SNR %4.1f dB",
                     name.padding(toLength: 28, withPad: " ", startingAt: 0), 1000 * cpu / Double(clips.count),
                     1000 * cpu / clipSeconds, Double(bytes) * 8 / clipSeconds / 1000, Double(bytes) / 1000 / Double(clips.count),
                     fidelity))
    }
}

/// How close the written clips decode to what went in: signal energy over error energy, in dB,
/// over all clips together (a rough check that a faster setting did not wreck the sound).
private func signalToNoise(of clips: [[Float]], decodedFrom folder: URL, fileExtension: String) throws -> Double {
    var signal = 0.0, error = 0.0
    for (i, clip) in clips.enumerated() {
        let decoder = try AudioDecoder(url: folder.appendingPathComponent("c\(i).\(fileExtension)"))
        var decoded = [Float](repeating: 0, count: clip.count)
        var filled = 0
        while filled < decoded.count {
            let n = try decoded.withUnsafeMutableBufferPointer {
                try decoder.read(into: UnsafeMutableBufferPointer(rebasing: $0[filled...]))
            }
            if n == 0 { break }
            filled += n
        }
        for j in 0..<filled {
            signal += Double(clip[j] * clip[j])
            error += Double((clip[j] - decoded[j]) * (clip[j] - decoded[j]))
        }
    }
    return 10 * log10(signal / max(error, 1e-30))
}

private struct OpusClipEncoder: FormatClipEncoder {
    static let format = EncodedAudioWriter.Format.opus
    var bitRate = 24_000
}

private struct FLACClipEncoder: FormatClipEncoder {
    static let format = EncodedAudioWriter.Format.flac
    var bitRate = 0  // lossless: no bit rate to ask for
}
