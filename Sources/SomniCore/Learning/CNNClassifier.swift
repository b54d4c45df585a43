import Foundation

/// The learned classifier: log-mel features through a small CNN, softmax scores calibrated by
/// temperature; a window whose level holds steady (`SteadySound`) gives its snoring-class scores
/// to "other", when the model has that label. A value type: copies get their own buffers on
/// first use, so each thread can classify with its own copy, and it is `Sendable` (hand a copy
/// to a task or an audio thread). Classifying a window allocates nothing.
///
/// Several models of the same labels make one classifier that asks for second opinions: the
/// first model decides alone when it is sure of a window (its best score at least
/// `secondOpinionBelow`), and otherwise every model's scores are averaged. Averaging two models
/// trained from different seeds gains what each draw loses (quality log, stop 32), and asking
/// only about the unsure windows keeps a quiet night's cost near one model's.
public struct CNNClassifier: SoundClassifier, Sendable {
    /// Every model, the first one first.
    public let models: [CNNModel]
    /// The first model: its labels and window are the classifier's.
    public var model: CNNModel { models[0] }
    public var labels: [String] { model.labels }
    public var windowLength: Int { model.features.windowLength }
    public var name: String { models.map(\.name).joined(separator: " + ") }
    private var engine: Engine
    private var secondOpinions: [Engine]
    /// Per second opinion: whether it reads the first model's features (and so its log-mel).
    private let readsTheSameFeatures: [Bool]
    private let snoringIndices: [Int], otherIndex: Int?

    /// Below this best score of the first model, the other models are asked too. Set before
    /// measuring, not tuned: 0.9 is sure enough that averaging rarely changes the answer.
    public static let secondOpinionBelow: Float = 0.9

    public init(model: CNNModel) throws {
        try self.init(models: [model])
    }

    /// One classifier of `models`, which must share labels (in order) and window length.
    public init(models: [CNNModel]) throws {
        guard let model = models.first else { throw SomniError(.badModel, "no model was given") }
        for other in models {
            try other.validate()
            guard other.labels == model.labels, other.features.windowLength == model.features.windowLength else {
                throw SomniError(.badModel, "models '\(model.name)' and '\(other.name)' cannot work together: "
                                 + "labels \(model.labels) and \(other.labels), windows of \(model.features.windowLength) "
                                 + "and \(other.features.windowLength) samples")
            }
        }
        self.models = models
        engine = try Engine(model)
        secondOpinions = try models.dropFirst().map { try Engine($0) }
        readsTheSameFeatures = models.dropFirst().map { $0.features == model.features }
        snoringIndices = model.labels.indices.filter { ClassSets.eventClass(forLabel: model.labels[$0]) == .snoring }
        otherIndex = model.labels.firstIndex { $0.lowercased() == "other" }
    }

    /// Loads and validates a model file (`.badModel` / `.io` errors).
    public init(contentsOf url: URL) throws {
        try self.init(model: CNNModel(contentsOf: url))
    }

    /// Loads and validates model files, the first deciding when it is sure (see the type).
    public init(contentsOf urls: [URL]) throws {
        try self.init(models: urls.map { try CNNModel(contentsOf: $0) })
    }

    /// The default classifier shipped with Somni (snoring, speech, cough, other): two models of
    /// one recipe, trained from seeds 2 and 3.
    public static func bundled() throws -> CNNClassifier {
        try CNNClassifier(contentsOf: bundledModelURLs(named: "default"))
    }

    /// The shipped classifier for a recording made at `recordedRate` Hz: below the analysis rate
    /// (an 8 kHz voice memo or telephone recording, which holds nothing above 4 kHz) the model
    /// trained on examples cut off at 3.4–7 kHz, which hears talk and coughs there far better than
    /// the default; otherwise the default.
    public static func bundled(forRecordingsAt recordedRate: Int?) throws -> CNNClassifier {
        try CNNClassifier(contentsOf: bundledModelURLs(named: isNarrowBand(recordedAt: recordedRate) ? "narrow-band" : "default"))
    }

    /// The files of the default classifier, the one that decides alone first.
    public static var bundledModelURLs: [URL] { (try? bundledModelURLs(named: "default")) ?? [] }

    /// `NAME.somnimodel` and, when shipped, its second opinion `NAME-second.somnimodel`.
    private static func bundledModelURLs(named name: String) throws -> [URL] {
        guard let first = bundledModelURL(named: name) else {
            throw SomniError(.badModel, "the \(name) model is missing from this build of Somni: its folder "
                             + "Somni_SomniCore.resources belongs beside the executable, as the build leaves it")
        }
        return [first] + (bundledModelURL(named: name + "-second").map { [$0] } ?? [])
    }

