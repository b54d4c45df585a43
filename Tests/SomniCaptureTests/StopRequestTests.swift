import Foundation
@testable import SomniCapture
import Testing

/// What a signal does to `somni record` in each phase: before capture it only asks that no
/// night be begun (it was taken for a stalled device ten seconds on), during capture it ends
/// the night (the process leaves only if the device then gives nothing), and after capture a
/// first one stops the morning analysis (it was swallowed, and systemd waited out its timeout).
/// The signals are handed to it directly: a test process's threads do not all let them through
/// to libdispatch (`RecordEndToEndTests.ctrlCEndsTheNightAndItIsAnalysed` sends a real one).
@Suite(.serialized) struct StopRequestTests {
    final class Departures: @unchecked Sendable {
        private let lock = NSLock()
        private var messages: [String] = []
        func add(_ number: Int32, _ message: String) { lock.withLock { messages.append("\(number): \(message)") } }
        var all: [String] { lock.withLock { messages } }
    }

    private func wait(_ seconds: Double, until condition: () -> Bool = { false }) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, !condition() { Thread.sleep(forTimeInterval: 0.01) }
    }

    @Test func aSignalIsReadByThePhaseItComesIn() throws {
        let grace = 0.2
        // Before capture: nothing leaves, however long; the command then declines the night.
        let before = Departures()
        let early = StopRequest(signals: [], graceSeconds: grace, leaving: before.add)
        early.received(SIGUSR1)
        wait(2) { early.isRequested }
        #expect(early.isRequested)
        wait(3 * grace)
        #expect(before.all.isEmpty, "\(before.all)")
        early.exitIfRequestedBeforeCapture("nothing was recorded")
        #expect(before.all == ["\(SIGUSR1): nothing was recorded"])

        // Capturing, the device still giving: the night ends, nobody leaves. Giving nothing for
        // the grace after the signal: the process leaves.
        let during = Departures()
        let capturing = StopRequest(signals: [], graceSeconds: grace, leaving: during.add)
        capturing.captureBegan()
        wait(0.1)  // the last progress a little before the signal, as a device that stopped giving
        capturing.received(SIGUSR2)
        wait(2) { capturing.isRequested }
        wait(10) { !during.all.isEmpty }
        #expect(during.all.count == 1 && during.all[0].contains("delivers nothing"), "\(during.all)")

        // After capture (the morning analysis): the first signal leaves at once.
        let after = Departures()
        let morning = StopRequest(signals: [], graceSeconds: 60, recoverCommand: "somni recover --out /nights", leaving: after.add)
        morning.captureBegan()
        morning.captureEnded()
        morning.received(SIGVTALRM)
        wait(2) { !after.all.isEmpty }
        #expect(after.all.count == 1 && after.all[0].contains("stopped without the morning analysis")
                && after.all[0].contains("run 'somni recover --out /nights' to close the night"), "\(after.all)")

        // The analysis done, the night being saved: let finish, unless asked three times.
        let late = Departures()
        let saving = StopRequest(signals: [], graceSeconds: 60, leaving: late.add)
        saving.captureBegan()
        saving.captureEnded()
        saving.morningEnded()
        saving.received(SIGTERM)
        saving.received(SIGTERM)
        wait(0.5)
        #expect(late.all.isEmpty, "\(late.all)")
        saving.received(SIGTERM)
        wait(2) { !late.all.isEmpty }
        #expect(late.all.count == 1 && late.all[0].contains("stopped while the analysed night was being saved"), "\(late.all)")
        withExtendedLifetime([early, capturing, morning, saving]) {}
    }
}

/// One process at a time holds a night folder: a second recover (or a recover while the night's
/// own recorder still has it) leaves it alone.
@Suite struct NightFolderClaimTests {
    @Test func aNightFolderIsHeldByOneClaimAtATime() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-claim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var first = try NightFolderClaim(folder)
        #expect(first != nil)
        #expect(try NightFolderClaim(folder) == nil, "held by the first")
        first = nil
        #expect(try NightFolderClaim(folder) != nil, "let go with the first")
        #expect(try NightFolderClaim(folder.appendingPathComponent("gone")) == nil, "a folder moved away is not there to hold")
        _ = first
    }
}
