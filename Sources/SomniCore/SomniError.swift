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

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause.map { String(describing: $0) }
    }

    public var description: String { message }
}
