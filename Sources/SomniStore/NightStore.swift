import Foundation
import SomniCore

/// Every analysed night: rows in `<store>/somni.sqlite` (WAL, foreign keys on) and a night folder
/// (session.json, envelope.bin, clips/) in `<store>/nights/<id>/`.
///
/// Saving is crash-safe: the folder is staged inside the store, the rows are inserted in one
/// transaction, the staged folder is renamed into `nights/` and only then the transaction commits.
/// A crash before the commit leaves the database as it was; the orphaned folder it may leave is
/// removed the next time a connection holds the write lock (no row ever points at a missing folder,
/// and readers never see a row whose folder is not in place yet).
public final class NightStore {
    public let directory: URL
    private(set) var db: Database
    /// The schema the database is read with: this build's, but for a store of an older Somni
    /// read as it stands on a full disk, where it cannot be migrated.
    private var schemaVersion = Schema.currentVersion
    /// Opened as a read-only snapshot because the disk was too full to open it for writing
    /// (`Access.readOnlyIfDiskFull`); `delete` still works, freeing space first.
    public var isReadOnly: Bool { readOnlyBecause != nil }
    public enum ReadOnlyCause: Sendable { case diskFull, notWritable }
    /// Why the store was opened read-only: a full disk, or a folder this process cannot write
    /// (a read-only medium, a backup, another user's store).
    public private(set) var readOnlyBecause: ReadOnlyCause?
    /// Test seam: called between the steps of `add`; a thrown error aborts the save there.
    var saveStepHook: ((SaveStep) throws -> Void)?

    enum SaveStep { case staged, inserted, setAside, renamed }

    public static let databaseName = "somni.sqlite"

    /// The `--store` value, else `$SOMNI_STORE`, else `$XDG_DATA_HOME/somni`, else ~/.local/share/somni:
    /// what is typed on the command line wins over what the shell's profile set long ago.
    public static func defaultDirectory(explicit: String?,
                                        environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let s = explicit, !s.isEmpty { return URL(fileURLWithPath: s, isDirectory: true) }
        if let s = environment["SOMNI_STORE"], !s.isEmpty { return URL(fileURLWithPath: s, isDirectory: true) }
        // The XDG spec has a relative XDG_DATA_HOME ignored: read against the current folder, the
        // store would move with it. An empty HOME is no home either.
        if let s = environment["XDG_DATA_HOME"], s.hasPrefix("/") {
            return URL(fileURLWithPath: s, isDirectory: true).appendingPathComponent("somni", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/share/somni", isDirectory: true)
    }

    public enum Access: Sendable {
        case readWrite
        /// For commands that read, and `delete`: when the disk is too full for the database's
        /// log to be made, open a read-only snapshot rather than fail.
        case readOnlyIfDiskFull
    }

    /// Opens (creating when needed) the store, turns on WAL and foreign keys, and migrates.
    /// A file where a store's folder should be is named as such (it was taken for a store not
    /// made yet, which could then not be made).
    public static func refuseAFile(at directory: URL) throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder), !isFolder.boolValue {
            throw SomniError(.badInput, "\(directory.path) is a file, not a night store's folder: check the path")
        }
    }

