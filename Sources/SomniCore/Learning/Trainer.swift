import Foundation

/// The default architecture: a 3×3 convolution, then three depthwise-separable blocks
/// (MobileNet-style) with 2×2 max-pooling, an average over time that keeps frequency, dropout and
/// one dense layer. About 1.1 M multiply-accumulates per 48 × 40 window with the default widths.
public enum CNNArchitecture {
    /// `channels`: the widths of the first convolution and of the three blocks.
    public static func standard(classes: Int, channels c: [Int] = [16, 32, 64, 128]) -> [LayerSpec] {
        // Pooling before ReLU gives the same values (both are monotone) for a quarter of the work.
        [.conv3x3(channels: c[0]), .maxPool2, .relu,
         .depthwise3x3, .pointwise(channels: c[1]), .maxPool2, .relu,
         .depthwise3x3, .pointwise(channels: c[2]), .maxPool2, .relu,
         .depthwise3x3, .pointwise(channels: c[3]), .relu,
         .timeAveragePool, .dropout(rate: 0.3), .dense(outputs: classes)]
    }
}

public struct TrainingOptions: Sendable {
    public var name = "somni-cnn v1"
    public var seed: UInt64 = 1
    public var maxEpochs = 50
    /// Stop after this many epochs without a better validation loss.
    public var patience = 10
    public var batchSize = 32
    public var learningRate: Float = 0.003
    public var weightDecay: Float = 1e-4
    /// Examples drawn per class per epoch (class-balanced, with repeats for small classes).
    public var examplesPerClass = 600
    public var labelSmoothing: Float = 0.05
    /// Validation, early stopping and the saved model use an exponential moving average of the
    /// weights with this decay per batch (nil: the weights themselves). Validation loss of the
    /// raw weights swings by a quarter from one epoch to the next; the average is steadier and
    /// generalises better.
    public var weightAveraging: Float? = 0.999
    public var threads = 2
    public var features = FeatureSettings.standard
    /// nil: `CNNArchitecture.standard` for the number of classes.
    public var layers: [LayerSpec]?
    /// Noise mixing, gain, time shift and spectrogram masks on training examples.
    public var augment = true
    public var backgroundProbability: Float = 0.8
    public var signalToNoise: ClosedRange<Float> = -3...25
    public var gainDecibels: ClosedRange<Float> = -20...6
    /// For half the examples at least a window long: how far (share of a window) the window may
    /// slide past the example's ends, so partial events are learnt too.
    public var overhang: Float = 0.35
    /// How often a second example of the same class is added, at this level (dB) against the
    /// first: a window of two words is speech, of two noises other, which single clips never show.
    public var sameClassMixProbability: Float = 0.3
    public var sameClassMixDecibels: ClosedRange<Float> = -12...0
    /// The share of training examples cut off above a random frequency in `bandLimitHz`, after
    /// the background is mixed in, as a recording made at 8–16 kHz holds nothing above half its
    /// rate. Drawn from a random stream of its own, so at 0 training is exactly as without it.
    public var bandLimitProbability: Float = 0
    public var bandLimitHz: ClosedRange<Float> = 3_400...7_000
    /// Fit a bias per class on validation (with the temperature) so scores reflect how often
    /// each class really occurs rather than the balanced batches.
    public var calibrateClassBias = true
    public init() {}
}

/// One epoch's figures, for progress lines.
public struct EpochReport: Codable, Sendable {
    public var epoch: Int
    public var learningRate: Float
    public var trainLoss: Float
    public var trainAccuracy: Float
    public var validationLoss: Float?
    public var validationAccuracy: Float?
    public var seconds: Double
}

/// Accuracy, a confusion matrix and per-class precision / recall / F1 for one split, each share
/// with its 95 % Wilson score interval: a few hundred windows cannot tell 0.94 from 0.95, and the
/// figures should say so.
public struct ClassificationMetrics: Codable, Sendable {
    public struct PerClass: Codable, Sendable {
        public var label: String
        /// nil where nothing was predicted as this class (precision), where none is it (recall),
        /// or both (F1): 0 ÷ 0 is no figure, and a 0 there would read as a class always missed.
        public var precision: Double?, recall: Double?, f1: Double?
        public var support: Int
        /// [low, high]; nil where nothing was predicted as (precision) or is (recall) this class,
        /// and in reports written before intervals were given.
        public var precisionInterval: [Double]?
        public var recallInterval: [Double]?
        /// This class against all the others together: a window is right when it is the class
        /// and was called it, or is not and was not (Khan's snoring against non-snoring).
        public var againstTheRest: Double?
        public var againstTheRestInterval: [Double]?
    }
    public struct PerSource: Codable, Sendable {
        public var source: String
        public var accuracy: Double
        public var count: Int
    }
    public var count: Int
    public var accuracy: Double
    public var accuracyInterval: [Double]?
    /// confusion[truth][predicted]
    public var confusion: [[Int]]
    public var classes: [PerClass]
    /// Accuracy per class sub-folder ("snoring", "other/khan-no-snoring").
    public var sources: [PerSource]

