import Foundation
import Testing
@testable import SomniCore

/// Small settings and network so training runs in seconds in a debug build.
let tinyFeatures = FeatureSettings(sampleRate: 16_000, windowLength: 4_000, frameLength: 400, hopLength: 400, fftSize: 512,
                                   melBands: 16, minFrequency: 50, maxFrequency: 8000, logFloor: 1e-10)
let tinyLayers: [LayerSpec] = [.conv3x3(channels: 4), .relu, .maxPool2, .timeAveragePool, .dropout(rate: 0.1), .dense(outputs: 2)]

/// Tones (200–4000 Hz) against white noise, at random levels, 12 groups of 5 clips per class.
func tonesAndNoise(seed: UInt64) -> TrainingSet {
    var rng = SeededRandom(seed: seed)
    var clips: [[Float]] = [], examples: [TrainingSet.Example] = []
    for label in 0..<2 {
        for group in 0..<12 {
            for _ in 0..<5 {
                let level = rng.nextUniform(0.02...0.5), frequency = Double(rng.nextUniform(200...4000))
                let clip: [Float] = (0..<4_400).map { i in
                    label == 0 ? level * Float(sin(2 * Double.pi * frequency * Double(i) / 16_000)) : level * rng.nextGaussian() / 3
                }
                clips.append(clip)
                examples.append(.init(clip: clips.count - 1, start: 0, length: clip.count, label: label,
                                      group: "\(label)-\(group)", stratum: label == 0 ? "tone" : "noise", path: ""))
            }
        }
    }
    return TrainingSet(labels: ["tone", "noise"], clips: clips, examples: examples)
}

func tinyOptions(epochs: Int) -> TrainingOptions {
    var o = TrainingOptions()
    o.features = tinyFeatures
    o.layers = tinyLayers
    o.maxEpochs = epochs
    o.examplesPerClass = 48
    o.batchSize = 16
    o.learningRate = 0.01
    o.threads = 2
    return o
}

@Suite struct LearningTrainingTests {
    @Test func learnsTonesFromNoiseOnHeldOutGroups() throws {
        let data = tonesAndNoise(seed: 5)
        let split = data.split(validationShare: 0.2, testShare: 0.2, seed: 1)
        #expect(!split.test.isEmpty && !split.validation.isEmpty)
        let trainer = try Trainer(data: data, train: split.train, validation: split.validation, test: split.test,
                                  backgrounds: [], options: tinyOptions(epochs: 12))
        let (model, report) = try trainer.train()
        let test = try #require(report.test)
        #expect(test.accuracy >= 0.97, "test accuracy \(test.accuracy)")
        #expect(report.train.accuracy >= 0.97)
        #expect(model.temperature > 0 && model.temperature != 1)

        // The saved model classifies fresh signals the same way through CNNClassifier.
        var classifier = try CNNClassifier(model: model)
        var scores = [Float](repeating: 0, count: 2)
        let tone = (0..<4_000).map { Float(0.3 * sin(2 * Double.pi * 1234 * Double($0) / 16_000)) }
        var rng = SeededRandom(seed: 99)
        let noise = (0..<4_000).map { _ in 0.1 * rng.nextGaussian() }
        tone.withUnsafeBufferPointer { w in scores.withUnsafeMutableBufferPointer { classifier.classify(w, scores: $0) } }
        #expect(scores[0] > 0.8 && abs(scores[0] + scores[1] - 1) < 1e-5)
        noise.withUnsafeBufferPointer { w in scores.withUnsafeMutableBufferPointer { classifier.classify(w, scores: $0) } }
        #expect(scores[1] > 0.8)
    }

    /// Validation holding no tones says nothing of how often tones come: the calibration leaves
    /// their offset where the fitted classes' mean is, and the model still hears tones. (It used
    /// to push it down until the model hardly said the class at all.)
    @Test func aClassValidationLacksKeepsItsPlaceInTheCalibration() throws {
        let data = tonesAndNoise(seed: 5)
        let split = data.split(validationShare: 0.2, testShare: 0.2, seed: 1)
        let noiseOnly = split.validation.filter { data.examples[$0].label == 1 }
        #expect(!noiseOnly.isEmpty && noiseOnly.count < split.validation.count)
        let trainer = try Trainer(data: data, train: split.train, validation: noiseOnly, test: split.test,
                                  backgrounds: [], options: tinyOptions(epochs: 12))
        let report = try trainer.train().report
        #expect(report.classBias == [0, 0], "\(report.classBias ?? [])")
        let test = try #require(report.test)
        #expect((test.classes[0].recall ?? 0) >= 0.95, "tone recall \(test.classes[0].recall ?? 0)")
    }

