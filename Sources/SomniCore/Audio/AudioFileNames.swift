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

    /// Audio files under `root` (any depth, links followed, each folder once however many links
    /// lead to it), sorted, and the other files there (sorted; hidden files and a recording's
    /// sidecar `NAME.txt` not among them; links to nothing among them). A pipe, socket or device is never taken for a recording,
    /// whatever its name: opening a pipe with no writer would wait forever.
    public static func files(under root: URL) throws -> (audio: [String], notAudio: [String]) {
        let fm = FileManager.default
        var found: [String] = [], others: [String] = []
        var stack = [root.path], visited = Set<String>()
        while let dir = stack.popLast() {
            guard visited.insert(URL(fileURLWithPath: dir).resolvingSymlinksInPath().path).inserted else { continue }
            let entries: [String]
            do { entries = try fm.contentsOfDirectory(atPath: dir) } catch {
                throw SomniError(.io, "could not list \(dir)", cause: error)
            }
            let audioStems = Set(entries.filter(isAudio).map { ($0 as NSString).deletingPathExtension })
            for e in entries where !e.hasPrefix(".") {
                let path = URL(fileURLWithPath: dir).appendingPathComponent(e).resolvingSymlinksInPath().path
                var d: ObjCBool = false
                let listed = URL(fileURLWithPath: dir).appendingPathComponent(e).path
                if !fm.fileExists(atPath: path, isDirectory: &d) {
                    // A link to nothing, or a name that is not UTF-8: listed, so a recording
                    // left out is left out aloud.
                    others.append(listed + PathName.notUTF8Note(listed))
                } else if d.boolValue {
                    stack.append(listed)
                } else if isAudio(e) && isPlainFile(path) {
                    found.append(listed)
                } else if !((e as NSString).pathExtension == "txt" && audioStems.contains((e as NSString).deletingPathExtension)) {
                    others.append(listed)
                }
            }
        }
        return (found.sorted(), others.sorted())
    }

    private static func isPlainFile(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular
    }
}