    public init(directory: URL, access: Access = .readWrite) throws {
        self.directory = directory
        let fm = FileManager.default
        try NightStore.refuseAFile(at: directory)
        let path = directory.appendingPathComponent(NightStore.databaseName).path
        // A store that may only be read (a read-only disk, another user's) is read as it stands.
        let writable = fm.isWritableFile(atPath: directory.path) || !fm.fileExists(atPath: path)
        if writable || access == .readWrite {
            for d in [directory, directory.appendingPathComponent("nights"), directory.appendingPathComponent("staging")] {
                do { try fm.createDirectory(at: d, withIntermediateDirectories: true) } catch {
                    throw SomniError(.io, "cannot create the store directory \(d.path)", cause: error)
                }
            }
        }
        do {
            guard writable || access == .readWrite else { throw SomniError(.io, "the store's folder cannot be written") }
            db = try NightStore.openForWriting(path)
            try sweepIfUnlocked()
        } catch let error as SomniError where error.isOutOfSpace || !writable {
            // A log left by a process that died may hold saved nights a snapshot would not see.
            let log = (try? fm.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            guard access == .readOnlyIfDiskFull, log == 0, fm.fileExists(atPath: path),
                  let snapshot = try? Database(path: path, snapshot: true),
                  let version = try? Schema.version(of: snapshot), (1...Schema.currentVersion).contains(version) else {
                if writable { throw NightStore.diskFull(directory, cause: error) }
                throw NightStore.notWritable(directory)  // the folder is the reason; SQLite's own words (a missing -wal file) misled
            }
            db = snapshot
            schemaVersion = version
            readOnlyBecause = writable ? .diskFull : .notWritable
        }
    }

    static func notWritable(_ directory: URL, cause: SomniError? = nil) -> SomniError {
        SomniError(.io, "the night store \(directory.path) cannot be written (a read-only disk, or another user's folder)",
                   cause: cause)
    }

    private static func openForWriting(_ path: String) throws -> Database {
        let db = try Database(path: path)
        if try db.string("PRAGMA journal_mode")?.lowercased() != "wal" {
            // Two commands creating a store at once both switch it; SQLite's busy timeout does not
            // cover that switch, so the one that meets the other's lock waits and tries again.
            var mode: String?
            for attempt in 0..<50 {
                do { mode = try db.string("PRAGMA journal_mode = WAL"); break } catch let error as SomniError
                where attempt < 49 && error.message.contains("locked") {
                    usleep(100_000)
                }
            }
            guard mode?.lowercased() == "wal" else {
                throw SomniError(.io, "the store database \(db.path) cannot use write-ahead logging")
            }
        }
        try db.execute("PRAGMA foreign_keys = ON")
        // FULL: each commit is on the disk when it returns. With NORMAL a power cut could undo a
        // committed night whose folder already stood in nights/, and the next save would sweep
        // that folder as an orphan: a recorded night, whose master is gone by then, lost whole.
        // One fsync a saved night.
        try db.execute("PRAGMA synchronous = FULL")
        try Schema.migrate(db)
        return db
    }

    static func diskFull(_ directory: URL, cause: SomniError? = nil) -> SomniError {
        SomniError(.io, "no room to write to the night store \(directory.path); free some space on its disk "
                   + "('somni delete NIGHT' removes a night and its clips even now)", cause: cause)
    }

    public func folder(of night: NightRecord) -> URL {
        nightsDirectory.appendingPathComponent(night.id, isDirectory: true)
    }

    var nightsDirectory: URL { directory.appendingPathComponent("nights", isDirectory: true) }
    var stagingDirectory: URL { directory.appendingPathComponent("staging", isDirectory: true) }
    var incomingDirectory: URL { directory.appendingPathComponent("incoming", isDirectory: true) }

    /// A fresh path inside the store (not created) where an analysis can build its night folder
    /// before `add(nightFolder:moving: true)` takes it in with a cheap rename. Left over by a
    /// process that died, it is removed the next time the store is opened (its name carries the
    /// process id, and only folders of processes no longer running are removed).
    public func newIncomingFolder(name: String) -> URL {
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }.prefix(60))
        let pid = ProcessInfo.processInfo.processIdentifier
        return incomingDirectory.appendingPathComponent("\(pid)-\(UUID().uuidString.prefix(8))-\(safe)", isDirectory: true)
    }

    /// An analysed night in `incoming` that `add` could not take in (a full disk, say), renamed so
    /// that no later sweep removes it: its name no longer carries a process id. Returns where it
    /// now is (where it was, if even the rename failed), for `somni import` to add later.
    public func keepUnsaved(_ incoming: URL) -> URL {
        let name = incoming.lastPathComponent.split(separator: "-", maxSplits: 1).last.map(String.init)
            ?? incoming.lastPathComponent
        let kept = incomingDirectory.appendingPathComponent("unsaved-\(name)", isDirectory: true)
        do { try FileManager.default.moveItem(at: incoming, to: kept) } catch { return incoming }
        return kept
    }

    // MARK: Reading

    /// The columns `record` reads, those a store of an older schema lacks given as NULL or 0.
    private var nightColumns: String {
        """
        id, started_at, night_date, source, duration, analysed_seconds, active_share, sensitivity, classifier,
        snoring_minutes, snoring_percent, snoring_episodes, snoring_events, sleep_talk_events, cough_events, added_at,
        \(schemaVersion >= 3 ? "source_fingerprint" : "NULL"), \(schemaVersion >= 4 ? "time_zone" : "NULL"),
        \(schemaVersion >= 5 ? "seconds_not_recorded" : "0")
        """
    }

    private static func record(_ s: Statement) -> NightRecord {
        NightRecord(
            id: s.string(0) ?? "", startedAt: s.string(1), nightDate: s.string(2), source: s.string(3) ?? "",
            duration: s.double(4), analysedSeconds: s.double(5), activeShare: s.double(6),
            sensitivity: s.int(7), classifier: s.string(8) ?? "", snoringMinutes: s.double(9),
            snoringPercent: s.double(10), snoringEpisodes: s.int(11),
            eventCounts: [EventClass.snoring.rawValue: s.int(12), EventClass.sleepTalk.rawValue: s.int(13),
                          EventClass.cough.rawValue: s.int(14)],
            addedAt: s.double(15), sourceFingerprint: s.string(16), timeZone: s.string(17),
            secondsNotRecorded: s.double(18))
    }

    private func records(where condition: String = "", _ values: [SQLValue] = []) throws -> [NightRecord] {
        let s = try db.prepare("SELECT \(nightColumns) FROM nights \(condition) "
            + "ORDER BY started_unix IS NULL, started_unix, added_at, id").bind(values)
        var out: [NightRecord] = []
        while try s.step() { out.append(NightStore.record(s)) }
        return out
    }

    /// Every night, oldest first (nights without a known start last).
    public func nights() throws -> [NightRecord] { try records() }

    /// Nights in the store analysed from this recording, so that a batch run again over a folder
    /// finds the nights it saved last time. The same recording starts when this one does (to the
    /// second; or neither says) and has the same content (`RecordingFingerprint`), or, for nights
    /// stored without one, the same file name and a known start. Dated on one side only (an
    /// undated recording stored with --started, then analysed again without it), the content
    /// alone decides; "night.wav" twice, undated, with different content is two nights.
    public func nights(recordedFrom source: String, startedAt: Date?, fingerprint: String?) throws -> [NightRecord] {
        let wanted = Recording(source: source, start: startedAt, fingerprint: fingerprint)
        let candidates = try records(where: "WHERE source = ? OR source_fingerprint = ?",
                                     [.text(source), SQLValue(fingerprint)])
        return candidates.filter { Recording($0).isSame(as: wanted) }
    }

    /// Nights analysed from a file of this name and content, whatever start each has: what
    /// `analyze --replace` puts a new analysis in place of when no night of the recording's own
    /// start is stored (it was dated by hand with --started, or is being so now).
    public func nights(ofFile source: String, fingerprint: String) throws -> [NightRecord] {
        try records(where: "WHERE source = ? AND source_fingerprint = ?", [.text(source), .text(fingerprint)])
    }

    /// What a night was analysed from, as far as knowing a recording again goes.
    private struct Recording {
        var source: String
        var start: Date?
        var fingerprint: String?

        init(source: String, start: Date?, fingerprint: String?) {
            self.source = source; self.start = start; self.fingerprint = fingerprint
        }
        init(_ night: NightRecord) { self.init(source: night.source, start: night.start, fingerprint: night.sourceFingerprint) }

        /// The same start (to the second, or neither known) and the same content; without a
        /// fingerprint on either side, the same file name and a known start. Known on one side
        /// only, the start was given by hand (`--started`) for a recording that does not say:
        /// the same content is the same recording, or each morning's batch run over a folder
        /// would store a hand-dated night again.
        func isSame(as other: Recording) -> Bool {
            switch (start, other.start) {
            case (nil, nil): break
            case let (a?, b?) where abs(a.timeIntervalSince(b)) < 1: break
            case (nil, _?), (_?, nil):
                guard let fingerprint, let theirs = other.fingerprint else { return false }
                return fingerprint == theirs
            default: return false
            }
            if let fingerprint, let theirs = other.fingerprint { return fingerprint == theirs }
            return start != nil && source == other.source
        }
    }

    /// Nights that repeat one stored before them (the same recording, analysed again before
    /// Somni knew it again), each with the id of the first: the trends count every copy.
    public static func copies(among nights: [NightRecord]) -> [(copy: NightRecord, of: String)] {
        let byAdded = nights.sorted { ($0.addedAt, $0.id) < ($1.addedAt, $1.id) }
        let recordings = byAdded.map(Recording.init)  // each start parsed once, not once a pair
        var found: [(copy: NightRecord, of: String)] = []
        var firstOf: [String: String] = [:]
        for (i, night) in byAdded.enumerated() {
            guard let match = recordings[..<i].firstIndex(where: { $0.isSame(as: recordings[i]) }) else { continue }
            let earlier = byAdded[match]
            let first = firstOf[earlier.id] ?? earlier.id
            firstOf[night.id] = first
            found.append((night, first))
        }
        return found
    }

    /// A night by id, or by date ("YYYY-MM-DD": the evening it began, else the calendar day it
    /// began). `byEveningOnly` (for `delete`, which asks nothing first): a night that began after
    /// midnight is not taken by its calendar day, which `nights --from/--to` does not list it
    /// under; the error names its id.
    public func night(matching key: String, byEveningOnly: Bool = false) throws -> NightRecord {
        if let r = try records(where: "WHERE id = ?", [.text(key)]).first { return r }
        guard NightStore.looksLikeDate(key) else {
            throw SomniError(.badInput, "no night with id '\(key)' in \(directory.path); 'somni nights' lists them")
        }
        var found = try records(where: "WHERE night_date = ?", [.text(key)])
        if found.isEmpty { found = try records(where: "WHERE start_date = ?", [.text(key)]) }
        if byEveningOnly, let first = found.first, first.nightDate != key {
            throw SomniError(.badInput, "no night began on the evening of \(key); "
                             + found.map { "\($0.id) began after midnight that day (its evening is \($0.nightDate ?? "–"))" }
                                 .joined(separator: ", ")
                             + ": give its id to delete it")
        }
        switch found.count {
        case 0: throw SomniError(.badInput, "no night on \(key) in \(directory.path); 'somni nights' lists them")
        case 1: return found[0]
        default:
            throw SomniError(.badInput, "\(key) matches \(found.count) nights (\(found.map(\.id).joined(separator: ", "))); give one id")
        }
    }

    private static func looksLikeDate(_ s: String) -> Bool {
        let c = Array(s.utf8)
        guard c.count == 10, c[4] == UInt8(ascii: "-"), c[7] == UInt8(ascii: "-") else { return false }
        return c.enumerated().allSatisfy { i, b in i == 4 || i == 7 || (b >= 48 && b <= 57) }
    }

    /// The night's folder, when its session.json is there; an error that says how to mend the
    /// store when it is not (the folder removed or moved by hand, a disk restored without it).
    public func existingFolder(of night: NightRecord) throws -> URL {
        let folder = folder(of: night)
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent(Session.fileName).path) { return folder }
        // A replace of it is committing this moment: the night read is still this one.
        if let aside = folderSetAside(of: night) { return aside }
        // Deleted since it was listed (another somni's delete ran meanwhile): not a lost folder.
        if try !isStored(id: night.id) { throw NightGone(id: night.id) }
        throw SomniError(.io, "night \(night.id) has lost its folder (\(folder.path) has no \(Session.fileName)): put it back, or 'somni delete \(night.id)' forgets the night")
    }

    /// A night listed a moment ago and deleted since, by another process.
    public struct NightGone: Error, CustomStringConvertible {
        public let id: String
        public var description: String { "night \(id) was deleted meanwhile" }
    }

    /// Whether the store still holds a night of id `id`, read now.
    public func isStored(id: String) throws -> Bool {
        try !records(where: "WHERE id = ?", [.text(id)]).isEmpty
    }

    public func isStored(_ night: NightRecord) throws -> Bool { try isStored(id: night.id) }

    /// The night's session.json.
    public func session(of night: NightRecord) throws -> Session {
        try Session.load(from: existingFolder(of: night).appendingPathComponent(Session.fileName))
    }

    /// The night's events as stored in the database, in time order.
    public func events(of night: NightRecord) throws -> [SessionEvent] {
        let s = try db.prepare("""
            SELECT event_id, class, start, "end", confidence, peak_dbfs, mean_dbfs, severity, clip, episode
            FROM events WHERE night_id = ? ORDER BY start, event_id
            """).bind([.text(night.id)])
        var out: [SessionEvent] = []
        while try s.step() {
            guard let c = s.string(1).flatMap(EventClass.init(rawValue:)) else {
                throw SomniError(.badInput, "the store has an event of unknown class in night \(night.id)")
            }
            out.append(SessionEvent(id: s.string(0) ?? "", eventClass: c, start: s.double(2), end: s.double(3),
                                    confidence: s.double(4), peakDBFS: s.double(5), meanDBFS: s.double(6),
                                    severity: s.double(7), clip: s.string(8), episode: s.optionalInt(9)))
        }
        return out
    }

    // MARK: Writing

    /// `add` found, under the write lock, a night of the same recording that another process
    /// saved while this one analysed it.
    public struct AlreadyStored: Error {
        public let night: NightRecord
    }

    /// Adds a complete night folder (session.json, envelope.bin, clips/). With `moving` the folder is
    /// renamed into the store (copied and then removed across file systems), otherwise copied. On
    /// any failure the store is left as it was, and a moved folder is put back where it came from;
    /// after a crash part-way a moved folder is gone with the save, so move only folders the store
    /// may own (an analysis built in `newIncomingFolder`), and copy a person's own folders.
    /// `replacing` nights (the same recording analysed before) leave the store in the same
    /// transaction; their folders go after it commits (after a crash, swept as orphans). The new
    /// night takes the id of the night it replaces when that is the first free one, so a night's
    /// id stays what it was however often it is analysed again: the old folder is set aside in
    /// staging under a name that says whose it was (`StagingNames.begin(aside:addedAt:)`) and goes after the commit; after
    /// a crash before the commit, the sweep puts it back.
    ///
    /// With `unlessStored`, a night of the same recording (the same source, start and content,
    /// as `nights(recordedFrom:)` tells) already in the store, other than those `replacing`, is
    /// looked for under the write lock, so that two analyses of one file at once save it once:
    /// the second throws `AlreadyStored` and the store is left as it was.
    @discardableResult
    public func add(nightFolder: URL, moving: Bool, replacing: [NightRecord] = [], unlessStored: Bool = false) throws -> NightRecord {
        try save(nightFolder: nightFolder, moving: moving, replacing: replacing, unlessStored: unlessStored).record
    }

    /// `add`, telling also which of the nights `replacing` it replaced: those still in the store
    /// when it committed (one deleted meanwhile by another `somni delete` is not among them).
    /// `datedLike`: for an undated night folder, the stored night it replaces, whose start (and
    /// time zone) it takes, as `analyze --replace` keeps a start given before.
    public func save(nightFolder: URL, moving: Bool, replacing: [NightRecord],
                     unlessStored: Bool, datedLike: Session? = nil) throws -> (record: NightRecord, replaced: [NightRecord]) {
        if let readOnlyBecause { throw readOnlyBecause == .diskFull ? NightStore.diskFull(directory) : NightStore.notWritable(directory) }
        let fm = FileManager.default
        // The folder itself, not a link to it (a link would be copied as a link).
        let source = nightFolder.standardizedFileURL.resolvingSymlinksInPath()
        // A stored night's own folder: replacing that night with it, and --move, would remove it.
        for own in [nightsDirectory, stagingDirectory] {
            let ownPath = own.resolvingSymlinksInPath().path
            if source.path == ownPath || source.path.hasPrefix(ownPath + "/") {
                // One no night names is added by moving it out first: a copy taken out would be
                // stored beside it, and it stay unlisted for good.
                let ids = Set(try records().map(\.id))
                let listed = source.path.dropFirst(ownPath.count + 1).split(separator: "/").first.map { ids.contains(String($0)) } ?? true
                throw SomniError(.badInput, "\(source.path) is inside the night store itself; "
                                 + (listed ? "a copy of it elsewhere can be imported"
                                           : "move it out of the store, then 'somni import FOLDER --move' adds it"))
            }
        }
        let sessionFile = source.appendingPathComponent(Session.fileName)
        guard fm.fileExists(atPath: sessionFile.path) else {
            throw SomniError(.badInput, "\(source.path) is not a night folder: it has no \(Session.fileName)")
        }
        var session = try Session.load(from: sessionFile)
        try NightStore.checkFolder(source, session: session)
        let takesStart = session.startedAt == nil && datedLike?.startedAt != nil
        // Put back in the folder given should a moved import fail after dating it.
        let originalSession = takesStart ? try Data(contentsOf: sessionFile) : nil
        if takesStart, let datedLike {
            session.startedAt = datedLike.startedAt
            session.timeZone = datedLike.timeZone
            session.startedFrom = datedLike.startedFrom
        }

        let staged = StagingNames.shared.begin(in: stagingDirectory)
        defer { StagingNames.shared.end(staged) }
        var movedAway = false
        // A moved folder may be the night's only copy (a recorded night, its master gone once
        // analysed): a note of where it came from is on the disk before it moves, so that a save
        // that dies puts it back there instead of the sweep removing it.
        var movedNote: URL?
        defer { if let movedNote { StagingNames.shared.end(movedNote) } }
        if moving {
            movedNote = try noteMoving(staged, from: source)
            if (try? fm.moveItem(at: source, to: staged)) != nil {
                movedAway = true
            } else if let note = movedNote {
                try? fm.removeItem(at: note)
            }
        }
        if !movedAway {
            // Copy (also when a move crosses file systems: the source is removed after the commit).
            do { try fm.copyItem(at: source, to: staged) } catch {
                try? fm.removeItem(at: staged)
                throw SomniError(.io, "cannot copy \(source.path) into the store", cause: error)
            }
        }

        var placed: URL?, placing: URL?
        defer { if let placing { StagingNames.shared.end(placing) } }
        // The folder of the night replaced under the same id, while the new one takes its place.
        var setAside: (folder: URL, home: URL)?
        defer { if let setAside { StagingNames.shared.end(setAside.folder) } }
        do {
            if takesStart {
                do { try session.jsonData().write(to: staged.appendingPathComponent(Session.fileName), options: .atomic) } catch {
                    throw SomniError(.io, "cannot date the night's \(Session.fileName) in the store", cause: error)
                }
            }
            // Nothing is committed as saved that a power cut could leave as empty names.
            try NightFolder.flushToDisk(staged)
            try saveStepHook?(.staged)
            try db.execute("BEGIN IMMEDIATE")
            try sweepOrphans()
            if unlessStored, let rival = try nights(recordedFrom: session.source, startedAt: NightClock(iso: session.startedAt)?.start,
                                                    fingerprint: session.sourceFingerprint)
                .first(where: { night in !replacing.contains { $0.id == night.id && $0.addedAt == night.addedAt } }) {
                throw AlreadyStored(night: rival)
            }
            // The rows of the nights replaced go first, so their id is free for this one. Each
            // is that night's only when it was added when that night was: one deleted meanwhile
            // (another `somni delete`) may have left its id to a night saved since.
            let deleteRow = try db.prepare("DELETE FROM nights WHERE id = ? AND added_at = ?")
            var replaced: [NightRecord] = []
            for old in replacing {
                try deleteRow.run([.text(old.id), .double(old.addedAt)])
                if db.changes > 0 { replaced.append(old) }
            }
            // The same recording from the same start keeps the id it had (a `-2` too); dated
            // only now, it takes the id of its start.
            let start = NightClock(iso: session.startedAt)?.start
            let record = try insert(session, preferring: replaced.first { NightClock(iso: $0.startedAt)?.start == start }?.id)
            try saveStepHook?(.inserted)
            let destination = nightsDirectory.appendingPathComponent(record.id, isDirectory: true)
            if let same = replaced.first(where: { $0.id == record.id }), fm.fileExists(atPath: destination.path) {
                let aside = StagingNames.shared.begin(aside: same.id, addedAt: same.addedAt, in: stagingDirectory)
                do { try fm.moveItem(at: destination, to: aside) } catch {
                    StagingNames.shared.end(aside)
                    throw SomniError(.io, "cannot set night \(same.id)'s folder aside to replace it", cause: error)
                }
                setAside = (aside, destination)
                try saveStepHook?(.setAside)
            }
            placing = try notePlacing(record.id, movedFrom: movedAway ? source : nil)
            do { try fm.moveItem(at: staged, to: destination) } catch {
                throw SomniError(.io, "cannot move the night into \(destination.path)", cause: error)
            }
            placed = destination
            try NightFolder.flushOne(nightsDirectory)  // the rename stands before the row can
            try saveStepHook?(.renamed)
            try db.execute("COMMIT")
            if let placing { try? fm.removeItem(at: placing) }
            if let movedNote { try? fm.removeItem(at: movedNote) }
            if moving && !movedAway { try? fm.removeItem(at: source) }
            // Left behind, the old folder set aside is swept as the replaced night's (its row is gone).
            if let setAside { try? fm.removeItem(at: setAside.folder) }
            for old in replaced where old.id != record.id { try? removeFolder(ofDeleted: old.id) }
            return (record, replaced)
        } catch let crash as SimulatedCrash {
            throw crash  // tests: stop dead, as a killed process would
        } catch {
            try? db.execute("ROLLBACK")
            let current = placed ?? staged
            if movedAway {
                try? originalSession?.write(to: current.appendingPathComponent(Session.fileName), options: .atomic)
                // Back where it came from, its note goes; left here, the note has the sweep put it back.
                if (try? fm.moveItem(at: current, to: source)) != nil, let movedNote { try? fm.removeItem(at: movedNote) }
            } else {
                try? fm.removeItem(at: current)
            }
            if let setAside { try? fm.moveItem(at: setAside.folder, to: setAside.home) }
            if let placing { try? fm.removeItem(at: placing) }
            throw error
        }
    }

    /// A night folder must hold a consistent session.json and every clip it names, each inside the
    /// folder; an envelope.bin, when present, must be one.
    static func checkFolder(_ folder: URL, session: Session) throws {
        try session.refuseIfInconsistent(readFrom: folder.appendingPathComponent(Session.fileName))
        // A night dated ahead (a clock set a century on) would be the latest for good: every
        // plain `somni report` took it. `analyze` passes over such a date in a name as well.
        if let startedAt = session.startedAt, let start = session.startDate, start > Date().addingTimeInterval(86_400) {
            throw SomniError(.badInput, "\(folder.path): its start \(startedAt) is in the future; a clock set wrong? "
                             + "Correct \"startedAt\" in its \(Session.fileName), or remove it to import the night undated")
        }
        let fm = FileManager.default
        // The store copies a folder as it is: a link would be stored as a link, dangling once the
        // folder it points into is moved or removed, or reaching outside the night.
        // A pipe, socket or device would be read for ever by the copy.
        let keys: [URLResourceKey] = [.isSymbolicLinkKey, .isRegularFileKey, .isDirectoryKey]
        if let entries = fm.enumerator(at: folder, includingPropertiesForKeys: keys) {
            for case let entry as URL in entries {
                let kind = try? entry.resourceValues(forKeys: Set(keys))
                if kind?.isSymbolicLink == true {
                    throw SomniError(.badInput, "\(entry.path) is a symbolic link; a night folder to import holds its files themselves")
                }
                guard kind?.isRegularFile == true || kind?.isDirectory == true else {
                    throw SomniError(.badInput, "\(entry.path) is not a file (a pipe or a device); a night folder holds files only")
                }
            }
        }
        let envelope = folder.appendingPathComponent(EnvelopeFile.fileName)
        if fm.fileExists(atPath: envelope.path) { _ = try EnvelopeFile.read(from: envelope) }
        for e in session.events {
            guard let clip = e.clip else { continue }  // inside the folder: `refuseIfInconsistent`
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: folder.appendingPathComponent(clip).path, isDirectory: &isDirectory),
                  !isDirectory.boolValue else {
                throw SomniError(.badInput, "event \(e.id) names clip \(clip), which is missing from \(folder.path)")
            }
        }
    }

    /// Inserts the night's rows under `preferred` when that id is free, else the first free one
    /// of its start's ("yyyyMMdd-HHmm", "-2", "-3"…).
    private func insert(_ session: Session, preferring preferred: String? = nil) throws -> NightRecord {
        let clock = NightClock(of: session)
        let added = Date().timeIntervalSince1970
        let base = clock?.compactDateTime() ?? NightClock(start: Date(timeIntervalSince1970: added), offsetSeconds: 0)
            .compactDateTime() + "-undated"
        let taken = try db.prepare("SELECT 1 FROM nights WHERE id = ?")
        // A folder in nights/ without a row is not the store's to replace (see `unlistedFolders`).
        func onDisk(_ id: String) -> Bool {
            FileManager.default.fileExists(atPath: nightsDirectory.appendingPathComponent(id).path)
        }
        var id = base
        if let preferred, try !taken.bind([.text(preferred)]).step() {
            id = preferred
        } else {
            var n = 1
            while try taken.bind([.text(id)]).step() || onDisk(id) {
                n += 1
                id = "\(base)-\(n)"
            }
        }
        let summary = session.summary
        let record = NightRecord(
            id: id, startedAt: session.startedAt, nightDate: clock?.nightDate, source: session.source,
            duration: session.duration, analysedSeconds: session.analysedSeconds, activeShare: session.activeShare,
            sensitivity: session.settings.sensitivity, classifier: session.settings.classifier,
            snoringMinutes: summary.snoringMinutes, snoringPercent: summary.snoringPercent,
            snoringEpisodes: summary.snoringEpisodes,
            eventCounts: Dictionary(uniqueKeysWithValues: EventClass.allCases.map { c in
                (c.rawValue, session.events.count(of: c)) }),
            addedAt: added, sourceFingerprint: session.sourceFingerprint, timeZone: session.timeZone,
            secondsNotRecorded: session.secondsNotRecorded)
        try db.prepare("""
            INSERT INTO nights (id, started_at, started_unix, night_date, start_date, source, duration, analysed_seconds,
              active_share, sensitivity, classifier, snoring_minutes, snoring_percent, snoring_episodes,
              snoring_events, sleep_talk_events, cough_events, added_at, source_fingerprint, time_zone,
              seconds_not_recorded)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).run([
                .text(id), SQLValue(session.startedAt), SQLValue(clock?.start.timeIntervalSince1970),
                SQLValue(clock?.nightDate), SQLValue(clock?.date()), .text(session.source), .double(session.duration),
                .double(session.analysedSeconds), .double(session.activeShare), .int(session.settings.sensitivity),
                .text(session.settings.classifier), .double(summary.snoringMinutes), .double(summary.snoringPercent),
                .int(summary.snoringEpisodes), .int(record.count(.snoring)), .int(record.count(.sleepTalk)),
                .int(record.count(.cough)), .double(added), SQLValue(session.sourceFingerprint),
                SQLValue(session.timeZone), .double(session.secondsNotRecorded),
            ])
        let insertEvent = try db.prepare("""
            INSERT INTO events (night_id, event_id, class, start, "end", confidence, peak_dbfs, mean_dbfs, severity, clip, episode)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for e in session.events {
            try insertEvent.run([
                .text(id), .text(e.id), .text(e.eventClass.rawValue), .double(e.start), .double(e.end),
                .double(e.confidence), .double(e.peakDBFS), .double(e.meanDBFS), .double(e.severity),
                SQLValue(e.clip), SQLValue(e.episode),
            ])
        }
        return record
    }

    /// Removes the night's rows (events, stages and cough checks cascade), then its folder.
    /// On a store opened read-only for a full disk, the folder goes first, which frees the space
    /// the rows' deletion needs; should that still fail, the row is left without its folder,
    /// which `somni delete` removes when run again.
    ///
    /// Only the row read is deleted: a night replaced meanwhile (`analyze --replace`, the same
    /// id added anew) stays, and so does its folder; false then, or when another process deleted
    /// the night first.
    @discardableResult
    public func delete(_ night: NightRecord) throws -> Bool {
        if readOnlyBecause == .notWritable { throw NightStore.notWritable(directory) }
        if isReadOnly {
            guard try removeFolderFirst(of: night) else { return false }
            do { db = try NightStore.openForWriting(db.path) } catch let error as SomniError {
                throw NightStore.stillTooFull(night, cause: error)
            }
            readOnlyBecause = nil
            schemaVersion = Schema.currentVersion
        }
        // A note that this night is going, on the disk before its row goes: a process killed
        // after the commit left its folder in nights/ with no row for good (named by `nights` as
        // one put there by hand, to be imported back); the sweep removes it by the note.
        let note = try noteDeleting(night.id)
        defer {
            try? FileManager.default.removeItem(at: note)
            StagingNames.shared.end(note)
        }
        var deleted = false
        func deleteRow() throws {
            try db.writeTransaction {
                try db.prepare("DELETE FROM nights WHERE id = ? AND added_at = ?").run([.text(night.id), .double(night.addedAt)])
                deleted = db.changes > 0
            }
        }
        do { try deleteRow() } catch let error as SomniError where error.isOutOfSpace {
            // A disk so nearly full that the row's deletion has no room for its journal, though
            // the store opened writable: the folder goes first, as on a store opened read-only
            // for a full disk (the delete Somni's own messages advise failed and freed nothing).
            guard try removeFolderFirst(of: night) else { return false }
            do { try deleteRow() } catch let again as SomniError where again.isOutOfSpace {
                throw NightStore.stillTooFull(night, cause: again)
            }
        }
        // After the commit: never a dangling row. (Its folder, when the row was gone already,
        // is the other deleter's to remove, or an orphan's for the sweep.)
        if deleted { try removeFolder(ofDeleted: night.id) }
        return deleted
    }

    /// Removes a night's folder before its row, to free the room the row's deletion needs: only
    /// while the row is still the one read (a night analysed again meanwhile keeps its folder).
    /// False when it is not.
    private func removeFolderFirst(of night: NightRecord) throws -> Bool {
        guard try db.prepare("SELECT 1 FROM nights WHERE id = ? AND added_at = ?")
            .bind([.text(night.id), .double(night.addedAt)]).step() else { return false }
        let folder = folder(of: night)
        if FileManager.default.fileExists(atPath: folder.path) {
            do { try FileManager.default.removeItem(at: folder) } catch {
                throw SomniError(.io, "cannot remove night \(night.id)'s folder \(folder.path)", cause: error)
            }
        }
        return true
    }

    static func stillTooFull(_ night: NightRecord, cause: SomniError) -> SomniError {
        SomniError(.io, "night \(night.id)'s folder was removed, but the disk is still too full to "
                   + "remove its row: free more space and run 'somni delete \(night.id)' again", cause: cause)
    }

    /// Removes the folder of a night whose row is gone. Under the write lock: another process
    /// may have swept it already (an orphan to its eyes), or saved a new night under the same id
    /// (ids come from start times), whose folder is then not this one to remove. So the folder
    /// is renamed into staging while no save can be between its rename and its commit, and
    /// removed from there.
    private func removeFolder(ofDeleted id: String) throws {
        let fm = FileManager.default
        let folder = nightsDirectory.appendingPathComponent(id, isDirectory: true)
        guard fm.fileExists(atPath: folder.path) else { return }
        let trash = StagingNames.shared.begin(in: stagingDirectory)
        defer { StagingNames.shared.end(trash) }
        try db.writeTransaction {
            guard try !db.prepare("SELECT 1 FROM nights WHERE id = ?").bind([.text(id)]).step(),
                  fm.fileExists(atPath: folder.path) else { return }
            do { try fm.moveItem(at: folder, to: trash) } catch {
                throw SomniError(.io, "night \(id) was deleted but its folder \(folder.path) could not be removed", cause: error)
            }
        }
        // Left behind, it is swept from staging by the next save.
        try? fm.removeItem(at: trash)
    }

    // MARK: Cleaning up after crashes

    /// Writes the note that this save's folder is about to become nights/`id`, and forces it to
    /// the disk first, so that a crash can never leave the folder without the note. A folder
    /// moved in has its first home in the note, where the sweep puts it back.
    private func notePlacing(_ id: String, movedFrom source: URL?) throws -> URL {
        try writeNote(StagingNames.shared.begin(placing: id, in: stagingDirectory), holding: source)
    }

    /// Writes the note that night `id`'s folder is to go with its row, forced to the disk first.
    private func noteDeleting(_ id: String) throws -> URL {
        try writeNote(StagingNames.shared.begin(deleting: id, in: stagingDirectory), holding: nil)
    }

    /// Writes the note that staging/`staged` is a folder moved in from `source`, forced to the
    /// disk before the move.
    private func noteMoving(_ staged: URL, from source: URL) throws -> URL {
        try writeNote(StagingNames.shared.begin(movedFrom: staged, in: stagingDirectory), holding: source)
    }

    private func writeNote(_ note: URL, holding source: URL?) throws -> URL {
        // Written in place, not through a temporary file and a rename (FileManager.createFile's
        // way): a sweep by another process opening the store meanwhile removed the temporary
        // file, whose name says no owner, and the save failed.
        guard (try? (source.map { Data($0.path.utf8) } ?? Data()).write(to: note)) != nil else {
            StagingNames.shared.end(note)
            throw SomniError(.io, "cannot write in \(stagingDirectory.path)")
        }
        if source != nil { try NightFolder.flushOne(note) }
        try NightFolder.flushOne(stagingDirectory)
        return note
    }

    /// Puts a folder a dead save had moved in back where it came from; false when it cannot go
    /// there (that place taken since, its parent gone), and the folder stays where it is.
    private func putBack(_ folder: URL, note: URL) -> Bool {
        let fm = FileManager.default
        guard let path = try? String(contentsOf: note, encoding: .utf8), !path.isEmpty else { return false }
        let home = URL(fileURLWithPath: path, isDirectory: true)
        guard !fm.fileExists(atPath: home.path), (try? fm.moveItem(at: folder, to: home)) != nil else { return false }
        try? NightFolder.flushOne(home.deletingLastPathComponent())
        return true
    }

    /// Folders in nights/ that no night of the store names: put there by hand, or kept from
    /// before an older copy of the database was put back. They are left alone; `somni nights`
    /// names them. (A file there, a report written into it, is left alone unnamed.)
    public func unlistedFolders() throws -> [URL] {
        // A save renames its folder into nights/ just before its commit, its placing note in
        // staging from before the rename until after the commit: such a folder is a night
        // arriving, not a stray. Read in this order, a folder listed has its note or its row.
        let folders = NightStore.nightFolders(inStoreAt: directory)
        func inTransit() -> Set<String> {
            let running = ((try? FileManager.default.contentsOfDirectory(atPath: stagingDirectory.path)) ?? [])
                .filter { StagingNames.shared.isRunning($0, in: stagingDirectory) }
            return Set(running.compactMap(StagingNames.placing) + running.compactMap(StagingNames.deleting))
        }
        let arriving = inTransit()
        let ids = Set(try records().map(\.id)).union(arriving)
        // ... and one whose delete began after the notes were read and committed before the
        // rows were: its note is there now, or it has gone, folder and all (a night being
        // deleted was named a stray, to be imported back).
        let leaving = inTransit()
        return folders.filter { folder in
            !ids.contains(folder.lastPathComponent) && !leaving.contains(folder.lastPathComponent)
                && FileManager.default.fileExists(atPath: folder.path)
        }
    }

    /// The folders in a store's nights/, listed or not, read without opening its database: with
    /// none there (removed), `somni nights` still names them.
    public static func nightFolders(inStoreAt directory: URL) -> [URL] {
        let nights = directory.appendingPathComponent("nights", isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: nights.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
            .map { nights.appendingPathComponent($0, isDirectory: true) }
            .filter { (try? $0.resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory == true }
    }

    /// Sweeps when no other connection is writing right now; never waits for one.
    private func sweepIfUnlocked() throws {
        db.setBusyTimeout(0)
        let locked = (try? db.execute("BEGIN IMMEDIATE")) != nil
        db.setBusyTimeout(5000)
        guard locked else {
            if db.inTransaction { try? db.execute("ROLLBACK") }
            return
        }
        do {
            try sweepOrphans()
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }

    /// Removes the folder a save that died put in nights/ before its commit, and staging folders
    /// of saves no longer running. Any other folder in nights/ without a row stays: it was put
    /// there by hand, or kept from before an older copy of the database was put back, and
    /// removing every such folder lost those nights without a word, on `somni nights` too.
    /// Must run while holding the write lock, so that no save is between its rename and its commit.
    private func sweepOrphans() throws {
        let fm = FileManager.default
        try restoreFoldersSetAside()
        try Schema.fillTimeNotRecorded(db)
        let staging = (try? fm.contentsOfDirectory(atPath: stagingDirectory.path)) ?? []
        let hasRow = try db.prepare("SELECT 1 FROM nights WHERE id = ?")
        var keep: Set<String> = []  // moved folders that could not go back: never removed
        for name in staging where !StagingNames.shared.isRunning(name, in: stagingDirectory) {
            guard let id = StagingNames.placing(name), try !hasRow.bind([.text(id)]).step() else { continue }
            let folder = nightsDirectory.appendingPathComponent(id)
            let note = stagingDirectory.appendingPathComponent(name)
            let moved = ((try? fm.attributesOfItem(atPath: note.path)[.size] as? Int) ?? 0) > 0
            guard fm.fileExists(atPath: folder.path) else { continue }
            if !moved {
                try? fm.removeItem(at: folder)
            } else if !putBack(folder, note: note) {
                keep.insert(name)
            }
        }
        // Folders of nights whose delete committed and then died before removing them.
        for name in staging where !StagingNames.shared.isRunning(name, in: stagingDirectory) {
            guard let id = StagingNames.deleting(name), try !hasRow.bind([.text(id)]).step() else { continue }
            try? fm.removeItem(at: nightsDirectory.appendingPathComponent(id, isDirectory: true))
        }
        // Folders moved in by a save that died before renaming them into nights/.
        for name in staging where !StagingNames.shared.isRunning(name, in: stagingDirectory) {
            guard let staged = StagingNames.movedFrom(name) else { continue }
            let folder = stagingDirectory.appendingPathComponent(staged)
            if fm.fileExists(atPath: folder.path), !putBack(folder, note: stagingDirectory.appendingPathComponent(name)) {
                keep.formUnion([name, staged])
            }
        }
        for name in (try? fm.contentsOfDirectory(atPath: stagingDirectory.path)) ?? []
        where !StagingNames.shared.isRunning(name, in: stagingDirectory) && !keep.contains(name) {
            try? fm.removeItem(at: stagingDirectory.appendingPathComponent(name))
        }
        // Analyses build in incoming/ ("<pid>-…", or ".<pid>-….partial-…" while being written);
        // names without a process id are not ours to judge and stay.
        for name in (try? fm.contentsOfDirectory(atPath: incomingDirectory.path)) ?? [] {
            let bare = name.hasPrefix(".") ? String(name.dropFirst()) : name
            guard let owner = bare.split(separator: "-").first.flatMap({ Int32($0) }),
                  !StagingNames.isAlive(owner) || StagingNames.predatesThisBoot(incomingDirectory.appendingPathComponent(name).path)
            else { continue }
            try? fm.removeItem(at: incomingDirectory.appendingPathComponent(name))
        }
    }
}

extension NightStore {
    /// The folder of `night` set aside by a replace that has not committed yet, when there is one.
    func folderSetAside(of night: NightRecord) -> URL? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: stagingDirectory.path)) ?? []
        return names.first { name in
            StagingNames.setAside(name).map { $0.id == night.id && $0.addedAt.bitPattern == night.addedAt.bitPattern } ?? false
        }.map { stagingDirectory.appendingPathComponent($0, isDirectory: true) }
    }

    /// A replace that died before its commit left the old night's row, and its folder set aside
    /// in staging (the new night's may stand in its place): the folder goes back. One whose row
    /// is gone or newer (the replace committed, or the night was deleted since) is left to the
    /// staging sweep. Under the write lock.
    func restoreFoldersSetAside() throws {
        let fm = FileManager.default
        let addedAt = try db.prepare("SELECT added_at FROM nights WHERE id = ?")
        for name in (try? fm.contentsOfDirectory(atPath: stagingDirectory.path)) ?? []
        where !StagingNames.shared.isRunning(name, in: stagingDirectory) {
            guard let (id, added) = StagingNames.setAside(name), try addedAt.bind([.text(id)]).step(),
                  addedAt.double(0).bitPattern == added.bitPattern else { continue }
            let home = nightsDirectory.appendingPathComponent(id, isDirectory: true)
            if fm.fileExists(atPath: home.path) {
                do { try fm.removeItem(at: home) } catch {
                    throw SomniError(.io, "cannot put night \(id)'s folder back after an interrupted replace", cause: error)
                }
            }
            do { try fm.moveItem(at: stagingDirectory.appendingPathComponent(name), to: home) } catch {
                throw SomniError(.io, "cannot put night \(id)'s folder back after an interrupted replace", cause: error)
            }
        }
    }
}

