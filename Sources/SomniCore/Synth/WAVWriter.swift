import Foundation

/// Streams mono samples into a WAV file: the header is written first with placeholder sizes and
/// patched by `finish()`, so hours of audio pass through a small buffer. The file is written
/// under a hidden temporary name beside `url` and renamed into place by `finish()`; without it
/// (a full disk, say) the temporary file is removed, so `url` only ever holds a whole file.
public final class WAVWriter: AudioSink {
    public enum Format: Sendable {
        case pcm16
        case float32
        var bytesPerSample: Int { self == .pcm16 ? 2 : 4 }
    }

    public let url: URL
    public let format: Format
    public let sampleRate: Int
    public private(set) var samplesWritten = 0
    private let handle: FileHandle
    private let temporaryURL: URL
    private var bytes: [UInt8] = []
    private var finished = false
    private var inPlace = false
    private var headerSize: Int { format == .pcm16 ? 44 : 46 }

    /// Written at `partial` (by default a hidden name beside `url`) and renamed into place when finished.
    public init(url: URL, sampleRate: Int = analysisSampleRate, format: Format = .pcm16, temporaryURL partial: URL? = nil) throws {
        self.url = url; self.sampleRate = sampleRate; self.format = format
        temporaryURL = partial ?? PartialFile.url(for: url)
        guard FileManager.default.createFile(atPath: temporaryURL.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: temporaryURL) else {
            throw SomniError(.io, "cannot create \(url.path)")
        }
        self.handle = handle
        try put(header(dataBytes: 0))
    }

    deinit {
        try? handle.close()
        if !inPlace { unlink(temporaryURL.path) }
    }

    public func write(_ samples: UnsafeBufferPointer<Float>) throws {
        guard !finished else { throw SomniError(.internalError, "write after finish to \(url.path)") }
        let newTotal = headerSize + (samplesWritten + samples.count) * format.bytesPerSample
        guard newTotal <= Int(UInt32.max) else {
            throw SomniError(.unsupported, "\(url.lastPathComponent) would pass the 4 GiB limit of a WAV file")
        }
        let byteCount = samples.count * format.bytesPerSample
        if bytes.count < byteCount { bytes = [UInt8](repeating: 0, count: byteCount) }
        bytes.withUnsafeMutableBytes { raw in
            switch format {
            case .pcm16:
                for (i, s) in samples.enumerated() {
                    // The same scale as readers use (÷ 32768), so a round trip is within half a step.
                    let v = Int16(max(-32768, min(32767, (s * 32768).rounded(.toNearestOrEven))))
                    raw.storeBytes(of: UInt16(bitPattern: v).littleEndian, toByteOffset: 2 * i, as: UInt16.self)
                }
            case .float32:
                for (i, s) in samples.enumerated() {
                    raw.storeBytes(of: s.bitPattern.littleEndian, toByteOffset: 4 * i, as: UInt32.self)
                }
            }
        }
        try put(bytes[0..<byteCount])
        samplesWritten += samples.count
    }

    public func finish() throws {
        guard !finished else { return }
        finished = true
        do {
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: header(dataBytes: samplesWritten * format.bytesPerSample))
            try handle.close()
        } catch {
            throw SomniError(.io, "cannot finish \(url.path)", cause: error)
        }
        // rename replaces an older file in one step, and refuses a folder in the way.
        guard rename(temporaryURL.path, url.path) == 0 else {
            throw SomniError(.io, "cannot move the finished file to \(url.path): \(String(cString: strerror(errno)))")
        }
        inPlace = true
    }

    private func put(_ data: some DataProtocol) throws {
        do { try handle.write(contentsOf: data) } catch {
            throw SomniError(.io, "cannot write \(url.path)", cause: error)
        }
    }

    private func header(dataBytes: Int) -> [UInt8] {
        var h: [UInt8] = []
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { h.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { h.append(contentsOf: $0) } }
        let fmtSize = format == .pcm16 ? 16 : 18
        h += Array("RIFF".utf8); u32(headerSize - 8 + dataBytes); h += Array("WAVE".utf8)
        h += Array("fmt ".utf8); u32(fmtSize)
        u16(format == .pcm16 ? 1 : 3); u16(1); u32(sampleRate)
        u32(sampleRate * format.bytesPerSample); u16(format.bytesPerSample); u16(8 * format.bytesPerSample)
        if format == .float32 { u16(0) }
        h += Array("data".utf8); u32(dataBytes)
        return h
    }
}

/// Reads a whole WAV file (16/24/32-bit PCM or 32-bit float, channels averaged to mono): for
/// tests and for data folders that hold WAV. Compressed formats go through SomniAudio.
public enum WAVReader {
    public static func read(_ url: URL) throws -> (samples: [Float], sampleRate: Int) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw SomniError(.io, "cannot read \(url.path)", cause: error) }
        let bytes = [UInt8](data)
        func bad(_ why: String) -> SomniError { SomniError(.badInput, "\(url.lastPathComponent) is not a usable WAV file: \(why)") }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        let layout: WAVLayout
        do {
            layout = try WAVLayout.find { at, count in at + count <= bytes.count ? Array(bytes[at..<at + count]) : nil }
        } catch { throw bad(error.description) }
        let (formatTag, channels, body) = (layout.formatTag, layout.channels, layout.dataOffset)
        let width = layout.bitsPerSample / 8
        guard (formatTag == 1 && [2, 3, 4].contains(width)) || (formatTag == 3 && width == 4) else {
            throw bad("format \(formatTag) with \(layout.bitsPerSample) bits is not supported")
        }
        let end = min(bytes.count, body + layout.declaredDataSize)
        let frames = (end - body) / (width * channels)
        var samples = [Float](repeating: 0, count: frames)
        for f in 0..<frames {
            var sum: Float = 0
            for c in 0..<channels {
                let p = body + (f * channels + c) * width
                switch (formatTag, width) {
                case (3, _): sum += Float(bitPattern: UInt32(u32(p)))
                case (_, 2): sum += Float(Int16(bitPattern: UInt16(u16(p)))) / 32768
                case (_, 3): sum += Float(Int32(bitPattern: UInt32(u16(p) << 8 | Int(bytes[p + 2]) << 24)) >> 8) / 8_388_608
                default: sum += Float(Int32(bitPattern: UInt32(u32(p)))) / 2_147_483_648
                }
            }
            samples[f] = sum / Float(channels)
        }
        return (samples, layout.sampleRate)
    }
}
