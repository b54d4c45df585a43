import Foundation

/// Where a WAV file keeps its format and its samples: the RIFF chunks walked from the header.
/// Shared by `WAVReader` (a whole file in memory) and `PCM16Samples` (a night read back in place).
public struct WAVLayout {
    /// 1 for PCM, 3 for float; WAVE_FORMAT_EXTENSIBLE is resolved to its sub-format.
    var formatTag = 0
    var channels = 0
    var sampleRate = 0
    var bitsPerSample = 0
    /// The bytes one sample of every channel takes, as the header says (nBlockAlign), and the
    /// bytes a second (nAvgBytesPerSec).
    var blockAlign = 0, byteRate = 0
    /// Where the data chunk's body starts, and its size as the header declares it.
    var dataOffset = 0
    var declaredDataSize = 0
    /// The RIFF chunk's own size: the whole file less 8 bytes, when the header was finished.
    var riffSize = 0
    /// The sizes are an RF64's, from its ds64 chunk: real whatever they are, where 32-bit sizes
    /// near 2 or 4 GiB are placeholders some recorders write.
    var sizedByDS64 = false
    /// The data size was never filled in: a placeholder of 0 or all ones (in an RF64, its ds64's 0).
    var sizeUnfinished: Bool { declaredDataSize == 0 || declaredDataSize == 0xFFFF_FFFF }

    /// The bytes one sample of every channel takes, for sound stored one sample at a time (PCM,
    /// float, A-law, µ-law): 12- and 20-bit samples fill whole bytes (2 and 3), so bits / 8
    /// made an intact file's header promise more than it held, and 24-bit samples may sit in
    /// 4 bytes (the block alignment says so). nil for compressed sound (ADPCM, MP3 in a WAV),
    /// whose length its byte count does not tell.
    var bytesPerFrame: Int? {
        guard [1, 3, 6, 7].contains(formatTag), channels > 0, bitsPerSample > 0 else { return nil }
        return channels * Self.sampleBytes(bits: bitsPerSample, channels: channels, blockAlign: blockAlign,
                                           byteRate: byteRate, sampleRate: sampleRate)
    }

    /// The bytes one sample takes in the file: its bits in whole bytes, or a larger container
    /// the block alignment gives (24 bits in 4 bytes), believed only where the byte rate agrees
    /// (a 16-bit file whose block alignment alone said 4 was read as 32-bit samples, half its
    /// length). The decoder asks too, with the fields FFmpeg read: it picks its PCM decoder by the
    /// bits alone, so 24 bits in 4 bytes were read 3 bytes at a time, as noise.
    public static func sampleBytes(bits: Int, channels: Int, blockAlign: Int, byteRate: Int, sampleRate: Int) -> Int {
        let packed = (bits + 7) / 8
        guard channels > 0, blockAlign > channels * packed, blockAlign % channels == 0, blockAlign / channels <= 8,
              byteRate == sampleRate * blockAlign else { return packed }
        return blockAlign / channels
    }

    enum Problem: Error, CustomStringConvertible {
        case notRIFF, shortFormat, dataBeforeFormat, noData
        /// A chunk before the data that declares more bytes than the file holds.
        case chunkPastEnd(name: String, size: Int)
        var description: String {
            switch self {
            case .notRIFF: "no RIFF/WAVE header"
            case .shortFormat: "short fmt chunk"
            case .dataBeforeFormat: "data before fmt"
            case .noData: "no data chunk"
            case .chunkPastEnd(let name, let size): "its '\(name)' chunk declares \(size) bytes, more than the file holds"
            }
        }
    }