/// Thrown by a test's save hook to stop `add` dead, skipping its clean-up, as a killed process would.
struct SimulatedCrash: Error {}

/// Staging folder names are "<pid>-<uuid>" (or "<pid>-aside-…" for a night's folder a replace set
/// aside); a save is running when its process is alive and, for
/// this process, when the name is still registered.
final class StagingNames: @unchecked Sendable {
    static let shared = StagingNames()
    private let lock = NSLock()
    /// This process's entries being written, by their full path: a name alone was taken for
    /// one another store in the process (two tests, an app with two stores) was writing.
    private var active: Set<String> = []
    private let pid = ProcessInfo.processInfo.processIdentifier

    /// A new working entry in `directory` (a staging folder), held as this process's until `end`.
    func begin(in directory: URL) -> URL { begin(name: "\(pid)-\(UUID().uuidString)", in: directory) }

    /// A name for the folder of night `id` (added at `addedAt`) set aside while a replacement
    /// takes its place: "<pid>-aside-<added_at's bits in hex>-<id>", so that a sweep after a crash
    /// knows whose it was and whether the replace committed.
    func begin(aside id: String, addedAt: Double, in directory: URL) -> URL {
        begin(name: "\(pid)-aside-\(String(addedAt.bitPattern, radix: 16))-\(id)", in: directory)
    }

