// The one funnel every FFmpeg call goes through, plus small helpers shared by decoder and writer.
import CFFmpeg
import Foundation
import SomniCore

/// FFmpeg's own text for an error code (av_strerror).
func ffmpegErrorText(_ code: Int32) -> String {
    var text = [CChar](repeating: 0, count: 256)
    if av_strerror(code, &text, text.count) < 0 { return "FFmpeg error \(code)" }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Turns a negative FFmpeg return into a SomniError carrying av_strerror's text; passes others on.
@discardableResult
func check(_ result: Int32, _ what: @autoclosure () -> String, code: SomniError.Code = .io) throws -> Int32 {
    if result >= 0 { return result }
    throw SomniError(code, "\(what()): \(ffmpegErrorText(result))")
}

/// FFmpeg's log would chatter on stderr about every damaged packet; problems reach the user as
/// SomniErrors and warnings instead. Touch this once before using FFmpeg.
let ffmpegLogSilenced: Void = av_log_set_level(AV_LOG_QUIET)

/// "2.4 s", "12 min 05 s", "1 h 02 min": durations as a person reads them.
func spokenDuration(_ seconds: Double) -> String {
    if seconds < 60 { return String(format: "%.1f s", seconds) }
    let whole = Int(seconds.rounded())
    if whole < 3600 { return String(format: "%d min %02d s", whole / 60, whole % 60) }
    return String(format: "%d h %02d min", whole / 3600, (whole % 3600) / 60)
}

extension AVChannelLayout {
    /// The default layout (mono, stereo, 5.1 …) for a channel count.
    static func standard(channels: Int) -> AVChannelLayout {
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channels))
        return layout
    }
}