    /// A copy of a recording under another name (its own group by name) goes where the
    /// recording goes: in test, a copy of a clip trained on would be scored as unseen.
    @Test func copiesUnderOtherNamesLandInOneSplit() {
        var data = tonesAndNoise(seed: 5)
        let originals = data.examples
        for (n, e) in originals.enumerated() {
            data.clips.append(data.clips[e.clip])
            data.examples.append(.init(clip: data.clips.count - 1, start: e.start, length: e.length, label: e.label,
                                       group: "copy-\(n)", stratum: e.stratum, path: ""))
        }
        let split = data.split(validationShare: 0.2, testShare: 0.2, seed: 1)
        #expect(!split.test.isEmpty && !split.validation.isEmpty)
        func part(_ i: Int) -> Int { split.train.contains(i) ? 0 : split.validation.contains(i) ? 1 : 2 }
        for n in originals.indices { #expect(part(n) == part(originals.count + n), "example \(n) and its copy") }
        // Without copies, the groups are the names' alone.
        #expect(tonesAndNoise(seed: 5).groupsJoiningCopies().isEmpty)
    }

    @Test func trainingIsReproducibleWithTheSameSeed() throws {
        let data = tonesAndNoise(seed: 6)
        let split = data.split(validationShare: 0.2, testShare: 0.2, seed: 3)
        func run() throws -> [Float] {
            let trainer = try Trainer(data: data, train: split.train, validation: split.validation, test: [],
                                      backgrounds: [Array(data.clips[70])], options: tinyOptions(epochs: 2))
            return try trainer.train().model.parameters
        }
        #expect(try run() == run())
    }

    /// An app's options that would never end an epoch (a batch of 0) or trap (a negative one)
    /// are one error before any training.
    @Test func batchesAndExamplesPerClassMustBePositive() throws {
        let data = tonesAndNoise(seed: 6)
        let split = data.split(validationShare: 0.2, testShare: 0.2, seed: 3)
        for (batch, perClass) in [(0, 48), (-4, 48), (16, 0)] {
            var options = tinyOptions(epochs: 1)
            options.batchSize = batch; options.examplesPerClass = perClass
            let error = #expect(throws: SomniError.self) {
                try Trainer(data: data, train: split.train, validation: split.validation, test: [], backgrounds: [], options: options)
            }
            #expect(error?.message.contains("must be positive, got \(batch) and \(perClass)") == true, "\(error?.message ?? "")")
        }
    }

    @Test func sameClassMixingAddsThePartnerAtTheAskedLevel() {
        var rng = SeededRandom(seed: 4)
        let first = (0..<1_000).map { _ in 0.2 * rng.nextGaussian() }
        let partner = (0..<1_000).map { i in Float(sin(Double(i) * 0.3)) }
        func rms(_ x: [Float]) -> Float { (x.reduce(0) { $0 + $1 * $1 } / Float(x.count)).squareRoot() }
        for decibels: Float in [-12, -6, 0] {
            var window = first
            partner.withUnsafeBufferPointer { p in window.withUnsafeMutableBufferPointer { Worker.mix(p, into: $0, decibels: decibels) } }
            let added = zip(window, first).map { $0 - $1 }
            let ratio = 20 * log10(rms(added) / rms(first))
            #expect(abs(ratio - decibels) < 0.01, "partner at \(ratio) dB, asked \(decibels)")
        }
        // A silent window takes the partner at its own level; a silent partner changes nothing.
        var silent = [Float](repeating: 0, count: 1_000)
        partner.withUnsafeBufferPointer { p in silent.withUnsafeMutableBufferPointer { Worker.mix(p, into: $0, decibels: -6) } }
        #expect(silent == partner)
        var window = first
        let quiet = [Float](repeating: 0, count: 1_000)
        quiet.withUnsafeBufferPointer { p in window.withUnsafeMutableBufferPointer { Worker.mix(p, into: $0, decibels: 0) } }
        #expect(window == first)
    }

    @Test func bandLimitingCutsOffAboveTheCutoffAndKeepsWhatLiesBelow() {
        /// Level in dB of a tone at `hz` after the cut-off, measured past the filter's settling.
        func gain(at hz: Double, cutoff: Float) -> Double {
            var x = (0..<16_000).map { Float(sin(2 * Double.pi * hz * Double($0) / 16_000)) }
            x.withUnsafeMutableBufferPointer { Worker.lowPass($0, cutoff: cutoff) }
            let tail = x[4_000...]
            return 10 * log10(Double(tail.reduce(0) { $0 + $1 * $1 }) / Double(tail.count) / 0.5)
        }
        #expect(abs(gain(at: 1_000, cutoff: 3_400)) < 0.1)
        #expect(abs(gain(at: 3_400, cutoff: 3_400) + 3) < 0.2)
        #expect(gain(at: 6_800, cutoff: 3_400) < -48)  // an octave above: 8th order
        #expect(abs(gain(at: 5_000, cutoff: 7_000)) < 0.1)
        #expect(gain(at: 7_900, cutoff: 7_000) < -20)
    }

