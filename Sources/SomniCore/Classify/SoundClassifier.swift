/// One entry of a classifier's ranked output.
public struct LabelConfidence: Sendable, Equatable, Codable {
    public var label: String
    public var confidence: Float
    public init(label: String, confidence: Float) { self.label = label; self.confidence = confidence }
}

/// Classifies fixed-length windows of 16 kHz mono audio.
///
/// Implementations allocate in `init` and reuse buffers: `classify` runs once per window for a
/// whole night. Hot paths stay generic over this protocol (`<C: SoundClassifier>`), not `any`.
public protocol SoundClassifier {
    /// The label of each score, in score order.
    var labels: [String] { get }
    /// Samples per window at 16 kHz (0.975 s = 15,600).
    var windowLength: Int { get }
    /// A short name for session.json ("heuristic", "somni-cnn v1").
    var name: String { get }
    /// Called once before a night's windows, with the night's noise floor (20th-percentile
    /// envelope RMS) so relative tests can be made. Default: ignored.
    mutating func prepare(noiseFloor: Float)
    /// True when `prepare(noiseFloor:)` changes what `classify` says: then a window can only be
    /// classified once the whole night's floor is known. Default: false.
    var readsNoiseFloor: Bool { get }
    /// Writes one confidence per label into `scores` (count == labels.count).
    mutating func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>)
}

extension SoundClassifier {
    public mutating func prepare(noiseFloor: Float) {}
    public var readsNoiseFloor: Bool { false }

    /// The labels ranked by confidence, highest first, at most `top` of them.
    public func ranked(_ scores: UnsafeBufferPointer<Float>, top: Int = 5) -> [LabelConfidence] {
        let order = (0..<labels.count).sorted { scores[$0] > scores[$1] }
        return order.prefix(top).map { LabelConfidence(label: labels[$0], confidence: scores[$0]) }
    }
}

/// 0.975 s at 16 kHz: the window the seeds' classifiers read.
public let classifierWindowLength = 15_600
