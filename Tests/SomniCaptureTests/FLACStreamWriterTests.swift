import Foundation
import SomniAudio
import Testing
@testable import SomniCore

@Suite struct FLACStreamWriterTests {
    /// Tone, noise, digital silence and a loud clipped stretch, 16 kHz, not a whole number of blocks.
    static func signal() -> [Float] {
        var state: UInt64 = 3
        return (0..<(5 * 16_000 + 777)).map { i -> Float in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let noise = Float(Int64(bitPattern: state) >> 40) / Float(1 << 23)
            switch i / 16_000 {
            case 0: return 0.3 * sin(Float(i) * 0.05)
            case 1: return 0.01 * noise
            case 2: return 0
            case 3: return 1.5 * sin(Float(i) * 0.3)          // clipped to full scale
            default: return 0.2 * sin(Float(i) * 0.01) + 0.05 * noise
            }
        }
    }

    static func quantised(_ x: Float) -> Float {
        Float(min(max((x * 32_768).rounded(), -32_768), 32_767)) / 32_768
    }

    @Test func decodesBackToTheSixteenBitSamplesExactly() throws {
        let folder = try temporaryFolder("flac")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("exact.flac")
        let input = Self.signal()
        let writer = try FLACStreamWriter(url: url, sampleRate: 16_000)
        // Uneven pieces, as the recorder hands them over.
        var offset = 0
        for size in [1, 4095, 4097, 100_000] where offset < input.count {
            let end = min(input.count, offset + size)
            try input[offset..<end].withUnsafeBufferPointer { try writer.write($0) }
            offset = end
        }
        try writer.finish()
        let decoded = try CLIHarness.decode(url)
        #expect(decoded.count == input.count)
        let mismatches = zip(decoded, input).filter { $0 != Self.quantised($1) }.count
        #expect(mismatches == 0)
        // Somni's own reader (used to level live clips) agrees with FFmpeg's decoder.
        #expect(try Self.readBack(url) == decoded)
        // Smaller than 16-bit PCM (the silent second costs almost nothing).
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
        #expect(size < input.count * 2 * 3 / 4)
    }

    @Test func aWriterThatNeverFinishesLeavesEveryWholeFrameReadable() throws {
        let folder = try temporaryFolder("flac-crash")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("crash.flac")
        let input = Self.signal()
        do {
            let writer = try FLACStreamWriter(url: url, sampleRate: 16_000)
            try input.withUnsafeBufferPointer { try writer.write($0) }
            // Dropped without finish(), as by kill -9: the length stays "unknown" in the header.
        }
        let decoded = try CLIHarness.decode(url)
        let whole = input.count / FLACStreamWriter.blockSize * FLACStreamWriter.blockSize
        #expect(decoded.count == whole)
        #expect(zip(decoded, input).allSatisfy { $0 == Self.quantised($1) })
        #expect(try Self.readBack(url) == decoded)
        // A frame cut short (the write in progress when the power went) ends the stream cleanly.
        let bytes = try Data(contentsOf: url)
        let cut = folder.appendingPathComponent("cut.flac")
        try bytes.prefix(bytes.count - 1_000).write(to: cut)
        #expect(try Self.readBack(cut) == Array(decoded.prefix(whole - FLACStreamWriter.blockSize)))
    }

    static func readBack(_ url: URL) throws -> [Float] {
        try CLIHarness.readAll(FLACStreamReader(url: url))
    }
}
