import Foundation

/// The user's one knob, 1 (strict) … 10 (permissive).
public enum Sensitivity {
    public static let range = 1...10
    public static let standard = 5

    /// The minimum classifier confidence for a window to count: 0.70 at 1 down to 0.25 at 10,
    /// linear (0.05 a step, 0.50 at the default 5). Out-of-range levels are clamped; use
    /// `validated` where the level comes from a user.
    public static func minimumConfidence(_ level: Int) -> Float {
        let clamped = min(max(level, range.lowerBound), range.upperBound)
        return 0.70 - 0.05 * Float(clamped - 1)
    }

    /// The level itself when it is in 1…10; otherwise a `.badInput` error that says so.
    public static func validated(_ level: Int) throws -> Int {
        guard range.contains(level) else {
            throw SomniError(.badInput, "sensitivity must be between 1 and 10, got \(level)")
        }
        return level
    }
}

/// Which classifier labels count as which kind of event: the issue's sets (AudioSet's names),
/// then every spelling a reference may use (`ReferenceCSV.classAliases`: Somni's own class
/// names among them), so that a model trained from folders named `sleep_talk`, `snore` or
/// `coughing` finds its events as one with `speech` does.
public enum ClassSets {
    public static let snoring: Set<String> = ["snoring", "snort"]
    public static let sleepTalk: Set<String> = ["speech", "whispering", "shout", "singing", "babbling"]
    public static let cough: Set<String> = ["cough"]

    /// The event class a label belongs to (case-insensitive), nil for every other sound.
    public static func eventClass(forLabel label: String) -> EventClass? {
        let l = label.lowercased()
        if snoring.contains(l) { return .snoring }
        if sleepTalk.contains(l) { return .sleepTalk }
        if cough.contains(l) { return .cough }
        return ReferenceCSV.classAliases[l]
    }

    /// Every label (lower case, sorted) that belongs to `eventClass`.
    public static func labels(for eventClass: EventClass) -> [String] {
        snoring.union(sleepTalk).union(cough).union(ReferenceCSV.classAliases.keys)
            .filter { self.eventClass(forLabel: $0) == eventClass }.sorted()
    }

    /// The event classes no label of `labels` belongs to: a classifier with these labels can
    /// never find such events (a model trained from folders named `snores` finds no snoring).
    public static func classesUnheard(byLabels labels: [String]) -> [EventClass] {
        let heard = Set(labels.compactMap(eventClass(forLabel:)))
        return EventClass.allCases.filter { !heard.contains($0) }
    }

    /// What a night found with `labels` says when some event class has none: its zeros would
    /// otherwise read as a room quiet of those sounds. nil when every class has a label.
    public static func unheardWarning(labels: [String]) -> String? {
        let unheard = classesUnheard(byLabels: labels)
        guard !unheard.isEmpty else { return nil }
        let names = unheard.map(\.rawValue).joined(separator: " or ")
        let taken = unheard.map { "\($0.rawValue): \(Self.labels(for: $0).joined(separator: ", "))" }.joined(separator: "; ")
        return "the classifier's labels (\(labels.joined(separator: ", "))) include none for \(names), so it can find no \(names) "
            + "events (the labels that count: \(taken))"
    }
}
