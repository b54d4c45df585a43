import Foundation

/// The night's 16 kHz audio, kept on disk as 16-bit samples while the morning pass needs it.
///
/// The gate can only be drawn once the whole envelope exists, so the decoded audio is written
/// here during the single decode pass and read back for the active stretches and the clips:
/// decoding twice would double the cost of a compressed night, and holding it would not keep
/// memory flat (8 h at 16 kHz is 0.9 GB as Int16). The file is deleted when the spool is freed.
public final class SampleSpool {
    public let url: URL
    private let fd: Int32
    private var pending: [Int16]
    private var pendingCount = 0
    private var readScratch: [Int16]
    public private(set) var count = 0

    public init(url: URL, bufferSamples: Int = 1 << 16) throws {
        self.url = url
        let fd = open(url.path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else {
            throw SomniError(.io, "cannot create the working file \(url.path): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        pending = [Int16](repeating: 0, count: bufferSamples)
        readScratch = [Int16](repeating: 0, count: bufferSamples)
    }

    deinit {
        close(fd)
        unlink(url.path)
    }

    public func append(_ samples: UnsafeBufferPointer<Float>) throws {
        var i = 0
        while i < samples.count {
            let n = min(samples.count - i, pending.count - pendingCount)
            pending.withUnsafeMutableBufferPointer { p in
                for k in 0..<n {
                    // Truncation, not rounding: half an LSB (−96 dBFS) is far below any
                    // microphone's noise, and the loop stays free of libm calls. Clamped with
                    // selects the optimiser vectorises (twice as fast as isNaN/min/max); NaN
                    // fails both comparisons and becomes 0.
                    let v = samples[i + k] * 32767
                    p[pendingCount + k] = Int16(v >= -32767 ? (v <= 32767 ? v : 32767) : (v < -32767 ? -32767 : 0))
                }
            }
            pendingCount += n
            i += n
            if pendingCount == pending.count { try flush() }
        }
    }

    /// Writes what is buffered; called by `read` so reads always see everything appended.
    public func flush() throws {
        guard pendingCount > 0 else { return }
        let bytes = pendingCount * MemoryLayout<Int16>.size
        let written = pending.withUnsafeBytes { raw in
            pwrite(fd, raw.baseAddress, bytes, off_t(count) * 2)
        }
        guard written == bytes else {
            let reason = written < 0 ? String(cString: strerror(errno)) : "short write (disk full?)"
            throw SomniError(.io, "cannot write the working file \(url.path): \(reason)")
        }
        count += pendingCount
        pendingCount = 0
    }

    /// Reads `buffer.count` samples from `start`; samples past the end read as 0.
    public func read(from start: Int, into buffer: UnsafeMutableBufferPointer<Float>) throws {
        if pendingCount > 0 { try flush() }
        var filled = 0
        while filled < buffer.count {
            let position = start + filled
            let want = min(buffer.count - filled, readScratch.count)
            let available = max(0, min(want, count - position))
            if available == 0 {
                for k in filled..<buffer.count { buffer[k] = 0 }
                return
            }
            let got = readScratch.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress, available * 2, off_t(position) * 2)
            }
            guard got == available * 2 else {
                throw SomniError(.io, "cannot read the working file \(url.path)")
            }
            readScratch.withUnsafeBufferPointer { src in
                for k in 0..<available { buffer[filled + k] = Float(src[k]) * (1 / 32767) }
            }
            filled += available
        }
    }
}
