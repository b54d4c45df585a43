// A plain M4A's AAC frames read through its own index, without FFmpeg's demuxer.
import CFFmpeg
import Foundation
import SomniCore

/// FFmpeg's MP4 demuxer turns the file's sample tables into an index entry of 24 bytes and more
/// for every AAC frame before the first one is read: 32 MiB for 8 hours at 48 kHz, held until
/// the stream ends, which is when the night's memory peaks (96 of 100 MB). The tables themselves
/// say the same in 4 bytes a frame (`stsz`) plus a few per chunk (`stco`, `stsc`). So a plain
/// M4A, what phone recorders write (one AAC-LC track, a whole index, no fragments), is read here
/// from its tables, and each frame handed to FFmpeg's AAC decoder as a packet, as the demuxer
/// would. Anything else (video, several tracks, HE-AAC, fragments, edits other than the encoder's
/// priming, a date tag FFmpeg would read) is left to FFmpeg: `open` returns nil.
final class IndexedM4A: AACFrameSource {
    /// The AudioSpecificConfig the frames are decoded with.
    let config: [UInt8]
    /// The track's time scale, its sample rate for AAC.
    let sampleRate: Int
    let channels: Int
    /// Seconds, from the track's header.
    let duration: Double
    /// Samples the encoder put before the sound (its priming), which the edit list skips.
    let priming: Int
    /// When the recording was made, as FFmpeg's metadata would date it: the movie's creation
    /// time when plausible, else the track's.
    let recordingStart: RecordingStart?
    /// Whether reading stopped at a frame the file does not hold (it was cut off).
    private(set) var stoppedAtDamage = false

    private let file: FileHandle
    private let fileSize: UInt64
    private let sizes: FrameSizes
    private let chunkOffsets: [UInt64]
    /// `stsc`: from which chunk (0-based) on, how many frames each chunk holds.
    private let chunkRuns: [(firstChunk: Int, framesPerChunk: Int)]
    private var frame = 0, chunk = 0, inChunk = 0, run = 0, framesInChunk = 0
    private var position: UInt64 = 0
    /// Bytes of the file from `bufferStart`, which frames are cut from.
    private var buffer: [UInt8] = []
    private var bufferStart: UInt64 = 0
    private static let bufferBytes = 256 * 1024
    /// Far above any AAC frame (6,144 bits a channel, two channels here).
    private static let largestFrame = 1 << 16

    /// `stsz`: one size for every frame, or each frame's own; a single size is not spread into
    /// a table, which a damaged count could make as large as the file four times over.
    struct FrameSizes {
        var fixed: UInt32 = 0
        var table: [UInt32] = []
        var count = 0
        subscript(frame: Int) -> UInt32 { fixed != 0 ? fixed : table[frame] }
    }

