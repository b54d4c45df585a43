// Streaming encoder: WAV, FLAC, M4A (AAC), Ogg Opus, Ogg Vorbis, MP3 through FFmpeg's libraries.
import CFFmpeg
import Foundation
import SomniCore

/// Encodes Float samples (mono, or interleaved when `channels` > 1) to a compressed file as they
/// arrive, so an 8-hour night never sits in memory. The file is written under a hidden temporary
/// name next to `url` and moved into place by `finish()`; without `finish()` (an error, say) the
/// temporary file is removed, so `url` only ever holds a complete file.
public final class EncodedAudioWriter: AudioSink {
    public enum Format: String, Sendable, CaseIterable {
        /// 16-bit PCM WAV.
        case wav
        /// FLAC, lossless (16-bit).
        case flac
        /// AAC in MP4, index at the front (finish() rewrites the file once to put it there).
        case m4a
        /// Opus in Ogg.
        case opus
        /// Vorbis in Ogg.
        case ogg
        /// MP3 (LAME).
        case mp3

        /// The usual file extension, without the dot.
        public var fileExtension: String { rawValue }

        /// FFmpeg's muxer and encoder names.
        var muxer: String {
            switch self {
            case .wav: "wav"
            case .flac: "flac"
            case .m4a: "ipod"
            case .opus, .ogg: "ogg"
            case .mp3: "mp3"
            }
        }
        var encoder: String {
            switch self {
            case .wav: "pcm_s16le"
            case .flac: "flac"
            case .m4a: "aac"
            case .opus: "libopus"
            case .ogg: "libvorbis"
            case .mp3: "libmp3lame"
            }
        }
        /// Bit rate per channel when the caller gives none; nil for lossless or quality-based coding.
        var defaultBitRatePerChannel: Int? {
            switch self {
            case .wav, .flac, .ogg: nil
            case .m4a, .mp3: 64_000
            case .opus: 32_000
            }
        }
    }

    public let url: URL
    public let format: Format
    public let sampleRate: Int
    public let channels: Int

    /// Input samples converted per step: bounds the scratch buffer whatever `write` is handed.
    private static let sliceFrames = 4096

    private let handles: EncoderHandles
    private let temporaryURL: URL
    private let frameSize: Int32
    private var nextTimestamp: Int64 = 0
    private var finished = false

    /// `metadata`: the container's tags, such as "creation_time" (ISO 8601, UTC) or "title".
    /// `temporaryURL`: where the file is written until `finish` renames it to `url`; by default a
    /// hidden name beside `url` of this writer's own, so two writers of one `url` at once (two
    /// `somni synth --out same.wav`) never write into each other's file.
    public convenience init(url: URL, format: Format, sampleRate: Int, bitRate: Int? = nil, channels: Int = 1,
                            metadata: [String: String] = [:], temporaryURL: URL? = nil) throws {
        try self.init(url: url, format: format, sampleRate: sampleRate, bitRate: bitRate, channels: channels,
                      fastMP3: false, metadata: metadata, temporaryURL: temporaryURL)
    }

