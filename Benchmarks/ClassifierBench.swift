import Foundation
import SomniCore

/// Per-window time of the CNN classifier (features + network) on one core, and the share of it
/// spent on log-mel features. Uses the bundled model, or MODEL from SOMNI_BENCH_MODEL.
func runClassifierBenchmark() throws {
    let model: CNNClassifier
    if let path = ProcessInfo.processInfo.environment["SOMNI_BENCH_MODEL"] {
        model = try CNNClassifier(contentsOf: URL(fileURLWithPath: path))
    } else {
        model = try CNNClassifier.bundled()
    }
    var classifier = model
    var rng = SeededRandom(seed: 7)
    let windows = (0..<8).map { _ in (0..<classifier.windowLength).map { _ in 0.1 * rng.nextGaussian() } }
    var scores = [Float](repeating: 0, count: classifier.labels.count)
    let extractor = try LogMelExtractor(settings: classifier.model.features)
    var features = [Float](repeating: 0, count: extractor.outputCount)

    /// Wall and CPU seconds of `repeats` calls (CPU time is the fairer figure on a busy machine).
    func seconds(_ repeats: Int, _ body: (Int) -> Void) -> (wall: Double, cpu: Double) {
        for i in 0..<20 { body(i) }  // warm up
        let start = DispatchTime.now().uptimeNanoseconds, cpuStart = clock()
        for i in 0..<repeats { body(i) }
        return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, Double(clock() - cpuStart) / Double(CLOCKS_PER_SEC))
    }
    let repeats = 4_000
    let total = seconds(repeats) { i in
        windows[i % 8].withUnsafeBufferPointer { w in scores.withUnsafeMutableBufferPointer { classifier.classify(w, scores: $0) } }
    }
    let featureTime = seconds(repeats) { i in
        windows[i % 8].withUnsafeBufferPointer { w in features.withUnsafeMutableBufferPointer { extractor.extract(w, into: $0) } }
    }
    let ms = 1000 / Double(repeats)
    print(String(format: "classifier %@: %.4f ms CPU per window (%.4f ms wall), of which log-mel %.4f ms CPU; "
                 + "%d multiply-accumulates, %d parameters; every window of an 8-hour night at 50 %% overlap "
                 + "(59,077 windows) would take %.1f s CPU",
                 classifier.name, total.cpu * ms, total.wall * ms, featureTime.cpu * ms, classifier.model.network.multiplyAccumulates,
                 classifier.model.network.parameterCount, total.cpu * ms * 59_077 / 1000))
}
