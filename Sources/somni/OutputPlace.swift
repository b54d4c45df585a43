import Foundation
import SomniCore

/// Where a command will write a file, checked before its long work (a night rendered, a model
/// trained) rather than found unwritable after it, leaving half its output.
enum OutputPlace {
    /// Throws unless `url` can be written: not a folder, and in a folder that exists and may be
    /// written. A device such as /dev/stdout only needs to be writable itself, where `devices`
    /// are taken; a file that is renamed into place when whole cannot go to one.
    static func check(_ url: URL, what: String, devices: Bool = true) throws {
        let fm = FileManager.default
        if OutputFile.linksLoop(url) { throw SomniError(.io, "cannot write \(what) to \(url.path): its links go round in a loop") }
        var isFolder: ObjCBool = false
        if fm.fileExists(atPath: url.path, isDirectory: &isFolder) {
            if isFolder.boolValue { throw SomniError(.io, "cannot write \(what) to \(url.path): it is a folder") }
            if OutputFile.isDevice(url) {
                guard devices else { throw SomniError(.io, "cannot write \(what) to \(url.path): it is not a plain file") }
                if fm.isWritableFile(atPath: url.path) { return }
            }
        }
        let folder = OutputFile.followingLinks(url).deletingLastPathComponent()  // a link's target's
        guard fm.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw SomniError(.io, "cannot write \(what) to \(url.path): there is no folder \(folder.path)")
        }
        guard fm.isWritableFile(atPath: folder.path) else {
            throw SomniError(.io, "cannot write \(what) to \(url.path): the folder \(folder.path) is not writable")
        }
    }
}
