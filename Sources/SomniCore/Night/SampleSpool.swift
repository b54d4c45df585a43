import Foundation

/// The night's 16 kHz audio, kept on disk as 16-bit samples while the morning pass needs it.
///
/// The gate can only be drawn once the whole envelope exists, so the decoded audio is written
/// here during the single decode pass and read back for the active stretches and the clips:
/// decoding twice would double the cost of a compressed night, and holding it would not keep
/// memory flat (8 h at 16 kHz is 0.9 GB as Int16). The file is deleted when the spool is freed.
public final class SampleSpool {
    public let url: URL
    private let file: OpenFile
    private var pending: [Int16]
    private var pendingCount = 0
    public private(set) var count = 0

    public init(url: URL, bufferSamples: Int = 1 << 16) throws {
        self.url = url
        let fd = open(url.path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else {
            throw SomniError(.io, "cannot create the working file \(url.path): \(String(cString: strerror(errno)))")
        }
        file = OpenFile(descriptor: fd, url: url)
        pending = [Int16](repeating: 0, count: bufferSamples)
    }

    /// The file goes now; samples handed out by `samples()` stay readable until they are freed.
    deinit { unlink(url.path) }

    public func append(_ samples: UnsafeBufferPointer<Float>) throws {
        var i = 0
        while i < samples.count {
            let n = min(samples.count - i, pending.count - pendingCount)
            pending.withUnsafeMutableBufferPointer { p in
                for k in 0..<n {
                    // The decoder's scale (x / 32768), rounded: audio that was 16-bit to begin
                    // with (a 16 kHz FLAC, a stereo WAV) comes back exactly as decoded, so it is
                    // analysed as the same samples in a plain WAV would be, and quiet rooms lose
                    // no level to truncation. Rounding by ±0.5 and clamping with selects keeps the
                    // loop vectorised and free of libm calls. A sample that is not a number (NaN,
                    // or ±infinity from a broken float decoder) is silence, as the features read
                    // it (x - x is 0 only for a finite x): infinity clamped was a full-scale click.
                    let x = samples[i + k]
                    let v = (x - x == 0 ? x : 0) * 32768
                    let r = v + (v >= 0 ? 0.5 : -0.5)
                    p[pendingCount + k] = Int16(r >= -32768 ? (r <= 32767 ? r : 32767) : (r < -32768 ? -32768 : 0))
                }
            }
            pendingCount += n
            i += n
            if pendingCount == pending.count { try flush() }
        }
    }

    /// Appends the first `count` of `samples`, read in blocks.
    public func append(_ samples: PCM16Samples, count: Int) throws {
        var buffer = [Float](repeating: 0, count: min(count, 1 << 16))
        var position = 0
        while position < count {
            let n = min(buffer.count, count - position)
            try buffer.withUnsafeMutableBufferPointer { all in
                let part = UnsafeMutableBufferPointer(rebasing: all[0..<n])
                try samples.read(from: position, into: part)
                try append(UnsafeBufferPointer(part))
            }
            position += n
        }
    }

    /// Writes what is buffered.
    private func flush() throws {
        guard pendingCount > 0 else { return }
        let bytes = pendingCount * MemoryLayout<Int16>.size
        let written = pending.withUnsafeBytes { raw in
            pwrite(file.descriptor, raw.baseAddress, bytes, off_t(count) * 2)
        }
        guard written == bytes else {
            let reason = written < 0 ? String(cString: strerror(errno)) : "short write (disk full?)"
            throw SomniError(.io, "cannot write the working file \(url.path): \(reason)")
        }
        count += pendingCount
        pendingCount = 0
    }

    /// Everything appended so far, readable from any thread.
    public func samples() throws -> PCM16Samples {
        try flush()
        return PCM16Samples(file: file, byteOffset: 0, count: count, scale: 1 / 32768)
    }
}
