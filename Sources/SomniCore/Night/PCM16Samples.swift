import Foundation

/// 16-bit samples at the analysis rate held in a file, read back as Floats: the night's audio
/// as the classifier's windows and the event clips need it after the decode pass.
///
/// A value that any number of threads may read at once (each read is its own `pread` into its
/// own stack buffer), so the windows and clips can be spread over the cores.
public struct PCM16Samples: Sendable {
    /// How many samples there are.
    public let count: Int
    private let file: OpenFile
    private let byteOffset: Int
    private let scale: Float

    init(file: OpenFile, byteOffset: Int, count: Int, scale: Float) {
        self.file = file
        self.byteOffset = byteOffset
        self.count = count
        self.scale = scale
    }

    /// Reads `buffer.count` samples from `start`; samples past the end read as 0.
    public func read(from start: Int, into buffer: UnsafeMutableBufferPointer<Float>) throws {
        try withUnsafeTemporaryAllocation(of: Int16.self, capacity: 2048) { scratch in
            var filled = 0
            while filled < buffer.count {
                let position = start + filled
                let available = max(0, min(buffer.count - filled, scratch.count, count - position))
                if available == 0 {
                    for k in filled..<buffer.count { buffer[k] = 0 }
                    return
                }
                let got = pread(file.descriptor, scratch.baseAddress, available * 2, off_t(byteOffset + position * 2))
                guard got == available * 2 else {
                    throw SomniError(.io, "cannot read \(file.url.path) again (was it changed or removed during the analysis?)")
                }
                for k in 0..<available { buffer[filled + k] = Float(Int16(littleEndian: scratch[k])) * scale }
                filled += available
            }
        }
    }
}

/// A file descriptor closed when the last value holding it is gone.
final class OpenFile: Sendable {
    let descriptor: Int32
    let url: URL
    init(descriptor: Int32, url: URL) { self.descriptor = descriptor; self.url = url }
    deinit { close(descriptor) }
}

extension PCM16Samples {
    /// The samples of `url` if it is a 16-bit PCM, 16 kHz, mono WAV file, read straight from
    /// the file: it already is what the spool would hold, so the morning pass reads it back
    /// instead of writing a second copy (the copy was an eighth of an 8-hour night's analysis
    /// time). Nil for any other file, including one whose header this reader does not follow.
    /// The scale is the decoder's (x / 32768), so windows read here equal the decoded stream.
    public static func wavFile(_ url: URL) -> PCM16Samples? {
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { return nil }
        let file = OpenFile(descriptor: fd, url: url)
        guard let layout = dataLayout(fd: fd) else { return nil }
        return PCM16Samples(file: file, byteOffset: layout.offset, count: layout.bytes / 2, scale: 1 / 32768)
    }

    /// Where the sample data starts and how many bytes of it the file really holds, when the
    /// header says 16-bit PCM, 16 kHz, mono (plain or WAVE_FORMAT_EXTENSIBLE).
    private static func dataLayout(fd: Int32) -> (offset: Int, bytes: Int)? {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        func bytes(_ offset: Int, _ count: Int) -> [UInt8]? {
            var b = [UInt8](repeating: 0, count: count)
            let got = b.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return got == count ? b : nil
        }
        guard let layout = try? WAVLayout.find(bytes), layout.formatTag == 1, layout.channels == 1,
              layout.sampleRate == analysisSampleRate, layout.bitsPerSample == 16 else { return nil }
        // As the decoder reads it: to the end where the header's size was never finished, or is
        // stale, or wrapped.
        return (layout.dataOffset, layout.dataBytes(fileSize: Int(status.st_size)) { bytes($0, 8) })
    }
}
