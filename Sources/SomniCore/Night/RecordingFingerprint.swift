import Foundation

/// Names a recording by its bytes, so the store knows it again under another name, or when it
/// says nothing of when it started: FNV-1a (64 bits) over its size, its first MiB and its last
/// MiB. Reading 2 MiB of an 8-hour file takes milliseconds; two recordings with the same size,
/// beginning and end are one recording.
public enum RecordingFingerprint {
    static let sampledBytes = 1 << 20

    /// "fnv1a64:" and 16 hex digits; nil when the file cannot be read.
    /// A pipe has none: opening a named one to seek in it (which fails) took the place of its
    /// reader, and the writer, its reader gone, stopped before the decoder came to read.
    public static func of(fileAt url: URL) -> String? {
        let followed = url.resolvingSymlinksInPath().path
        guard (try? FileManager.default.attributesOfItem(atPath: followed)[.type] as? FileAttributeType) == .typeRegular,
              let file = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? file.close() }
        guard let size = try? file.seekToEnd() else { return nil }
        var hash = FNV1a()
        withUnsafeBytes(of: size.littleEndian) { hash.add($0) }
        guard (try? file.seek(toOffset: 0)) != nil, let head = try? file.read(upToCount: sampledBytes) else { return nil }
        head.withUnsafeBytes { hash.add($0) }
        if size > UInt64(sampledBytes) {
            let tailStart = max(UInt64(sampledBytes), size - UInt64(sampledBytes))
            guard (try? file.seek(toOffset: tailStart)) != nil, let tail = try? file.read(upToCount: sampledBytes) else { return nil }
            tail.withUnsafeBytes { hash.add($0) }
        }
        return hash.text
    }

    /// One fingerprint for a night recorded in parts, from the parts' own in order.
    public static func combining(_ parts: [String]) -> String {
        var hash = FNV1a()
        for part in parts { Array(part.utf8).withUnsafeBytes { hash.add($0) } }
        return hash.text
    }

    private struct FNV1a {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        mutating func add(_ bytes: UnsafeRawBufferPointer) {
            for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        var text: String {
            let hex = String(value, radix: 16)
            return "fnv1a64:" + String(repeating: "0", count: 16 - hex.count) + hex
        }
    }
}
