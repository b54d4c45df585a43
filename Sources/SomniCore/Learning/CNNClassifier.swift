import Foundation

/// The learned classifier: log-mel features through a small CNN, softmax scores calibrated by
/// temperature; a window whose level holds steady (`SteadySound`) gives its snoring-class scores
/// to "other", when the model has that label. A value type: copies get their own buffers on
/// first use, so each thread can classify with its own copy. Classifying a window allocates
/// nothing.
public struct CNNClassifier: SoundClassifier {
    public let model: CNNModel
    public var labels: [String] { model.labels }
    public var windowLength: Int { model.features.windowLength }
    public var name: String { model.name }
    private var engine: Engine
    private let snoringIndices: [Int], otherIndex: Int?

    public init(model: CNNModel) throws {
        try model.validate()
        self.model = model
        engine = try Engine(model)
        snoringIndices = model.labels.indices.filter { ClassSets.eventClass(forLabel: model.labels[$0]) == .snoring }
        otherIndex = model.labels.firstIndex { $0.lowercased() == "other" }
    }

    /// Loads and validates a model file (`.badModel` / `.io` errors).
    public init(contentsOf url: URL) throws {
        try self.init(model: CNNModel(contentsOf: url))
    }

    /// The default model shipped with Somni (snoring, speech, cough, other).
    public static func bundled() throws -> CNNClassifier {
        try bundled(named: "default")
    }

    /// The shipped model for a recording made at `recordedRate` Hz: below the analysis rate (an
    /// 8 kHz voice memo or telephone recording, which holds nothing above 4 kHz) the one trained
    /// on examples cut off at 3.4–7 kHz, which hears talk and coughs there far better than the
    /// default; otherwise the default.
    public static func bundled(forRecordingsAt recordedRate: Int?) throws -> CNNClassifier {
        try bundled(named: isNarrowBand(recordedAt: recordedRate) ? "narrow-band" : "default")
    }

    private static func bundled(named name: String) throws -> CNNClassifier {
        guard let url = bundledModelURL(named: name) else {
            throw SomniError(.badModel, "the \(name) model is missing from this build of Somni")
        }
        return try CNNClassifier(contentsOf: url)
    }

    public static var bundledModelURL: URL? { bundledModelURL(named: "default") }

    static func bundledModelURL(named name: String) -> URL? {
        Bundle.module.url(forResource: name, withExtension: CNNModel.fileExtension)
            ?? Bundle.module.url(forResource: name, withExtension: CNNModel.fileExtension, subdirectory: "Resources")
    }

    public mutating func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {
        if !isKnownUniquelyReferenced(&engine) { engine = engine.copy() }
        engine.run(window, model: model)
        engine.softmax(into: scores, temperature: model.temperature)
        if let otherIndex, !snoringIndices.isEmpty, engine.levelSpread(window) < SteadySound.spreadLimit {
            for i in snoringIndices { scores[otherIndex] += scores[i]; scores[i] = 0 }
        }
    }

    /// The uncalibrated logits of the last `classify` call (for calibration and embeddings).
    public var lastLogits: UnsafeBufferPointer<Float> { UnsafeBufferPointer(engine.workspace.output) }

    final class Engine {
        let extractor: LogMelExtractor
        let workspace: NetworkWorkspace
        let model: CNNModel
        private var padded: [Float]
        private var levels: [Float]

        init(_ model: CNNModel) throws {
            self.model = model
            extractor = try LogMelExtractor(settings: model.features)
            workspace = NetworkWorkspace(model.network, forTraining: false)
            padded = [Float](repeating: 0, count: model.features.windowLength)
            levels = [Float](repeating: 0, count: model.features.windowLength / SteadySound.frameLength)
        }

        func levelSpread(_ window: UnsafeBufferPointer<Float>) -> Float {
            levels.withUnsafeMutableBufferPointer { SteadySound.levelSpread(window, levels: $0) }
        }

        func copy() -> Engine {
            // The model was validated when this engine was made, so building another cannot fail.
            (try? Engine(model)) ?? self
        }

        func run(_ window: UnsafeBufferPointer<Float>, model: CNNModel) {
            if window.count == model.features.windowLength {
                features(window)
            } else {
                // A short or long window: zero-pad or cut to the model's length.
                padded.withUnsafeMutableBufferPointer { p in
                    let n = min(window.count, p.count)
                    for i in 0..<p.count { p[i] = i < n ? window[i] : 0 }
                    features(UnsafeBufferPointer(p))
                }
            }
            model.parameters.withUnsafeBufferPointer { model.network.forward($0.baseAddress!, workspace) }
        }

        private func features(_ window: UnsafeBufferPointer<Float>) {
            let input = workspace.input
            extractor.extract(window, into: input)
            normalise(input, model: model)
        }

        func softmax(into scores: UnsafeMutableBufferPointer<Float>, temperature: Float) {
            Softmax.apply(UnsafeBufferPointer(workspace.output), temperature: temperature, into: scores)
        }
    }
}

/// Normalises frame-major log-mel values band by band (and channel by channel) with a model's
/// statistics: one window's input, or several one after another.
func normalise(_ values: UnsafeMutableBufferPointer<Float>, model: CNNModel) {
    let bands = model.features.melBands, frames = model.features.frameCount
    model.bandMean.withUnsafeBufferPointer { mean in
        model.bandDeviation.withUnsafeBufferPointer { dev in
            // Frame by frame and band by band: no division per value to find its band.
            for p in 0..<(values.count / (frames * bands)) {
                let first = model.features.statisticsOffset(plane: p)
                for t in 0..<frames {
                    let row = (p * frames + t) * bands
                    for b in 0..<bands { values[row + b] = (values[row + b] - mean[first + b]) / dev[first + b] }
                }
            }
        }
    }
}

enum Softmax {
    static func apply(_ logits: UnsafeBufferPointer<Float>, temperature: Float, into out: UnsafeMutableBufferPointer<Float>) {
        var top = -Float.infinity
        for v in logits { top = max(top, v) }
        var total: Float = 0
        for i in 0..<logits.count {
            out[i] = exp((logits[i] - top) / temperature)
            total += out[i]
        }
        for i in 0..<logits.count { out[i] /= total }
    }
}
