import Foundation
import SomniAudio
import SomniCore

/// Time and memory to encode `count` five-second clips in `format`.
func runClipBenchmark(format: EncodedAudioWriter.Format, count: Int) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-clip-bench-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    var rng = SeededRandom(seed: 1)
    let clip = (0..<(Int(ProcessInfo.processInfo.environment["CLIPSEC"] ?? "5")! * analysisSampleRate)).map { i in
        Float(0.3 * sin(Double(i) * 0.04) + 0.05 * (rng.unit() - 0.5))
    }
    let start = Date()
    for i in 0..<count {
        let writer = try EncodedAudioWriter(url: folder.appendingPathComponent("c\(i).\(format.fileExtension)"),
                                            format: format, sampleRate: analysisSampleRate)
        try clip.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
    }
    let t = Date().timeIntervalSince(start)
    print(String(format: "clips: %d × 5 s as %@: %.1f ms each, peak RSS %d MB", count, format.rawValue,
                 1000 * t / Double(count), peakResidentMegabytes()))
}
