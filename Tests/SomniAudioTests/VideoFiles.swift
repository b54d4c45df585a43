import CFFmpeg
import Foundation

/// Video files made at test time through FFmpeg's muxers: raw pictures and raw PCM, so no
/// encoder is needed, in any container that takes both.
enum VideoFiles {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A file of `videoSeconds` of 16×16 grey pictures at 5 a second and `audio` (16 kHz mono)
    /// as its sound track, in `container` ("matroska", "nut", ...); `secondAudio`, as long,
    /// is a second sound track after it.
    static func write(to url: URL, container: String, videoSeconds: Double, audio: [Float], secondAudio: [Float]? = nil) throws {
        var format: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&format, nil, container, url.path) >= 0, let format else {
            throw Failure(description: "no \(container) muxer")
        }
        defer {
            avio_closep(&format.pointee.pb)
            avformat_free_context(format)
        }
        guard let video = avformat_new_stream(format, nil), let sound = avformat_new_stream(format, nil) else {
            throw Failure(description: "cannot add streams")
        }
        var tracks = [(sound, audio)]
        if let secondAudio {
            guard let second = avformat_new_stream(format, nil) else { throw Failure(description: "cannot add streams") }
            tracks.append((second, secondAudio))
        }
        let (width, height, framesPerSecond) = (16, 16, 5)
        video.pointee.time_base = AVRational(num: 1, den: Int32(framesPerSecond))
        video.pointee.codecpar.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        video.pointee.codecpar.pointee.codec_id = AV_CODEC_ID_RAWVIDEO
        video.pointee.codecpar.pointee.width = Int32(width)
        video.pointee.codecpar.pointee.height = Int32(height)
        video.pointee.codecpar.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        // Matroska names raw pictures by their FourCC (I420 here), as the rawvideo encoder would set it.
        video.pointee.codecpar.pointee.codec_tag = avcodec_pix_fmt_to_codec_tag(AV_PIX_FMT_YUV420P)
        for (sound, _) in tracks {
            sound.pointee.time_base = AVRational(num: 1, den: 16_000)
            sound.pointee.codecpar.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            sound.pointee.codecpar.pointee.codec_id = AV_CODEC_ID_PCM_S16LE
            sound.pointee.codecpar.pointee.sample_rate = 16_000
            sound.pointee.codecpar.pointee.format = AV_SAMPLE_FMT_S16.rawValue
            sound.pointee.codecpar.pointee.bits_per_coded_sample = 16
            sound.pointee.codecpar.pointee.block_align = 2
            av_channel_layout_default(&sound.pointee.codecpar.pointee.ch_layout, 1)
        }
        guard avio_open(&format.pointee.pb, url.path, AVIO_FLAG_WRITE) >= 0,
              avformat_write_header(format, nil) >= 0 else { throw Failure(description: "cannot start \(url.path)") }

        let pictureBytes = width * height * 3 / 2
        let pictures = Int(videoSeconds * Double(framesPerSecond))
        let samplesPerPicture = 16_000 / framesPerSecond
        for picture in 0..<max(pictures, (audio.count + samplesPerPicture - 1) / samplesPerPicture) {
            if picture < pictures {
                try writePacket(format, stream: video, bytes: [UInt8](repeating: 128, count: pictureBytes), pts: picture, duration: 1)
            }
            let first = picture * samplesPerPicture
            for (sound, audio) in tracks where first < audio.count {
                let chunk = audio[first..<min(audio.count, first + samplesPerPicture)]
                let bytes = chunk.flatMap { sample -> [UInt8] in
                    let value = UInt16(bitPattern: Int16(max(-1, min(1, sample)) * 32_767))
                    return [UInt8(value & 0xFF), UInt8(value >> 8)]
                }
                try writePacket(format, stream: sound, bytes: bytes, pts: first, duration: chunk.count)
            }
        }
        guard av_write_trailer(format) >= 0 else { throw Failure(description: "cannot finish \(url.path)") }
    }

    /// One packet of `bytes` at `pts` (in the stream's own time base until the muxer's is known).
    private static func writePacket(_ format: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
                                    bytes: [UInt8], pts: Int, duration: Int) throws {
        var allocated = av_packet_alloc()
        defer { av_packet_free(&allocated) }
        guard let packet = allocated else { throw Failure(description: "out of memory") }
        guard av_new_packet(packet, Int32(bytes.count)) >= 0 else { throw Failure(description: "out of memory") }
        bytes.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: bytes.count) }
        let own = AVRational(num: 1, den: stream == format.pointee.streams[0] ? 5 : 16_000)
        packet.pointee.stream_index = stream.pointee.index
        packet.pointee.pts = av_rescale_q(Int64(pts), own, stream.pointee.time_base)
        packet.pointee.dts = packet.pointee.pts
        packet.pointee.duration = av_rescale_q(Int64(duration), own, stream.pointee.time_base)
        guard av_interleaved_write_frame(format, packet) >= 0 else { throw Failure(description: "cannot write a packet") }
    }
}
