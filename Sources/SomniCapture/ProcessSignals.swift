import Dispatch
import Foundation

/// The recorder's view of this machine's processes and signals.
public enum LocalProcess {
    public static var id: Int32 { getpid() }

    /// Whether a process exists on this host; nil when the answer is unclear.
    public static func isAlive(_ pid: Int32) -> Bool? {
        if kill(pid, 0) == 0 { return true }
        switch errno {
        case EPERM: return true     // exists, belongs to someone else
        case ESRCH: return false
        default: return nil
        }
    }

    /// A file-size limit (ulimit -f) must make writes fail with EFBIG, which the recorder treats
    /// as a full disk, rather than kill the process with SIGXFSZ.
    public static func ignoreFileSizeSignal() {
        signal(SIGXFSZ, SIG_IGN)
    }
}

/// Set by SIGINT (Ctrl-C) or SIGTERM (systemd stopping the unit): the night ends cleanly and
/// the morning analysis runs. A second signal exits at once; `somni recover` closes the night.
public final class StopRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var sources: [any DispatchSourceSignal] = []

    public init(signals: [Int32] = [SIGINT, SIGTERM]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.received(number) }
            source.resume()
            sources.append(source)
        }
    }

    public var isRequested: Bool { lock.withLock { count > 0 } }

    private func received(_ number: Int32) {
        let n = lock.withLock { count += 1; return count }
        if n > 1 {
            FileHandle.standardError.write(Data("\nsomni: stopped without the morning analysis; run 'somni recover' to close the night\n".utf8))
            exit(128 + number)
        }
    }
}
