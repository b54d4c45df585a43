import Foundation

/// Standard output for every command, written with write(2). Swift's own print goes through
/// stdio, whose error flag Swift 6 cannot read (`stdout` is a C global it refuses), and a print
/// larger than stdio's buffer is written past it: a failed write then left nothing for the last
/// flush to fail on, and an export cut short by a full disk exited 0. Here every failure keeps
/// its reason for `StandardStreams.finishStandardOutput`.
enum StandardOutput {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var pending: [UInt8] = []
    nonisolated(unsafe) private static var firstFailure: Int32?
    /// A terminal sees each line as it is printed, as stdio's line buffering gave; a file or a
    /// pipe gets the output in large writes.
    private static let toTerminal = isatty(STDOUT_FILENO) != 0

    static func append(_ text: String) {
        lock.withLock {
            pending.append(contentsOf: text.utf8)
            if pending.count >= 1 << 16 || (toTerminal && text.utf8.contains(UInt8(ascii: "\n"))) { writePending() }
        }
    }

    /// The errno of the first write that failed, if one did.
    static var failure: Int32? { lock.withLock { firstFailure } }

    /// Writes out what is pending.
    static func flush() { lock.withLock { writePending() } }

    private static func writePending() {
        defer { pending.removeAll(keepingCapacity: true) }
        guard firstFailure == nil else { return }  // once a write failed, the rest goes nowhere, as with stdio
        pending.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    firstFailure = errno
                    return
                }
                offset += written
            }
        }
    }
}

/// The command line's print: the standard library's, into `StandardOutput`.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    StandardOutput.append(items.map { String(describing: $0) }.joined(separator: separator) + terminator)
}