    @Test func bandLimitedTrainingExamplesHideWhatLiesAboveTheCutoff() throws {
        // Two classes that differ only in a 6 kHz tone: easily learnt, unless every training
        // example is cut off below it.
        var rng = SeededRandom(seed: 11)
        var clips: [[Float]] = [], examples: [TrainingSet.Example] = []
        for label in 0..<2 {
            for group in 0..<12 {
                for _ in 0..<5 {
                    let low = Double(rng.nextUniform(300...2_000)), level = rng.nextUniform(0.05...0.3)
                    clips.append((0..<4_400).map { i in
                        let t = Double(i) / 16_000
                        return level * Float(sin(2 * Double.pi * low * t) + (label == 1 ? 3 * sin(2 * Double.pi * 6_000 * t) : 0))
                            + 0.005 * rng.nextGaussian()
                    })
                    examples.append(.init(clip: clips.count - 1, start: 0, length: 4_400, label: label,
                                          group: "\(label)-\(group)", stratum: "\(label)", path: ""))
                }
            }
        }
        let data = TrainingSet(labels: ["low", "low and high"], clips: clips, examples: examples)
        let split = data.split(validationShare: 0.2, testShare: 0, seed: 2)
        func lastTrainingLoss(cuttingOff share: Float) throws -> Float {
            var options = tinyOptions(epochs: 12)
            // Only the cut-off (and the spectrogram masks, which cannot be turned off) changes the examples.
            options.gainDecibels = 0...0
            options.sameClassMixProbability = 0
            options.overhang = 0
            options.bandLimitProbability = share
            options.bandLimitHz = 3_400...4_000
            let trainer = try Trainer(data: data, train: split.train, validation: split.validation, test: [],
                                      backgrounds: [], options: options)
            return try #require(trainer.train().report.epochs.last).trainLoss
        }
        let learnt = try lastTrainingLoss(cuttingOff: 0), hidden = try lastTrainingLoss(cuttingOff: 1)
        #expect(learnt < 0.35, "with every example whole: loss \(learnt)")
        #expect(hidden > 0.6, "with every example cut off: loss \(hidden) (chance is ln 2 = 0.69)")
    }