    /// `fastMP3`: LAME's "fast" quality level (what `lame -f` uses), for event clips: about a
    /// quarter less time than its default at the same bit rate. Not for whole recordings: its
    /// frames lean harder on each other, so a scratch in the middle loses more of the audio.
    init(url: URL, format: Format, sampleRate: Int, bitRate: Int?, channels: Int, fastMP3: Bool,
         metadata: [String: String] = [:], temporaryURL partial: URL? = nil) throws {
        _ = ffmpegLogSilenced
        guard sampleRate > 0 else { throw SomniError(.badInput, "sample rate must be positive, not \(sampleRate)") }
        guard (1...8).contains(channels) else { throw SomniError(.badInput, "channels must be 1…8, not \(channels)") }
        self.url = url
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        temporaryURL = partial ?? PartialFile.url(for: url)
        let path = url.path
        handles = EncoderHandles()

        guard let encoder = avcodec_find_encoder_by_name(format.encoder) else {
            throw SomniError(.unsupported, "this FFmpeg build has no \(format.encoder) encoder for \(format.rawValue) files")
        }
        try check(avformat_alloc_output_context2(&handles.format, nil, format.muxer, temporaryURL.path),
                  "cannot write \(format.rawValue) files", code: .unsupported)
        guard let container = handles.format, let codec = avcodec_alloc_context3(encoder),
              let stream = avformat_new_stream(container, nil) else { throw SomniError(.internalError, "out of memory") }
        handles.codec = codec

        let outputRate = Self.closestRate(to: Int32(sampleRate), supported: encoder.pointee.supported_samplerates)
        codec.pointee.sample_fmt = Self.preferredSampleFormat(supported: encoder.pointee.sample_fmts)
        codec.pointee.sample_rate = outputRate
        codec.pointee.ch_layout = .standard(channels: channels)
        codec.pointee.time_base = AVRational(num: 1, den: outputRate)
        if let bitRate = bitRate ?? format.defaultBitRatePerChannel.map({ $0 * channels }) {
            codec.pointee.bit_rate = Int64(bitRate)
        } else if format == .ogg {
            codec.pointee.flags |= AV_CODEC_FLAG_QSCALE  // Vorbis quality 4 (about 64–100 kb/s)
            codec.pointee.global_quality = 4 * FF_QP2LAMBDA
        }
        if format == .m4a {
            // The default two-loop search costs ~5× the time for no audible gain on clips of
            // snores and coughs; "fast" keeps clip writing from dominating a night's analysis.
            av_opt_set(codec.pointee.priv_data, "aac_coder", "fast", 0)
            for tool in ["aac_pns", "aac_tns", "aac_is", "aac_ms", "aac_ltp", "aac_pred"] {
                av_opt_set_int(codec.pointee.priv_data, tool, 0, 0)
            }
        }
        if format == .opus {
            av_opt_set_int(codec.pointee.priv_data, "compression_level", 5, 0)
        }
        if format == .mp3, fastMP3 {
            codec.pointee.compression_level = 7  // LAME's -q 7, the level of `lame -f`
        }
        if container.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            codec.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        try check(avcodec_open2(codec, encoder, nil),
                  "cannot set up the \(format.encoder) encoder at \(sampleRate) Hz, \(channels) ch", code: .badInput)
        let variableFrames = encoder.pointee.capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE != 0
        frameSize = codec.pointee.frame_size > 0 && !variableFrames ? codec.pointee.frame_size : 4096

        try check(avcodec_parameters_from_context(stream.pointee.codecpar, codec), "cannot write \(path)")
        stream.pointee.time_base = codec.pointee.time_base
        try handles.makeResampler(
            inputRate: Int32(sampleRate), channels: channels, output: codec, sliceFrames: Self.sliceFrames, frameSize: frameSize)

        try check(avio_open(&container.pointee.pb, temporaryURL.path, AVIO_FLAG_WRITE), "cannot write \(path)")
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if format == .m4a { av_dict_set(&options, "movflags", "+faststart", 0) }  // moov first: plays while loading
        for (key, value) in metadata { av_dict_set(&container.pointee.metadata, key, value, 0) }
        try check(avformat_write_header(container, &options), "cannot write \(path)")
    }

    deinit {
        if !finished {
            handles.closeFile()
            try? FileManager.default.removeItem(at: temporaryURL)
        }
    }

    /// Appends samples: mono, or interleaved frames of `channels` samples.
    public func write(_ samples: UnsafeBufferPointer<Float>) throws {
        guard !finished else { throw SomniError(.internalError, "write after finish on \(url.path)") }
        guard samples.count % channels == 0 else {
            throw SomniError(.badInput, "\(samples.count) samples do not split into frames of \(channels) channels")
        }
        guard let base = samples.baseAddress else { return }
        var frameOffset = 0
        let totalFrames = samples.count / channels
        while frameOffset < totalFrames {
            let count = min(Self.sliceFrames, totalFrames - frameOffset)
            let slice = UnsafeRawPointer(base + frameOffset * channels).assumingMemoryBound(to: UInt8.self)
            try convertIntoFifo(slice, frames: Int32(count))
            try encodeFullFrames()
            frameOffset += count
        }
    }

    /// Writes out what the muxer and the file's buffer hold (an Ogg muxer keeps a page until it
    /// is full), so that what was encoded so far is in the file: a recorder's Opus master,
    /// flushed so every 30 s, lost up to 80 s to kill -9 without it. What the encoder itself
    /// holds (a frame) stays.
    public func flushBuffered() {
        guard !finished, let container = handles.format else { return }
        if container.pointee.oformat.pointee.flags & AVFMT_ALLOW_FLUSH != 0 { _ = av_write_frame(container, nil) }
        if let io = container.pointee.pb { avio_flush(io) }
    }

