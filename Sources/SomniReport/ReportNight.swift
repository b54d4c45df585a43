import Foundation
import SomniCore
import SomniStore

/// One night as the report needs it: the session, its envelope when there is one, and for each
/// event with a clip the URL the page's audio element should load.
public struct ReportNight: Sendable {
    public var id: String
    public var session: Session
    public var envelope: EnvelopeFile.Contents?
    /// Event id → the clip's address in the page (a relative URL or a data: URI).
    public var clipSources: [String: String]
    /// Clips session.json names that were not in the night folder (their events get no player).
    public var missingClips: [String] = []
    /// Why the night has no loudness views, when its envelope.bin is missing or damaged.
    public var envelopeProblem: String?

    public init(id: String, session: Session, envelope: EnvelopeFile.Contents?, clipSources: [String: String] = [:]) {
        self.id = id; self.session = session; self.envelope = envelope
        self.clipSources = clipSources
    }

    /// Reads a night folder: session.json, envelope.bin when present (a missing or damaged envelope
    /// only costs the loudness views, never the report), clip sources per `clips`.
    public static func load(id: String, folder: URL, clips: ClipLinking) throws -> ReportNight {
        try load(id: id, folder: folder, session: session(in: folder), clips: clips)
    }

    /// A night folder's session.json, refused when damaged or inconsistent: read apart from the
    /// clips, so that a damaged night can be told from a report that cannot be written.
    public static func session(in folder: URL) throws -> Session {
        let sessionFile = folder.appendingPathComponent(Session.fileName)
        let session = try Session.load(from: sessionFile)
        try session.refuseIfInconsistent(readFrom: sessionFile)
        return session
    }

    /// What an envelope cut short (a copy broken off, a disk that filled) lacks, in words; nil
    /// when it covers the night. A recorder flushes its levels every few seconds, so a night
    /// closed after a crash may end a little past them: that is no shortfall.
    static func shortfall(of envelope: EnvelopeFile.Contents, night duration: Double) -> String? {
        let covered = Double(envelope.values.count) / envelope.rate
        guard covered < duration - max(30, 0.01 * duration) else { return nil }
        return "\(EnvelopeFile.fileName) holds the levels of only the first \(Format.elapsed(covered)) of the night's "
            + "\(Format.elapsed(duration)); the loudness views are blank after that."
    }

    /// A clip is played, embedded or copied only as a file of the night folder itself, as
    /// `import` takes one: through a link (the clip's or its folder's), the page held a file
    /// from anywhere on the machine, and a pipe there held the report for good.
    static func refuseUnlessOwnFile(_ clip: String, in folder: URL) throws {
        var path = folder
        let parts = clip.split(separator: "/")
        for (i, part) in parts.enumerated() {
            path.appendPathComponent(String(part))
            let type = (try? FileManager.default.attributesOfItem(atPath: path.path))?[.type] as? FileAttributeType
            let last = i == parts.count - 1
            if type == .typeSymbolicLink {
                throw SomniError(.badInput, "\(folder.path): clip \(clip) \(last ? "is" : "lies in") a symbolic link; "
                                 + "a night folder holds its files themselves")
            }
            if last, type != .typeRegular {
                throw SomniError(.badInput, "\(folder.path): clip \(clip) is not a file (a pipe, a device or a folder)")
            }
        }
    }

    /// The rest of a night folder, for a session already read by `session(in:)`.
    public static func load(id: String, folder: URL, session: Session, clips: ClipLinking) throws -> ReportNight {
        let envelopeFile = folder.appendingPathComponent(EnvelopeFile.fileName)
        var envelope: EnvelopeFile.Contents?
        var envelopeProblem: String?
        // Said, not silent: without it the page just lacks its loudness views.
        if !FileManager.default.fileExists(atPath: envelopeFile.path) {
            envelopeProblem = "\(EnvelopeFile.fileName) is missing from the night folder; the loudness views are left out."
        } else {
            do { envelope = try EnvelopeFile.read(from: envelopeFile) } catch {
                envelopeProblem = "\(error); the loudness views are left out."
            }
        }
        if let envelope, let short = shortfall(of: envelope, night: session.duration) {
            envelopeProblem = short
        }
        var sources: [String: String] = [:]
        var missing: [String] = []
        // Every clip is looked at before any is copied: a refused night leaves no copies behind.
        for e in session.events {
            guard let clip = e.clip else { continue }
            // A lost clip costs its player, not the report.
            guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(clip).path) else {
                missing.append(clip)
                continue
            }
            try refuseUnlessOwnFile(clip, in: folder)
        }
        for e in session.events {
            guard let clip = e.clip, !missing.contains(clip) else { continue }
            sources[e.id] = try clips.source(for: clip, nightID: id, folder: folder)
        }
        var night = ReportNight(id: id, session: session, envelope: envelope, clipSources: sources)
        night.missingClips = missing
        night.envelopeProblem = envelopeProblem
        return night
    }
}

