import Foundation
import SomniAudio
import SomniCore
import Testing

/// The shipped classifier (both models) on the held-out test split of ../shared/data — the shared rule (`DataSplit`)
/// that scripts/train-default-model.sh (`--split shared-data`) keeps away from training. Lives here
/// rather than in SomniCoreTests because reading FLAC needs SomniAudio's decoder. Skipped when
/// the data is absent. To keep a debug-build run short it classifies every Khan window of the
/// test split and at most `perSourceCap` windows of each other source; SOMNI_HELDOUT_CAP=100000
/// classifies every window. The figures the README gives come from the command line instead
/// (scripts/evaluate-held-out-windows.sh, `somni classify DATA_DIR --split shared-data`, with
/// 95 % intervals); this test keeps them from falling back.
@Suite struct LearningHeldOutTests {
    static let dataFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/data")
    static let perSourceCap = Int(ProcessInfo.processInfo.environment["SOMNI_HELDOUT_CAP"] ?? "") ?? 60

    /// The class folders of scripts/train-default-model.sh, as links into the data.
    static let layout = [
        ("snoring/khan", "snoring-khan/snoring"), ("speech/speech-commands", "speech-commands"),
        ("cough/coughseg", "cough-coughseg/cough"), ("other/khan-no-snoring", "snoring-khan/no_snoring"),
        ("other/coughseg-no-cough", "cough-coughseg/no_cough"), ("other/noise", "noise"),
    ]

    @Test func shippedModelMeetsTheQualityTargetsOnTheHeldOutSplit() throws {
        let fm = FileManager.default
        guard fm.fileExists(atPath: Self.dataFolder.appendingPathComponent("snoring-khan").path) else {
            print("skipped: the training data is not in \(Self.dataFolder.path)")
            return
        }
        let stage = fm.temporaryDirectory.appendingPathComponent("somni-heldout-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: stage) }
        for (link, target) in Self.layout {
            let url = stage.appendingPathComponent(link)
            try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try fm.createSymbolicLink(at: url, withDestinationURL: Self.dataFolder.appendingPathComponent(target))
        }
        let list = try TrainingFileList.scan(stage, blockSize: 10)
        let other = try #require(list.labels.firstIndex(of: "other"))
        let data = try TrainingSet.load(list, windowLength: classifierWindowLength, gapLabel: other, threads: 2) { url in
            let decoder = try AudioDecoder(url: url)
            var samples: [Float] = [], block = [Float](repeating: 0, count: 16_384)
            while case let n = try block.withUnsafeMutableBufferPointer({ try decoder.read(into: $0) }), n > 0 { samples += block[0..<n] }
            return samples
        }
        let test = data.sharedDataHeldOut().heldOut
        // Every Khan window; of other sources an even spread of at most perSourceCap windows.
        let bySource = Dictionary(grouping: test) { data.examples[$0].stratum }
        let sample = bySource.keys.sorted().flatMap { source -> [Int] in
            let members = bySource[source]!
            let step = source.contains("khan") ? 1 : max(1, (members.count + Self.perSourceCap - 1) / Self.perSourceCap)
            return stride(from: 0, to: members.count, by: step).map { members[$0] }
        }

        var classifier = try CNNClassifier.bundled()
        #expect(classifier.models.count == 2)
        #expect(classifier.labels.sorted() == ["cough", "other", "snoring", "speech"])
        let metrics = try classifier.score(data, examples: sample)
        print(metrics.formatted(labels: classifier.labels))

        // Khan: snoring against everything else, on Khan's clips only.
        let khan = sample.filter { data.examples[$0].stratum.contains("khan") }
        let snoring = try #require(classifier.labels.firstIndex(of: "snoring"))
        let khanAccuracy = try #require(try classifier.score(data, examples: khan).classes[snoring].againstTheRest)
        print("Khan snoring vs non-snoring accuracy \(khanAccuracy) over \(khan.count) clips")
        let cough = metrics.classes[try #require(classifier.labels.firstIndex(of: "cough"))]
        let speech = metrics.classes[try #require(classifier.labels.firstIndex(of: "speech"))]
        #expect(khan.count >= 100)
        // What the shipped classifier reaches now: a failure here is a regression. (Seeds 2 and 3,
        // the second asked when the first is under 0.9, on this sample since stop 36: Khan 0.985,
        // cough 0.898 / 0.898, speech 0.979 / 0.868, accuracy 0.954; every window: Khan 0.985,
        // cough 0.932 / 0.945, speech 0.980 / 0.939, accuracy 0.957. Seed 2 alone, shipped until stop 32: Khan
        // 0.965, cough 0.936 / 0.898, speech 0.979 / 0.887, accuracy 0.950; v2, trained without
        // nights: Khan 0.965, cough 0.894 / 0.857, speech 0.925 / 0.925, accuracy 0.944; Khan was
        // 0.925 before steady windows stopped passing for snoring, `SteadySound`; v1 had cough
        // 0.882 / 0.918 and speech 0.978 / 0.849.)
        #expect(khanAccuracy >= 0.98)
        #expect((cough.recall ?? 0) >= 0.85 && (cough.precision ?? 0) >= 0.85)
        #expect((speech.recall ?? 0) >= 0.85 && (speech.precision ?? 0) >= 0.9)
        #expect(metrics.accuracy >= 0.92)
        // Issue 3's targets, not reached yet: two of the ten held-out Khan TV-news clips pass for
        // snoring (the other eight hold too steady a level, `SteadySound`), a Khan snore and some
        // CoughSeg coughs for other, and quiet Speech Commands words for other. Recorded as a known issue so
        // the gap stays visible; this block fails once the targets are met, to be removed then.
        withKnownIssue("the default model is below issue 3's held-out targets") {
            #expect(khanAccuracy >= 0.99)
            for c in [cough, speech] {
                #expect((c.recall ?? 0) >= 0.95 && (c.precision ?? 0) >= 0.95,
                        "\(c.label): precision \(c.precision ?? 0), recall \(c.recall ?? 0)")
            }
        }
    }
}
