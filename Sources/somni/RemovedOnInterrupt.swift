import Foundation
import SomniCapture
import SomniCore

/// While something is written (a night's folder, a synthesised night's files, a report's page and
/// clips, an export), Ctrl-C (or a TERM or HUP) removes what is unfinished before the process
/// ends: beside an --out folder its hidden `.NAME.partial-…` was otherwise left for a later run
/// to sweep six hours on, and a report's clips folder stayed without its page. Between nights
/// the signal ends the process as it would have, the nights saved kept.
///
/// One watcher for the whole process: libdispatch installs its handler for a signal once, so a
/// watcher made again after the first was cancelled (for a batch's second recording) never
/// heard the signal, which was ignored, and the batch ran on to its end. Touch `shared` before
/// anything is written, on the main thread: it holds the signals back there (see `init`).
final class RemovedOnInterrupt: @unchecked Sendable {
    static let shared = RemovedOnInterrupt()
    private static let signals = [SIGINT, SIGTERM, SIGHUP]
    private let lock = NSLock()
    private var folders: [URL] = [], files: [URL] = []
    /// Held around work a signal must not cut in two (`uninterruptible`): the handler waits for it.
    private let critical = NSLock()
    /// Whether a signal came, and whether the work it cut short has stopped to wait for the exit:
    /// static, so that asking does not start the watcher in a command that handles its signals
    /// itself (record).
    nonisolated(unsafe) private static var signalled = false, parked = false
    private static let flags = NSLock()
    private var sources: [any DispatchSourceSignal] = []
    /// A signal is being acted on: nothing more is to be begun.
    private var stopping = false
    /// What the process says as a signal ends it (a batch: what it had not analysed yet), and
    /// what it says once the work under way is kept (`kept`).
    private var farewell: String?, farewellOnceKept: String?

    private init() {
        LocalProcess.handSignalsToDispatch(Self.signals)
        for number in Self.signals {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [unowned self] in
                critical.lock()  // never unlocked: the process ends here
                Self.flags.withLock { Self.signalled = true }
                // From here no new work is watched (`watch` waits for the exit instead): work
                // begun between this look and the exit was left behind, made as the process ended.
                let (folders, files, farewell) = lock.withLock { stopping = true; return (self.folders, self.files, self.farewell) }
                let last = "\n" + (farewell.map { $0 + "\n" } ?? "")
                if folders.isEmpty, files.isEmpty {  // between pieces of work: nothing to wait for
                    writeToStandardError(last)
                    exit(128 + number)
                }
                Self.removeAndFence(folders: folders, files: files)
                // The work goes on meanwhile on its own thread: fenced, it fails at its next
                // write into what was removed (a clip copied into a clips folder made again, a
                // page's working file) and stops to wait; a second at most.
                for _ in 0..<100 where !Self.flags.withLock({ Self.parked }) { usleep(10_000) }
                for fence in folders + files { try? FileManager.default.removeItem(at: fence) }
                writeToStandardError(last)
                exit(128 + number)
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Removes each item and puts something of the other kind in its place, which the work cannot
    /// write into: a file where a folder was, a folder where a file was.
    private static func removeAndFence(folders: [URL], files: [URL]) {
        let fm = FileManager.default
        for (item, isFolder) in folders.map({ ($0, true) }) + files.map({ ($0, false) }) {
            for _ in 0..<5 {
                try? fm.removeItem(at: item)
                let fenced = isFolder ? fm.createFile(atPath: item.path, contents: nil)
                    : (try? fm.createDirectory(at: item, withIntermediateDirectories: false)) != nil
                if fenced { break }
            }
        }
    }

    /// `folders` and `files` are being written (or are about to be made): a signal removes them.
    /// Once a signal is being acted on, waits for the exit instead of letting more work begin.
    func watch(folders: [URL] = [], files: [URL] = []) {
        let acted = lock.withLock { () -> Bool in
            if stopping { return true }
            (self.folders, self.files) = (folders, files)
            return false
        }
        if acted { Self.waitIfInterrupted() }
    }

    /// They are complete (or gone).
    func end() { watch() }

    /// Says `message` (one line) on standard error should a signal end the process from now on,
    /// and `onceKept` instead from when the work under way calls `kept`; nil says nothing.
    func sayOnInterrupt(_ message: String?, onceKept: String? = nil) {
        lock.withLock { (farewell, farewellOnceKept) = (message, onceKept) }
    }

    /// The work under way is kept (a night in place, or saved in the store): called within
    /// `uninterruptible`, so that a signal that waited for it says so. A batch stopped while its
    /// third night was being saved said that night was not analysed.
    func kept() {
        lock.withLock { if let next = farewellOnceKept { (farewell, farewellOnceKept) = (next, nil) } }
    }

    /// Runs `body` whole before a signal is acted on: putting a finished file (or two that go
    /// together) in place, so that a signal leaves the old ones or the new ones, never a mix.
    func uninterruptible<T>(_ body: () throws -> T) rethrows -> T {
        // A handler that took it first never gives it back: park as it expects, or it waits a
        // second for the work to stop before it ends the process.
        while !critical.try() {
            Self.waitIfInterrupted()
            usleep(1_000)
        }
        defer { critical.unlock() }
        return try body()
    }

    /// Once a signal came, waits for its handler to end the process: the work it cut short fails
    /// meanwhile (its folder removed under it), and that failure's exit 74 and message won the
    /// race against the signal's 130 now and then.
    static func waitIfInterrupted() {
        guard flags.withLock({ signalled }) else { return }
        flags.withLock { parked = true }
        while true { sleep(60) }
    }
}

/// `OutputFile.write` whole before a signal is acted on: a kill (Ctrl-C, a TERM, a HUP) leaves
/// the file before it or the new one, and nothing beside it. Once it is written, what the caller
/// watched for it (a report's clips folder) is no longer removed by a signal.
func writeOutputFile(_ data: Data, to url: URL) throws {
    try RemovedOnInterrupt.shared.uninterruptible {
        try OutputFile.write(data, to: url)
        RemovedOnInterrupt.shared.end()  // written: what goes with it stays
    }
}
