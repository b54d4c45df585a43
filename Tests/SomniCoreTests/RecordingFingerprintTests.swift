import Foundation
import SomniCore
import Testing

/// A recording is named by its size, first MiB and last MiB: the same bytes under any name give
/// the same fingerprint; a change at either end, or in length, gives another.
@Suite struct RecordingFingerprintTests {
    @Test func theSameBytesGiveTheSameFingerprintAndAnyChangeAtAnEndAnother() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-fingerprint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        func fingerprint(_ data: Data, _ name: String) throws -> String? {
            let url = dir.appendingPathComponent(name)
            try data.write(to: url)
            return RecordingFingerprint.of(fileAt: url)
        }
        let original = try #require(try fingerprint(bytes, "night.m4a"))
        #expect(original.hasPrefix("fnv1a64:") && original.count == 24)
        #expect(try fingerprint(bytes, "renamed night.m4a") == original)

        var firstByte = bytes, lastByte = bytes
        firstByte[0] ^= 1
        lastByte[bytes.count - 1] ^= 1
        #expect(try fingerprint(firstByte, "a.m4a") != original)
        #expect(try fingerprint(lastByte, "b.m4a") != original)
        #expect(try fingerprint(bytes.dropLast(), "c.m4a") != original)
        // A short file is read whole.
        let short = Data(bytes.prefix(1_000))
        #expect(try fingerprint(short, "d.wav") != fingerprint(Data(bytes.prefix(999)) + Data([short.last! ^ 1]), "e.wav"))
        #expect(RecordingFingerprint.of(fileAt: dir.appendingPathComponent("missing.wav")) == nil)

        // Parts combined in order: another order is another night.
        #expect(RecordingFingerprint.combining(["a", "b"]) != RecordingFingerprint.combining(["b", "a"]))
        #expect(RecordingFingerprint.combining(["a", "b"]) == RecordingFingerprint.combining(["a", "b"]))
    }
}