    /// Flushes the resampler and the encoder, writes the trailer and moves the file into place.
    public func finish() throws {
        guard !finished else { return }
        try convertIntoFifo(nil, frames: 0)
        try encodeFullFrames()
        if let fifo = handles.fifo, av_audio_fifo_size(fifo) > 0 { try encodeFrame(samples: av_audio_fifo_size(fifo)) }
        try sendToEncoder(nil)
        guard let container = handles.format else { return }
        try check(av_write_trailer(container), "cannot write \(url.path)")
        handles.closeFile()
        // An older file is replaced; a folder in the file's place is not (removing it would
        // take everything in it).
        var isFolder: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
        if exists, isFolder.boolValue {
            throw SomniError(.io, "cannot write \(url.path): a folder of that name is in the way")
        }
        // rename replaces an older file in one step: there is never a moment without either.
        guard rename(temporaryURL.path, url.path) == 0 else {
            throw SomniError(.io, "cannot move the finished file to \(url.path): \(String(cString: strerror(errno)))")
        }
        // When the final name was already a hard link to the temporary one (a recorder's
        // crash-safe master), rename does nothing and both names stay: the temporary one goes.
        _ = unlink(temporaryURL.path)
        finished = true
    }

    // MARK: - Encoding

    /// Resamples `frames` input frames (nil: what the resampler still holds) into the FIFO.
    private func convertIntoFifo(_ input: UnsafePointer<UInt8>?, frames: Int32) throws {
        guard let resampler = handles.resampler, let fifo = handles.fifo else { return }
        try handles.reserveScratch(samples: try check(swr_get_out_samples(resampler, frames), "resampling"))
        var inputPlane = input
        let converted = try check(
            input == nil ? swr_convert(resampler, handles.scratch, handles.scratchCapacity, nil, 0)  // flush
                : swr_convert(resampler, handles.scratch, handles.scratchCapacity, &inputPlane, frames),
            "resampling for \(url.path)")
        let planes = UnsafeMutableRawPointer(handles.scratch).map { $0.assumingMemoryBound(to: UnsafeMutableRawPointer?.self) }
        try check(av_audio_fifo_write(fifo, planes, converted), "buffering audio for \(url.path)")
    }

    private func encodeFullFrames() throws {
        guard let fifo = handles.fifo else { return }
        while av_audio_fifo_size(fifo) >= frameSize { try encodeFrame(samples: frameSize) }
    }

    private func encodeFrame(samples: Int32) throws {
        guard let frame = handles.frame, let fifo = handles.fifo else { return }
        try check(av_frame_make_writable(frame), "encoding \(url.path)")
        let planes = UnsafeMutableRawPointer(frame.pointee.extended_data).map { $0.assumingMemoryBound(to: UnsafeMutableRawPointer?.self) }
        let read = try check(av_audio_fifo_read(fifo, planes, samples), "encoding \(url.path)")
        frame.pointee.nb_samples = read
        frame.pointee.pts = nextTimestamp
        nextTimestamp += Int64(read)
        try sendToEncoder(frame)
    }

    /// Sends one frame (nil: end of stream) and writes every packet the encoder has ready.
    private func sendToEncoder(_ frame: UnsafeMutablePointer<AVFrame>?) throws {
        guard let codec = handles.codec, let container = handles.format, let packet = handles.packet,
              let stream = container.pointee.streams[0] else { return }
        try check(avcodec_send_frame(codec, frame), "encoding \(url.path)")
        while true {
            let received = avcodec_receive_packet(codec, packet)
            if received == somni_averror_eagain() || received == somni_averror_eof() { return }
            try check(received, "encoding \(url.path)")
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = 0
            try check(av_interleaved_write_frame(container, packet), "cannot write \(url.path)")
        }
    }

    // MARK: - Choosing the encoder's settings

    /// The input rate when the encoder takes it, else the nearest higher rate it takes (else its highest).
    private static func closestRate(to rate: Int32, supported: UnsafePointer<Int32>?) -> Int32 {
        guard let supported else { return rate }
        var rates: [Int32] = []
        var index = 0
        while supported[index] != 0 { rates.append(supported[index]); index += 1 }
        if rates.isEmpty || rates.contains(rate) { return rate }
        return rates.filter { $0 >= rate }.min() ?? rates.max() ?? rate
    }

    /// Float first (no quantisation), then 16-bit, then whatever the encoder lists first.
    private static func preferredSampleFormat(supported: UnsafePointer<AVSampleFormat>?) -> AVSampleFormat {
        guard let supported else { return AV_SAMPLE_FMT_FLT }
        var formats: [AVSampleFormat] = []
        var index = 0
        while supported[index] != AV_SAMPLE_FMT_NONE { formats.append(supported[index]); index += 1 }
        let preference = [AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P, AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P]
        return preference.first(where: formats.contains) ?? formats.first ?? AV_SAMPLE_FMT_FLT
    }
}