    public init(labels: [String], truth: [Int], predicted: [Int], sources: [String]) {
        let k = labels.count
        var confusion = [[Int]](repeating: [Int](repeating: 0, count: k), count: k)
        for (t, p) in zip(truth, predicted) { confusion[t][p] += 1 }
        self.confusion = confusion
        count = truth.count
        let correct = (0..<k).reduce(0) { $0 + confusion[$1][$1] }
        accuracy = count == 0 ? 0 : Double(correct) / Double(count)
        accuracyInterval = Self.wilsonInterval(successes: correct, trials: count)
        let total = count
        classes = (0..<k).map { c in
            let tp = confusion[c][c]
            let predictedC = (0..<k).reduce(0) { $0 + confusion[$1][c] }
            let actual = confusion[c].reduce(0, +)
            let precision = predictedC == 0 ? nil : Double(tp) / Double(predictedC)
            let recall = actual == 0 ? nil : Double(tp) / Double(actual)
            // 2·TP / (2·TP + FP + FN), as `evaluate` scores events: 0 when the class was only
            // missed or only called wrongly, no figure when it was neither there nor called.
            let f1 = actual + predictedC == 0 ? nil : 2 * Double(tp) / Double(actual + predictedC)
            // Wrong against the rest: this class called something else, or something else called it.
            let rightAgainstRest = total - (actual - tp) - (predictedC - tp)
            return PerClass(label: labels[c], precision: precision, recall: recall, f1: f1, support: actual,
                            precisionInterval: Self.wilsonInterval(successes: tp, trials: predictedC),
                            recallInterval: Self.wilsonInterval(successes: tp, trials: actual),
                            againstTheRest: total == 0 ? nil : Double(rightAgainstRest) / Double(total),
                            againstTheRestInterval: Self.wilsonInterval(successes: rightAgainstRest, trials: total))
        }
        var bySource: [String: (Int, Int)] = [:]
        for i in truth.indices { bySource[sources[i], default: (0, 0)].0 += truth[i] == predicted[i] ? 1 : 0; bySource[sources[i], default: (0, 0)].1 += 1 }
        self.sources = bySource.keys.sorted().map { s in
            PerSource(source: s, accuracy: Double(bySource[s]!.0) / Double(bySource[s]!.1), count: bySource[s]!.1)
        }
    }

    /// The 95 % Wilson score interval of a share of `successes` in `trials`, as [low, high]; nil
    /// without trials. Unlike the normal approximation it stays inside 0…1 and is not empty at
    /// 0 or 1 of n, where the figures here often sit.
    public static func wilsonInterval(successes: Int, trials: Int) -> [Double]? {
        guard trials > 0 else { return nil }
        let z = 1.959964, n = Double(trials), p = Double(successes) / n
        let centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        let half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)).squareRoot()
        return [max(0, centre - half), min(1, centre + half)]
    }

    /// A table for the terminal: each share followed by its 95 % interval.
    public func formatted(labels: [String]) -> String {
        func share(_ value: Double?, _ interval: [Double]?) -> String {
            guard let value, let interval, interval.count == 2 else { return "–".padding(toLength: 20, withPad: " ", startingAt: 0) }
            return String(format: "%.3f (%.3f–%.3f)", value, interval[0], interval[1]).padding(toLength: 20, withPad: " ", startingAt: 0)
        }
        // Columns as wide as the longest label: names cut short could not be told apart.
        let width = max(12, (labels + classes.map(\.label)).map(\.count).max() ?? 0)
        var s = "accuracy " + share(accuracy, accuracyInterval).trimmingCharacters(in: .whitespaces) + " over \(count) windows (95 % intervals)\n"
        s += "class".padding(toLength: width, withPad: " ", startingAt: 0) + " precision            recall               F1     support  against the rest\n"
        for c in classes {
            s += c.label.padded(to: width) + " " + share(c.precision, c.precisionInterval) + " "
                + share(c.recall, c.recallInterval) + " "
                + (c.f1.map { String(format: "%.3f", $0) } ?? "–    ")
                + String(format: "  %-7d  ", c.support)
                + share(c.againstTheRest, c.againstTheRestInterval).trimmingCharacters(in: .whitespaces) + "\n"
        }
        s += "confusion (rows truth, columns predicted: \(labels.joined(separator: ", ")))\n"
        for (i, row) in confusion.enumerated() {
            s += "  " + labels[i].padded(to: width) + row.map { String(format: "%6d", $0) }.joined() + "\n"
        }
        s += "by source:\n"
        for src in sources { s += String(format: "  %@ accuracy %.4f (%d)\n", src.source, src.accuracy, src.count) }
        return s
    }
}