/// The clips folder a copying report fills: `FOLDER/<night id>/clips/…`. A night folder there
/// that a report made carries a mark naming the pages that play it, and only such folders are
/// tidied when one of those pages is written again: a night deleted from the store since, or
/// clips a re-analysis no longer has, would otherwise keep their audio beside a page that no
/// longer names it. A folder that was there before a report copied into it (the user's own,
/// one from before 0.57, a night folder) is never marked, so never touched.
public enum CopiedClips {
    static let markName = ".somni-report-clips"

    /// The names in the clips folder before this report copies anything.
    public static func existing(in clipsFolder: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: clipsFolder.path)) ?? [])
    }

    /// The pages (their paths) a marked folder's clips serve; nil when it carries no mark.
    static func pages(marking folder: URL) -> [String]? {
        guard let text = try? String(contentsOf: folder.appendingPathComponent(markName), encoding: .utf8) else { return nil }
        return text.split(separator: "\n").map(String.init)
    }

    private static func isNightFolder(_ folder: URL) -> Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent(Session.fileName).path)
    }

    /// A link (not followed): a night folder or its clips/ that leads elsewhere is another
    /// page's, or the user's, and nothing is marked or removed through it.
    private static func isLink(_ url: URL) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType == .typeSymbolicLink
    }

    /// Marks, for `page`, the night folders this report copied into: those it made now, or that
    /// a page marked before.
    public static func mark(_ nights: [ReportNight], page: String, existingBefore: Set<String>, in clipsFolder: URL) {
        for night in nights where !night.clipSources.isEmpty {
            let folder = clipsFolder.appendingPathComponent(night.id)
            guard !isNightFolder(folder), !isLink(folder), !isLink(folder.appendingPathComponent("clips")) else { continue }
            var pages = pages(marking: folder) ?? []
            if pages.isEmpty, existingBefore.contains(night.id) { continue }
            guard !pages.contains(page) else { continue }
            pages.append(page)
            writeMark(pages, in: folder)
        }
    }

    private static func writeMark(_ pages: [String], in folder: URL) {
        try? Data(pages.joined(separator: "\n").utf8).write(to: folder.appendingPathComponent(markName))
    }

    /// Removes, from folders marked for `page`, what that page (just written) does not play: a
    /// night not on it leaves the folder's mark, and its clips go once no page is left; a night's
    /// clips it no longer has go when no other page plays that folder. Only files named as Somni
    /// names clips (`evt-0001.mp3`) are removed, and a folder only once it is empty: anything
    /// the user put there stays. Returns what went.
    @discardableResult
    public static func prune(_ clipsFolder: URL, page: String, keeping nights: [ReportNight]) -> [URL] {
        let fm = FileManager.default
        let kept = Dictionary(nights.map { ($0.id, Set($0.session.events.compactMap(\.clip))) }, uniquingKeysWith: { a, _ in a })
        var removed: [URL] = []
        func removeClips(in folder: URL, except keep: Set<String>) {
            let clipsDirectory = folder.appendingPathComponent("clips")
            for file in (try? fm.contentsOfDirectory(atPath: clipsDirectory.path)) ?? []
            where isClipName(file) && !keep.contains("clips/" + file) {
                let url = clipsDirectory.appendingPathComponent(file)
                guard (try? fm.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType == .typeRegular else { continue }
                if (try? fm.removeItem(at: url)) != nil { removed.append(url) }
            }
        }
        for name in (try? fm.contentsOfDirectory(atPath: clipsFolder.path)) ?? [] {
            let folder = clipsFolder.appendingPathComponent(name)
            guard !isLink(folder), !isLink(folder.appendingPathComponent("clips")),
                  var pages = pages(marking: folder), pages.contains(page), !isNightFolder(folder) else { continue }
            guard let clips = kept[name] else {
                pages.removeAll { $0 == page }
                guard pages.isEmpty else {
                    writeMark(pages, in: folder)
                    continue
                }
                removeClips(in: folder, except: [])
                try? fm.removeItem(at: folder.appendingPathComponent(markName))
                // rmdir: each goes only when nothing else is left in it.
                rmdir(folder.appendingPathComponent("clips").path)
                if rmdir(folder.path) == 0 { removed.append(folder) }
                continue
            }
            guard pages == [page] else { continue }  // another page may play the clips this one dropped
            removeClips(in: folder, except: clips)
        }
        return removed
    }

    /// A name Somni gives a clip: evt-, digits, an audio extension.
    static func isClipName(_ name: String) -> Bool {
        let parts = name.split(separator: ".")
        guard parts.count == 2, parts[0].hasPrefix("evt-"), parts[0].count > 4, parts[0].dropFirst(4).allSatisfy(\.isNumber) else { return false }
        return ["mp3", "m4a", "opus", "ogg", "oga", "flac", "wav"].contains(parts[1].lowercased())
    }
}

/// How the page reaches a night's clips.
///
/// - `relative(reportDirectory)`: a path relative to the report (right when the report sits next to
///   the night folders and stays there; nothing is copied).
/// - `copied(into:, reportDirectory)`: clips are copied into a folder beside the report and linked
///   relatively, so the report and its folder can be moved or zipped together (the CLI default).
/// - `embedded`: clips become data: URIs, one file that works anywhere (larger).
public enum ClipLinking: Sendable {
    case relative(reportDirectory: URL)
    case copied(into: URL, reportDirectory: URL)
    case embedded

