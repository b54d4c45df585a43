import Foundation

/// The core's one public error: a code, a message a person can act on, and the underlying cause.
public struct SomniError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        case badInput       // the user's file or argument is not what it must be
        case io             // reading or writing the disk failed
        case badModel       // a model file is corrupt, truncated, foreign or mismatched
        case unsupported    // a valid request this build cannot do
        case internalError
    }
    public let code: Code
    public let message: String
    public let cause: String?
    /// The operating system's reason, when the cause carries one ("no space left on device"):
    /// what tells a full disk from a missing folder or a permission.
    public let reason: String?
    /// The errno behind `reason`.
    public let systemCode: Int32?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause.map { String(describing: $0) }
        systemCode = cause.flatMap(Self.systemCode)
        reason = systemCode.map(Self.text(errno:))
    }

    public var description: String { reason.map { "\(message): \($0)" } ?? message }

    /// A write failed for want of room: the disk or the user's quota is full, or a file may grow
    /// no larger (a file system's or a process's limit).
    public var isOutOfSpace: Bool { [ENOSPC, EDQUOT, EFBIG].contains(systemCode) }

    /// The POSIX error behind an error, however deeply Foundation wrapped it.
    static func systemCode(_ error: any Error) -> Int32? {
        var current: (any Error)? = error
        for _ in 0..<4 {
            guard let e = current else { return nil }
            if let s = e as? SomniError { return s.systemCode }
            if let p = e as? POSIXError { return p.code.rawValue }
            let n = e as NSError
            if n.domain == NSPOSIXErrorDomain { return Int32(truncatingIfNeeded: n.code) }
            current = n.userInfo[NSUnderlyingErrorKey] as? any Error
        }
        return nil
    }

    private static func text(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