public struct TrainingReport: Codable, Sendable {
    public var labels: [String]
    public var seed: UInt64
    public var epochs: [EpochReport]
    public var bestEpoch: Int
    public var seconds: Double
    public var temperature: Float
    /// Per-class logit offsets fitted on validation and folded into the last layer's bias.
    public var classBias: [Float]?
    public var parameterCount: Int
    public var multiplyAccumulates: Int
    public var train: ClassificationMetrics
    public var validation: ClassificationMetrics?
    public var test: ClassificationMetrics?
}

/// Trains a CNNClassifier model: Adam with class-balanced batches split across threads,
/// augmentation on the fly, early stopping on validation loss, temperature calibration.
/// Seeded: every random draw comes from a generator seeded by (seed, epoch, position), and
/// per-thread gradients are summed in a fixed order, so a run is reproducible.
public final class Trainer {
    public let data: TrainingSet
    public let options: TrainingOptions
    let backgrounds: [[Float]]
    let trainIndices: [Int], validationIndices: [Int], testIndices: [Int]
    /// Training examples of each class, for same-class mixing.
    let trainByClass: [[Int]]
    let network: Network
    private var workers: [Worker] = []

    public init(data: TrainingSet, train: [Int], validation: [Int], test: [Int], backgrounds: [[Float]], options: TrainingOptions) throws {
        guard !train.isEmpty else { throw SomniError(.badInput, "there are no training examples") }
        for c in data.labels.indices where !train.contains(where: { data.examples[$0].label == c }) {
            throw SomniError(.badInput, "class '\(data.labels[c])' has no training examples")
        }
        try options.features.validate()
        // A batch of 0 never ends an epoch, and a negative one traps on its slice.
        guard options.batchSize > 0, options.examplesPerClass > 0 else {
            throw SomniError(.badInput, "batch size and examples per class must be positive, got \(options.batchSize) and \(options.examplesPerClass)")
        }
        self.data = data; self.options = options
        self.backgrounds = backgrounds.filter { $0.count >= options.features.windowLength }
        trainIndices = train; validationIndices = validation; testIndices = test
        trainByClass = data.labels.indices.map { c in train.filter { data.examples[$0].label == c } }
        let layers = options.layers ?? CNNArchitecture.standard(classes: data.labels.count)
        network = try Network(input: options.features.inputShape, layers: layers)
        guard network.outputShape.count == data.labels.count else {
            throw SomniError(.badInput, "the architecture has \(network.outputShape.count) outputs for \(data.labels.count) classes")
        }
        workers = try (0..<max(options.threads, 1)).map { _ in try Worker(network: network, features: options.features) }
    }

