import Foundation

extension CNNClassifier {
    /// Classifies each of `examples` from its centre window, as the trainer's figures are made,
    /// and scores the top label against the example's class. Classes are matched to the
    /// classifier's labels by name, so every class of `data` must be one of them; the figures
    /// are over the classifier's labels, so a label the data lacks still counts when it is
    /// wrongly given.
    public mutating func score(_ data: TrainingSet, examples: [Int]) throws -> ClassificationMetrics {
        try verdicts(data, examples: examples).metrics
    }

    /// Each of `examples` classified as `score` does, unscored: verdicts from several
    /// classifiers of the same labels (one per cross-validation fold) join into one score.
    public mutating func verdicts(_ data: TrainingSet, examples: [Int]) throws -> WindowVerdicts {
        let labels = self.labels
        let truthIndex = try data.labels.map { name -> Int in
            guard let i = labels.firstIndex(of: name) else {
                throw SomniError(.badInput, "the class folder '\(name)' is not one of the model's labels "
                                 + "(\(labels.joined(separator: ", "))): a folder must be named after the label it should get")
            }
            return i
        }
        var window = [Float](repeating: 0, count: windowLength), scores = [Float](repeating: 0, count: labels.count)
        var verdicts = WindowVerdicts(labels: labels)
        verdicts.reserveCapacity(examples.count)
        for i in examples {
            window.withUnsafeMutableBufferPointer { data.window(of: i, position: 0.5, into: $0) }
            window.withUnsafeBufferPointer { w in scores.withUnsafeMutableBufferPointer { classify(w, scores: $0) } }
            verdicts.truth.append(truthIndex[data.examples[i].label])
            verdicts.predicted.append(scores.indices.max { scores[$0] < scores[$1] }!)
            verdicts.sources.append(data.examples[i].stratum)
        }
        return verdicts
    }
}

/// Windows' true classes and top labels, as indices into `labels`, with each one's class sub-folder.
public struct WindowVerdicts: Sendable {
    public let labels: [String]
    public var truth: [Int] = [], predicted: [Int] = [], sources: [String] = []

    public init(labels: [String]) { self.labels = labels }

    mutating func reserveCapacity(_ n: Int) {
        truth.reserveCapacity(n); predicted.reserveCapacity(n); sources.reserveCapacity(n)
    }

    /// `other`'s windows after these; both must be over the same labels, in the same order.
    public mutating func append(_ other: WindowVerdicts) {
        precondition(other.labels == labels, "verdicts over other labels")
        truth += other.truth; predicted += other.predicted; sources += other.sources
    }

    public var metrics: ClassificationMetrics {
        ClassificationMetrics(labels: labels, truth: truth, predicted: predicted, sources: sources)
    }
}