    /// Walks the chunks; `bytes(offset, count)` gives the file's bytes there, nil where the file
    /// does not hold them all.
    static func find(_ bytes: (_ offset: Int, _ count: Int) -> [UInt8]?) throws(Problem) -> WAVLayout {
        func number(_ b: [UInt8], _ at: Int, _ width: Int) -> Int {
            (0..<width).reduce(0) { $0 | Int(b[at + $1]) << (8 * $1) }
        }
        // RF64 and BW64 are RIFF for files over 4 GiB: their sizes are in a ds64 chunk.
        guard let riff = bytes(0, 12), ["RIFF", "RF64", "BW64"].contains(where: { riff[0..<4].elementsEqual($0.utf8) }),
              riff[8..<12].elementsEqual("WAVE".utf8)
        else { throw .notRIFF }
        var layout = WAVLayout()
        layout.riffSize = number(riff, 4, 4)
        var dataSize64: Int?
        var at = 12
        while let chunk = bytes(at, 8) {
            let size = number(chunk, 4, 4)
            let body = at + 8
            if chunk[0..<4].elementsEqual("ds64".utf8), size >= 16, let sizes = bytes(body, 16) {
                // Sizes of 64 PiB and more are no sizes a file has (and near Int's range, an offset
                // plus one overflowed, a trap): left to the 32-bit placeholders.
                if sizes[7] == 0, sizes[15] == 0 {
                    (layout.riffSize, dataSize64) = (number(sizes, 0, 8), number(sizes, 8, 8))
                }
            } else if chunk[0..<4].elementsEqual("fmt ".utf8) {
                guard size >= 16, let f = bytes(body, 16) else { throw .shortFormat }
                layout.formatTag = number(f, 0, 2)
                layout.channels = number(f, 2, 2)
                layout.sampleRate = number(f, 4, 4)
                layout.byteRate = number(f, 8, 4)
                layout.blockAlign = number(f, 12, 2)
                layout.bitsPerSample = number(f, 14, 2)
                if layout.formatTag == 0xFFFE, size >= 26, let sub = bytes(body + 24, 2) { layout.formatTag = number(sub, 0, 2) }
            } else if chunk[0..<4].elementsEqual("data".utf8) {
                guard layout.channels > 0, layout.sampleRate > 0 else { throw .dataBeforeFormat }
                layout.dataOffset = body
                if size == 0xFFFF_FFFF, let dataSize64 { (layout.declaredDataSize, layout.sizedByDS64) = (dataSize64, true) }
                else { layout.declaredDataSize = size }
                return layout
            }
            at = body + size + (size & 1)
            // A named chunk whose body the file does not hold: a damaged size (FFmpeg allocated
            // a LIST chunk's 1.6 GB before finding no sound).
            if bytes(at, 8) == nil, size > 0, bytes(body + size - 1, 1) == nil,
               chunk[0..<4].allSatisfy({ (0x20...0x7E).contains($0) }) {
                throw .chunkPastEnd(name: String(decoding: chunk[0..<4], as: UTF8.self), size: size)
            }
        }
        throw .noData
    }

    /// The bytes of sound the data chunk really holds in a file of `fileSize` bytes. The declared
    /// size, trimmed to what the file holds; but the rest of the file when a recorder never
    /// finished its header (0 or all ones), when the size wrapped past 4 GiB (eight hours of
    /// 48 kHz stereo 24-bit is 8.3 GB), or when it is stale (a header patched now and then, then
    /// the recorder stopped) and no chunk follows the declared end (`chunkHeader(at)` gives the
    /// file's 8 bytes there): before, such a night was silently cut to what the header said. An
    /// odd size's pad byte, and an ID3 tag appended to the file, are not sound either.
    func dataBytes(fileSize: Int, chunkHeader: (_ offset: Int) -> [UInt8]?) -> Int {
        // An ID3v1 tag some taggers append (the file's last 128 bytes, "TAG" first) past the
        // declared data, or after a size never filled in, is no sound: read as sound, it was a
        // click at the night's end. Inside the declared data those bytes are sound that happens
        // to spell TAG.
        let declared = declaredDataSize
        var end = fileSize
        if end - dataOffset >= 128, sizeUnfinished || dataOffset + declared <= end - 128,
           let tail = chunkHeader(end - 128), tail.count == 8, tail[0..<3].elementsEqual("TAG".utf8) {
            end -= 128
        }
        let held = max(0, end - dataOffset)
        if sizeUnfinished || declared >= held { return held }
        if (held - declared) % (1 << 32) == 0 { return held }
        let next = dataOffset + declared + (declared & 1)
        // Less than a sample past the end (an odd size's pad byte): no sound.
        if end - next < max(1, bytesPerFrame ?? 1) { return declared }
        // A chunk after the data (LIST, id3), where RIFF puts it or, after an odd size, where
        // writers that leave out the pad byte do.
        for at in Set([next, dataOffset + declared]) {
            if let header = chunkHeader(at), header.count == 8, header[0..<4].allSatisfy({ (0x20...0x7E).contains($0) }) {
                let size = (0..<4).reduce(0) { $0 | Int(header[4 + $1]) << (8 * $1) }
                if at + 8 + size <= end + 1 { return declared }
            }
        }
        // An ID3v2 tag appended (10 bytes of header, then its size in 7-bit bytes, and maybe a
        // footer of 10).
        if let header = chunkHeader(next), header.count == 8, header[0..<3].elementsEqual("ID3".utf8), (2...4).contains(header[3]),
           let rest = chunkHeader(next + 2), rest[4..<8].allSatisfy({ $0 < 0x80 }) {
            let size = rest[4..<8].reduce(0) { $0 << 7 | Int($1) }
            if next + 10 + size <= end, end - next <= 10 + size + 10 { return declared }
        }
        return held
    }

