import Foundation

/// File names as Foundation gives them: a name whose bytes are not UTF-8 (a Latin-1 "café" from
/// an old archive) reaches Swift with U+FFFD in place of those bytes, and opening that spelling
/// finds nothing. Said as such, rather than "no such file" for a file the user can see.
public enum PathName {
    /// True when `path` holds a byte sequence that was not UTF-8.
    public static func lostBytes(_ path: String) -> Bool { path.unicodeScalars.contains("\u{FFFD}") }

    /// " (…)" to add to a "no such file" for such a path; "" for any other.
    public static func notUTF8Note(_ path: String) -> String {
        lostBytes(path) ? " (its name is not valid UTF-8, which Somni cannot open: rename it)" : ""
    }
}

/// A text file the user hands over (a reference CSV, a sidecar of marked events), read whole.
public enum TextFile {
    /// The file as UTF-8 text. A path that names nothing or a folder (a typo), or a file that is
    /// not UTF-8 text (a recording or a spreadsheet given by mistake), is the user's input, said as
    /// such, as `somni analyze` says of a missing recording; a file there that cannot be read is an
    /// I/O error.
    public static func read(_ url: URL, what: String) throws -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw SomniError(.badInput, "no such file: \(url.path) (\(what))\(PathName.notUTF8Note(url.path))")
        }
        guard !isFolder.boolValue else { throw SomniError(.badInput, "\(url.path) is a folder: \(what) must be a text file") }
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SomniError(.io, "cannot read \(what) \(url.path)", cause: error)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SomniError(.badInput, "\(url.path) is not text: \(what) must be a UTF-8 text file")
        }
        return text
    }
}

/// A file the user names as an output (`-o`, `--out`). A link is followed and its target
/// written; a device or a pipe (`-o /dev/stdout`, a FIFO) is written to as a stream. Anything
/// else, a new file or a regular one, is written whole under a temporary name and renamed into
/// place, so an interrupted write never leaves half a file. (Renaming over a link or a device
/// had replaced it with a plain file: `-o /dev/full`, run as root, replaced the device.)
public enum OutputFile {
    /// Writes `data` to `url` whole or not at all: at a hidden name beside it (`PartialFile`),
    /// forced to the disk, then renamed over it. Foundation's atomic write
    /// left its own temporary file (`.dat.nosync…`) beside the output for good when killed;
    /// this one is removed by the next write of that name once six hours old. A device or a
    /// pipe is written into.
    public static func write(_ data: Data, to url: URL) throws {
        try write([(data, url)])
    }

    /// Writes files that belong together (a model and its figures) as `write(_:to:)` does, and
    /// renames them into place only once all are on the disk: a failure on the way leaves every
    /// file that was there as it was. Written one after the other, a model whose figures then
    /// could not be written was removed after it had replaced the one before.
    public static func write(_ files: [(data: Data, url: URL)]) throws {
        var staged: [(temporary: URL, target: URL)] = []
        var streams: [(data: Data, url: URL)] = []
        do {
            for file in files {
                if openDescriptor(file.url) != nil { streams.append(file); continue }
                // Through a link to nothing too (it was taken for a device and failed: a trained model lost).
                let target = followingLinks(file.url)
                if isLinkLeftUnfollowed(target) { throw SomniError(.io, "cannot write \(file.url.path): its links go round in a loop") }
                if isDevice(target) { streams.append((file.data, target)); continue }
                PartialFile.removeAbandoned(of: target)
                let temporary = PartialFile.url(for: target)
                staged.append((temporary, target))
                try file.data.write(to: temporary)
                try NightFolder.flushOne(temporary)
            }
            for file in streams { try writeInto(file.data, file.url) }
        } catch {
            for file in staged { try? FileManager.default.removeItem(at: file.temporary) }
            throw error
        }
        try putInPlace(staged)
    }

    /// Renames each written file over its place; should one rename fail, the places renamed
    /// before it get back what they held (kept meanwhile under a hidden name, a hard link), so
    /// that a model is never left new beside its old figures.
    private static func putInPlace(_ staged: [(temporary: URL, target: URL)]) throws {
        var previous: [URL: URL] = [:]  // place → its file as it was
        var new: Set<URL> = []  // places that held nothing
        if staged.count > 1 {
            for file in staged {
                guard FileManager.default.fileExists(atPath: file.target.path) else { new.insert(file.target); continue }
                let kept = PartialFile.url(for: file.target)
                if link(file.target.path, kept.path) == 0 { previous[file.target] = kept }
            }
        }
        defer { for kept in previous.values { unlink(kept.path) } }
        for (i, file) in staged.enumerated() where rename(file.temporary.path, file.target.path) != 0 {
            let why = String(cString: strerror(errno))
            for done in staged[..<i] {
                if let kept = previous.removeValue(forKey: done.target) {
                    rename(kept.path, done.target.path)
                } else if new.contains(done.target) {
                    unlink(done.target.path)
                }
            }
            for rest in staged[i...] { try? FileManager.default.removeItem(at: rest.temporary) }
            throw SomniError(.io, "cannot put \(file.target.lastPathComponent) in place: \(why)")
        }
    }

