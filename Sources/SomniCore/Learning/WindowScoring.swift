import Foundation

extension CNNClassifier {
    /// Classifies each of `examples` from its centre window, as the trainer's figures are made,
    /// and scores the top label against the example's class. Classes are matched to the
    /// classifier's labels by name, so every class of `data` must be one of them; the figures
    /// are over the classifier's labels, so a label the data lacks still counts when it is
    /// wrongly given.
    public mutating func score(_ data: TrainingSet, examples: [Int]) throws -> ClassificationMetrics {
        let labels = self.labels
        let truthIndex = try data.labels.map { name -> Int in
            guard let i = labels.firstIndex(of: name) else {
                throw SomniError(.badInput, "the class folder '\(name)' is not one of the model's labels "
                                 + "(\(labels.joined(separator: ", "))): a folder must be named after the label it should get")
            }
            return i
        }
        var window = [Float](repeating: 0, count: windowLength), scores = [Float](repeating: 0, count: labels.count)
        var truth: [Int] = [], predicted: [Int] = [], sources: [String] = []
        truth.reserveCapacity(examples.count); predicted.reserveCapacity(examples.count); sources.reserveCapacity(examples.count)
        for i in examples {
            window.withUnsafeMutableBufferPointer { data.window(of: i, position: 0.5, into: $0) }
            window.withUnsafeBufferPointer { w in scores.withUnsafeMutableBufferPointer { classify(w, scores: $0) } }
            truth.append(truthIndex[data.examples[i].label])
            predicted.append(scores.indices.max { scores[$0] < scores[$1] }!)
            sources.append(data.examples[i].stratum)
        }
        return ClassificationMetrics(labels: labels, truth: truth, predicted: predicted, sources: sources)
    }
}
