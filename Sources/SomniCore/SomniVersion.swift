/// Somni's version, written into every night it analyses (`AnalysisSettings.analyser`) so that a
/// figure can be traced to the rules that produced it. Raised whenever what an analysis finds
/// changes (an event rule, a model) and at each release.
public enum SomniVersion {
    public static let current = "0.61"
    /// "somni 0.61", as session.json and `somni --version` say it.
    public static var name: String { "somni \(current)" }
}