    public func train(progress: (EpochReport) -> Void = { _ in }) throws -> (model: CNNModel, report: TrainingReport) {
        let started = Date()
        let o = options
        // Centred, unaugmented features of every split, computed once.
        let trainFeatures = features(trainIndices), validationFeatures = features(validationIndices)
        let (mean, deviation) = bandStatistics(trainFeatures, settings: o.features)
        var model = try CNNModel(name: o.name, labels: data.labels, features: o.features, bandMean: mean, bandDeviation: deviation,
                                 layers: network.layers.map(\.spec), seed: o.seed)
        let validationInputs = normalised(validationFeatures, model)
        var adam = Adam(count: network.parameterCount)
        var best = (loss: Float.infinity, epoch: 0, parameters: model.parameters)
        var average = model.parameters, steps = 0
        var epochs: [EpochReport] = []
        // Within a class each source folder gets the same share of an epoch, so a large source
        // (CoughSeg's no-cough recordings) cannot crowd out a small one.
        let byClass = data.labels.indices.map { c in
            Dictionary(grouping: trainIndices.filter { data.examples[$0].label == c }) { data.examples[$0].stratum }
                .sorted { $0.key < $1.key }.map(\.value)
        }

        for epoch in 1...max(o.maxEpochs, 1) {
            let epochStart = Date()
            var rng = SeededRandom(seed: o.seed &* 0x9E37_79B9 &+ UInt64(epoch))
            var order: [Int] = []
            for sources in byClass {
                // A class drawn from many sources ("other") gets more examples: √sources shares.
                let quota = Int((Double(o.examplesPerClass) * Double(sources.count).squareRoot()).rounded())
                for (n, members) in sources.enumerated() {
                    let share = quota / sources.count + (n < quota % sources.count ? 1 : 0)
                    var pool = members.shuffled(using: &rng)
                    while pool.count < share { pool += members.shuffled(using: &rng) }
                    order += pool.prefix(share)
                }
            }
            order.shuffle(using: &rng)
            let progressShare = Float(epoch - 1) / Float(max(o.maxEpochs - 1, 1))
            let rate = o.learningRate * (0.05 + 0.95 * 0.5 * (1 + cos(Float.pi * progressShare)))
            var lossSum: Float = 0, correct = 0
            var batchStart = 0
            while batchStart < order.count {
                let batch = Array(order[batchStart..<min(batchStart + o.batchSize, order.count)])
                let seedBase = o.seed ^ (UInt64(epoch) << 40) ^ (UInt64(batchStart) << 8)
                let (loss, right) = step(batch, model: model, seedBase: seedBase)
                lossSum += loss; correct += right
                model.parameters.withUnsafeMutableBufferPointer { p in
                    workers[0].gradients.withUnsafeBufferPointer { g in
                        adam.update(p, gradients: g, rate: rate, weightDecay: o.weightDecay)
                    }
                    if let longRun = o.weightAveraging {
                        // Shorter memory while few steps have been taken, so short runs average too.
                        steps += 1
                        let decay = min(longRun, Float(1 + steps) / Float(10 + steps))
                        average.withUnsafeMutableBufferPointer { a in
                            for i in 0..<a.count { a[i] += (1 - decay) * (p[i] - a[i]) }
                        }
                    }
                }
                batchStart += o.batchSize
            }
            var report = EpochReport(epoch: epoch, learningRate: rate, trainLoss: lossSum / Float(order.count),
                                     trainAccuracy: Float(correct) / Float(order.count), validationLoss: nil, validationAccuracy: nil,
                                     seconds: Date().timeIntervalSince(epochStart))
            var candidate = model
            if o.weightAveraging != nil { candidate.parameters = average }
            if !validationIndices.isEmpty {
                let logits = self.logits(validationInputs, count: validationIndices.count, model: candidate)
                let (loss, accuracy) = lossAndAccuracy(logits, truth: validationIndices.map { data.examples[$0].label }, temperature: 1)
                report.validationLoss = loss; report.validationAccuracy = accuracy
                if loss < best.loss { best = (loss, epoch, candidate.parameters) }
            } else {
                best = (report.trainLoss, epoch, candidate.parameters)
            }
            report.seconds = Date().timeIntervalSince(epochStart)
            epochs.append(report)
            progress(report)
            if epoch - best.epoch >= o.patience { break }
        }
        model.parameters = best.parameters

        // Calibrate on validation, then measure every split.
        var classBias: [Float]?
        if !validationIndices.isEmpty {
            let truth = validationIndices.map { data.examples[$0].label }
            var logits = self.logits(validationInputs, count: validationIndices.count, model: model)
            if o.calibrateClassBias, let last = network.layers.last, case .dense = last.spec {
                // Batches were class-balanced; validation holds the classes as the data does (mostly
                // "other", like a night). A bias per class, folded into the last layer, restores that.
                let bias = fitClassBias(logits, truth: truth, temperature: fitTemperature(logits, truth: truth))
                let offset = last.parameterOffset + last.weightCount
                for c in bias.indices { model.parameters[offset + c] += bias[c] }
                for i in logits.indices { logits[i] += bias[i % bias.count] }
                classBias = bias
            }
            model.temperature = fitTemperature(logits, truth: truth)
        }
        let trainMetrics = metrics(trainIndices, inputs: normalised(trainFeatures, model), model: model)
        let validationMetrics = validationIndices.isEmpty ? nil : metrics(validationIndices, inputs: validationInputs, model: model)
        let testMetrics = testIndices.isEmpty ? nil : metrics(testIndices, inputs: normalised(features(testIndices), model), model: model)
        try model.validate()
        let report = TrainingReport(labels: data.labels, seed: o.seed, epochs: epochs, bestEpoch: best.epoch,
                                    seconds: Date().timeIntervalSince(started), temperature: model.temperature, classBias: classBias,
                                    parameterCount: network.parameterCount, multiplyAccumulates: network.multiplyAccumulates,
                                    train: trainMetrics, validation: validationMetrics, test: testMetrics)
        return (model, report)
    }

