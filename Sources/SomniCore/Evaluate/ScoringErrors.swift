import Foundation

/// One place where a night's event score was lost: a scored reference no found event matched,
/// or a found event that matched none. An F1 says how much was lost; these say how (missed
/// whole, found late, split in two, …), which is what decides what to change.
public struct ScoringError: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// No found event overlaps the reference.
        case missed
        /// One found event overlaps it, starting outside the onset collar (found late or early).
        case onset
        /// One found event overlaps it and starts within the collar, but ends outside the offset
        /// tolerance, or is matched to another reference.
        case offset
        /// Two or more found events overlap it, none of them within the rules.
        case split
        /// A found event that overlaps no reference.
        case falseEvent = "false"
        /// A found event that overlaps only references already matched to other found events
        /// (a second piece of one sound).
        case extra
    }

    public var eventClass: EventClass
    public var kind: Kind
    /// The scored reference (an episode, for snoring under the default protocol), or the found
    /// event for `false` and `extra`.
    public var start: Double
    public var end: Double
    /// The found events overlapping the reference, in order (empty for `missed`, `false`, `extra`).
    public var found: [TimeRange]
    /// The first overlapping found event's start less the reference's start, whenever one overlaps.
    public var onsetError: Double?
}

extension Evaluator {
    /// Every scoring error of every class, with `evaluate`'s units and one-to-one matching, in
    /// class order and then by time.
    public static func scoringErrors(reference: [ReferenceEvent], found: [ReferenceEvent],
                                     protocol rules: EvaluationProtocol = .somniDefault) -> [ScoringError] {
        var errors: [ScoringError] = []
        for eventClass in EventClass.allCases {
            let settings = rules.settings(for: eventClass)
            let units = scoringUnits(reference, of: eventClass, settings: settings).units
            let foundUnits = scoringUnits(found, of: eventClass, settings: settings).units
            let matching = eventMatching(reference: units, found: foundUnits, settings: settings)
            var matchedFound = Set(matching.compactMap { $0 })
            func overlapping(_ e: ReferenceEvent, in events: [ReferenceEvent]) -> [Int] {
                events.indices.filter { events[$0].start < e.end && e.start < events[$0].end }
            }
            var classErrors: [ScoringError] = []
            for (r, unit) in units.enumerated() where matching[r] == nil {
                let near = overlapping(unit, in: foundUnits)
                let kind: ScoringError.Kind
                switch near.count {
                case 0: kind = .missed
                case 1: kind = abs(foundUnits[near[0]].start - unit.start) > settings.collar ? .onset : .offset
                default: kind = .split
                }
                matchedFound.formUnion(near)  // shown with this reference, not again on its own
                classErrors.append(ScoringError(
                    eventClass: eventClass, kind: kind, start: unit.start, end: unit.end,
                    found: near.map { TimeRange(start: foundUnits[$0].start, end: foundUnits[$0].end) },
                    onsetError: near.first.map { foundUnits[$0].start - unit.start }))
            }
            for (f, event) in foundUnits.enumerated() where !matchedFound.contains(f) {
                classErrors.append(ScoringError(
                    eventClass: eventClass, kind: overlapping(event, in: units).isEmpty ? .falseEvent : .extra,
                    start: event.start, end: event.end, found: [], onsetError: nil))
            }
            errors += classErrors.sorted { $0.start < $1.start }
        }
        return errors
    }
}

extension ScoringError {
    /// One line a person reads.
    var line: String {
        var text = eventClass.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)
            + kind.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
            + String(format: "%9.1f–%.1f s", start, end)
        if !found.isEmpty {
            text += "  found " + found.map { String(format: "%.1f–%.1f", $0.start, $0.end) }.joined(separator: ", ")
        }
        if let onsetError { text += String(format: " (onset %+.1f s)", onsetError) }
        return text
    }
}
