// Decode speed of long files: a phone-style 48 kHz stereo M4A and a 16 kHz mono WAV.
import Foundation
import SomniAudio
import SomniCore
#if canImport(Glibc)
import Glibc
#endif

/// Writes `minutes` of generated audio in each format (streaming, in blocks), decodes it to 16 kHz
/// mono through AudioDecoder and prints the speed as a multiple of real time, plus peak memory.
func runDecodeBenchmark(minutes: Double = 10) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-decode-bench-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let seconds = minutes * 60
    print("decode benchmark: \(Int(minutes)) min of generated audio")
    for (format, rate, channels) in [(EncodedAudioWriter.Format.m4a, 48_000, 2), (.wav, 16_000, 1)] {
        let url = folder.appendingPathComponent("night.\(format.fileExtension)")
        let encodeTime = try measure { try writeGeneratedAudio(to: url, format: format, sampleRate: rate, channels: channels, seconds: seconds) }
        var decoded = 0
        let decodeTime = try measure {
            let decoder = try AudioDecoder(url: url)
            var block = [Float](repeating: 0, count: 4_096)
            while true {
                let count = try block.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }
                if count == 0 { break }
                decoded += count
            }
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
        print(String(format: "  %@ %d Hz %d ch (%.1f MB): encode %.0f× real time, decode %.0f× real time (%.1f s → %.1f s of 16 kHz), peak RSS %d MB",
                     format.rawValue, rate, channels, Double(size) / 1e6, seconds / encodeTime, seconds / decodeTime,
                     decodeTime, Double(decoded) / Double(analysisSampleRate), peakResidentMegabytes()))
    }
}

private func measure(_ body: () throws -> Void) throws -> Double {
    let start = Date()
    try body()
    return Date().timeIntervalSince(start)
}

/// Tones with a slow level swell and a little noise, streamed into the writer a second at a time.
private func writeGeneratedAudio(to url: URL, format: EncodedAudioWriter.Format, sampleRate: Int, channels: Int,
                                 seconds: Double) throws {
    let writer = try EncodedAudioWriter(url: url, format: format, sampleRate: sampleRate, channels: channels)
    var block = [Float](repeating: 0, count: sampleRate * channels)
    var noise: UInt32 = 12_345
    var frame = 0
    let total = Int(seconds * Double(sampleRate))
    while frame < total {
        let count = min(sampleRate, total - frame)
        for index in 0..<count {
            let t = Double(frame + index) / Double(sampleRate)
            noise = noise &* 1_664_525 &+ 1_013_904_223
            let swell = 0.5 + 0.4 * sin(2 * .pi * t / 4)
            let value = Float(swell * (0.4 * sin(2 * .pi * 110 * t) + 0.1 * sin(2 * .pi * 1000 * t)))
                + Float(Int32(bitPattern: noise)) / Float(Int32.max) * 0.02
            for channel in 0..<channels { block[index * channels + channel] = value }
        }
        try block.withUnsafeBufferPointer { try writer.write(UnsafeBufferPointer(rebasing: $0[0..<count * channels])) }
        frame += count
    }
    try writer.finish()
}

/// This process's peak resident size in MiB: the kernel's high-water mark of its own memory map
/// (`VmHWM`). Not `getrusage`'s `ru_maxrss`: a child started by `posix_spawn` shares its parent's
/// map until `exec`, which carries the parent's peak over into the child's (every step read 145 MB
/// in a run whose parent had just synthesised the night).
func peakResidentMegabytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") else {
        #if canImport(Glibc)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss / 1024
        #else
        return 0
        #endif
    }
    return kilobytes / 1024
}
