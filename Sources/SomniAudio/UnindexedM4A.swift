// An M4A recording cut off before its index was written, read from its raw AAC frames.
import CFFmpeg
import Foundation
import SomniCore

/// Where an M4A's AAC frames come from when Somni reads them itself: one packet at a time.
protocol AACFrameSource: AnyObject {
    /// Puts the next frame into `packet` (which must be empty); false at the end.
    func nextFrame(into packet: UnsafeMutablePointer<AVPacket>) throws -> Bool
    /// Reading ended at damage or a cut rather than at the end of the audio.
    var stoppedAtDamage: Bool { get }
}

/// A phone app killed mid-recording (a flat battery, the app swiped away) leaves an M4A whose
/// index, the `moov` box that recorders write last, is missing or cut off. Its audio is all in
/// the `mdat` box, as AAC frames laid end to end with nothing marking where one ends: no demuxer
/// reads it. The AAC decoder, though, finds a frame's end by parsing it, and says how much of
/// its input was left when it produced each frame (`AVFrame.pkt_size`). So a second decoder, the
/// probe, parses a window of the box, the frames' lengths are read off, and each frame goes to
/// the real decoder as a packet of its own, as a demuxer would give it. The probe doubles the
/// decoding work of a rescued night, and only of one.
///
/// What the lost index also held is how to decode the frames (the AudioSpecificConfig: profile,
/// sample rate, channels). It is taken from what is left of the index when some was written, else
/// from a complete recording made by the same app (`--like`), else found by trying each rate:
/// the frames parse only at the rates whose band tables they were coded with. 48, 44.1 and 32 kHz
/// share theirs (as do 24 and 22.05, and 16, 12 and 11.025), so most recordings need the second.
final class UnindexedM4A: AACFrameSource {
    /// The AudioSpecificConfig the frames are decoded with.
    let config: [UInt8]
    /// The sample rate `config` names (the AAC core's: HE-AAC decodes at twice it).
    let configuredRate: Int
    /// Where the audio frames lie in the file: the `mdat` box's payload, up to the end of the file.
    let frames: Range<UInt64>
    /// How the decoding settings were found, for people.
    let settingsSource: String
    /// The length of the recording, from the length of the box and of its first frames.
    private(set) var estimatedDuration: Double = 0

    private let file: FileHandle
    private let probe: UnsafeMutablePointer<AVCodecContext>
    private let probePacket: UnsafeMutablePointer<AVPacket>
    private let probeFrame: UnsafeMutablePointer<AVFrame>
    /// The file offset of the next frame to hand out, and the lengths of the frames from there
    /// on that the probe has found.
    private var next: UInt64
    private var lengths: [Int] = []
    private var lengthsRead = 0
    /// Bytes of the file from `windowStart`, which the next frames are cut from.
    private var window: [UInt8] = []
    private var windowStart: UInt64 = 0
    /// The probe stopped at something it could not parse before the end of the box.
    private(set) var stoppedAtDamage = false

    /// The probe parses this much of the box at a time: at 64 kbit/s about 30 s of audio, and
    /// always many frames (an AAC frame is at most 768 bytes a channel).
    private static let windowBytes = 256 * 1024

    /// The rates tried when nothing says which, commonest in recorders first.
    private static let triedRates = [48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 64_000, 88_200, 96_000]

    /// Opens `path` if it is an MP4 without a whole index and its `mdat` holds AAC frames; nil when
    /// it is not such a file (the caller's own error stands). Throws when it is one but the frames
    /// cannot be decoded, saying why.
    static func open(path: String, like sibling: URL?) throws -> UnindexedM4A? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        var keepFile = false
        defer { if !keepFile { try? file.close() } }
        guard let layout = MP4Layout(file), !layout.indexIsWhole, let frames = layout.audio, frames.count >= 64 else { return nil }