    /// Measures a trained model on examples of this data set (centred windows, no augmentation).
    public func evaluate(_ model: CNNModel, examples indices: [Int]) -> ClassificationMetrics {
        metrics(indices, inputs: normalised(features(indices), model), model: model)
    }

    // MARK: One batch

    /// Forward and backward over a batch split across the workers; leaves the summed gradient in
    /// `workers[0].gradients` and returns the summed loss and the number right.
    private func step(_ batch: [Int], model: CNNModel, seedBase: UInt64) -> (Float, Int) {
        let threads = workers.count
        let share = (batch.count + threads - 1) / threads
        let scale = 1 / Float(batch.count)
        let context = WorkerContext(trainer: self, model: model)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            let w = context.trainer.workers[t]
            w.reset()
            let lo = min(t * share, batch.count), hi = min(lo + share, batch.count)
            for (k, index) in batch[lo..<hi].enumerated() {
                w.trainOn(index, data: context.trainer.data, model: context.model!, backgrounds: context.trainer.backgrounds,
                          sameClass: context.trainer.trainByClass, options: context.trainer.options,
                          seed: seedBase &+ UInt64(lo + k) &* 0x2545_F491_4F6C_DD1D, gradientScale: scale)
            }
        }
        var loss: Float = 0, right = 0
        for (t, w) in workers.enumerated() {
            loss += w.loss; right += w.correct
            if t > 0 {
                workers[0].gradients.withUnsafeMutableBufferPointer { g0 in
                    w.gradients.withUnsafeBufferPointer { g in for i in 0..<g.count { g0[i] += g[i] } }
                }
            }
        }
        return (loss, right)
    }

    // MARK: Features and evaluation

    private func features(_ indices: [Int]) -> [Float] {
        let n = network.inputShape.count
        let out = SharedFloats(count: indices.count * n)
        let context = WorkerContext(trainer: self, model: nil)
        parallel(indices.count) { t, i in
            let w = context.trainer.workers[t]
            w.window.withUnsafeMutableBufferPointer { context.trainer.data.window(of: indices[i], position: 0.5, into: $0) }
            w.window.withUnsafeBufferPointer { w.extractor.extract($0, into: UnsafeMutableBufferPointer(start: out.pointer + i * n, count: n)) }
        }
        return out.array
    }

    private func normalised(_ features: [Float], _ model: CNNModel) -> [Float] {
        var copy = features
        copy.withUnsafeMutableBufferPointer { normalise($0, model: model) }
        return copy
    }

    /// Mean and deviation of each band of each channel over all frames of `features`.
    private func bandStatistics(_ features: [Float], settings: FeatureSettings) -> ([Float], [Float]) {
        let bands = settings.melBands, plane = settings.frameCount * bands, n = settings.channels * bands
        var sum = [Double](repeating: 0, count: n), square = [Double](repeating: 0, count: n)
        for p in 0..<(features.count / plane) {
            let first = settings.statisticsOffset(plane: p)
            for i in p * plane..<(p + 1) * plane {
                let s = first + i % bands, v = Double(features[i])
                sum[s] += v; square[s] += v * v
            }
        }
        let count = Double(max(features.count / n, 1))
        let mean = sum.map { $0 / count }
        let deviation = zip(square, mean).map { max(($0 / count - $1 * $1).squareRoot(), 1e-3) }
        return (mean.map(Float.init), deviation.map(Float.init))
    }

    /// Logits of normalised inputs, computed on all workers.
    private func logits(_ inputs: [Float], count: Int, model: CNNModel) -> [Float] {
        let n = network.inputShape.count, k = data.labels.count
        let out = SharedFloats(count: count * k)
        let context = WorkerContext(trainer: self, model: model)
        inputs.withUnsafeBufferPointer { src in
            let source = SendablePointer(src.baseAddress!)
            parallel(count) { t, i in
                let ws = context.trainer.workers[t].workspace
                ws.input.baseAddress!.update(from: source.pointer + i * n, count: n)
                context.model!.parameters.withUnsafeBufferPointer { context.model!.network.forward($0.baseAddress!, ws) }
                (out.pointer + i * k).update(from: ws.output.baseAddress!, count: k)
            }
        }
        return out.array
    }

    private func metrics(_ indices: [Int], inputs: [Float], model: CNNModel) -> ClassificationMetrics {
        let k = data.labels.count
        let z = logits(inputs, count: indices.count, model: model)
        let predicted = (0..<indices.count).map { i in (0..<k).max { z[i * k + $0] < z[i * k + $1] }! }
        return ClassificationMetrics(labels: data.labels, truth: indices.map { data.examples[$0].label }, predicted: predicted,
                                     sources: indices.map { data.examples[$0].stratum })
    }

    private func lossAndAccuracy(_ logits: [Float], truth: [Int], temperature: Float) -> (Float, Float) {
        let k = data.labels.count
        var loss: Double = 0, right = 0
        for (i, t) in truth.enumerated() {
            let row = logits[(i * k)..<(i * k + k)].map { $0 / temperature }
            let top = row.max()!
            let logSum = log(row.reduce(0) { $0 + exp(Double($1 - top)) }) + Double(top)
            loss += logSum - Double(row[t])
            if row.firstIndex(of: top) == t { right += 1 }
        }
        return (Float(loss / Double(max(truth.count, 1))), Float(right) / Float(max(truth.count, 1)))
    }

    /// Per-class logit offsets (mean zero) that minimise validation negative log-likelihood at
    /// `temperature`, by gradient descent. Only the classes validation holds are fitted: for a
    /// class it has no example of, the fit could only push its offset down, and the model would
    /// then hardly ever say it (test recall 0.80 → 0.05 in one run). Such a class keeps 0, the
    /// others' mean.
    private func fitClassBias(_ logits: [Float], truth: [Int], temperature: Float) -> [Float] {
        let k = data.labels.count, n = truth.count
        // In index order: a Set's order changes from process to process, and so would the sums.
        let held = Array(Set(truth)).sorted()
        var bias = [Float](repeating: 0, count: k)
        var p = [Float](repeating: 0, count: k)
        for _ in 0..<300 {
            var gradient = [Float](repeating: 0, count: k)
            for (i, t) in truth.enumerated() {
                let row = (0..<k).map { (logits[i * k + $0] + bias[$0]) / temperature }
                let top = row.max()!
                var total: Float = 0
                for c in 0..<k { p[c] = exp(row[c] - top); total += p[c] }
                for c in 0..<k { gradient[c] += (p[c] / total - (c == t ? 1 : 0)) / (temperature * Float(n)) }
            }
            for c in held { bias[c] -= 2 * gradient[c] }
            let mean = held.reduce(0) { $0 + bias[$1] } / Float(held.count)
            for c in held { bias[c] -= mean }
        }
        return bias
    }

    /// The temperature that minimises validation negative log-likelihood (golden-section search on log T).
    private func fitTemperature(_ logits: [Float], truth: [Int]) -> Float {
        var a = log(Float(0.2)), b = log(Float(10))
        let ratio = Float((5.0.squareRoot() - 1) / 2)
        func nll(_ x: Float) -> Float { lossAndAccuracy(logits, truth: truth, temperature: exp(x)).0 }
        for _ in 0..<40 {
            let c = b - ratio * (b - a), d = a + ratio * (b - a)
            if nll(c) < nll(d) { b = d } else { a = c }
        }
        return exp((a + b) / 2)
    }

    /// Runs `body(thread, item)` for items 0..<count, item i on thread i % threads.
    private func parallel(_ count: Int, _ body: @Sendable (Int, Int) -> Void) {
        let threads = workers.count
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            var i = t
            while i < count { body(t, i); i += threads }
        }
    }
}

