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

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause.map { String(describing: $0) }
        reason = cause.flatMap(Self.systemReason)
    }

    public var description: String { reason.map { "\(message): \($0)" } ?? message }

    /// The POSIX error behind an error, however deeply Foundation wrapped it.
    static func systemReason(_ error: any Error) -> String? {
        var current: (any Error)? = error
        for _ in 0..<4 {
            guard let e = current else { return nil }
            if let s = e as? SomniError { return s.reason }
            if let p = e as? POSIXError { return text(errno: p.code.rawValue) }
            let n = e as NSError
            if n.domain == NSPOSIXErrorDomain { return text(errno: Int32(truncatingIfNeeded: n.code)) }
            current = n.userInfo[NSUnderlyingErrorKey] as? any Error
        }
        return nil
    }

    private static func text(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
