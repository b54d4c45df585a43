// What Somni reads of an MP4/M4A file itself: its top-level boxes and its AAC settings.
import CFFmpeg
import Foundation
import SomniCore

/// An MP4 file's top-level boxes, as far as the file holds them: where its audio (`mdat`) and
/// its index (`moov`) lie. One walk serves the decoder's own reading of a plain M4A
/// (`IndexedM4A`), of one cut off before its index (`UnindexedM4A`), and its error messages.
struct MP4Layout {
    /// The first `mdat` box's payload, cut at the end of the file.
    var audio: Range<UInt64>?
    /// The first `moov` box, cut at the end of the file.
    var index: Range<UInt64>?
    var indexIsWhole = false
    /// A `moof` box: a fragmented file, whose index is spread through it.
    var isFragmented = false
    /// Every box's size made sense up to the end of the file.
    var walkedToEnd = false
    /// The audio box was taken to run past its declared size (what followed was no box known).
    var audioStretched = false

    /// Surely without a whole index: one cut inside it, or none in a file whose boxes were all
    /// walked by their sizes. One whose walk stopped at a box it could not read, or took the
    /// audio past its size (a box it does not know after it), may yet be whole to FFmpeg.
    var surelyLacksWholeIndex: Bool { index != nil ? !indexIsWhole : walkedToEnd && !audioStretched }

    /// The layout of `file`; nil unless it starts as an MP4 does (`ftyp`).
    init?(_ file: FileHandle) {
        guard let end = try? file.seekToEnd(), end >= 16 else { return nil }
        var offset: UInt64 = 0
        var first = true
        while offset < end, end - offset >= 8 {
            guard let header = try? Self.read(file, at: offset, count: 16), header.count >= 8 else { return }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if first, type != "ftyp" { return nil }
            first = false
            // A size of 0: the box runs to the end of the file (or its size was never written).
            guard let (size, headerSize) = Self.boxSize(header[...], room: end - offset) else { return }
            // A damaged 64-bit size may say more than any file holds: past the end is all it means.
            var boxEnd = offset.addingReportingOverflow(size).overflow ? UInt64.max : offset + size
            // A recorder that writes the audio box's size only when it finishes leaves a
            // placeholder (the bare header's 8 or 16 bytes, or 0): its audio runs on to what
            // really follows it, the end of the file when no box does.
            if type == "mdat", boxEnd < end, !Self.startsABox(file, at: boxEnd) {
                boxEnd = end
                audioStretched = true
            }
            switch type {
            case "moov" where index == nil:
                index = offset..<min(boxEnd, end)
                indexIsWhole = boxEnd <= end
            case "mdat" where audio == nil:
                audio = (offset + headerSize)..<min(boxEnd, end)
            case "moof":
                isFragmented = true
            default:
                break
            }
            offset = boxEnd
        }
        walkedToEnd = true
    }

    /// The start of the index (at most 1 MiB of it: the settings come first), whole or not.
    func indexStart(in file: FileHandle) -> [UInt8]? {
        guard let index else { return nil }
        return try? Self.read(file, at: index.lowerBound, count: Int(min(UInt64(index.count), 1 << 20)))
    }

    /// Whether a top-level box an M4A holds after its audio starts at `offset`.
    private static func startsABox(_ file: FileHandle, at offset: UInt64) -> Bool {
        guard let header = try? read(file, at: offset, count: 8), header.count == 8 else { return false }
        let size = bigEndian(header[0..<4])
        let type = String(decoding: header[4..<8], as: UTF8.self)
        return ["moov", "free", "skip", "wide", "udta", "meta", "uuid", "mdat", "moof", "mfra"].contains(type)
            && (size == 0 || size == 1 || size >= 8)
    }

    /// A box's whole size and its header's length, from its first 8 or 16 bytes: a 64-bit size
    /// follows the type when the 32-bit one is 1, and a size of 0 (either) runs the box on to the
    /// end of what holds it, `room` bytes from its start. Nil when the header cannot be a box's.
    static func boxSize(_ header: ArraySlice<UInt8>, room: UInt64) -> (size: UInt64, headerSize: UInt64)? {
        let start = header.startIndex
        guard header.count >= 8 else { return nil }
        var size = bigEndian(header[start..<start + 4]), headerSize: UInt64 = 8
        if size == 1 {
            guard header.count >= 16 else { return nil }
            size = bigEndian(header[start + 8..<start + 16])
            headerSize = 16
        }
        if size == 0 { size = room }
        return size >= headerSize ? (size, headerSize) : nil
    }

