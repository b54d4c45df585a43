import Foundation
import SomniCore

/// Per-window time of the CNN classifier (features + network) on one core, and the share of it
/// spent on log-mel features: each bundled model alone (or MODEL from SOMNI_BENCH_MODEL), and a
/// window the first model is unsure of, which every bundled model classifies.
func runClassifierBenchmark() throws {
    let models: [CNNModel]
    if let path = ProcessInfo.processInfo.environment["SOMNI_BENCH_MODEL"] {
        models = [try CNNModel(contentsOf: URL(fileURLWithPath: path))]
    } else {
        models = try CNNClassifier.bundled().models
    }
    for model in models {
        let classifier = try CNNClassifier(model: model)
        let (cpu, wall) = perWindow(classifier)
        let features = try logMelPerWindow(model.features)
        print(String(format: "classifier %@: %.4f ms CPU per window (%.4f ms wall), of which log-mel %.4f ms CPU; "
                     + "%d multiply-accumulates, %d parameters; every window of an 8-hour night at 50 %% overlap "
                     + "(59,077 windows) would take %.1f s CPU",
                     model.name, cpu, wall, features, model.network.multiplyAccumulates, model.network.parameterCount,
                     cpu * 59_077 / 1000))
    }
    if models.count > 1 {
        // The first model made unsure of every window by a huge temperature: the same work, and
        // every window goes on to the others, as an unsure window of a night does.
        var unsure = models[0]
        unsure.temperature = 1_000
        let (cpu, _) = perWindow(try CNNClassifier(models: [unsure] + models.dropFirst()))
        print(String(format: "a window the first model is unsure of (all %d models, one log-mel): %.4f ms CPU", models.count, cpu))
    }
}

private let repeats = 4_000

/// Eight windows of quiet noise, the same for every measurement.
private func benchWindows(length: Int) -> [[Float]] {
    var rng = SeededRandom(seed: 7)
    return (0..<8).map { _ in (0..<length).map { _ in 0.1 * rng.nextGaussian() } }
}

/// CPU and wall milliseconds a window of `repeats` calls (CPU time is the fairer figure on a busy machine).
private func milliseconds(_ body: (Int) -> Void) -> (cpu: Double, wall: Double) {
    for i in 0..<20 { body(i) }  // warm up
    let start = DispatchTime.now().uptimeNanoseconds, cpuStart = clock()
    for i in 0..<repeats { body(i) }
    let cpu = Double(clock() - cpuStart) / Double(CLOCKS_PER_SEC), wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return (cpu * 1000 / Double(repeats), wall * 1000 / Double(repeats))
}

private func perWindow(_ classifier: CNNClassifier) -> (cpu: Double, wall: Double) {
    var classifier = classifier
    let windows = benchWindows(length: classifier.windowLength)
    var scores = [Float](repeating: 0, count: classifier.labels.count)
    return milliseconds { i in
        windows[i % 8].withUnsafeBufferPointer { w in scores.withUnsafeMutableBufferPointer { classifier.classify(w, scores: $0) } }
    }
}

private func logMelPerWindow(_ settings: FeatureSettings) throws -> Double {
    let extractor = try LogMelExtractor(settings: settings)
    let windows = benchWindows(length: settings.windowLength)
    var features = [Float](repeating: 0, count: extractor.outputCount)
    return milliseconds { i in
        windows[i % 8].withUnsafeBufferPointer { w in features.withUnsafeMutableBufferPointer { extractor.extract(w, into: $0) } }
    }.cpu
}