    /// Writes into a device or an open descriptor, where the file cannot be replaced.
    private static func writeInto(_ data: Data, _ url: URL) throws {
        if let descriptor = openDescriptor(url) {
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
            try handle.write(contentsOf: data)
            return
        }
        guard let handle = FileHandle(forWritingAtPath: url.path) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        defer { try? handle.close() }
        try handle.write(contentsOf: data)
    }

    /// Where `url` leads through its links, also to a file not made yet (Foundation's
    /// `resolvingSymlinksInPath` leaves a link to nothing as it is): a file renamed into place
    /// there replaces the file the link names, not the link.
    public static func followingLinks(_ url: URL) -> URL {
        // What exists is where the system's own resolution says (a pipe's /dev/stdout included,
        // whose last link names no path); only a link to nothing is followed here.
        if FileManager.default.fileExists(atPath: url.path) { return url.resolvingSymlinksInPath() }
        var current = url.standardizedFileURL
        for _ in 0..<40 {  // as the kernel's own limit on links in a row
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current.path) else { break }
            // A relative link from where its folder really is: "../x" from a folder reached
            // through a link is beside that folder's target, not beside the link.
            current = destination.hasPrefix("/") ? URL(fileURLWithPath: destination)
                : current.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(destination)
            current = current.standardizedFileURL
        }
        return current
    }

    /// The process's own open file that `url` names (/dev/stdout, /dev/stderr, /dev/fd/N,
    /// /proc/self/fd/N), written through its descriptor as the shell set it up: opened by name,
    /// or renamed over, `-o /dev/stdout >> log.csv` replaced the log where the shell appends.
    static func openDescriptor(_ url: URL) -> Int32? {
        let path = url.standardizedFileURL.path
        let descriptor: Int32? = switch path {
        case "/dev/stdout": 1
        case "/dev/stderr": 2
        case _ where path.hasPrefix("/dev/fd/"): Int32(path.dropFirst("/dev/fd/".count))
        case _ where path.hasPrefix("/proc/self/fd/"): Int32(path.dropFirst("/proc/self/fd/".count))
        default: nil
        }
        guard let descriptor, fcntl(descriptor, F_GETFD) != -1 else { return nil }
        return descriptor
    }

    /// Whether `url`'s links go round in a loop (or on past the kernel's 40): nothing can be
    /// written there, and writing over the last link found replaced it with a file.
    public static func linksLoop(_ url: URL) -> Bool { isLinkLeftUnfollowed(followingLinks(url)) }

    /// Whether what `followingLinks` gave is still a link to nothing: it gave up, after 40.
    private static func isLinkLeftUnfollowed(_ target: URL) -> Bool {
        !FileManager.default.fileExists(atPath: target.path)
            && (try? FileManager.default.destinationOfSymbolicLink(atPath: target.path)) != nil
    }

    /// Whether `url` (through any link) is something other than a plain file or a folder: a
    /// device or a pipe, written into rather than replaced.
    public static func isDevice(_ url: URL) -> Bool {
        if openDescriptor(url) != nil { return true }
        let type = (try? FileManager.default.attributesOfItem(atPath: followingLinks(url).path))?[.type] as? FileAttributeType
        return type != nil && type != .typeRegular && type != .typeDirectory
    }
}


extension String {
    /// Followed by spaces to `width` characters as a terminal shows them, for a table's column.
    /// Foundation's `padding(toLength:)` counts UTF-16 units, so it cut a class folder named
    /// with an emoji in half (and left its column a space short).
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

/// Whether two paths name one file, links followed: the same device and inode.
public enum FileIdentity {
    public static func same(_ a: URL, _ b: URL) -> Bool {
        var x = stat(), y = stat()
        guard stat(a.path, &x) == 0, stat(b.path, &y) == 0 else { return false }
        return x.st_dev == y.st_dev && x.st_ino == y.st_ino
    }
}