    /// The index of `path` when it is a plain AAC-LC M4A; nil otherwise (FFmpeg reads it).
    static func open(path: String) -> IndexedM4A? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        guard let reader = try? read(file) else {
            try? file.close()
            return nil
        }
        return reader
    }

    private init(file: FileHandle, fileSize: UInt64, tables: Tables) {
        self.file = file
        self.fileSize = fileSize
        config = tables.config
        sampleRate = tables.timescale
        channels = tables.channels
        duration = Double(tables.duration) / Double(tables.timescale)
        priming = tables.priming
        recordingStart = [tables.movieCreation, tables.trackCreation].lazy.compactMap { $0 }
            .first { RecordingStart.isPlausible($0) }.map { RecordingStart(date: $0, origin: .creationTime) }
        sizes = tables.sizes
        chunkOffsets = tables.chunkOffsets
        chunkRuns = tables.chunkRuns
        position = chunkOffsets.first ?? 0
    }

    deinit { try? file.close() }

    /// Puts the next frame into `packet` (which must be empty); false after the last one, or at
    /// one the file does not hold (`stoppedAtDamage`).
    func nextFrame(into packet: UnsafeMutablePointer<AVPacket>) throws -> Bool {
        guard frame < sizes.count, chunk < chunkOffsets.count else { return false }
        if inChunk == 0 {
            position = chunkOffsets[chunk]
            while run + 1 < chunkRuns.count, chunk >= chunkRuns[run + 1].firstChunk { run += 1 }
            framesInChunk = chunkRuns[run].framesPerChunk
        }
        let length = Int(sizes[frame])
        // A damaged table may name any offset or size: compared without overflowing, and no
        // frame longer than an AAC frame can be, so every size fits the packet's Int32.
        guard length <= Self.largestFrame, position <= fileSize, UInt64(length) <= fileSize - position else {
            stoppedAtDamage = true
            return false
        }
        if position < bufferStart || position + UInt64(length) > bufferStart + UInt64(buffer.count) {
            try fillBuffer(from: position, atLeast: length)
        }
        try check(av_new_packet(packet, Int32(length)), "reading the audio frames", code: .internalError)
        let offset = Int(position - bufferStart)
        buffer.withUnsafeBufferPointer { bytes in
            packet.pointee.data.update(from: bytes.baseAddress! + offset, count: length)
        }
        if frame == 0, priming > 0, let side = av_packet_new_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, 10) {
            // The decoder drops the priming from the first frames' output (a 32-bit little-endian count).
            for byte in 0..<10 { side[byte] = byte < 4 ? UInt8(truncatingIfNeeded: priming >> (8 * byte)) : 0 }
        }
        position += UInt64(length)
        frame += 1
        inChunk += 1
        if inChunk == framesInChunk {
            chunk += 1
            inChunk = 0
        }
        return true
    }

    private func fillBuffer(from offset: UInt64, atLeast count: Int) throws {
        buffer = try MP4Layout.read(file, at: offset, count: max(count, Self.bufferBytes))
        bufferStart = offset
        guard buffer.count >= count else { throw SomniError(.io, "cannot read the recording: it ends early") }
    }

    // MARK: - The index

    private struct Tables {
        var config: [UInt8] = []
        var channels = 0
        var timescale = 0
        var duration: UInt64 = 0
        var priming = 0
        var movieCreation: Date?
        var trackCreation: Date?
        var sizes = FrameSizes()
        var chunkOffsets: [UInt64] = []
        var chunkRuns: [(firstChunk: Int, framesPerChunk: Int)] = []
    }

    /// A box's payload within `bytes`, and what follows it.
    private struct Box {
        var type: String
        var payload: Range<Int>
    }

    private struct Unsupported: Error {}

    private static func children(of range: Range<Int>, in bytes: [UInt8]) throws -> [Box] {
        var boxes: [Box] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            let room = range.upperBound - offset
            guard let (size, header) = MP4Layout.boxSize(bytes[offset..<offset + min(16, room)], room: UInt64(room)),
                  size <= UInt64(room) else { throw Unsupported() }
            boxes.append(Box(type: String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self),
                             payload: offset + Int(header)..<offset + Int(size)))
            offset += Int(size)
        }
        return boxes
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> UInt64 {
        MP4Layout.bigEndian(bytes[offset..<offset + count])
    }

    private static func read(_ file: FileHandle) throws -> IndexedM4A {
        // One whole moov, no fragments.
        guard let layout = MP4Layout(file), layout.walkedToEnd, !layout.isFragmented,
              let moov = layout.index, layout.indexIsWhole, moov.count <= 64 << 20 else { throw Unsupported() }
        let bytes = try MP4Layout.read(file, at: moov.lowerBound, count: moov.count)
        guard bytes.count == moov.count else { throw Unsupported() }
        let fileSize = try file.seekToEnd()
        let tables = try parse(moov: bytes, fileSize: fileSize)
        // A date tag ("©day") dates a recording only when the movie has no creation time; then
        // it is FFmpeg's to read.
        if tables.movieCreation == nil,
           (0..<max(0, bytes.count - 4)).contains(where: { bytes[$0] == 0xA9 && bytes[$0 + 1] == 0x64 && bytes[$0 + 2] == 0x61 && bytes[$0 + 3] == 0x79 }) {
            throw Unsupported()
        }
        return IndexedM4A(file: file, fileSize: fileSize, tables: tables)
    }

    private static func parse(moov bytes: [UInt8], fileSize: UInt64) throws -> Tables {
        guard let moov = try children(of: 0..<bytes.count, in: bytes).first(where: { $0.type == "moov" }) else { throw Unsupported() }
        let top = try children(of: moov.payload, in: bytes)
        let tracks = top.filter { $0.type == "trak" }
        guard tracks.count == 1 else { throw Unsupported() }
        var tables = Tables()
        var movieCreated: UInt64 = 0, trackCreated: UInt64 = 0, movieVersion: UInt8 = 0, trackVersion: UInt8 = 0
        if let mvhd = top.first(where: { $0.type == "mvhd" }) {
            (movieVersion, movieCreated) = creation(bytes, mvhd.payload)
        }
        let trak = try children(of: tracks[0].payload, in: bytes)
        func child(_ type: String, of boxes: [Box]) throws -> [Box] {
            guard let box = boxes.first(where: { $0.type == type }) else { throw Unsupported() }
            return try children(of: box.payload, in: bytes)
        }
        func payload(_ type: String, of boxes: [Box]) throws -> Range<Int> {
            guard let box = boxes.first(where: { $0.type == type }) else { throw Unsupported() }
            return box.payload
        }
        let mdia = try child("mdia", of: trak)
        let hdlr = try payload("hdlr", of: mdia)
        guard hdlr.count >= 12, String(decoding: bytes[hdlr.lowerBound + 8..<hdlr.lowerBound + 12], as: UTF8.self) == "soun" else {
            throw Unsupported()
        }
        let mdhd = try payload("mdhd", of: mdia)
        (trackVersion, trackCreated) = creation(bytes, mdhd)
        let timing = mdhd.lowerBound + (trackVersion == 1 ? 20 : 12)
        guard timing + (trackVersion == 1 ? 12 : 8) <= mdhd.upperBound else { throw Unsupported() }
        tables.timescale = Int(bigEndian(bytes, timing, 4))
        tables.duration = bigEndian(bytes, timing + 4, trackVersion == 1 ? 8 : 4)
        guard tables.timescale > 0 else { throw Unsupported() }

        // The encoder's priming: one edit that starts the track a little in. Anything else
        // (an empty edit, several, a rate) is FFmpeg's to read.
        if let edts = trak.first(where: { $0.type == "edts" }) {
            let elst = try payload("elst", of: try children(of: edts.payload, in: bytes))
            guard elst.count >= 8 else { throw Unsupported() }
            let version = bytes[elst.lowerBound]
            let count = bigEndian(bytes, elst.lowerBound + 4, 4)
            let entry = elst.lowerBound + 8
            let width = version == 1 ? 8 : 4
            guard count == 1, entry + 2 * width + 4 <= elst.upperBound else { throw Unsupported() }
            let mediaTime = Int64(bitPattern: bigEndian(bytes, entry + width, width) << (64 - 8 * UInt64(width))) >> (64 - 8 * Int64(width))
            let rate = bigEndian(bytes, entry + 2 * width, 4)
            guard mediaTime >= 0, mediaTime < Int64(tables.timescale), rate == 0x0001_0000 else { throw Unsupported() }
            tables.priming = Int(mediaTime)
        }

        let stbl = try child("stbl", of: try child("minf", of: mdia))
        // The sample description: AAC (MPEG-4 audio), low complexity, in an esds.
        let stsd = try payload("stsd", of: stbl)
        guard stsd.count > 16, bigEndian(bytes, stsd.lowerBound + 4, 4) == 1,
              String(decoding: bytes[stsd.lowerBound + 12..<stsd.lowerBound + 16], as: UTF8.self) == "mp4a",
              let config = AACConfig.inIndex(Array(bytes[stsd])), config.count >= 2,
              config[0] >> 3 == 2 else {
            throw Unsupported()
        }
        tables.config = config
        tables.channels = Int(config[1] >> 3 & 0x0F)
        guard (1...2).contains(tables.channels), AACConfig.rate(of: config) == tables.timescale else { throw Unsupported() }

        let stsz = try payload("stsz", of: stbl)
        guard stsz.count >= 12 else { throw Unsupported() }
        let fixed = UInt32(bigEndian(bytes, stsz.lowerBound + 4, 4))
        let frames = Int(bigEndian(bytes, stsz.lowerBound + 8, 4))
        guard frames > 0 else { throw Unsupported() }
        if fixed != 0 {
            // Every frame lies in the file, so no more of them than it has bytes.
            guard UInt64(frames) * UInt64(fixed) <= fileSize else { throw Unsupported() }
            tables.sizes = FrameSizes(fixed: fixed, count: frames)
        } else {
            guard stsz.lowerBound + 12 + 4 * frames <= stsz.upperBound else { throw Unsupported() }
            tables.sizes = FrameSizes(table: (0..<frames).map { UInt32(bigEndian(bytes, stsz.lowerBound + 12 + 4 * $0, 4)) },
                                      count: frames)
        }

        if let stco = stbl.first(where: { $0.type == "stco" || $0.type == "co64" }) {
            let width = stco.type == "co64" ? 8 : 4
            guard stco.payload.count >= 8 else { throw Unsupported() }
            let count = Int(bigEndian(bytes, stco.payload.lowerBound + 4, 4))
            guard count > 0, stco.payload.lowerBound + 8 + width * count <= stco.payload.upperBound else { throw Unsupported() }
            tables.chunkOffsets = (0..<count).map { bigEndian(bytes, stco.payload.lowerBound + 8 + width * $0, width) }
        } else {
            throw Unsupported()
        }

        let stsc = try payload("stsc", of: stbl)
        guard stsc.count >= 8 else { throw Unsupported() }
        let runs = Int(bigEndian(bytes, stsc.lowerBound + 4, 4))
        guard runs > 0, stsc.lowerBound + 8 + 12 * runs <= stsc.upperBound else { throw Unsupported() }
        tables.chunkRuns = try (0..<runs).map { index in
            let entry = stsc.lowerBound + 8 + 12 * index
            let firstChunk = Int(bigEndian(bytes, entry, 4)) - 1, perChunk = Int(bigEndian(bytes, entry + 4, 4))
            guard firstChunk >= 0, perChunk > 0 else { throw Unsupported() }
            return (firstChunk, perChunk)
        }
        guard tables.chunkRuns[0].firstChunk == 0, zip(tables.chunkRuns, tables.chunkRuns.dropFirst()).allSatisfy({ $0.firstChunk < $1.firstChunk }) else {
            throw Unsupported()
        }

        // As FFmpeg reads a creation time: seconds since 1904, or since 1970 from muxers that
        // wrote those; none when 0.
        func date(_ raw: UInt64, version: UInt8) -> Date? {
            var seconds = Int64(bitPattern: raw)
            if version == 0, seconds > 0, seconds < 2_082_844_800 { seconds += 2_082_844_800 }
            guard seconds > 0 else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(seconds - 2_082_844_800))
        }
        tables.movieCreation = date(movieCreated, version: movieVersion)
        tables.trackCreation = date(trackCreated, version: trackVersion)
        return tables
    }

    /// A full box's version and creation time (mvhd, mdhd).
    private static func creation(_ bytes: [UInt8], _ payload: Range<Int>) -> (UInt8, UInt64) {
        guard payload.count >= 12 else { return (0, 0) }
        let version = bytes[payload.lowerBound]
        if version == 1 { return (1, bigEndian(bytes, payload.lowerBound + 4, 8)) }
        return (version, bigEndian(bytes, payload.lowerBound + 4, 4))
    }
}
