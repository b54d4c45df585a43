import Dispatch
import Foundation
import SomniCore

/// The recorder's view of this machine's processes and signals.
public enum LocalProcess {
    public static var id: Int32 { getpid() }

    /// This process, as a night's journal names its recorder.
    public static var identity: NightJournal.RecorderIdentity {
        NightJournal.RecorderIdentity(pid: id, host: ProcessInfo.processInfo.hostName, boot: bootID)
    }

    /// The kernel's id of this boot; nil where there is none to read.
    public static var bootID: String? {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The recorder still writing a night, when its journal names one that is alive here, in
    /// this boot, and wrote the journal within the last 15 minutes (it does every 30 s of sound)
    /// or touched it (it does every minute, sound or none: a microphone that gave nothing for
    /// 15 minutes had its night closed under it, and the rest of the night was lost). A journal
    /// without a recorder (before stop 43) is left to the recording lock.
    public static func liveRecorder(of journal: NightJournal, in folder: URL? = nil, now: Date = Date()) -> NightJournal.RecorderIdentity? {
        let touched = folder.flatMap {
            (try? FileManager.default.attributesOfItem(atPath: $0.appendingPathComponent(NightJournal.fileName).path))?[.modificationDate] as? Date
        }
        let written = max(journal.updatedAt, touched?.timeIntervalSince1970 ?? 0)
        guard journal.status == .recording, let recorder = journal.recorder, recorder.pid != id,
              recorder.host == ProcessInfo.processInfo.hostName, recorder.boot == bootID,
              now.timeIntervalSince1970 - written < 15 * 60, isAlive(recorder.pid) == true else { return nil }
        return recorder
    }

    /// Touches a night's journal every `interval` seconds until cancelled, from a thread of its
    /// own: the recorder's loop writes it only as sound arrives.
    public static func keepTouching(journalIn folder: URL, every interval: Double = 60) -> any DispatchSourceTimer {
        let path = folder.appendingPathComponent(NightJournal.fileName).path
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { _ = utimensat(AT_FDCWD, path, nil, 0) }
        timer.resume()
        return timer
    }

    /// Whether a process exists on this host; nil when the answer is unclear.
    public static func isAlive(_ pid: Int32) -> Bool? {
        if kill(pid, 0) == 0 { return true }
        switch errno {
        case EPERM: return true     // exists, belongs to someone else
        case ESRCH: return false
        default: return nil
        }
    }

    /// A file-size limit (ulimit -f) must make writes fail with EFBIG, which Somni treats as a
    /// full disk, rather than kill the process with SIGXFSZ. So must a pipe whose reader is gone
    /// (EPIPE, a closed output): Ctrl-C on `somni record 2>&1 | tee log` ended tee first, and the
    /// recorder's next message killed it with SIGPIPE before its morning analysis.
    public static func ignoreFileSizeAndPipeSignals() {
        signal(SIGXFSZ, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Readies `signals` for dispatch signal sources made next: held back (blocked) on the
    /// calling thread and on the threads made from it, not ignored. On Linux libdispatch puts its
    /// own handler in a moment after a source starts and reads the signal from a signalfd, which
    /// takes one held back meanwhile; ignored (SIG_IGN, which also throws away one pending), one
    /// sent in between was lost, and a command ran on to its end and exited 0. On Apple
    /// platforms kqueue hears a signal that is ignored, which keeps it from ending the process.
    public static func handSignalsToDispatch(_ signals: [Int32]) {
        var held = sigset_t()
        sigemptyset(&held)
        for number in signals { sigaddset(&held, number) }
        pthread_sigmask(SIG_BLOCK, &held, nil)
        #if canImport(Darwin)
        for number in signals { signal(number, SIG_IGN) }
        #endif
    }
}

/// Set by SIGINT (Ctrl-C), SIGTERM (systemd stopping the unit) or SIGHUP (the terminal it ran in
/// closed, which killed it at once, the night left unanalysed): the night ends cleanly and
/// the morning analysis runs. A second signal exits at once; `somni recover` closes the night.
/// A read gives up on a device that delivers nothing (`CaptureStalled`), so capture keeps moving;
/// should it still make no progress for `graceSeconds` after the signal, the process exits too.
/// Before capture begins (while interrupted nights are closed) a signal only asks that no night
/// be begun; after it ends (the morning analysis) a first signal exits, as a second would. Once
/// the analysis is done, the night is let be saved (a third signal still stops that).
public final class StopRequest: @unchecked Sendable {
    private enum Phase { case beforeCapture, capturing, afterCapture, saving }
    private let lock = NSLock()
    private var count = 0
    private var lastSignal: Int32 = SIGINT
    private var phase = Phase.beforeCapture
    private var lastProgress = Date()
    private let graceSeconds: Double
    private var sources: [any DispatchSourceSignal] = []

    /// How the process leaves: its message on standard error and exit(128 + signal); tests
    /// watch instead.
    private let leaving: @Sendable (Int32, String) -> Void
    /// The command that closes the night left, with the folder or store it is in.
    private let recoverCommand: String

    public init(signals: [Int32] = [SIGINT, SIGTERM, SIGHUP], graceSeconds: Double = 10, recoverCommand: String = "somni recover",
                leaving: (@Sendable (Int32, String) -> Void)? = nil) {
        self.graceSeconds = graceSeconds
        self.recoverCommand = recoverCommand
        self.leaving = leaving ?? { number, message in
            try? FileHandle.standardError.write(contentsOf: Data("\nsomni: \(message)\n".utf8))
            exit(128 + number)
        }
        LocalProcess.handSignalsToDispatch(signals)
        for number in signals {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.received(number) }
            source.resume()
            sources.append(source)
        }
    }

    public var isRequested: Bool { lock.withLock { count > 0 } }

    /// The capture loop is alive (called with every status tick).
    public func noteProgress() { lock.withLock { lastProgress = Date() } }

    /// Capture begins: from now a signal ends the night, and the grace for a stalled device
    /// counts from here. (Counted from the start, a Ctrl-C while an interrupted night was
    /// closed first was taken for a stalled device ten seconds on.)
    public func captureBegan() { lock.withLock { phase = .capturing; lastProgress = Date() } }

    /// Capture is over; what follows (the morning analysis) may take its time, and a signal
    /// during it stops it: before, a first signal then was swallowed, and systemd waited out
    /// its stop timeout.
    public func captureEnded() { lock.withLock { phase = .afterCapture } }

    /// The morning analysis is done and the night is being saved: quick, and a night all but
    /// kept is let finish. (A signal just then had said the analysis never ran, exit 143, of a
    /// night saved whole.)
    public func morningEnded() { lock.withLock { phase = .saving } }

    /// Exits as a signal asked, when one came before capture began: no night is begun.
    public func exitIfRequestedBeforeCapture(_ why: String) {
        let (requested, number) = lock.withLock { (count > 0, lastSignal) }
        if requested { leave(number, why, recover: false) }
    }

    /// A signal came (internal: the tests give one without the process's signal delivery).
    func received(_ number: Int32) {
        let (n, phase) = lock.withLock { count += 1; lastSignal = number; return (count, self.phase) }
        if phase == .saving {
            if n > 2 { leave(number, "stopped while the analysed night was being saved") }
            return
        }
        if n > 1 || phase == .afterCapture { return leave(number, "stopped without the morning analysis") }
        guard phase == .capturing else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + graceSeconds) { [weak self] in
            guard let self else { return }
            let stalled = self.lock.withLock { self.phase == .capturing && Date().timeIntervalSince(self.lastProgress) > self.graceSeconds }
            if stalled { self.leave(number, "the capture device delivers nothing, so the night cannot end cleanly") }
        }
    }

    private func leave(_ number: Int32, _ why: String, recover: Bool = true) {
        leaving(number, why + (recover ? "; run '\(recoverCommand)' to close the night" : ""))
    }
}

/// One process's hold on a night folder while it records, closes or saves the night: a lock
/// (flock) on the folder itself, let go when the process ends however it ends. Two `somni
/// recover` at once both closed one night, and the second sent its user to a folder the first
/// had already moved into the store.
public final class NightFolderClaim {
    private let descriptor: Int32

    /// Holds `folder`; nil when another process (or another claim) holds it, or it is gone
    /// (moved into the store by the process that held it).
    public init?(_ folder: URL) throws {
        let fd = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw SomniError(.io, "cannot open \(folder.path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let why = errno
            close(fd)
            if why == EWOULDBLOCK { return nil }
            throw SomniError(.io, "cannot lock \(folder.path): \(String(cString: strerror(why)))")
        }
        // Moved away (into the store) by the process that held it, between the open and the
        // lock: the lock is on that folder, not on anything at this path.
        var held = stat(), named = stat()
        guard fstat(fd, &held) == 0, stat(folder.path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino else {
            close(fd)
            return nil
        }
        descriptor = fd
    }

    deinit { close(descriptor) }
}