    /// `body` given a reader of the file's bytes (nil where it does not hold them all) and its size.
    private static func reading<T>(_ url: URL, _ body: (_ bytes: (Int, Int) -> [UInt8]?, _ fileSize: Int) -> T?) -> T? {
        guard let file = try? FileHandle(forReadingFrom: url), let fileSize = try? file.seekToEnd() else { return nil }
        defer { try? file.close() }
        return body({ offset, count in
            guard (try? file.seek(toOffset: UInt64(offset))) != nil, let data = try? file.read(upToCount: count),
                  data.count == count else { return nil }
            return [UInt8](data)
        }, Int(fileSize))
    }

    /// What a WAV file's header and size say of its sound, read once for the decoder.
    public struct Lengths: Sendable {
        /// The seconds of sound it holds (`dataBytes`), for sound stored one sample at a time.
        public var held: Double?
        /// The seconds its finished header promises; nil when the header was never finished (a
        /// recorder writes the sizes when it stops: placeholders of 0 or all ones, or a RIFF size
        /// that does not cover the data, mean it did not). A file that holds less was cut off: a
        /// flat battery, a copy that stopped. FFmpeg trims the length to what the file holds, so
        /// it cannot tell.
        public var promised: Double?
        /// The seconds declared and held when it holds sound past the size its header declares.
        public var pastDeclared: (declared: Double, held: Double)?
        /// The header's data size was never filled in (0 or all ones; in an RF64, its ds64's).
        public var unfinished = false
        /// Why the chunks before the sound cannot be walked, when a chunk's size is damaged.
        public var damage: String?
    }

    /// The `Lengths` of the WAV file at `url`; nil for a file that is no WAV.
    public static func lengths(of url: URL) -> Lengths? {
        reading(url) { bytes, fileSize in
            let layout: WAVLayout
            do { layout = try find(bytes) } catch {
                guard let problem = error as? Problem, case .chunkPastEnd = problem else { return nil }
                var damaged = Lengths()
                damaged.damage = problem.description
                return damaged
            }
            var lengths = Lengths()
            guard let frame = layout.bytesPerFrame, layout.sampleRate > 0 else { return lengths }
            let bytesPerSecond = Double(layout.sampleRate * frame)
            let size = layout.declaredDataSize, held = layout.dataBytes(fileSize: fileSize) { bytes($0, 8) }
            lengths.held = Double(held / frame) / Double(layout.sampleRate)
            if size > 0, size < 0x7FFF_0000 || layout.sizedByDS64, layout.riffSize != 0xFFFF_FFFF,
               layout.riffSize >= layout.dataOffset - 8 + size {
                lengths.promised = Double(size / frame) / Double(layout.sampleRate)
            }
            lengths.unfinished = layout.sizeUnfinished
            if !layout.sizeUnfinished, held > size {
                lengths.pastDeclared = (Double(size) / bytesPerSecond, Double(held) / bytesPerSecond)
            }
            return lengths
        }
    }

    /// The length of the sound a WAV file's finished header promises, in seconds (`Lengths.promised`).
    public static func promisedSeconds(of url: URL) -> Double? { lengths(of: url)?.promised }
}