/// What concurrent workers read; each writes only its own worker and output slots.
private struct WorkerContext: @unchecked Sendable {
    let trainer: Trainer
    let model: CNNModel?
}

private struct SendablePointer: @unchecked Sendable {
    let pointer: UnsafePointer<Float>
    init(_ p: UnsafePointer<Float>) { pointer = p }
}

/// A float buffer that concurrent workers fill at disjoint indices.
private final class SharedFloats: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Float>
    let count: Int
    init(count: Int) {
        self.count = count
        pointer = .allocate(capacity: max(count, 1))
        pointer.initialize(repeating: 0, count: max(count, 1))
    }
    deinit { pointer.deallocate() }
    var array: [Float] { Array(UnsafeBufferPointer(start: pointer, count: count)) }
}

/// One thread's extractor, workspace, window and gradient accumulator.
final class Worker: @unchecked Sendable {
    let extractor: LogMelExtractor
    let workspace: NetworkWorkspace
    let network: Network
    var window: [Float]
    /// The second example of same-class mixing.
    var partner: [Float]
    var gradients: [Float]
    var probabilities: [Float]
    var loss: Float = 0
    var correct = 0

    init(network: Network, features: FeatureSettings) throws {
        self.network = network
        extractor = try LogMelExtractor(settings: features)
        workspace = NetworkWorkspace(network)
        window = [Float](repeating: 0, count: features.windowLength)
        partner = window
        gradients = [Float](repeating: 0, count: network.parameterCount)
        probabilities = [Float](repeating: 0, count: network.outputShape.count)
    }