    private func begin(name: String, in directory: URL) -> URL {
        let entry = directory.appendingPathComponent(name)
        lock.lock(); defer { lock.unlock() }
        active.insert(Self.key(entry))
        return entry
    }

    /// An entry's path with its folder's links resolved: one store opened by two spellings of
    /// its path is one store.
    private static func key(_ entry: URL) -> String {
        entry.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(entry.lastPathComponent).path
    }

    /// A note, "<pid>-placing-<id>", that a save is about to rename its folder to nights/<id>:
    /// on disk before the rename, removed after the commit. Left by a save that died, it tells
    /// the sweep which folder in nights/ that save put there, when no row names it.
    func begin(placing id: String, in directory: URL) -> URL { begin(name: "\(pid)-placing-\(id)", in: directory) }

    /// A note, "<pid>-deleting-<id>", that night `id`'s row and folder are going: written before
    /// the row's delete, removed once the folder is gone.
    func begin(deleting id: String, in directory: URL) -> URL { begin(name: "\(pid)-deleting-\(id)", in: directory) }

    /// A note, "<staged name>.moved", that staging/<staged name> is a folder moved in from
    /// the place the note holds.
    func begin(movedFrom staged: URL, in directory: URL) -> URL { begin(name: staged.lastPathComponent + ".moved", in: directory) }