    static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Up to `count` bytes of `file` from `offset` (fewer at its end).
    static func read(_ file: FileHandle, at offset: UInt64, count: Int) throws -> [UInt8] {
        do {
            try file.seek(toOffset: offset)
            return [UInt8](try file.read(upToCount: count) ?? Data())
        } catch {
            throw SomniError(.io, "cannot read the recording: \(error.localizedDescription)")
        }
    }
}

/// An AAC AudioSpecificConfig: what an MP4's index says about how its frames decode.
enum AACConfig {
    /// The sampling frequencies an AudioSpecificConfig's 4-bit index names.
    static let rates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350]

    /// One for AAC-LC at `rate`, one channel: the decoder takes the real channel count from the
    /// frames' own elements.
    static func lowComplexity(rate: Int) -> [UInt8] {
        let index = UInt8(rates.firstIndex(of: rate) ?? 3)
        let objectType: UInt8 = 2, channels: UInt8 = 1
        return [objectType << 3 | index >> 1, (index & 1) << 7 | channels << 3]
    }

    /// The sampling rate a config names (its frequency index, or an explicit rate).
    static func rate(of config: [UInt8]) -> Int? {
        guard config.count >= 2 else { return nil }
        var objectType = Int(config[0] >> 3)
        var bit = 5
        if objectType == 31, config.count >= 3 { objectType = 32 + Int((config[0] & 7) << 3 | config[1] >> 5); bit = 11 }
        func bits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard bit / 8 < config.count else { return nil }
                value = value << 1 | Int(config[bit / 8] >> (7 - UInt8(bit % 8)) & 1)
                bit += 1
            }
            return value
        }
        guard let index = bits(4) else { return nil }
        if index == 15 { return bits(24) }
        return index < rates.count ? rates[index] : nil
    }

    /// The config in the first `esds` box of `bytes` (an index, or what was written of one).
    static func inIndex(_ bytes: [UInt8]) -> [UInt8]? {
        let tag = Array("esds".utf8)
        guard bytes.count > 8, let at = (4..<(bytes.count - 4)).first(where: { Array(bytes[$0..<$0 + 4]) == tag }) else { return nil }
        var position = at + 8  // past the type, version and flags
        func byte() -> Int? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return Int(bytes[position])
        }
        // A descriptor: a tag, then a length in up to four 7-bit groups.
        func descriptor(_ expected: Int) -> Int? {
            guard byte() == expected else { return nil }
            var length = 0
            for _ in 0..<4 {
                guard let b = byte() else { return nil }
                length = length << 7 | (b & 0x7F)
                if b & 0x80 == 0 { break }
            }
            return length
        }
        guard descriptor(0x03) != nil, byte() != nil, byte() != nil, let flags = byte() else { return nil }  // ES_ID, flags
        if flags & 0x80 != 0 { position += 2 }  // depends on another stream
        if flags & 0x40 != 0, let length = byte() { position += length }  // a URL
        if flags & 0x20 != 0 { position += 2 }  // an OCR stream
        guard descriptor(0x04) != nil, byte() == 0x40 else { return nil }  // MPEG-4 audio
        position += 12  // stream type, buffer size, maximum and average bit rate
        guard let length = descriptor(0x05), length >= 2, position + length <= bytes.count else { return nil }
        return Array(bytes[position..<position + length])
    }

    /// Gives a decoder the config, as its extradata (as a demuxer would from the index).
    static func apply(_ config: [UInt8], to codec: UnsafeMutablePointer<AVCodecContext>) throws {
        av_freep(&codec.pointee.extradata)
        let padded = Int(config.count) + 64  // AV_INPUT_BUFFER_PADDING_SIZE
        guard let extradata = av_mallocz(padded)?.assumingMemoryBound(to: UInt8.self) else {
            throw SomniError(.internalError, "out of memory")
        }
        extradata.update(from: config, count: config.count)
        codec.pointee.extradata = extradata
        codec.pointee.extradata_size = Int32(config.count)
        if let rate = rate(of: config) { codec.pointee.sample_rate = Int32(rate) }
    }
}