    func reset() {
        for i in gradients.indices { gradients[i] = 0 }
        loss = 0; correct = 0
    }

    func trainOn(_ index: Int, data: TrainingSet, model: CNNModel, backgrounds: [[Float]], sameClass: [[Int]],
                 options o: TrainingOptions, seed: UInt64, gradientScale: Float) {
        var rng = SeededRandom(seed: seed)
        let e = data.examples[index]
        let position = o.augment ? rng.nextUnit() : 0.5
        let overhang = o.augment && rng.nextUnit() < 0.5 ? o.overhang : 0
        window.withUnsafeMutableBufferPointer { data.window(of: index, position: position, overhang: overhang, into: $0) }
        if o.augment {
            let members = sameClass[e.label]
            if !members.isEmpty, rng.nextUnit() < o.sameClassMixProbability {
                let other = members[Int(rng.next() % UInt64(members.count))]
                let position = rng.nextUnit()
                partner.withUnsafeMutableBufferPointer { data.window(of: other, position: position, overhang: o.overhang, into: $0) }
                let decibels = rng.nextUniform(o.sameClassMixDecibels)
                partner.withUnsafeBufferPointer { p in window.withUnsafeMutableBufferPointer { Self.mix(p, into: $0, decibels: decibels) } }
            }
            augment(backgrounds: backgrounds, options: o, rng: &rng)
            if o.bandLimitProbability > 0 {
                var bandRNG = SeededRandom(seed: seed ^ 0xBA4D_11A1_7ED0_0000)
                if bandRNG.nextUnit() < o.bandLimitProbability {
                    let cutoff = bandRNG.nextUniform(o.bandLimitHz)
                    window.withUnsafeMutableBufferPointer { Self.lowPass($0, cutoff: cutoff) }
                }
            }
        }
        let input = workspace.input
        window.withUnsafeBufferPointer { extractor.extract($0, into: input) }
        normalise(input, model: model)
        if o.augment { maskSpectrogram(input, settings: o.features, rng: &rng) }
        workspace.random = SeededRandom(seed: rng.next())
        model.parameters.withUnsafeBufferPointer { network.forward($0.baseAddress!, workspace, training: true) }

        // Softmax cross-entropy against label-smoothed targets; its gradient is p − q.
        let k = probabilities.count
        probabilities.withUnsafeMutableBufferPointer { Softmax.apply(UnsafeBufferPointer(workspace.output), temperature: 1, into: $0) }
        let offTarget = o.labelSmoothing / Float(k)
        var best = 0
        let g = workspace.outputGradient
        for c in 0..<k {
            let q = (c == e.label ? 1 - o.labelSmoothing : 0) + offTarget
            loss -= q * log(max(probabilities[c], 1e-12))
            g[c] = (probabilities[c] - q) * gradientScale
            if probabilities[c] > probabilities[best] { best = c }
        }
        if best == e.label { correct += 1 }
        model.parameters.withUnsafeBufferPointer { p in
            gradients.withUnsafeMutableBufferPointer { network.backward(p.baseAddress!, workspace, gradients: $0.baseAddress!) }
        }
    }

