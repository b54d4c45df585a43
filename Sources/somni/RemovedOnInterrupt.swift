import Foundation
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
/// anything is written: libdispatch takes its signal on a moment after the watcher starts, and
/// one sent meanwhile was lost.
final class RemovedOnInterrupt: @unchecked Sendable {
    static let shared = RemovedOnInterrupt()
    private static let signals = [SIGINT, SIGTERM, SIGHUP]
    private let lock = NSLock()
    private var unfinished: [URL] = []
    /// Whether a signal came: static, so that asking does not start the watcher in a command
    /// that handles its signals itself (record).
    nonisolated(unsafe) private static var signalled = false
    private static let signalledLock = NSLock()
    private var sources: [any DispatchSourceSignal] = []

    private init() {
        for number in Self.signals {
            signal(number, SIG_IGN)  // delivered to the source below instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [unowned self] in
                Self.signalledLock.withLock { Self.signalled = true }
                let items = lock.withLock { unfinished }
                for item in items { try? FileManager.default.removeItem(at: item) }
                writeToStandardError("\n")
                exit(128 + number)
            }
            source.resume()
            sources.append(source)
        }
    }

    /// `items` (folders or files) are being written: a signal removes them.
    func watch(_ items: [URL]) { lock.withLock { unfinished = items } }

    /// They are complete (or gone).
    func end() { lock.withLock { unfinished = [] } }

    /// Once a signal came, waits for its handler to end the process: the work it cut short fails
    /// meanwhile (its folder removed under it), and that failure's exit 74 and message won the
    /// race against the signal's 130 now and then.
    static func waitIfInterrupted() {
        guard signalledLock.withLock({ signalled }) else { return }
        while true { sleep(60) }
    }
}

/// `OutputFile.write`, its working file (and `others`: a report's new clips folder) removed
/// by Ctrl-C, a TERM or a HUP on the way.
func writeOutputFile(_ data: Data, to url: URL, removingOnInterrupt others: [URL] = []) throws {
    let partial = PartialFile.url(for: url.resolvingSymlinksInPath())
    RemovedOnInterrupt.shared.watch(others + [partial])
    do { try OutputFile.write(data, to: url, temporaryURL: partial) } catch {
        RemovedOnInterrupt.shared.watch(others)  // for the caller's own cleanup
        throw error
    }
    RemovedOnInterrupt.shared.end()  // written: what goes with it stays
}
