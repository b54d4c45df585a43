import CSQLite
import Foundation
import SomniCore

/// One SQLite connection. Every C call goes through `check`; the handle is closed in `deinit`
/// (closing with a transaction still open rolls it back, exactly as a crash would).
final class Database {
    private(set) var handle: OpaquePointer?
    let path: String

    /// - Parameter snapshot: open the file read-only as it stands, with no write-ahead log or
    ///   shared-memory file beside it (`immutable=1`): readable when the disk is too full for
    ///   those files to be made. Only for a database closed cleanly, whose log is empty.
    init(path: String, snapshot: Bool = false) throws {
        self.path = path
        var db: OpaquePointer?
        let rc: Int32
        if snapshot {
            let uri = URL(fileURLWithPath: path).absoluteString + "?immutable=1"
            rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        } else {
            rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        }
        handle = db
        guard rc == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            handle = nil
            throw SomniError(.io, "cannot open the store database \(path): \(message)")
        }
        sqlite3_extended_result_codes(db, 1)
        // Another process may hold the write lock for a moment while it saves a night.
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { sqlite3_close_v2(handle) }

    /// The one funnel for result codes: anything but the accepted codes becomes a SomniError.
    @discardableResult
    func check(_ rc: Int32, _ what: @autoclosure () -> String, accept: Set<Int32> = [SQLITE_OK]) throws -> Int32 {
        if accept.contains(rc) { return rc }
        let message = String(cString: sqlite3_errmsg(handle))
        let primary = rc & 0xff
        let code: SomniError.Code = (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) ? .badInput : .io
        // An I/O error's own reason ("no space left on device") says more than "disk I/O error".
        var system = [SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN].contains(primary)
            ? POSIXErrorCode(rawValue: sqlite3_system_errno(handle)).map { POSIXError($0) } : nil
        if primary == SQLITE_FULL, system == nil { system = POSIXError(.ENOSPC) }
        throw SomniError(code, "store database \(path): \(what()): \(message) (code \(rc))", cause: system)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), "cannot run \(sql.prefix(60))")
    }

    func prepare(_ sql: String) throws -> Statement { try Statement(self, sql) }

    /// Sets the busy timeout in milliseconds (0: fail at once when another connection holds a lock).
    func setBusyTimeout(_ milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }

    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Reads a single integer (`PRAGMA user_version`, `SELECT count(*)`…).
    func integer(_ sql: String) throws -> Int? {
        let s = try prepare(sql)
        return try s.step() ? s.int(0) : nil
    }

    func string(_ sql: String) throws -> String? {
        let s = try prepare(sql)
        return try s.step() ? s.string(0) : nil
    }

    /// Runs `body` in a transaction that takes the write lock at once, committing on success and
    /// rolling back on any thrown error.
    func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// A prepared statement, finalised in `deinit`. Parameters are 1-based, columns 0-based, as in C.
final class Statement {
    private let db: Database
    private var stmt: OpaquePointer?
    private let sql: String

    fileprivate init(_ db: Database, _ sql: String) throws {
        self.db = db
        self.sql = sql
        try db.check(sqlite3_prepare_v2(db.handle, sql, -1, &stmt, nil), "cannot prepare \(sql.prefix(60))")
    }

    deinit { sqlite3_finalize(stmt) }

    func bind(_ values: [SQLValue]) throws -> Statement {
        try db.check(sqlite3_reset(stmt), "cannot reset")
        try db.check(sqlite3_clear_bindings(stmt), "cannot clear bindings")
        for (i, v) in values.enumerated() {
            let n = Int32(i + 1)
            let rc: Int32
            switch v {
            case .null: rc = sqlite3_bind_null(stmt, n)
            case .int(let x): rc = sqlite3_bind_int64(stmt, n, Int64(x))
            case .double(let x): rc = sqlite3_bind_double(stmt, n, x)
            // By its length: a text holding a NUL was cut at it (two ids "a\0-1", "a\0-2" stored as one).
            case .text(let x): rc = x.withCString { sqlite3_bind_text(stmt, n, $0, Int32(x.utf8.count), somni_sqlite_transient()) }
            }
            try db.check(rc, "cannot bind parameter \(n) of \(sql.prefix(60))")
        }
        return self
    }

    /// Advances to the next row; false when done.
    func step() throws -> Bool {
        let rc = try db.check(sqlite3_step(stmt), "cannot run \(sql.prefix(60))", accept: [SQLITE_ROW, SQLITE_DONE])
        return rc == SQLITE_ROW
    }

    /// Runs a statement that returns no rows.
    func run(_ values: [SQLValue] = []) throws {
        _ = try bind(values).step()
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(stmt, column) == SQLITE_NULL }
    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(stmt, column)) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(stmt, column) }
    func string(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(stmt, column) else { return nil }
        let count = Int(sqlite3_column_bytes(stmt, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
    }
    func optionalInt(_ column: Int32) -> Int? { isNull(column) ? nil : int(column) }
}

enum SQLValue {
    case null
    case int(Int)
    case double(Double)
    case text(String)

    init(_ s: String?) { self = s.map { .text($0) } ?? .null }
    init(_ d: Double?) { self = d.map { .double($0) } ?? .null }
    init(_ i: Int?) { self = i.map { .int($0) } ?? .null }
}
