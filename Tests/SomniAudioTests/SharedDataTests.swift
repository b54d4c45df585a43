import Foundation
import SomniAudio
import SomniCore
import Testing

/// Real recordings from ../shared/data (never copied here); skipped when the folder is absent.
@Suite struct SharedDataTests {
    static let dataFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/data")

    static let samples = ["noise/pink_noise.flac", "cough-covid19/raw"]

    /// The file itself, or the first file in a folder of many.
    private func firstFile(_ relative: String) -> URL? {
        let url = Self.dataFolder.appendingPathComponent(relative)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { return nil }
        guard isFolder.boolValue else { return url }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path))?.filter { $0.hasSuffix(".mp3") }.sorted()
        return names?.first.map { url.appendingPathComponent($0) }
    }

    @Test(arguments: samples)
    func decodesARealRecording(_ relative: String) throws {
        guard let url = firstFile(relative) else {
            print("skipped: \(relative) is not in \(Self.dataFolder.path)")
            return
        }
        let decoder = try AudioDecoder(url: url)
        let samples = try TestSignals.readAll(decoder)
        let expected = try #require(decoder.expectedDuration)
        // MP3s without a Xing header only have a duration guessed from the bit rate.
        #expect(abs(Double(samples.count) / 16_000 - expected) < 0.3 + 0.01 * expected, "\(decoder.formatDescription)")
        #expect(decoder.warnings.isEmpty)
        #expect(TestSignals.rms(samples[...]) > 0.001)
    }
}
