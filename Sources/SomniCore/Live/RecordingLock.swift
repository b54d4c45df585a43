import Foundation

/// What a recording lock file holds (JSON): who records, where, and when it last said so.
public struct RecordingLockRecord: Codable, Sendable, Equatable {
    public var pid: Int32
    public var host: String
    public var nightFolder: String
    /// Unix seconds.
    public var acquiredAt: Double
    /// Unix seconds of the last heartbeat.
    public var heartbeatAt: Double
    /// Seconds after the last heartbeat at which the lock counts as abandoned.
    public var lease: Double

    public init(pid: Int32, host: String, nightFolder: String, acquiredAt: Double, heartbeatAt: Double, lease: Double) {
        self.pid = pid; self.host = host; self.nightFolder = nightFolder
        self.acquiredAt = acquiredAt; self.heartbeatAt = heartbeatAt; self.lease = lease
    }

    public func expired(at now: Date) -> Bool { now.timeIntervalSince1970 - heartbeatAt > lease }
}

/// MoyiSnore's recording lock, as a file: one recorder per machine, kept alive by a heartbeat,
/// and a lease so that a recorder that died (kill -9, power loss) never blocks the next night.
///
/// A lock is live when its heartbeat is younger than its lease and, when the holder is on this
/// host and `processAlive` can tell, its process still exists. Creating the file is exclusive;
/// taking over a dead lock removes it first. Like the seed's, it is a courtesy between recorders,
/// not a correctness gate: two takers racing over the same dead lock could both succeed.
public final class RecordingLock {
    public let url: URL
    public let lease: TimeInterval
    public let heartbeatInterval: TimeInterval
    public private(set) var record: RecordingLockRecord
    private let now: () -> Date
    private var released = false

    /// Tells whether a process on this host exists; nil when it cannot tell.
    public typealias ProcessProbe = (Int32) -> Bool?

    /// Takes the lock or throws `.unsupported` naming the recorder that holds it.
    public init(url: URL, nightFolder: URL, pid: Int32, host: String = ProcessInfo.processInfo.hostName,
                lease: TimeInterval = 15 * 60, heartbeatInterval: TimeInterval = 5 * 60,
                now: @escaping () -> Date = Date.init, processAlive: ProcessProbe = { _ in nil }) throws {
        self.url = url
        self.lease = lease
        self.heartbeatInterval = heartbeatInterval
        self.now = now
        let t = now().timeIntervalSince1970
        record = RecordingLockRecord(pid: pid, host: host, nightFolder: nightFolder.path,
                                     acquiredAt: t, heartbeatAt: t, lease: lease)
        if let holder = RecordingLock.liveHolder(at: url, now: now(), host: host, processAlive: processAlive) {
            throw RecordingLock.refusal(holder, now: now())
        }
        // Whatever is left is dead or unreadable: take it over.
        if FileManager.default.fileExists(atPath: url.path) {
            do { try FileManager.default.removeItem(at: url) } catch {
                throw SomniError(.io, "cannot remove the abandoned recording lock \(url.path)", cause: error)
            }
        }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoded(record).write(to: url, options: .withoutOverwriting)
        } catch {
            if let holder = RecordingLock.read(at: url) { throw RecordingLock.refusal(holder, now: now()) }
            throw SomniError(.io, "cannot create the recording lock \(url.path)", cause: error)
        }
    }

    deinit { release() }

    /// The lock's holder when the lock is live; nil when there is none, or it is dead.
    public static func liveHolder(at url: URL, now: Date = Date(), host: String = ProcessInfo.processInfo.hostName,
                                  processAlive: ProcessProbe = { _ in nil }) -> RecordingLockRecord? {
        guard let holder = read(at: url), !holder.expired(at: now) else { return nil }
        if holder.host == host, processAlive(holder.pid) == false { return nil }
        return holder
    }

    public static func read(at url: URL) -> RecordingLockRecord? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(RecordingLockRecord.self, from: data)
    }

    /// Writes a heartbeat when `heartbeatInterval` has passed since the last one. Throws when
    /// another recorder has taken the lock over (this one's lease ran out, e.g. after a suspend).
    public func heartbeatIfDue() throws {
        let t = now().timeIntervalSince1970
        guard !released, t - record.heartbeatAt >= heartbeatInterval else { return }
        if let onDisk = RecordingLock.read(at: url), onDisk.pid != record.pid || onDisk.host != record.host {
            throw SomniError(.io, "the recording lock \(url.path) was taken over by pid \(onDisk.pid) on \(onDisk.host)")
        }
        record.heartbeatAt = t
        do { try encoded(record).write(to: url, options: .atomic) } catch {
            throw SomniError(.io, "cannot refresh the recording lock \(url.path)", cause: error)
        }
    }

    /// Removes the lock file if it is still ours.
    public func release() {
        guard !released else { return }
        released = true
        if let onDisk = RecordingLock.read(at: url), onDisk.pid == record.pid, onDisk.host == record.host {
            try? FileManager.default.removeItem(at: url)
        }
    }

    private func encoded(_ r: RecordingLockRecord) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(r)
    }

    private static func refusal(_ holder: RecordingLockRecord, now: Date) -> SomniError {
        let age = Int(now.timeIntervalSince1970 - holder.heartbeatAt)
        let left = Int(holder.lease) - age
        return SomniError(.unsupported, """
            another recorder is already recording on this machine (pid \(holder.pid) on \(holder.host), \
            into \(holder.nightFolder); last heartbeat \(age) s ago). Stop it first; if it died, its lock \
            expires in \(max(0, left)) s
            """)
    }
}