        let start = try MP4Layout.read(file, at: frames.lowerBound, count: min(windowBytes, Int(frames.count)))
        let wholeBox = frames.count <= UInt64(windowBytes)
        let config: [UInt8]
        let source: String
        let framesInStart: Int
        if let sibling {
            config = try settings(of: sibling)
            source = "the settings of \(sibling.lastPathComponent)"
            guard let parsed = parsedFrames(start, config: config, wholeBox: wholeBox) else {
                throw SomniError(.badInput, "\(path) is an M4A recording cut off before its index was written, and its "
                    + "audio does not decode with the settings of \(sibling.path): that recording was made with other "
                    + "settings (another app, or another quality)")
            }
            framesInStart = parsed
        } else if let left = layout.indexStart(in: file).flatMap(AACConfig.inIndex),
                  let parsed = parsedFrames(start, config: left, wholeBox: wholeBox) {
            config = left
            source = "the settings left in what was written of its index"
            framesInStart = parsed
        } else {
            let working = triedRates.compactMap { rate in
                parsedFrames(start, config: AACConfig.lowComplexity(rate: rate), wholeBox: wholeBox).map { (rate, $0) }
            }
            guard let (rate, parsed) = working.first else {
                throw SomniError(.badInput, "\(path) holds no audio that can be read: it is an MP4/M4A recording without "
                    + "its index (the 'moov' box), which recorders write last, and what it holds is not AAC audio that "
                    + "Somni can read without it")
            }
            guard working.count == 1 else {
                let kHz = working.map { kilohertz($0.0) }
                throw SomniError(.badInput, "\(path) is an M4A recording cut off before its index (the 'moov' box) was "
                    + "written, which recorders write last: its audio is there, but not the rate it was recorded at "
                    + "(\(kHz.dropLast().joined(separator: ", ")) or \(kHz.last!) kHz, which sound alike to the decoder "
                    + "and would put every event at the wrong time). Add --like FILE, a complete recording made by the "
                    + "same app with the same settings, to read it")
            }
            config = AACConfig.lowComplexity(rate: rate)
            source = "the only rate they decode at, \(kilohertz(rate)) kHz"
            framesInStart = parsed
        }
        keepFile = true
        let rescued = try UnindexedM4A(file: file, frames: frames, config: config, settingsSource: source)
        // The frames' average length in the first window, over the whole box: good for progress.
        let averageFrameBytes = Double(start.count) / Double(framesInStart)
        rescued.estimatedDuration = Double(frames.count) / averageFrameBytes * 1024 / Double(max(rescued.configuredRate, 1))
        return rescued
    }

    private init(file: FileHandle, frames: Range<UInt64>, config: [UInt8], settingsSource: String) throws {
        guard let probe = Self.aacDecoder(config: config) else {
            throw SomniError(.internalError, "cannot open FFmpeg's AAC decoder")
        }
        guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else {
            var probe: UnsafeMutablePointer<AVCodecContext>? = probe
            avcodec_free_context(&probe)
            throw SomniError(.internalError, "out of memory")
        }
        self.file = file
        self.frames = frames
        self.config = config
        self.configuredRate = AACConfig.rate(of: config) ?? 0
        self.settingsSource = settingsSource
        self.probe = probe
        probePacket = packet
        probeFrame = frame
        next = frames.lowerBound
    }

    deinit {
        var probe: UnsafeMutablePointer<AVCodecContext>? = probe
        avcodec_free_context(&probe)
        var packet: UnsafeMutablePointer<AVPacket>? = probePacket
        av_packet_free(&packet)
        var frame: UnsafeMutablePointer<AVFrame>? = probeFrame
        av_frame_free(&frame)
        try? file.close()
    }

    /// Puts the next frame into `packet` (which must be empty); false at the end of the audio or
    /// where the frames stop parsing (`stoppedAtDamage`).
    func nextFrame(into packet: UnsafeMutablePointer<AVPacket>) throws -> Bool {
        if lengthsRead == lengths.count { try findFrames() }
        guard lengthsRead < lengths.count else { return false }
        let length = lengths[lengthsRead]
        lengthsRead += 1
        let offset = Int(next - windowStart)
        try check(av_new_packet(packet, Int32(length)), "reading the audio frames", code: .internalError)
        window.withUnsafeBufferPointer { bytes in
            packet.pointee.data.update(from: bytes.baseAddress! + offset, count: length)
        }
        next += UInt64(length)
        return true
    }

    /// Reads the next window from `next` and has the probe parse it into frame lengths. The last
    /// frame of a window is handed out only when the window reaches the end of the box: otherwise
    /// its end is unknown (the frame after it may be cut by the window) and the next window
    /// starts with it.
    private func findFrames() throws {
        lengths.removeAll(keepingCapacity: true)
        lengthsRead = 0
        guard next < frames.upperBound, !stoppedAtDamage else { return }
        let count = Int(min(UInt64(Self.windowBytes), frames.upperBound - next))
        window = try MP4Layout.read(file, at: next, count: count)
        windowStart = next
        let reachesEnd = next + UInt64(window.count) >= frames.upperBound
        let starts = Self.frameStarts(in: window, probe: probe, packet: probePacket, frame: probeFrame)
        guard !starts.isEmpty else {
            stoppedAtDamage = true
            return
        }
        for (start, following) in zip(starts, starts.dropFirst()) {
            lengths.append(following - start)
        }
        if reachesEnd || lengths.isEmpty {
            // The box's last frame runs to its end: if garbage follows it, the decoder says so.
            lengths.append(window.count - starts[starts.count - 1])
            if !reachesEnd { stoppedAtDamage = true }
        }
    }

    // MARK: - Parsing the frames

    /// Where each frame the probe could parse begins in `bytes`, in order, from the first byte.
    private static func frameStarts(in bytes: [UInt8], probe: UnsafeMutablePointer<AVCodecContext>,
                                     packet: UnsafeMutablePointer<AVPacket>, frame: UnsafeMutablePointer<AVFrame>) -> [Int] {
        avcodec_flush_buffers(probe)
        guard av_new_packet(packet, Int32(bytes.count)) >= 0 else { return [] }
        bytes.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: bytes.count) }
        defer { av_packet_unref(packet) }
        guard avcodec_send_packet(probe, packet) >= 0 else { return [] }
        var starts: [Int] = []
        // Each frame reports how much of the packet was left when it was parsed.
        while avcodec_receive_frame(probe, frame) >= 0 {
            let start = bytes.count - Int(frame.pointee.pkt_size)
            av_frame_unref(frame)
            guard start >= (starts.last.map { $0 + 1 } ?? 0) else { break }
            starts.append(start)
        }
        // The window must start with a frame: one that does not starts with damage.
        return starts.first == 0 ? starts : []
    }

    /// How many frames `bytes`, the start of the box, parse into with `config`; nil unless they
    /// are many and reach (nearly) the end of the window, where one frame may be cut. A wrong
    /// rate fails at the first frame or a few frames in.
    private static func parsedFrames(_ bytes: [UInt8], config: [UInt8], wholeBox: Bool) -> Int? {
        guard let probe = aacDecoder(config: config) else { return nil }
        var probePointer: UnsafeMutablePointer<AVCodecContext>? = probe
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        defer {
            avcodec_free_context(&probePointer)
            av_packet_free(&packet)
            av_frame_free(&frame)
        }
        guard let packet, let frame else { return nil }
        let starts = frameStarts(in: bytes, probe: probe, packet: packet, frame: frame)
        guard let last = starts.last, starts.count >= 8 || wholeBox, bytes.count - last <= 768 * 8 else { return nil }
        return starts.count
    }

    private static func aacDecoder(config: [UInt8]) -> UnsafeMutablePointer<AVCodecContext>? {
        guard let decoder = avcodec_find_decoder(AV_CODEC_ID_AAC), let codec = avcodec_alloc_context3(decoder) else { return nil }
        guard (try? AACConfig.apply(config, to: codec)) != nil, avcodec_open2(codec, decoder, nil) >= 0 else {
            var unopened: UnsafeMutablePointer<AVCodecContext>? = codec
            avcodec_free_context(&unopened)
            return nil
        }
        return codec
    }

    /// "48", "44.1", "11.025".
    private static func kilohertz(_ rate: Int) -> String {
        var text = String(format: "%.3f", Double(rate) / 1000)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    // MARK: - Settings

    /// The AAC settings of a complete recording, the one the user says was made the same way.
    /// An M4A's are read from the start of its index, not through FFmpeg's demuxer, which would
    /// index every frame first (64 MB for 8 hours, more than the night's analysis then needs).
    static func settings(of sibling: URL) throws -> [UInt8] {
        guard FileManager.default.isReadableFile(atPath: sibling.path), let file = FileHandle(forReadingAtPath: sibling.path) else {
            throw SomniError(.badInput, "--like: cannot read \(sibling.path)")
        }
        defer { try? file.close() }
        if let layout = MP4Layout(file), let index = layout.indexStart(in: file) {
            guard let config = AACConfig.inIndex(index) else {
                throw SomniError(.badInput, "--like: \(sibling.path) is not an AAC recording (an M4A from the same app)")
            }
            return config
        }
        // Not an MP4 (AAC in ADTS, say): FFmpeg reads its settings from the first frames.
        var format: UnsafeMutablePointer<AVFormatContext>?
        defer { avformat_close_input(&format) }
        guard avformat_open_input(&format, sibling.path, nil, nil) >= 0, let format,
              avformat_find_stream_info(format, nil) >= 0 else {
            throw SomniError(.badInput, "--like: \(sibling.path) is not a recording FFmpeg can read")
        }
        let index = av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let parameters = format.pointee.streams[Int(index)]?.pointee.codecpar?.pointee,
              parameters.codec_id == AV_CODEC_ID_AAC, parameters.extradata_size >= 2, let extradata = parameters.extradata else {
            throw SomniError(.badInput, "--like: \(sibling.path) is not an AAC recording (an M4A from the same app)")
        }
        return Array(UnsafeBufferPointer(start: extradata, count: Int(parameters.extradata_size)))
    }
}