    /// Cuts `window` off above `cutoff` Hz with an 8th-order Butterworth low-pass.
    static func lowPass(_ window: UnsafeMutableBufferPointer<Float>, cutoff: Float) {
        for q in Biquad.butterworth8Qs {
            var section = Biquad.lowPass(cutoff: Double(cutoff), q: q, sampleRate: Double(analysisSampleRate))
            section.process(window)
        }
    }

    /// Adds `partner` to `window` with its RMS `decibels` against the window's (at the
    /// partner's own level when the window is silent).
    static func mix(_ partner: UnsafeBufferPointer<Float>, into window: UnsafeMutableBufferPointer<Float>, decibels: Float) {
        var energy: Float = 0, partnerEnergy: Float = 0
        for i in 0..<window.count { energy += window[i] * window[i]; partnerEnergy += partner[i] * partner[i] }
        guard partnerEnergy > 0 else { return }
        let scale = energy > 0 ? (energy / partnerEnergy).squareRoot() * pow(10, decibels / 20) : 1
        for i in 0..<window.count { window[i] += scale * partner[i] }
    }

    /// Random gain, then (usually) a background bed mixed in at a random signal-to-noise ratio.
    private func augment(backgrounds: [[Float]], options o: TrainingOptions, rng: inout SeededRandom) {
        let n = window.count
        let gain = pow(10, rng.nextUniform(o.gainDecibels) / 20)
        var energy: Float = 0
        for i in 0..<n { window[i] *= gain; energy += window[i] * window[i] }
        guard !backgrounds.isEmpty, rng.nextUnit() < o.backgroundProbability else { return }
        let bed = backgrounds[Int(rng.next() % UInt64(backgrounds.count))]
        let offset = Int(rng.next() % UInt64(bed.count - n + 1))
        var bedEnergy: Float = 0
        for i in 0..<n { bedEnergy += bed[offset + i] * bed[offset + i] }
        guard bedEnergy > 0 else { return }
        let signalRMS = (energy / Float(n)).squareRoot(), bedRMS = (bedEnergy / Float(n)).squareRoot()
        // Near-silent examples get the bed at a quiet absolute level instead.
        let targetRMS = signalRMS > 1e-4 ? signalRMS / pow(10, rng.nextUniform(o.signalToNoise) / 20) : pow(10, rng.nextUniform(-60 ... -30) / 20)
        let scale = targetRMS / bedRMS
        for i in 0..<n { window[i] += scale * bed[offset + i] }
    }

    /// SpecAugment-style: one band of frames and one band of mel bands set to the mean (0), in
    /// every channel alike.
    private func maskSpectrogram(_ x: UnsafeMutableBufferPointer<Float>, settings: FeatureSettings, rng: inout SeededRandom) {
        let bands = settings.melBands, frames = settings.frameCount, plane = frames * bands
        if rng.nextUnit() < 0.5 {
            let width = Int(rng.next() % 6), start = Int(rng.next() % UInt64(max(frames - width, 1)))
            for c in 0..<settings.channels {
                for t in start..<min(start + width, frames) { for b in 0..<bands { x[c * plane + t * bands + b] = 0 } }
            }
        }
        if rng.nextUnit() < 0.5 {
            let width = Int(rng.next() % 5), start = Int(rng.next() % UInt64(max(bands - width, 1)))
            for c in 0..<settings.channels {
                for t in 0..<frames { for b in start..<min(start + width, bands) { x[c * plane + t * bands + b] = 0 } }
            }
        }
    }
}

/// Adam with decoupled weight decay (AdamW).
struct Adam {
    var m: [Float], v: [Float]
    var step = 0
    let beta1: Float = 0.9, beta2: Float = 0.999, epsilon: Float = 1e-8

    init(count: Int) {
        m = [Float](repeating: 0, count: count)
        v = [Float](repeating: 0, count: count)
    }

    mutating func update(_ p: UnsafeMutableBufferPointer<Float>, gradients g: UnsafeBufferPointer<Float>, rate: Float, weightDecay: Float) {
        step += 1
        let c1 = 1 - pow(beta1, Float(step)), c2 = 1 - pow(beta2, Float(step))
        for i in 0..<p.count {
            m[i] = beta1 * m[i] + (1 - beta1) * g[i]
            v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i]
            p[i] -= rate * ((m[i] / c1) / ((v[i] / c2).squareRoot() + epsilon) + weightDecay * p[i])
        }
    }
}
