import Foundation
import SomniCore

/// `--classifier model|heuristic` and `--model FILE`, shared by the commands that analyse a night.
/// The switch on the concrete type happens here once, so the pipeline stays generic (no
/// existential call per window).
enum ClassifierChoice {
    case heuristic(HeuristicClassifier)
    case learned(CNNClassifier)

    /// The options' lines; `defaultKind` as the command's `parse` is given it.
    static func help(column: Int, defaultKind: String = "model") -> String {
        let model = "model: the learned classifier", heuristic = "heuristic: the band-energy baseline"
        return HelpText.option("--classifier KIND", column: column, defaultKind == "model"
                               ? "\(model) (default); \(heuristic)" : "\(heuristic) (default); \(model)") + "\n"
            + HelpText.option("--model FILE", column: column,
                              "a model made by 'somni train' instead of the shipped one (the default,",
                              "or for a recording made below 16 kHz the narrow-band model); given",
                              "more than once, the first decides the windows it is sure of and the",
                              "others are asked about the rest, their scores averaged")
    }

    /// Reads both options; without `--classifier` the kind is `defaultKind`.
    static func parse(_ a: inout Arguments, defaultKind: String = "model") throws -> (kind: String, modelPaths: [String]) {
        let models = try a.repeatedOption("--model")
        let kind = try a.option("--classifier") ?? (models.isEmpty ? defaultKind : "model")
        guard ["model", "heuristic"].contains(kind) else {
            throw UsageError("--classifier takes 'model' or 'heuristic', not '\(kind)'")
        }
        if kind == "heuristic", !models.isEmpty { throw UsageError("--model goes with --classifier model") }
        return (kind, models)
    }

    /// Without `--model`, a recording made below the analysis rate gets the shipped narrow-band
    /// model. A model with no label for an event class leaves a warning in every night it finds
    /// (`ClassSets.unheardWarning`); `announcingUnheardClasses` also says it now, from `command`,
    /// before a night of recording rather than after it.
    static func make(kind: String, modelPaths: [String], recordedSampleRate: Int? = nil, command: String,
                     announcingUnheardClasses: Bool = false) throws -> ClassifierChoice {
        if kind == "heuristic" { return .heuristic(HeuristicClassifier()) }
        let classifier = try learned(modelPaths: modelPaths, recordedSampleRate: recordedSampleRate)
        if announcingUnheardClasses, let warning = ClassSets.unheardWarning(labels: classifier.labels) {
            printError("somni \(command): warning: \(warning)")
        }
        return .learned(classifier)
    }

    /// The models named by `--model`, or without any the shipped classifier for the recording's rate.
    static func learned(modelPaths: [String], recordedSampleRate: Int?) throws -> CNNClassifier {
        modelPaths.isEmpty ? try CNNClassifier.bundled(forRecordingsAt: recordedSampleRate)
            : try CNNClassifier(contentsOf: modelPaths.map { URL(fileURLWithPath: $0) })
    }

    /// Runs the morning pipeline with whichever classifier was chosen. `watchedUntilSaved`: see
    /// `NightRun.analyze`.
    func analyze(source: some AudioSource, sourceName: String, started: RecordingStart? = nil, sensitivity: Int,
                 destination: URL, showProgress: Bool, keepsClips: Bool = true, watchedUntilSaved: Bool = false) throws -> Session {
        switch self {
        case .heuristic(let c):
            return try NightRun.analyze(source: source, sourceName: sourceName, started: started, classifier: c,
                                        sensitivity: sensitivity, destination: destination, showProgress: showProgress,
                                        keepsClips: keepsClips, watchedUntilSaved: watchedUntilSaved)
        case .learned(let c):
            return try NightRun.analyze(source: source, sourceName: sourceName, started: started, classifier: c,
                                        sensitivity: sensitivity, destination: destination, showProgress: showProgress,
                                        keepsClips: keepsClips, watchedUntilSaved: watchedUntilSaved)
        }
    }
}
