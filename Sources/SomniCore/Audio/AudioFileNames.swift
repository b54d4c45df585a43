import Foundation

/// Which files in a folder are taken for recordings, where Somni gathers them by itself (`somni
/// train`'s class folders and background beds, `somni synth --data`). A file named on the command
/// line is always tried, whatever its name.
///
/// The list is what FFmpeg's libraries read that recorders, phones, browsers and editors save:
/// Android's AMR and 3GP, a browser's WebM, a video's MP4 or MOV sound track, Windows Media,
/// Apple's CAF and AIFF. It goes by name because decoding every file of a large folder just to
/// find its notes and pictures would cost more than the training's own decoding.
public enum AudioFileNames {
    public static let extensions: Set<String> = [
        "wav", "wave", "flac", "mp3", "mp2", "m4a", "m4b", "mp4", "mov", "aac", "3gp", "3g2", "amr", "awb",
        "ogg", "oga", "opus", "spx", "webm", "weba", "mka", "wma", "aif", "aiff", "aifc", "caf", "au", "snd",
        "wv", "ac3",
    ]

    /// True when `name`'s extension (any case) is one of `extensions`.
    public static func isAudio(_ name: String) -> Bool {
        extensions.contains((name as NSString).pathExtension.lowercased())
    }
}