    /// The staged folder's name a moved note is for; nil for other names.
    static func movedFrom(_ name: String) -> String? {
        name.hasSuffix(".moved") ? String(name.dropLast(".moved".count)) : nil
    }

    /// The night id a placing note names; nil for other names.
    static func placing(_ name: String) -> String? { note(name, kind: "placing") }

    /// The night id a deleting note names; nil for other names.
    static func deleting(_ name: String) -> String? { note(name, kind: "deleting") }

    private static func note(_ name: String, kind: String) -> String? {
        let parts = name.split(separator: "-", maxSplits: 2)
        guard parts.count == 3, parts[1] == Substring(kind) else { return nil }
        return String(parts[2])
    }

    /// The night id and time added a set-aside folder's name holds; nil for other names.
    static func setAside(_ name: String) -> (id: String, addedAt: Double)? {
        let parts = name.split(separator: "-", maxSplits: 3)
        guard parts.count == 4, parts[1] == "aside", let bits = UInt64(parts[2], radix: 16) else { return nil }
        return (String(parts[3]), Double(bitPattern: bits))
    }

    func end(_ entry: URL) {
        let key = Self.key(entry)
        lock.lock(); defer { lock.unlock() }
        active.remove(key)
    }

    /// `isRunning` for an entry of `directory`: one renamed or changed there before this boot
    /// began is not, whatever process now has the pid its name holds (pids are reused after a
    /// reboot, and a night a save left there when the power went stayed for good).
    func isRunning(_ name: String, in directory: URL) -> Bool {
        let entry = directory.appendingPathComponent(name)
        return !Self.predatesThisBoot(entry.path) && isRunning(name, key: Self.key(entry))
    }

    /// When this boot began, in seconds since 1970 (Linux: /proc/stat's btime); nil elsewhere.
    static let bootTime: Int? = {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix("btime ") }
            .flatMap { Int($0.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces)) }
    }()

    /// Whether the entry at `path` was last renamed or changed (its ctime) before `boot`.
    static func predatesThisBoot(_ path: String, boot: Int? = bootTime) -> Bool {
        guard let boot else { return false }
        var status = stat()
        guard lstat(path, &status) == 0 else { return false }
        #if canImport(Glibc)
        return Int(status.st_ctim.tv_sec) < boot
        #else
        return Int(status.st_ctimespec.tv_sec) < boot
        #endif
    }

    private func isRunning(_ name: String, key: String) -> Bool {
        guard let owner = name.split(separator: "-").first.flatMap({ Int32($0) }) else { return false }
        if owner == pid {
            lock.lock(); defer { lock.unlock() }
            return active.contains(key)
        }
        return StagingNames.isAlive(owner)
    }

    static func isAlive(_ pid: Int32) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)
    }
}