/// Writes short clips as MP3 (.mp3): every browser plays it, and it is the cheapest of the
/// compressed formats here to write. A night writes one clip per event (about 1,900 on a dense
/// 8-hour night); LAME's fast mode at 40 kb/s costs about a third less time than FFmpeg's AAC
/// encoder at 48 kb/s and gives smaller files (`SomniBench clips` compares them).
public struct MP3ClipEncoder: FormatClipEncoder {
    public static let format = EncodedAudioWriter.Format.mp3
    public var bitRate: Int
    public init(bitRate: Int = 40_000) { self.bitRate = bitRate }
}

/// Writes short clips as AAC in MP4 (.m4a): small, and every browser plays it.
public struct M4AClipEncoder: FormatClipEncoder {
    public static let format = EncodedAudioWriter.Format.m4a
    public var bitRate: Int
    public init(bitRate: Int = 48_000) { self.bitRate = bitRate }
}

/// A clip encoder writing one `EncodedAudioWriter` format at a fixed bit rate.
public protocol FormatClipEncoder: ClipEncoder {
    static var format: EncodedAudioWriter.Format { get }
    var bitRate: Int { get }
}

extension FormatClipEncoder {
    public var fileExtension: String { Self.format.fileExtension }

    public func writeClip(_ samples: UnsafeBufferPointer<Float>, sampleRate: Int, to url: URL) throws {
        let writer = try EncodedAudioWriter(url: url, format: Self.format, sampleRate: sampleRate, bitRate: bitRate,
                                            channels: 1, fastMP3: true)
        try writer.write(samples)
        try writer.finish()
    }
}

/// The FFmpeg handles of one output file, freed together.
final class EncoderHandles {
    var format: UnsafeMutablePointer<AVFormatContext>?
    var codec: UnsafeMutablePointer<AVCodecContext>?
    var resampler: OpaquePointer?
    var fifo: OpaquePointer?
    var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
    var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
    /// Converted samples on their way to the FIFO, in the encoder's format (planes as it needs).
    private(set) var scratch: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?
    private(set) var scratchCapacity: Int32 = 0
    private var scratchChannels: Int32 = 1
    private var scratchFormat = AV_SAMPLE_FMT_FLT

    /// Resampler from interleaved Float at `inputRate` to the encoder's format, plus the FIFO,
    /// the frame and the scratch buffer, all sized once here.
    func makeResampler(inputRate: Int32, channels: Int, output codec: UnsafeMutablePointer<AVCodecContext>,
                       sliceFrames: Int, frameSize: Int32) throws {
        var inLayout = AVChannelLayout.standard(channels: channels)
        try check(swr_alloc_set_opts2(&resampler, &codec.pointee.ch_layout, codec.pointee.sample_fmt, codec.pointee.sample_rate,
                                      &inLayout, AV_SAMPLE_FMT_FLT, inputRate, 0, nil), "cannot set up resampling")
        try check(swr_init(resampler), "cannot set up resampling from \(inputRate) Hz")
        scratchChannels = Int32(channels)
        scratchFormat = codec.pointee.sample_fmt
        try reserveScratch(samples: try check(swr_get_out_samples(resampler, Int32(sliceFrames)), "resampling"))
        fifo = av_audio_fifo_alloc(codec.pointee.sample_fmt, Int32(channels), frameSize * 2)
        guard fifo != nil, let frame else { throw SomniError(.internalError, "out of memory") }
        frame.pointee.nb_samples = frameSize
        frame.pointee.format = codec.pointee.sample_fmt.rawValue
        frame.pointee.sample_rate = codec.pointee.sample_rate
        try check(av_channel_layout_copy(&frame.pointee.ch_layout, &codec.pointee.ch_layout), "encoding")
        try check(av_frame_get_buffer(frame, 0), "encoding")
    }

    /// Grows the scratch buffer to hold `samples` per channel (rarely: only past its high mark).
    func reserveScratch(samples: Int32) throws {
        guard samples > scratchCapacity else { return }
        freeScratch()
        try check(av_samples_alloc_array_and_samples(&scratch, nil, scratchChannels, samples, scratchFormat, 0), "out of memory")
        scratchCapacity = samples
    }

    private func freeScratch() {
        if let scratch { av_freep(UnsafeMutableRawPointer(scratch)) }
        av_freep(&scratch)
        scratchCapacity = 0
    }

    /// Closes the output file (idempotent).
    func closeFile() {
        if let format, format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 { avio_closep(&format.pointee.pb) }
    }

    deinit {
        closeFile()
        avformat_free_context(format)
        avcodec_free_context(&codec)
        swr_free(&resampler)
        if let fifo { av_audio_fifo_free(fifo) }
        av_frame_free(&frame)
        av_packet_free(&packet)
        freeScratch()
    }
}