    @Test func splitKeepsGroupsTogetherAndIsStratified() {
        let data = tonesAndNoise(seed: 7)
        let split = data.split(validationShare: 0.2, testShare: 0.2, seed: 9)
        let parts = [split.train, split.validation, split.test]
        #expect(parts.reduce(0) { $0 + $1.count } == data.examples.count)
        let groupsOf = parts.map { Set($0.map { data.examples[$0].group }) }
        #expect(groupsOf[0].isDisjoint(with: groupsOf[1]) && groupsOf[0].isDisjoint(with: groupsOf[2]) && groupsOf[1].isDisjoint(with: groupsOf[2]))
        for part in parts { #expect(Set(part.map { data.examples[$0].label }) == [0, 1]) }
        #expect(data.split(validationShare: 0.2, testShare: 0.2, seed: 9).test == split.test)
    }

    @Test func sharedDataRuleDecidesTheTestSplitOfItsFiles() throws {
        var data = tonesAndNoise(seed: 8)
        // The rule knows the data set by its folders side by side, as ../shared/data lays them out.
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("somni-data-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        for set in TrainingSet.sharedDataSets {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(set), withIntermediateDirectories: true)
        }
        let d = root.path
        let paths = ["\(d)/snoring-khan/snoring/1_31.flac", "\(d)/snoring-khan/snoring/1_29.flac", "\(d)/snoring-khan/no_snoring/0_85.flac",
                     "\(d)/noise/pink_noise.flac", "\(d)/noise/pink_noise.flac", "\(d)/noise/pink_noise.flac"]
        data.clips.append([Float](repeating: 0, count: 100_000))
        for (i, p) in paths.enumerated() {
            data.examples[i].path = p
            if p.contains("noise/") {
                data.examples[i].clip = data.clips.count - 1
                data.examples[i].start = [10_000, 78_000, 85_000][i - 3]
                data.examples[i].length = 10_000
            }
        }
        let split = data.sharedDataSplit(validationShare: 0.15, testShare: 0.15, seed: 1)
        #expect(split.test.contains(0) && split.test.contains(2) && split.test.contains(5))
        #expect(!split.test.contains(1) && !split.test.contains(3))
        #expect(!(split.train + split.validation + split.test).contains(4))  // straddles the 80 % boundary
        #expect(split.train.contains(1) || split.validation.contains(1))
        // Generated examples outside the data set are still split by group.
        #expect(split.test.contains { $0 >= paths.count } && split.validation.contains { $0 >= paths.count })
        // Scoring a classifier on the held-out part takes the rule's test part alone, and counts
        // what lies outside the data set rather than scoring it.
        let heldOut = data.sharedDataHeldOut()
        #expect(heldOut.heldOut == [0, 2, 5])
        #expect(heldOut.outsideTheData == data.examples.count - paths.count)
        // Another fold holds out another part: fold 1 Khan indices 0–9 (none here) and the noise
        // recording's first fifth, where the window at 10,000 lies; the windows after it train.
        #expect(data.sharedDataHeldOut(fold: 1).heldOut == [3])
        let fold1 = data.sharedDataSplit(validationShare: 0.15, testShare: 0.15, seed: 1, fold: 1)
        #expect(fold1.test.filter { $0 < paths.count } == [3])
        for i in [0, 1, 2, 4, 5] { #expect(fold1.train.contains(i) || fold1.validation.contains(i), "example \(i)") }
        // Fold 3: Khan 20–29 (1_29); fold 4: no Khan, and the window at 78,000 straddles 80,000.
        #expect(data.sharedDataHeldOut(fold: 3).heldOut == [1])
        #expect(data.sharedDataHeldOut(fold: 4).heldOut.isEmpty)
        let fold4 = data.sharedDataSplit(validationShare: 0.15, testShare: 0.15, seed: 1, fold: 4)
        #expect(!(fold4.train + fold4.validation + fold4.test).contains(4))

        // A user's own folder named like one of the data set's is not it: its recordings are
        // split by group with the rest, none dropped (the window across 80 % was).
        for i in 0..<paths.count { data.examples[i].path = paths[i].replacingOccurrences(of: d, with: "/home/me/sounds") }
        #expect(TrainingSet.recordingFile("/home/me/sounds/noise/pink_noise.flac") == nil)
        let own = data.sharedDataSplit(validationShare: 0.15, testShare: 0.15, seed: 1)
        #expect((own.train + own.validation + own.test).sorted() == Array(data.examples.indices))
        #expect(data.sharedDataHeldOut().heldOut.isEmpty)
    }

    /// Every share comes with its 95 % Wilson interval, and each class is also scored against
    /// the rest together (Khan's snoring against non-snoring).
    @Test func metricsGiveEachShareAWilsonIntervalAndEachClassAgainstTheRest() throws {
        // Published values: 95 of 100 → 0.8882–0.9785; 0 of 10 → 0–0.2775; 10 of 10 → 0.7225–1.
        let ninetyFive = try #require(ClassificationMetrics.wilsonInterval(successes: 95, trials: 100))
        #expect(abs(ninetyFive[0] - 0.8882) < 5e-4 && abs(ninetyFive[1] - 0.9785) < 5e-4, "\(ninetyFive)")
        let none = try #require(ClassificationMetrics.wilsonInterval(successes: 0, trials: 10))
        #expect(abs(none[0]) < 1e-9 && abs(none[1] - 0.2775) < 5e-4, "\(none)")
        let all = try #require(ClassificationMetrics.wilsonInterval(successes: 10, trials: 10))
        #expect(abs(all[0] - 0.7225) < 5e-4 && abs(all[1] - 1) < 1e-9, "\(all)")
        #expect(ClassificationMetrics.wilsonInterval(successes: 0, trials: 0) == nil)

        // Truth a, a, a, b, b, c; called a, a, b, b, a, a: nothing is called c.
        let m = ClassificationMetrics(labels: ["a", "b", "c"], truth: [0, 0, 0, 1, 1, 2], predicted: [0, 0, 1, 1, 0, 0],
                                      sources: Array(repeating: "s", count: 6))
        let a = m.classes[0], b = m.classes[1], c = m.classes[2]
        #expect(m.accuracy == 0.5 && m.accuracyInterval == ClassificationMetrics.wilsonInterval(successes: 3, trials: 6))
        #expect(a.precision == 0.5 && a.precisionInterval == ClassificationMetrics.wilsonInterval(successes: 2, trials: 4))
        #expect(abs((a.recall ?? 0) - 2.0 / 3) < 1e-12 && a.recallInterval == ClassificationMetrics.wilsonInterval(successes: 2, trials: 3))
        // a against the rest: wrong on the a called b, and on the b and the c called a.
        #expect(a.againstTheRest == 0.5 && a.againstTheRestInterval == ClassificationMetrics.wilsonInterval(successes: 3, trials: 6))
        #expect(abs((b.againstTheRest ?? 0) - 4.0 / 6) < 1e-12)
        // c was never called: no precision to give; right against the rest everywhere but on
        // its own one example.
        #expect(c.precisionInterval == nil && c.recallInterval != nil && c.support == 1)
        // ... so its precision is no figure (not 0), its recall 0 of 1 and its F1 0.
        #expect(c.precision == nil && c.recall == 0 && c.f1 == 0)
        // A label that is neither there nor called has no figures at all, in the JSON too.
        let d = ClassificationMetrics(labels: ["a", "d"], truth: [0, 0], predicted: [0, 0], sources: ["s", "s"]).classes[1]
        #expect(d.precision == nil && d.recall == nil && d.f1 == nil)
        let json = String(decoding: try JSONEncoder().encode(d), as: UTF8.self)
        #expect(!json.contains("precision") && !json.contains("recall") && !json.contains("f1"), "\(json)")
        #expect(abs((c.againstTheRest ?? 0) - 5.0 / 6) < 1e-12)
        let text = m.formatted(labels: ["a", "b", "c"])
        #expect(text.contains("accuracy 0.500 (0.188–0.812) over 6 windows"), "\(text)")
        // Long labels are given whole in both tables (cut to 12 and 10 characters, two read the same).
        // So are labels beyond ASCII: a class folder named with an emoji was cut in half.
        let long = ["white-noise-long", "white-noise-loud", "schnarchen ü 😴"]
        let table = ClassificationMetrics(labels: long, truth: [0, 1, 2], predicted: [0, 1, 2], sources: ["s", "s", "s"]).formatted(labels: long)
        // Each whole, at the start of its class row and of its confusion row.
        let lines = table.split(separator: "\n")
        for label in long {
            #expect(lines.filter { $0.hasPrefix(label + " ") }.count == 1 && lines.filter { $0.hasPrefix("  " + label + " ") }.count == 1,
                    "\(table)")
        }
    }

    @Test func groupKeysFollowTheDataSetsNamingRules() {
        #expect(TrainingFileList.group(of: "0a7c2a8d_nohash_3", blockSize: 25) == "0a7c2a8d")
        #expect(TrainingFileList.group(of: "1_24", blockSize: 25) == TrainingFileList.group(of: "1_0", blockSize: 25))
        #expect(TrainingFileList.group(of: "1_25", blockSize: 25) != TrainingFileList.group(of: "1_24", blockSize: 25))
        #expect(TrainingFileList.group(of: "0029d048-898a", blockSize: 25) == "0029d048-898a")
    }

    /// A sidecar's label is the rest of its line, so a class folder named with a space can be
    /// marked; times may be split by a tab, a space or a comma.
    @Test func aSidecarLabelIsTheRestOfItsLine() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-sidecar-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: url) }
        let labels = ["other", "sleep talk", "dog bark"]
        try "10\t11\tsleep talk\n12,13, dog bark \n14 15\n\n16\t17\tsleep  talk\n".write(to: url, atomically: true, encoding: .utf8)
        #expect { _ = try TrainingFileList.readEvents(url, label: 0, labels: labels) } throws: {
            "\($0)".contains("'sleep  talk' is not one of the classes")
        }
        try "10\t11\tsleep talk\n12,13, dog bark \n14 15\n\n".write(to: url, atomically: true, encoding: .utf8)
        #expect(try TrainingFileList.readEvents(url, label: 0, labels: labels)
                == [.init(seconds: 10...11, label: 1), .init(seconds: 12...13, label: 2), .init(seconds: 14...15, label: 0)])
    }

    @Test func scanFindsClassFoldersSidecarEventsAndCutsGaps() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-learn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in ["cough/set", "other"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(c), withIntermediateDirectories: true)
        }
        for name in ["cough/set/rec.flac", "other/a_1.flac", "other/a_2.flac", "other/b.flac"] {
            try Data().write(to: dir.appendingPathComponent(name))
        }
        try "0.5\t0.9\n4.0\t4.3\n".write(to: dir.appendingPathComponent("cough/set/rec.txt"), atomically: true, encoding: .utf8)
        let list = try TrainingFileList.scan(dir, blockSize: 25)
        #expect(list.labels == ["cough", "other"])
        let rec = try #require(list.files.first { $0.url.lastPathComponent == "rec.flac" })
        #expect(rec.events == [.init(seconds: 0.5...0.9, label: 0), .init(seconds: 4.0...4.3, label: 0)] && rec.stratum == "cough/set")
        #expect(Set(list.files.filter { $0.label == 1 }.map(\.group)).count == 2)
        // 6 s recordings: two coughs, and the 2.6 s gap between them (less margins) as "other".
        let set = try TrainingSet.load(list, windowLength: 15_600, gapLabel: 1, threads: 2) { _ in [Float](repeating: 0.1, count: 96_000) }
        let fromRec = set.examples.filter { $0.group == rec.group }
        #expect(fromRec.filter { $0.label == 0 }.map(\.length) == [6_400, 4_800])
        #expect(fromRec.contains { $0.label == 1 && $0.start >= 14_400 + 4_000 && $0.start + $0.length <= 64_000 - 4_000 })
    }

    /// A sidecar time beyond a day (`inf`, or milliseconds of a long recording) is refused by its
    /// line before any decoding (as samples it would overflow and trap); events after the end of
    /// the recording they mark are listed rather than dropped in silence.
    @Test func sidecarTimesBeyondADayAreRefusedAndEventsAfterTheEndAreListed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-learn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in ["cough", "other"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(c), withIntermediateDirectories: true)
        }
        for name in ["cough/a.wav", "cough/ms.wav", "other/b.wav"] { try Data().write(to: dir.appendingPathComponent(name)) }
        for line in ["2\tinf", "1e20\t2e20", "86000\t86401"] {
            try "\(line)\n".write(to: dir.appendingPathComponent("cough/a.txt"), atomically: true, encoding: .utf8)
            do {
                _ = try TrainingFileList.scan(dir, blockSize: 25)
                Issue.record("'\(line)' must be refused")
            } catch let e as SomniError {
                #expect(e.code == .badInput && e.message.contains("a.txt: '\(line)' is not") && e.message.contains("≤ 86400"), "\(e)")
            }
        }
        // a.txt marks one cough inside its 6 s; ms.txt marks two in milliseconds, one of them past the end.
        try "0.5\t0.9\n".write(to: dir.appendingPathComponent("cough/a.txt"), atomically: true, encoding: .utf8)
        try "3\t5\n2000\t2400\n".write(to: dir.appendingPathComponent("cough/ms.txt"), atomically: true, encoding: .utf8)
        let list = try TrainingFileList.scan(dir, blockSize: 25)
        let set = try TrainingSet.load(list, windowLength: 15_600, gapLabel: nil, threads: 2) { _ in [Float](repeating: 0.1, count: 96_000) }
        #expect(set.skipped.isEmpty)
        #expect(set.eventsPastEnd.count == 1 && set.eventsPastEnd[0].hasSuffix("ms.wav: 1 of its 2 marked events after its end (6.0 s)"),
                "\(set.eventsPastEnd)")
        #expect(set.examples.filter { $0.label == 0 }.map(\.length) == [6_400, 32_000])

        // Every cough marked past its recording's end: the error says why, not that nothing decoded.
        try "2000\t2400\n".write(to: dir.appendingPathComponent("cough/a.txt"), atomically: true, encoding: .utf8)
        try "7\t8\n".write(to: dir.appendingPathComponent("cough/ms.txt"), atomically: true, encoding: .utf8)
        do {
            _ = try TrainingSet.load(try TrainingFileList.scan(dir, blockSize: 25), windowLength: 15_600, gapLabel: nil, threads: 2) { _ in
                [Float](repeating: 0.1, count: 96_000)
            }
            Issue.record("a class whose every event lies past its recordings must stop training")
        } catch let e as SomniError {
            #expect(e.message.hasPrefix("no cough examples could be read from its 2 files (") && e.message.contains("after its end (6.0 s)"),
                    "\(e)")
        }
    }

    /// One broken clip among many is left out and listed; a class with nothing readable, or an
    /// empty class folder, is an error that names it.
    @Test func aFileThatCannotBeDecodedIsLeftOutAndAClassWithNoneReadableIsAnError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-learn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in ["cough", "other"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(c), withIntermediateDirectories: true)
        }
        for name in ["cough/a.wav", "cough/broken.wav", "cough/silent.wav", "other/b.wav"] {
            try Data().write(to: dir.appendingPathComponent(name))
        }
        let list = try TrainingFileList.scan(dir, blockSize: 25)
        struct Broken: Error {}
        let set = try TrainingSet.load(list, windowLength: 15_600, gapLabel: nil, threads: 2) { url in
            switch url.lastPathComponent {
            case "broken.wav": throw Broken()
            case "silent.wav": return []
            default: return [Float](repeating: 0.1, count: 15_600)
            }
        }
        #expect(set.examples.map(\.label).sorted() == [0, 1])
        #expect(set.skipped.count == 2 && set.skipped.contains { $0.hasSuffix("broken.wav: Broken()") }
                && set.skipped.contains { $0.hasSuffix("silent.wav: no sound in it") }, "\(set.skipped)")

        do {
            _ = try TrainingSet.load(list, windowLength: 15_600, gapLabel: nil, threads: 2) { url in
                if url.path.contains("/cough/") { throw Broken() }
                return [Float](repeating: 0.1, count: 15_600)
            }
            Issue.record("a class with nothing readable must stop training")
        } catch let e as SomniError {
            #expect(e.code == .badInput && e.message.hasPrefix("no cough examples could be read from its 3 files ("), "\(e)")
        }
        // The decoder's own words name the path where they like: the reason is still given.
        do {
            _ = try TrainingSet.load(list, windowLength: 15_600, gapLabel: nil, threads: 2) { url in
                if url.path.contains("/cough/") { throw SomniError(.badInput, "not an audio file: \(url.path) (no stream)") }
                return [Float](repeating: 0.1, count: 15_600)
            }
            Issue.record("a class with nothing readable must stop training")
        } catch let e as SomniError {
            #expect(e.message.hasPrefix("no cough examples could be read from its 3 files (not an audio file: \(dir.path)/cough/"), "\(e)")
        }

        try FileManager.default.createDirectory(at: dir.appendingPathComponent("snoring"), withIntermediateDirectories: true)
        do {
            _ = try TrainingFileList.scan(dir, blockSize: 25)
            Issue.record("an empty class folder must be named")
        } catch let e as SomniError {
            #expect(e.message.contains("snoring holds no audio files"), "\(e)")
        }
    }

    /// Folder names that cannot be labels are refused by name: a line break (it broke every
    /// table), and one name in two Unicode spellings (its second folder trained under the first,
    /// then "no examples"). Recordings beside the class folders are listed, and a class whose one
    /// recording has an empty sidecar says so.
    @Test func namesThatCannotBeLabelsAndRecordingsInNoClassAreNamed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-learn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in ["cough", "other"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(c), withIntermediateDirectories: true)
            try Data().write(to: dir.appendingPathComponent("\(c)/a.wav"))
        }
        try Data().write(to: dir.appendingPathComponent("stray.m4a"))
        try Data().write(to: dir.appendingPathComponent("notes.txt"))
        let list = try TrainingFileList.scan(dir, blockSize: 25)
        #expect(list.outsideClassFolders == [dir.appendingPathComponent("stray.m4a").path])

        try Data().write(to: dir.appendingPathComponent("cough/a.txt"))
        #expect { _ = try TrainingSet.load(try TrainingFileList.scan(dir, blockSize: 25), windowLength: 15_600, gapLabel: nil, threads: 1) { _ in
            [Float](repeating: 0.1, count: 32_000)
        } } throws: { "\($0)".contains("no cough examples could be read from its 1 file (\(dir.path)/cough/a.txt marks no events)") }
        try FileManager.default.removeItem(at: dir.appendingPathComponent("cough/a.txt"))

        for (first, second) in [("caf\u{E9}", "cafe\u{301}"), ("line\nbreak", nil)] {
            for name in [first, second].compactMap({ $0 }) {
                try FileManager.default.createDirectory(at: dir.appendingPathComponent(name), withIntermediateDirectories: true)
                try Data().write(to: dir.appendingPathComponent("\(name)/a.wav"))
            }
            #expect { _ = try TrainingFileList.scan(dir, blockSize: 25) } throws: {
                "\($0)".contains(second == nil ? "has a control character" : "one name spelt in two Unicode forms")
            }
            for name in [first, second].compactMap({ $0 }) { try FileManager.default.removeItem(at: dir.appendingPathComponent(name)) }
        }
    }

    /// Recordings go by their names, phones' and browsers' too, in any case; other files are
    /// listed, but neither a recording's sidecar nor a hidden file. A pipe named like a recording
    /// is listed, never opened.
    @Test func filesAreTakenForAudioByNameAndTheRestAreListed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-learn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in ["speech/phone", "other"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(c), withIntermediateDirectories: true)
        }
        let audio = ["speech/phone/a.3gp", "speech/phone/b.AMR", "speech/c.webm", "speech/d.m4a", "other/e.wma", "other/f.caf", "other/g.Wav"]
        let others = ["speech/phone/notes.md", "speech/phone/cover.jpg", "other/README.txt", "other/g.wav.bak", "other/live.wav",
                      "speech/moved.wav"]
        for name in audio + others + ["other/.DS_Store", "speech/c.txt"] where name != "other/live.wav" && name != "speech/moved.wav" {
            try Data().write(to: dir.appendingPathComponent(name))
        }
        #expect(mkfifo(dir.appendingPathComponent("other/live.wav").path, 0o600) == 0)
        // A link whose recording was moved away is listed, not passed over in silence.
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("speech/moved.wav").path,
                                                   withDestinationPath: "/nonexistent/somni/moved.wav")
        try "0.1\t0.5\n".write(to: dir.appendingPathComponent("speech/c.txt"), atomically: true, encoding: .utf8)
        // A link back to its own folder is followed once, not round and round.
        try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent("speech/phone/again"),
                                                   withDestinationURL: dir.appendingPathComponent("speech/phone"))
        let list = try TrainingFileList.scan(dir, blockSize: 25)
        #expect(list.files.map { String($0.url.path.dropFirst(dir.path.count + 1)) }.sorted() == audio.sorted())
        #expect(list.files.first { $0.url.lastPathComponent == "c.webm" }?.events?.count == 1)
        #expect(list.notAudio.map { String($0.dropFirst(dir.path.count + 1)) }.sorted() == others.sorted())

        let (beds, notBeds) = try AudioFileNames.files(under: dir.appendingPathComponent("other"))
        #expect(beds.map { URL(fileURLWithPath: $0).lastPathComponent } == ["e.wma", "f.caf", "g.Wav"])
        #expect(notBeds.map { URL(fileURLWithPath: $0).lastPathComponent } == ["README.txt", "g.wav.bak", "live.wav"])

        // A recording reached twice in one class (a link to one) is taken once ...
        try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent("speech/same.m4a"),
                                                   withDestinationURL: dir.appendingPathComponent("speech/d.m4a"))
        #expect(try TrainingFileList.scan(dir, blockSize: 25).files.count == audio.count)
        // ... and one reached from two classes (a link to "..": the whole data folder) stops the scan
        // by name; before, every speech recording also trained "other".
        try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent("other/loop"), withDestinationURL: dir)
        #expect { try TrainingFileList.scan(dir, blockSize: 25) } throws: {
            "\($0)".contains("is in class folders") && "\($0)".contains("a recording can teach only one class")
        }
    }

    /// A name whose bytes are not UTF-8 (Latin-1 "café") reaches Swift spelt with U+FFFD and
    /// cannot be opened so: a file is listed with why, a class folder stops the scan by name,
    /// instead of both vanishing from the training without a word.
    @Test func namesThatAreNotUTF8AreNamedNotDropped() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-learn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in ["hum", "hiss"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(c), withIntermediateDirectories: true)
            try Data().write(to: dir.appendingPathComponent("\(c)/ok.wav"))
        }
        /// `parent/caf<0xE9>SUFFIX`, made from raw bytes.
        func latin1(_ parent: URL, _ suffix: String, folder: Bool) {
            let bytes = Array(parent.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(suffix.utf8) + [0]
            let made = bytes.withUnsafeBufferPointer { b in
                b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { folder ? mkdir($0, 0o755) : creat($0, 0o644) }
            }
            #expect(made >= 0)
            if !folder { close(made) }
        }
        latin1(dir.appendingPathComponent("hum"), ".wav", folder: false)
        let list = try TrainingFileList.scan(dir, blockSize: 25)
        #expect(list.files.count == 2)
        #expect(list.notAudio.count == 1 && list.notAudio[0].contains("caf\u{FFFD}.wav (its name is not valid UTF-8"), "\(list.notAudio)")

        latin1(dir, "", folder: true)
        let error = #expect(throws: SomniError.self) { try TrainingFileList.scan(dir, blockSize: 25) }
        #expect(error?.message.contains("holds 'caf\u{FFFD}', whose name is not valid UTF-8") == true, "\(String(describing: error))")
    }

    @Test func aSidecarLineNamingAClassMarksThatClassAndIsNoGap() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-learn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in ["cough", "other", "snoring/nights"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(c), withIntermediateDirectories: true)
        }
        for name in ["snoring/nights/night.flac", "other/b.flac", "cough/c.flac"] { try Data().write(to: dir.appendingPathComponent(name)) }
        // A 20 s night: a snore, a cough named by its line, and a snore.
        try "1.0\t2.0\n5.0\t5.4\tcough\n8.0\t9.0\n".write(to: dir.appendingPathComponent("snoring/nights/night.txt"), atomically: true, encoding: .utf8)
        let list = try TrainingFileList.scan(dir, blockSize: 25)
        #expect(list.labels == ["cough", "other", "snoring"])
        let night = try #require(list.files.first { $0.url.lastPathComponent == "night.flac" })
        #expect(night.events?.map(\.label) == [2, 0, 2])
        let set = try TrainingSet.load(list, windowLength: 15_600, gapLabel: 1, threads: 2) { _ in [Float](repeating: 0.1, count: 320_000) }
        let fromNight = set.examples.filter { $0.group == night.group }
        #expect(fromNight.filter { $0.label == 2 }.count == 2)
        let cough = try #require(fromNight.first { $0.label == 0 })
        #expect(cough.start == 80_000 && cough.length == 6_400 && cough.stratum == "cough/marked in snoring/nights")
        // Gaps as "other" lie between the marked events, the cough's included, 0.4 s clear of each.
        let gaps = fromNight.filter { $0.label == 1 }
        #expect(gaps.contains { $0.start >= 38_400 && $0.start + $0.length <= 73_600 })
        #expect(gaps.contains { $0.start >= 92_800 && $0.start + $0.length <= 121_600 })
        #expect(gaps.allSatisfy { $0.start + $0.length <= 73_600 || $0.start >= 92_800 })

        try "1.0\t2.0\tsnores\n".write(to: dir.appendingPathComponent("snoring/nights/night.txt"), atomically: true, encoding: .utf8)
        #expect(throws: SomniError.self) { try TrainingFileList.scan(dir, blockSize: 25) }
    }
}
