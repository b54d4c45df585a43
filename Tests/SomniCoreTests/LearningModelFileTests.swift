import Foundation
import Testing
@testable import SomniCore

private func tinyModel(labels: [String] = ["tone", "noise"], seed: UInt64 = 4) throws -> CNNModel {
    try CNNModel(name: "test model", labels: labels, features: tinyFeatures,
                 bandMean: [Float](repeating: -5, count: 16), bandDeviation: [Float](repeating: 2, count: 16),
                 layers: [.conv3x3(channels: 4), .relu, .maxPool2, .timeAveragePool, .dropout(rate: 0.1), .dense(outputs: labels.count)],
                 temperature: 1.5, seed: seed)
}

/// Builds a model file from its parts, as the format document describes, with a correct checksum.
private func assemble(version: UInt32 = 1, header: Data, parameters: [Float]) -> Data {
    var d = Data("SOMNICNN".utf8)
    func put(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
    put(version); put(UInt32(header.count)); d.append(header)
    put(UInt32(parameters.count)); for p in parameters { put(p.bitPattern) }
    put(CRC32.checksum(d))
    return d
}

private func headerJSON(_ model: CNNModel) throws -> [String: Any] {
    let data = try model.encoded()
    let length = Int(data[12]) | Int(data[13]) << 8 | Int(data[14]) << 16 | Int(data[15]) << 24
    return try JSONSerialization.jsonObject(with: data.subdata(in: 16..<(16 + length))) as! [String: Any]
}

private func expectBadModel(_ data: Data, mentioning text: String) {
    let error = #expect(throws: SomniError.self) { try CNNModel(data: data) }
    #expect(error?.code == .badModel)
    #expect(error?.message.contains(text) == true, "\(error?.message ?? "")")
}

@Suite struct LearningModelFileTests {
    @Test func crcMatchesTheKnownCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func roundTripKeepsEverythingAndTheScores() throws {
        let model = try tinyModel()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-\(UUID().uuidString).somnimodel")
        defer { try? FileManager.default.removeItem(at: url) }
        try model.write(to: url)
        let loaded = try CNNModel(contentsOf: url)
        #expect(loaded.labels == model.labels && loaded.features == model.features && loaded.name == model.name)
        #expect(loaded.parameters == model.parameters && loaded.network == model.network)
        #expect(loaded.bandMean == model.bandMean && loaded.bandDeviation == model.bandDeviation && loaded.temperature == 1.5)
        var a = try CNNClassifier(model: model), b = try CNNClassifier(contentsOf: url)
        var rng = SeededRandom(seed: 1)
        let window = (0..<4_000).map { _ in rng.nextUniform(-0.5...0.5) }
        var sa = [Float](repeating: 0, count: 2), sb = sa
        window.withUnsafeBufferPointer { w in
            sa.withUnsafeMutableBufferPointer { a.classify(w, scores: $0) }
            sb.withUnsafeMutableBufferPointer { b.classify(w, scores: $0) }
        }
        #expect(sa == sb && abs(sa[0] + sa[1] - 1) < 1e-6)
    }

    /// The first model decides alone when it is sure; otherwise the models' scores are averaged.
    @Test func aSecondModelIsAskedOnlyWhenTheFirstIsUnsure() throws {
        var sure = try tinyModel(), unsure = sure
        sure.temperature = 0.001   // one class near 1
        unsure.temperature = 1_000 // both near 0.5
        let second = try tinyModel(seed: 9)
        var rng = SeededRandom(seed: 3)
        let window = (0..<4_000).map { _ in rng.nextUniform(-0.5...0.5) }
        func scores(_ models: [CNNModel]) throws -> [Float] {
            var classifier = try CNNClassifier(models: models), out = [Float](repeating: 0, count: 2)
            window.withUnsafeBufferPointer { w in out.withUnsafeMutableBufferPointer { classifier.classify(w, scores: $0) } }
            return out
        }
        let sureAlone = try scores([sure]), unsureAlone = try scores([unsure]), secondAlone = try scores([second])
        #expect(sureAlone.max()! >= CNNClassifier.secondOpinionBelow && unsureAlone.max()! < CNNClassifier.secondOpinionBelow)
        #expect(abs(secondAlone[0] - unsureAlone[0]) > 0.01, "the second model should disagree with the unsure one")
        #expect(try scores([sure, second]) == sureAlone)
        let averaged = try scores([unsure, second])
        for i in 0..<2 { #expect(abs(averaged[i] - (unsureAlone[i] + secondAlone[i]) / 2) < 1e-6) }
        #expect(try CNNClassifier(models: [unsure, second]).name == "test model + test model")
        // A second opinion with log-mel settings of its own computes its own features.
        // (A high temperature keeps both models' scores off 0 and 1, where settings would not show.)
        var otherFeatures = tinyFeatures
        otherFeatures.minFrequency = 2_000
        func secondReading(_ features: FeatureSettings) throws -> CNNModel {
            try CNNModel(name: "second", labels: second.labels, features: features, bandMean: second.bandMean,
                         bandDeviation: second.bandDeviation, layers: second.network.layers.map(\.spec),
                         parameters: second.parameters, temperature: 50)
        }
        let different = try secondReading(otherFeatures)
        let differentAlone = try scores([different]), averagedWithDifferent = try scores([unsure, different])
        #expect(abs(differentAlone[0] - (try scores([secondReading(tinyFeatures)]))[0]) > 1e-4, "other settings should give other scores")
        for i in 0..<2 { #expect(abs(averagedWithDifferent[i] - (unsureAlone[i] + differentAlone[i]) / 2) < 1e-6) }

        let error = #expect(throws: SomniError.self) { try CNNClassifier(models: [sure, try tinyModel(labels: ["noise", "tone"])]) }
        #expect(error?.code == .badModel && error?.message.contains("cannot work together") == true)
        #expect(throws: SomniError.self) { try CNNClassifier(models: []) }
    }

    @Test func theShippedDefaultAsksASecondModelAndTheNarrowBandOneDoesNot() throws {
        let shipped = try CNNClassifier.bundled()
        #expect(shipped.models.count == 2 && CNNClassifier.bundledModelURLs.count == 2)
        #expect(shipped.models.map(\.name) == ["somni-cnn v3", "somni-cnn v3 seed 3"])
        #expect(try CNNClassifier.bundled(forRecordingsAt: 8_000).models.count == 1)
    }

    /// A model says which fold of ../shared/data's rule it never trained on; one of no fold
    /// writes no such key, so its file is what Somni wrote before it could say.
    @Test func aModelSaysWhichHeldOutFoldItNeverTrainedOn() throws {
        var model = try tinyModel()
        #expect(try headerJSON(model)["heldOutFold"] == nil)
        #expect(try CNNModel(data: model.encoded()).heldOutFold == nil)
        model.heldOutFold = 3
        #expect(try headerJSON(model)["heldOutFold"] as? Int == 3)
        #expect(try CNNModel(data: model.encoded()).heldOutFold == 3)
        // A fold the rule does not have is a damaged or foreign file.
        var header = try headerJSON(model)
        header["heldOutFold"] = 7
        expectBadModel(assemble(header: try JSONSerialization.data(withJSONObject: header), parameters: model.parameters),
                       mentioning: "held-out fold 7, where ../shared/data's rule has folds 0 to 4")
    }

    /// The shipped files are what this build writes of them (so the recipe, which trains them
    /// with fold 0 held out, reproduces them bit for bit), and they say so.
    @Test func theShippedModelsSayTheyHeldOutFoldZeroAndAreWrittenAsThisBuildWritesThem() throws {
        let urls = CNNClassifier.bundledModelURLs + [CNNClassifier.bundledModelURL(named: "narrow-band")].compactMap { $0 }
        #expect(urls.count == 3)
        for url in urls {
            let bytes = try Data(contentsOf: url)
            let model = try CNNModel(data: bytes)
            #expect(model.heldOutFold == 0, "\(url.lastPathComponent)")
            #expect(try model.encoded() == bytes, "\(url.lastPathComponent) is not written as this build writes it")
        }
    }

    /// The shipped models are found beside the executable or in the build, and a place without
    /// them is passed over (SwiftPM's own lookup stopped the program where it found none).
    @Test func theShippedModelsAreLookedForWithoutStoppingTheProgram() throws {
        #if os(Linux)  // elsewhere the resources are a bundle Bundle.module finds
        let shipped = try #require(CNNClassifier.shippedResources)
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("somni-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty.appendingPathComponent("Somni_SomniCore.resources"),
                                                withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(CNNClassifier.resources(among: [empty]) == nil, "a resources folder without the models is none")
        let found = CNNClassifier.resources(among: [empty, shipped.bundleURL.deletingLastPathComponent()])
        #expect(found?.url(forResource: "default", withExtension: CNNModel.fileExtension) != nil)
        #endif
    }

    @Test func theNarrowBandModelIsChosenForRecordingsMadeBelowTheAnalysisRate() throws {
        let shipped = try CNNClassifier.bundled()
        for rate in [8_000, 11_025, 12_000] {
            let narrow = try CNNClassifier.bundled(forRecordingsAt: rate)
            #expect(narrow.name.contains("narrow-band"), "\(rate) Hz: \(narrow.name)")
            #expect(narrow.labels == shipped.labels && narrow.windowLength == shipped.windowLength)
        }
        // An app that passes 0 or −1 for "not known" gets the wide-band model, as with nil.
        for rate in [nil, 16_000, 44_100, 0, -1] as [Int?] {
            #expect(try CNNClassifier.bundled(forRecordingsAt: rate).name == shipped.name)
        }
    }

    @Test func corruptTruncatedAndForeignFilesAreRejected() throws {
        let good = try tinyModel().encoded()
        var flipped = good
        flipped[good.count / 2] ^= 0x40
        expectBadModel(flipped, mentioning: "checksum")
        expectBadModel(good.prefix(good.count - 7), mentioning: "checksum")
        expectBadModel(good.prefix(10), mentioning: "truncated")
        expectBadModel(Data(), mentioning: "magic")
        expectBadModel(Data("<html>not a model</html>".utf8), mentioning: "magic")
        expectBadModel(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 40)), mentioning: "magic")
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString).somnimodel")
        let error = #expect(throws: SomniError.self) { try CNNModel(contentsOf: missing) }
        #expect(error?.code == .io)
        // A device or a folder given as the model: named for what it is, never read (/dev/zero
        // would be read until memory ran out).
        for path in ["/dev/zero", FileManager.default.temporaryDirectory.path] {
            let notFile = #expect(throws: SomniError.self) { try CNNModel(contentsOf: URL(fileURLWithPath: path)) }
            #expect(notFile?.code == .badModel && notFile?.message.contains("not a regular file") == true, "\(String(describing: notFile))")
        }
    }

    @Test func futureVersionsAndMismatchedPartsAreRejected() throws {
        let model = try tinyModel()
        let header = try headerJSON(model)
        func file(_ change: (inout [String: Any]) -> Void, parameters: [Float]? = nil, version: UInt32 = 1) throws -> Data {
            var h = header
            change(&h)
            return assemble(version: version, header: try JSONSerialization.data(withJSONObject: h), parameters: parameters ?? model.parameters)
        }
        /// The file with one of its feature settings changed.
        func withFeature(_ key: String, _ value: Any) throws -> Data {
            try file { h in
                var f = h["features"] as! [String: Any]
                f[key] = value
                h["features"] = f
            }
        }
        // The assembler itself produces a loadable file.
        #expect(try CNNModel(data: file { _ in }).parameters == model.parameters)
        expectBadModel(try file({ _ in }, version: 2), mentioning: "version 2")
        expectBadModel(try file { $0["labels"] = ["a", "b", "c"] }, mentioning: "3 labels")
        expectBadModel(try file { $0["labels"] = ["a", "a"] }, mentioning: "distinct")
        expectBadModel(try file { $0["bandMean"] = [1, 2] }, mentioning: "normalisation")
        expectBadModel(try file({ _ in }, parameters: Array(model.parameters.dropLast())), mentioning: "parameters")
        // One stray byte after the weights, the checksum made to fit: said in bytes (it read
        // "declares 13538 parameters but holds 13538").
        var stray = Data(try file { _ in }.dropLast(4))
        stray.append(0)
        withUnsafeBytes(of: CRC32.checksum(stray).littleEndian) { stray.append(contentsOf: $0) }
        let bytes = model.parameters.count * 4
        expectBadModel(stray, mentioning: "declares \(model.parameters.count) parameters (\(bytes) bytes) but holds \(bytes + 1) bytes of them")
        expectBadModel(try file({ _ in }, parameters: [Float.nan] + model.parameters.dropFirst()), mentioning: "finite")
        // Finite but absurd (a forged file whose checksum was made to fit): scores would be NaN.
        expectBadModel(try file({ _ in }, parameters: [1e30] + model.parameters.dropFirst()), mentioning: "beyond ±1000")
        expectBadModel(try file { $0["bandDeviation"] = Array(repeating: 1e-38, count: model.bandDeviation.count) }, mentioning: "within bounds")
        expectBadModel(try file { $0["temperature"] = 1e-30 }, mentioning: "temperature")
        expectBadModel(try file { $0["layers"] = [["maxPool2": [String: Any]()], ["maxPool2": [String: Any]()], ["maxPool2": [String: Any]()], ["maxPool2": [String: Any]()], ["maxPool2": [String: Any]()]] }, mentioning: "max-pool")
        expectBadModel(try withFeature("fftSize", 300), mentioning: "FFT size 300 is not a power of two")
        // A frame longer than the FFT is named as such (it read "FFT size 512" alone).
        expectBadModel(try withFeature("frameLength", 4_000), mentioning: "FFT size \(model.features.fftSize) is shorter than its frame of 4000 samples")
        // A hop of 0 (the input's frame count divides by it) is refused before any shape is worked out.
        expectBadModel(try withFeature("hopLength", 0), mentioning: "hop 0")
        expectBadModel(try file { $0["name"] = 7 }, mentioning: "header")
        // A second input channel asked of a model trained without one: its statistics do not fit.
        expectBadModel(try withFeature("windowFloorQuantile", 0.2), mentioning: "2 × 16 mel bands")
        expectBadModel(try withFeature("windowFloorQuantile", 1.5), mentioning: "window floor quantile")
        // Settings each within bounds that together cost seconds a window (a 65536-point FFT
        // every sample), or a window of one sample (classify read one sample and stopped).
        expectBadModel(try file { h in
            var f = h["features"] as! [String: Any]
            f["fftSize"] = 65_536; f["frameLength"] = 1; f["hopLength"] = 1
            h["features"] = f
        }, mentioning: "far more work than any model needs")
        expectBadModel(try withFeature("windowLength", 1), mentioning: "window length 1 samples")
        // A label with a newline broke classify's one line per window; train refuses such a class.
        expectBadModel(try file { $0["labels"] = ["tone\n", "noise"] }, mentioning: "control character")
    }

    /// A model reached through a link (a packager's, `cp -s`) loads; a link to a folder does not.
    @Test func aModelThroughALinkLoads() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-link-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try tinyModel()
        try model.encoded().write(to: dir.appendingPathComponent("real.somnimodel"))
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link.somnimodel").path, withDestinationPath: "real.somnimodel")
        #expect(try CNNModel(contentsOf: dir.appendingPathComponent("link.somnimodel")).parameters == model.parameters)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("folder.somnimodel").path, withDestinationPath: dir.path)
        let error = #expect(throws: SomniError.self) { try CNNModel(contentsOf: dir.appendingPathComponent("folder.somnimodel")) }
        #expect(error?.message.contains("not a regular file") == true, "\(String(describing: error))")
    }

    @Test func aTwoChannelModelRoundTripsAndClassifies() throws {
        var features = tinyFeatures
        features.windowFloorQuantile = 0.2
        let model = try CNNModel(name: "two channels", labels: ["tone", "noise"], features: features,
                                 bandMean: [Float](repeating: -5, count: 32), bandDeviation: [Float](repeating: 2, count: 32),
                                 layers: [.conv3x3(channels: 4), .relu, .maxPool2, .timeAveragePool, .dense(outputs: 2)],
                                 temperature: 1, seed: 2)
        #expect(model.network.inputShape == TensorShape(channels: 2, height: features.frameCount, width: 16))
        let loaded = try CNNModel(data: model.encoded())
        #expect(loaded.features.windowFloorQuantile == 0.2 && loaded.parameters == model.parameters)
        var classifier = try CNNClassifier(model: loaded)
        var scores = [Float](repeating: 0, count: 2)
        let window = (0..<4_000).map { Float(0.3 * sin(Double($0) * 0.4)) }
        window.withUnsafeBufferPointer { w in scores.withUnsafeMutableBufferPointer { classifier.classify(w, scores: $0) } }
        #expect(abs(scores[0] + scores[1] - 1) < 1e-5 && scores.allSatisfy(\.isFinite))
    }

    /// A forged file within every parameter bound: layers so wide and many that their
    /// activations alone were 8 GB, allocated before the first window, are refused; weights
    /// that compound past Float over seven layers gave NaN for every score, and now give
    /// finite scores that sum to one.
    @Test func aForgedNetworkIsRefusedOrGivesFiniteScores() throws {
        let wide = [LayerSpec.conv3x3(channels: 4_096)] + [LayerSpec](repeating: .relu, count: 253) + [.globalAveragePool, .dense(outputs: 2)]
        #expect { try Network(input: TensorShape(channels: 2, height: 48, width: 40), layers: wide) } throws: {
            "\($0)".contains("activations per window")
        }
        let deep = [LayerSpec](repeating: .pointwise(channels: 64), count: 7) + [.globalAveragePool, .dense(outputs: 2)]
        let network = try Network(input: tinyFeatures.inputShape, layers: deep)
        let model = try CNNModel(name: "forged", labels: ["tone", "noise"], features: tinyFeatures,
                                 bandMean: [Float](repeating: -1_000, count: 16), bandDeviation: [Float](repeating: 1e-4, count: 16),
                                 layers: deep, parameters: [Float](repeating: 1_000, count: network.parameterCount), temperature: 1)
        var classifier = try CNNClassifier(model: CNNModel(data: model.encoded()))
        var scores = [Float](repeating: 0, count: 2)
        let window = (0..<4_000).map { Float(0.3 * sin(Double($0) * 0.4)) }
        window.withUnsafeBufferPointer { w in scores.withUnsafeMutableBufferPointer { classifier.classify(w, scores: $0) } }
        #expect(Array(classifier.lastLogits).contains { !$0.isFinite }, "the logits overflow, as the forged file means them to")
        #expect(scores.allSatisfy(\.isFinite) && abs(scores[0] + scores[1] - 1) < 1e-5, "\(scores)")
    }

    /// A sample that is not a number is silence, as the night's features read it: one NaN made
    /// a window's log-mel read as the loudest sound and its scores the same for every window.
    @Test func aSampleThatIsNotANumberIsHeardAsSilence() throws {
        var classifier = try CNNClassifier(model: tinyModel())
        let tone = (0..<4_000).map { Float(0.3 * sin(Double($0) * 0.4)) }
        func scores(_ window: [Float]) -> [Float] {
            var s = [Float](repeating: 0, count: 2)
            window.withUnsafeBufferPointer { w in s.withUnsafeMutableBufferPointer { classifier.classify(w, scores: $0) } }
            return s
        }
        var damaged = tone, zeroed = tone
        damaged[100] = .nan; damaged[2_000] = .infinity
        zeroed[100] = 0; zeroed[2_000] = 0
        let heard = scores(damaged)
        #expect(heard.allSatisfy { $0.isFinite })
        #expect(zip(heard, scores(zeroed)).allSatisfy { abs($0 - $1) < 1e-5 }, "\(heard) against \(scores(zeroed))")
    }

    @Test func classifierCopiesKeepTheirOwnBuffersAndShortWindowsAreCentredAndPadded() throws {
        var a = try CNNClassifier(model: tinyModel())
        var b = a
        var rng = SeededRandom(seed: 2)
        let w1 = (0..<4_000).map { _ in rng.nextUniform(-0.5...0.5) }, w2 = (0..<4_000).map { _ in rng.nextUniform(-0.01...0.01) }
        var s1 = [Float](repeating: 0, count: 2), s2 = s1, again = s1
        w1.withUnsafeBufferPointer { w in s1.withUnsafeMutableBufferPointer { a.classify(w, scores: $0) } }
        w2.withUnsafeBufferPointer { w in s2.withUnsafeMutableBufferPointer { b.classify(w, scores: $0) } }
        #expect(Array(a.lastLogits) != Array(b.lastLogits))
        w1.withUnsafeBufferPointer { w in again.withUnsafeMutableBufferPointer { b.classify(w, scores: $0) } }
        #expect(again == s1)
        // A short window is taken about its own mean, then padded with silence.
        let short = Array(w1.prefix(1_000))
        let mean = short.reduce(0, +) / Float(short.count)
        let padded = short.map { $0 - mean } + [Float](repeating: 0, count: 3_000)
        short.withUnsafeBufferPointer { w in s1.withUnsafeMutableBufferPointer { a.classify(w, scores: $0) } }
        padded.withUnsafeBufferPointer { w in s2.withUnsafeMutableBufferPointer { a.classify(w, scores: $0) } }
        #expect(s1 == s2)
    }
}
