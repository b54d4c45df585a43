import Foundation

/// How one class is scored.
public struct ClassProtocol: Sendable, Equatable, Codable {
    /// A found event matches a reference when its onset is within this many seconds, and its offset
    /// within max(collar, `offsetShareOfLength` × reference length) (sed_eval's event-based rule).
    public var collar: Double
    /// Segment length in seconds for segment-based scores.
    public var segmentLength: Double
    /// Events of this class closer than this (gap between end and next start, seconds) are merged
    /// into one before event scoring, on both the reference and the found side; nil = no merging.
    public var mergeGap: Double?
    public var offsetShareOfLength: Double

    public init(collar: Double, segmentLength: Double, mergeGap: Double? = nil, offsetShareOfLength: Double = 0.5) {
        self.collar = collar; self.segmentLength = segmentLength
        self.mergeGap = mergeGap; self.offsetShareOfLength = offsetShareOfLength
    }
}

/// The scoring rules for every class.
public struct EvaluationProtocol: Sendable, Equatable {
    public var perClass: [EventClass: ClassProtocol]

    public init(perClass: [EventClass: ClassProtocol]) { self.perClass = perClass }

    /// Somni's default: snoring as episodes (events < 10 s apart merged) with a 3 s collar and
    /// 10 s segments; sleep-talk with a 1 s collar and 1 s segments; single coughs with a 0.5 s
    /// collar and 1 s segments.
    public static let somniDefault = EvaluationProtocol(perClass: [
        .snoring: ClassProtocol(collar: 3, segmentLength: 10, mergeGap: 10),
        .sleepTalk: ClassProtocol(collar: 1, segmentLength: 1),
        .cough: ClassProtocol(collar: 0.5, segmentLength: 1),
    ])

    /// The rules for a class; classes missing from `perClass` fall back to the default's.
    public func settings(for eventClass: EventClass) -> ClassProtocol {
        perClass[eventClass] ?? EvaluationProtocol.somniDefault.perClass[eventClass]
            ?? ClassProtocol(collar: 1, segmentLength: 1)
    }
}