    func source(for clip: String, nightID: String, folder: URL) throws -> String {
        let file = folder.appendingPathComponent(clip)
        switch self {
        case .relative(let reportDirectory):
            return ClipLinking.relativePath(from: reportDirectory, to: file)
        case .copied(let into, let reportDirectory):
            let target = into.appendingPathComponent(nightID).appendingPathComponent(clip)
            let fm = FileManager.default
            // What failed is named: the clips folder the report needs, not the store's clip.
            // Something other than a folder, or a link to one: a link leading nowhere too.
            var isFolder: ObjCBool = false
            let there = (try? fm.attributesOfItem(atPath: into.path)) != nil
            if there, !(fm.fileExists(atPath: into.path, isDirectory: &isFolder) && isFolder.boolValue) {
                throw SomniError(.io, "\(into.path) is in the way: the report's clips go in a folder of that name; "
                                 + "move it, or give -o another name")
            }
            do { try fm.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true) } catch {
                throw SomniError(.io, "cannot make \(target.deletingLastPathComponent().path) for the report's clips", cause: error)
            }
            // A night folder inside the clips folder, where its own clips would go: they are
            // there already (replaced, the clip was removed and the copy then found nothing).
            if FileIdentity.same(file, target) { return ClipLinking.relativePath(from: reportDirectory, to: target) }
            // Copied beside it and renamed over it: removed first, a clip an earlier page plays
            // was lost for good when the report was stopped between the two.
            PartialFile.removeAbandoned(of: target)
            let partial = PartialFile.url(for: target)
            do {
                try fm.copyItem(at: file, to: partial)
                guard rename(partial.path, target.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            } catch {
                try? fm.removeItem(at: partial)
                throw SomniError(.io, "cannot copy clip \(file.path) to \(target.path)", cause: error)
            }
            return ClipLinking.relativePath(from: reportDirectory, to: target)
        case .embedded:
            let data: Data
            do { data = try Data(contentsOf: file) } catch {
                throw SomniError(.io, "cannot read clip \(file.path)", cause: error)
            }
            return "data:\(ClipLinking.mimeType(of: clip));base64,\(data.base64EncodedString())"
        }
    }

    static func mimeType(of path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "m4a", "mp4", "aac": return "audio/mp4"
        case "wav": return "audio/wav"
        case "ogg", "opus", "oga": return "audio/ogg"
        case "flac": return "audio/flac"
        case "mp3": return "audio/mpeg"
        default: return "application/octet-stream"
        }
    }

    /// A percent-encoded relative URL from a directory to a file. Both paths are taken as given,
    /// links unresolved: a browser applies "..", as it applies everything in a URL, to the page's
    /// address as opened, not to the folder it really is in. Resolved, a report written through
    /// a linked folder (~/Reports → ~/Dropbox/Reports) climbed as many folders as the real one
    /// is deep, and from the address opened every clip was missing.
    static func relativePath(from directory: URL, to file: URL) -> String {
        let from = directory.standardizedFileURL.pathComponents
        let to = file.standardizedFileURL.pathComponents
        var common = 0
        while common < from.count, common < to.count, from[common] == to[common] { common += 1 }
        let parts = Array(repeating: "..", count: from.count - common) + to[common...]
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#;")
        return parts.map { $0 == ".." ? $0 : ($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0) }
            .joined(separator: "/")
    }
}

/// One night in the trends and the night list: numbers only, from a stored record or a session.
public struct TrendNight: Sendable {
    public var id: String
    /// The night's date (the evening it began) or its id.
    public var label: String
    public var bedtime: String?
    public var wake: String?
    public var duration: Double
    public var episodes: Int
    public var snoringMinutes: Double
    public var snoringPercent: Double
    public var events: Int
    /// Events per hour recorded keyed by EventClass raw value.
    public var rates: [String: Double]

    public init(record r: NightRecord) {
        id = r.id; label = r.nightDate ?? r.id; bedtime = r.bedtime; wake = r.wake; duration = r.duration
        episodes = r.snoringEpisodes; snoringMinutes = r.snoringMinutes; snoringPercent = r.snoringPercent
        events = r.eventTotal
        rates = Dictionary(uniqueKeysWithValues: EventClass.allCases.map { ($0.rawValue, r.rate($0)) })
    }

    public init(_ n: ReportNight) {
        let s = n.session
        let clock = NightClock(of: s)
        id = n.id; label = clock?.nightDate ?? n.id; bedtime = clock?.time(); wake = clock?.time(at: s.duration)
        duration = s.duration; episodes = s.summary.snoringEpisodes; snoringMinutes = s.summary.snoringMinutes
        snoringPercent = s.summary.snoringPercent; events = s.events.count; rates = NightReport.rates(s)
    }

    var point: TrendPoint { TrendPoint(label: label, minutes: snoringMinutes, percent: snoringPercent, rates: rates) }
}
