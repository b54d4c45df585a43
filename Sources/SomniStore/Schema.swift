import Foundation
import SomniCore

/// The store's schema: a version table and forward-only migrations. Migration `n` (1-based) takes
/// the database from version n − 1 to n; a database newer than this build is refused, never
/// guessed at.
enum Schema {
    static let migrations: [String] = [
        // 1: nights and their events.
        """
        CREATE TABLE nights (
            id TEXT PRIMARY KEY,
            started_at TEXT,
            started_unix REAL,
            night_date TEXT,
            start_date TEXT,
            source TEXT NOT NULL,
            duration REAL NOT NULL,
            analysed_seconds REAL NOT NULL,
            active_share REAL NOT NULL,
            sensitivity INTEGER NOT NULL,
            classifier TEXT NOT NULL,
            snoring_minutes REAL NOT NULL,
            snoring_percent REAL NOT NULL,
            snoring_episodes INTEGER NOT NULL,
            snoring_events INTEGER NOT NULL,
            sleep_talk_events INTEGER NOT NULL,
            cough_events INTEGER NOT NULL,
            added_at REAL NOT NULL
        );
        CREATE INDEX nights_by_start ON nights(started_unix);
        CREATE INDEX nights_by_night_date ON nights(night_date);
        CREATE TABLE events (
            night_id TEXT NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
            event_id TEXT NOT NULL,
            class TEXT NOT NULL CHECK (class IN ('snoring', 'sleep_talk', 'cough')),
            start REAL NOT NULL,
            "end" REAL NOT NULL,
            confidence REAL NOT NULL,
            peak_dbfs REAL NOT NULL,
            mean_dbfs REAL NOT NULL,
            severity REAL NOT NULL,
            clip TEXT,
            episode INTEGER,
            PRIMARY KEY (night_id, event_id)
        );
        """,
        // 2: sleep stages from a watch and cough checks, for the stage analysis and the cough check.
        """
        CREATE TABLE stages (
            night_id TEXT NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
            start REAL NOT NULL,
            "end" REAL NOT NULL,
            stage TEXT NOT NULL CHECK (stage IN ('awake', 'rem', 'core', 'deep')),
            source TEXT
        );
        CREATE INDEX stages_by_night ON stages(night_id);
        CREATE TABLE cough_checks (
            id INTEGER PRIMARY KEY,
            night_id TEXT REFERENCES nights(id) ON DELETE CASCADE,
            taken_at TEXT NOT NULL,
            score REAL NOT NULL,
            band TEXT NOT NULL,
            details TEXT
        );
        """,
        // 3: the recording's fingerprint, to know a recording again under another name.
        """
        ALTER TABLE nights ADD COLUMN source_fingerprint TEXT;
        CREATE INDEX nights_by_fingerprint ON nights(source_fingerprint);
        """,
        // 4: the zone the start was written in, for times after a daylight-saving change.
        """
        ALTER TABLE nights ADD COLUMN time_zone TEXT;
        """,
        // 5: the time a night has no recording of (its gaps), over which its rates are not; NULL
        // until learned from the night's session.json by `fillTimeNotRecorded`.
        """
        ALTER TABLE nights ADD COLUMN seconds_not_recorded REAL;
        """,
    ]

    /// Work a migration needs beyond its SQL, run in the same transaction.
    private static func finish(migration version: Int, _ db: Database) throws {
        if version == 5 { try fillTimeNotRecorded(db) }
    }

    /// Nights stored before schema 5 learn their time not recorded from session.json, and those
    /// with gaps (a joined night's pauses, a lost microphone) their snoring share over the time
    /// recorded (`Session.load` reads an older session's summary so). A night whose folder is
    /// missing or unreadable stays unknown (NULL, read as no gaps) and is tried again each time
    /// the store is swept, so a folder put back is learned then. Under the write lock.
    static func fillTimeNotRecorded(_ db: Database) throws {
        let nights = URL(fileURLWithPath: db.path).deletingLastPathComponent().appendingPathComponent("nights")
        let ids = try db.prepare("SELECT id FROM nights WHERE seconds_not_recorded IS NULL")
        var learned: [(id: String, session: Session)] = []
        while try ids.step() {
            guard let id = ids.string(0), let session = try? Session.load(
                from: nights.appendingPathComponent(id).appendingPathComponent(Session.fileName)) else { continue }
            learned.append((id, session))
        }
        let update = try db.prepare("UPDATE nights SET seconds_not_recorded = ?, snoring_percent = ? WHERE id = ?")
        for (id, session) in learned {
            try update.run([.double(session.secondsNotRecorded), .double(session.summary.snoringPercent), .text(id)])
        }
    }

    static var currentVersion: Int { migrations.count }

    /// The version recorded in the database; 0 for a new, empty one.
    static func version(of db: Database) throws -> Int {
        let hasTable = try db.integer(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'") ?? 0
        guard hasTable > 0 else { return 0 }
        return try db.integer("SELECT max(version) FROM schema_version") ?? 0
    }

    /// Brings the database up to `target` (default: this build's version) in one transaction.
    static func migrate(_ db: Database, to target: Int = currentVersion) throws {
        let found = try version(of: db)
        if found > currentVersion {
            throw SomniError(.unsupported, "the store \(db.path) has schema version \(found), but this somni "
                + "knows only up to version \(currentVersion); use a newer somni")
        }
        guard found < target else { return }
        try db.writeTransaction {
            // Read again under the write lock: another process may have migrated meanwhile.
            let now = try version(of: db)
            guard now < target else { return }
            try db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at REAL NOT NULL)")
            let record = try db.prepare("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)")
            for v in (now + 1)...target {
                try db.execute(migrations[v - 1])
                try finish(migration: v, db)
                try record.run([.int(v), .double(Date().timeIntervalSince1970)])
            }
        }
    }
}
