import Foundation
import Testing
@testable import SomniCore

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    var now = Date(timeIntervalSince1970: 1_800_000_000)
    func advance(_ seconds: TimeInterval) { now += seconds }
}

@Suite final class LiveRecordingLockTests {
    let folder: URL
    var lockURL: URL { folder.appendingPathComponent("record.lock") }
    let night = URL(fileURLWithPath: "/nights/2026-11-29")

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// Swift Testing makes one instance per test, so each test's folder goes when it ends.
    deinit { try? FileManager.default.removeItem(at: folder) }

    func take(pid: Int32, host: String = "bedside", clock: ManualClock, alive: @escaping RecordingLock.ProcessProbe = { _ in nil }) throws -> RecordingLock {
        try RecordingLock(url: lockURL, nightFolder: night, pid: pid, host: host, lease: 900, heartbeatInterval: 300,
                          now: { clock.now }, processAlive: alive)
    }

    @Test func aSecondRecorderIsRefusedWithWhoHoldsTheLock() throws {
        let clock = ManualClock()
        let first = try take(pid: 100, clock: clock)
        defer { withExtendedLifetime(first) {} }
        clock.advance(60)
        do {
            _ = try take(pid: 200, clock: clock)
            Issue.record("the second recorder got the lock")
        } catch let e as SomniError {
            #expect(e.code == .unsupported)
            #expect(e.message.contains("pid 100"))
            #expect(e.message.contains(night.path))
            #expect(e.message.contains("expires in 840 s"))
        }
        first.release()
        #expect(!FileManager.default.fileExists(atPath: lockURL.path))
    }

    @Test func heartbeatsKeepTheLockAndADeadRecordersLeaseExpires() throws {
        let clock = ManualClock()
        let first = try take(pid: 100, clock: clock)
        // Heartbeats every 5 min keep it for an hour.
        for _ in 0..<12 {
            clock.advance(300)
            try first.heartbeatIfDue()
            #expect(throws: SomniError.self) { try take(pid: 200, clock: clock) }
        }
        // The recorder dies without releasing: 15 min later its lock is no one's.
        clock.advance(901)
        let second = try take(pid: 200, clock: clock)
        #expect(RecordingLock.read(at: lockURL)?.pid == 200)
        // The first one waking up (after a suspend, say) learns it was taken over.
        clock.advance(300)
        #expect(throws: SomniError.self) { try first.heartbeatIfDue() }
        // …and releasing does not remove the new holder's lock.
        first.release()
        #expect(RecordingLock.read(at: lockURL)?.pid == 200)
        second.release()
    }

    @Test func aLockWhoseProcessIsGoneOnThisHostIsTakenAtOnce() throws {
        let clock = ManualClock()
        let first = try take(pid: 100, clock: clock)   // never released: the process "died"
        try withExtendedLifetime(first) {
            let second = try take(pid: 200, clock: clock, alive: { $0 != 100 })
            #expect(RecordingLock.read(at: lockURL)?.pid == 200)
            second.release()
        }
        // Another host's lock cannot be probed, so only the lease frees it.
        let other = try take(pid: 300, host: "other", clock: clock)
        withExtendedLifetime(other) {
            _ = #expect(throws: SomniError.self) { try take(pid: 400, clock: clock, alive: { _ in false }) }
        }
    }

    @Test func anUnreadableLockFileIsTakenOver() throws {
        try Data("garbage".utf8).write(to: lockURL)
        let lock = try take(pid: 100, clock: ManualClock())
        #expect(RecordingLock.read(at: lockURL)?.pid == 100)
        lock.release()
    }
}