    static func bundledModelURL(named name: String) -> URL? {
        guard let resources = shippedResources else { return nil }
        return resources.url(forResource: name, withExtension: CNNModel.fileExtension)
            ?? resources.url(forResource: name, withExtension: CNNModel.fileExtension, subdirectory: "Resources")
    }

    /// SomniCore's resources (the shipped models), nil where there are none. On Linux SwiftPM's
    /// `Bundle.module` looks beside the executable, then in the build folder, and stops the
    /// program when neither holds them: a `somni` copied away from its build, whose build was
    /// then cleaned, crashed on its first model. So the places are looked at here: beside the
    /// executable as started and as a link leads to it, and this package's own build folders.
    static let shippedResources: Bundle? = {
        #if os(Linux)
        var places: [URL] = [Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL {
            places.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        // Sources/SomniCore/Learning/CNNClassifier.swift, four folders under the package.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        #if DEBUG
        let configurations = ["debug", "release"]
        #else
        let configurations = ["release", "debug"]
        #endif
        places += configurations.map { package.appendingPathComponent(".build/\($0)") }
        if let bundle = resources(among: places) { return bundle }
        // Not Bundle.module: the one place left to it, a build folder elsewhere (--scratch-path)
        // for an executable moved away from it, is not worth a crash wherever it is gone.
        return nil
        #else
        return Bundle.module
        #endif
    }()

    /// The first of `places` that holds SomniCore's resources folder with the shipped models.
    static func resources(among places: [URL]) -> Bundle? {
        // `.copy("Resources")` keeps the folder's name inside the bundle.
        let model = "default." + CNNModel.fileExtension
        for place in places {
            let folder = place.appendingPathComponent("Somni_SomniCore.resources")
            if [model, "Resources/" + model].contains(where: { FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path) }),
               let bundle = Bundle(url: folder) {
                return bundle
            }
        }
        return nil
    }

    public mutating func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {
        // Stated, not left to the loops below: they would write or read past the buffer's end.
        precondition(scores.count == labels.count, "scores holds \(scores.count) values for \(labels.count) labels")
        if !isKnownUniquelyReferenced(&engine) { engine = engine.copy() }
        // A DC offset (a cheap USB sound card) is no sound: the models and the steadiness check
        // hear the window about its mean. With an offset, a window's log-mel gained energy in its
        // lowest bands and its frame levels a floor that flattened a snore's swell into a hum.
        let centred = engine.centre(window)
        engine.run(centred)
        engine.softmax(into: scores)
        if !secondOpinions.isEmpty, scores.max()! < Self.secondOpinionBelow {
            for k in secondOpinions.indices {
                if !isKnownUniquelyReferenced(&secondOpinions[k]) { secondOpinions[k] = secondOpinions[k].copy() }
                let member = secondOpinions[k]
                if readsTheSameFeatures[k] { member.run(onFeaturesOf: engine) } else { member.run(centred) }
                member.scores.withUnsafeMutableBufferPointer { own in
                    member.softmax(into: own)
                    for i in 0..<scores.count { scores[i] += own[i] }
                }
            }
            let share = 1 / Float(models.count)
            for i in 0..<scores.count { scores[i] *= share }
        }
        if let otherIndex, !snoringIndices.isEmpty,
           engine.levelSpread(UnsafeBufferPointer(rebasing: centred[0..<min(window.count, centred.count)])) < SteadySound.spreadLimit {
            for i in snoringIndices { scores[otherIndex] += scores[i]; scores[i] = 0 }
        }
    }

    /// The first model's uncalibrated logits of the last `classify` call (for calibration and embeddings).
    public var lastLogits: UnsafeBufferPointer<Float> { UnsafeBufferPointer(engine.workspace.output) }

    /// Sendable by hand, as an array's storage is: copies of the classifier share an engine only
    /// to read it (`copy()`); the first to classify takes its own (`isKnownUniquelyReferenced`).
    final class Engine: @unchecked Sendable {
        let extractor: LogMelExtractor
        let workspace: NetworkWorkspace
        let model: CNNModel
        /// The window about its mean, cut or zero-padded to the model's length.
        private let centred: UnsafeMutableBufferPointer<Float>
        private var levels: [Float]
        /// The last window's log-mel before normalisation, which a second opinion reading the
        /// same features reuses (each model normalises with its own statistics).
        private var logMel: [Float]
        /// This model's scores when it gives a second opinion.
        var scores: [Float]

        init(_ model: CNNModel) throws {
            self.model = model
            extractor = try LogMelExtractor(settings: model.features)
            workspace = NetworkWorkspace(model.network, forTraining: false)
            centred = .allocate(capacity: model.features.windowLength)
            centred.initialize(repeating: 0)
            levels = [Float](repeating: 0, count: model.features.windowLength / SteadySound.frameLength)
            scores = [Float](repeating: 0, count: model.labels.count)
            logMel = [Float](repeating: 0, count: extractor.outputCount)
        }

        deinit { centred.deallocate() }

        /// The window less its mean, in this engine's buffer: valid until the next call.
        func centre(_ window: UnsafeBufferPointer<Float>) -> UnsafeBufferPointer<Float> {
            let n = min(window.count, centred.count)
            let padding = UnsafeMutableBufferPointer(rebasing: centred[n...])
            padding.update(repeating: 0)
            guard n > 0, let source = window.baseAddress else { return UnsafeBufferPointer(centred) }
            let mean = Kernels.sum(source, n) / Float(n)
            if mean.isFinite {
                for j in 0..<n { centred[j] = source[j] - mean }
            } else {
                // A sample that is not a number (a damaged float file) is silence, as the night's
                // features read it: one NaN made the whole window's log-mel read as the loudest sound.
                var total = 0.0
                for j in 0..<n {
                    let x = source[j].isFinite ? source[j] : 0
                    centred[j] = x
                    total += Double(x)
                }
                let finiteMean = Float(total / Double(n))
                for j in 0..<n { centred[j] -= finiteMean }
            }
            return UnsafeBufferPointer(centred)
        }

        func levelSpread(_ window: UnsafeBufferPointer<Float>) -> Float {
            levels.withUnsafeMutableBufferPointer { SteadySound.levelSpread(window, levels: $0) }
        }

        func copy() -> Engine {
            // The model was validated when this engine was made, so building another cannot fail.
            (try? Engine(model)) ?? self
        }

        /// Runs on a window `centre` made (of the model's length).
        func run(_ window: UnsafeBufferPointer<Float>) {
            features(window)
            forward()
        }

        /// Runs on the window `first` last ran on, reusing its log-mel: the models' feature
        /// settings must be the same.
        func run(onFeaturesOf first: Engine) {
            first.logMel.withUnsafeBufferPointer { normalise($0, into: workspace.input, model: model) }
            forward()
        }

        private func forward() {
            model.parameters.withUnsafeBufferPointer { model.network.forward($0.baseAddress!, workspace) }
        }

        private func features(_ window: UnsafeBufferPointer<Float>) {
            logMel.withUnsafeMutableBufferPointer { raw in
                extractor.extract(window, into: raw)
                normalise(UnsafeBufferPointer(raw), into: workspace.input, model: model)
            }
        }

        func softmax(into scores: UnsafeMutableBufferPointer<Float>) {
            Softmax.apply(UnsafeBufferPointer(workspace.output), temperature: model.temperature, into: scores)
        }
    }
}

/// Normalises frame-major log-mel values band by band (and channel by channel) with a model's
/// statistics: one window's input, or several one after another.
func normalise(_ values: UnsafeMutableBufferPointer<Float>, model: CNNModel) {
    normalise(UnsafeBufferPointer(values), into: values, model: model)
}

/// The same, from `source` into `values` (which may be the same memory).
func normalise(_ source: UnsafeBufferPointer<Float>, into values: UnsafeMutableBufferPointer<Float>, model: CNNModel) {
    let bands = model.features.melBands, frames = model.features.frameCount
    model.bandMean.withUnsafeBufferPointer { mean in
        model.bandDeviation.withUnsafeBufferPointer { dev in
            // Frame by frame and band by band: no division per value to find its band.
            for p in 0..<(values.count / (frames * bands)) {
                let first = model.features.statisticsOffset(plane: p)
                for t in 0..<frames {
                    let row = (p * frames + t) * bands
                    for b in 0..<bands { values[row + b] = (source[row + b] - mean[first + b]) / dev[first + b] }
                }
            }
        }
    }
}

enum Softmax {
    /// Logits are taken within ±Float.greatestFiniteMagnitude, a NaN as the lowest: a network
    /// whose activations overflowed (weights within the file's bounds can still compound over
    /// layers) gave NaN for every score, (inf − inf); now its largest logits share the window.
    static func apply(_ logits: UnsafeBufferPointer<Float>, temperature: Float, into out: UnsafeMutableBufferPointer<Float>) {
        @inline(__always) func bounded(_ v: Float) -> Float {
            v.isNaN ? -.greatestFiniteMagnitude : min(max(v, -.greatestFiniteMagnitude), .greatestFiniteMagnitude)
        }
        var top = -Float.greatestFiniteMagnitude
        for v in logits { top = max(top, bounded(v)) }
        var total: Float = 0
        for i in 0..<logits.count {
            out[i] = exp((bounded(logits[i]) - top) / temperature)
            total += out[i]
        }
        for i in 0..<logits.count { out[i] /= total }
    }
}
