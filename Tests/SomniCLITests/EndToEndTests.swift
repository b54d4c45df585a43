import Foundation
import SomniCore
import Testing

/// synth → analyze → evaluate through the binary: the planted events must be found.
@Suite struct EndToEndTests {
    @Test func analyzeFindsThePlantedEventsOfASynthesisedNight() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        let reference = dir.appendingPathComponent("night.csv")
        let synth = try CLI.run(["synth", "--out", audio.path, "--hours", "0.3", "--seed", "11", "--scene", "quiet"])
        #expect(synth.status == 0, "\(synth.stderr)")
        let night = dir.appendingPathComponent("night.night")
        let analyze = try CLI.run(["analyze", audio.path, "--out", night.path])
        #expect(analyze.status == 0, "\(analyze.stderr)")
        #expect(analyze.stdout.contains("Night folder: \(night.path)"))

        let evaluate = try CLI.run(["evaluate", "--reference", reference.path, night.path, "--json"])
        #expect(evaluate.status == 0, "\(evaluate.stderr)")
        let report = try JSONDecoder().decode(EvaluationReport.self, from: Data(evaluate.stdout.utf8))
        let byClass = Dictionary(uniqueKeysWithValues: report.classes.map { ($0.eventClass, $0) })
        let snoring = try #require(byClass[.snoring])
        #expect(snoring.scoredReferenceCount > 0)
        // Snoring time is held here, not episode F1: the model, trained on real recordings, misses
        // runs of generated snores, and one run of four splits this night's only episode in two
        // (episode F1 0). Episodes on real held-out snores are measured by
        // scripts/evaluate-default-model.sh (README, 'Quality').
        #expect((snoring.segments.f1 ?? 0) >= 0.9, "snoring time: \(snoring.segments)")
        #expect((snoring.segments.recall ?? 0) >= 0.9, "snoring time: \(snoring.segments)")
        #expect(snoring.falseEventsPerHour <= 10, "false snoring episodes per hour: \(snoring.falseEventsPerHour)")

        // Given the recording, evaluate bins every scored reference by its level: the bins add up
        // to the scored references and the found ones to the event-based true positives.
        let withLevels = try CLI.run(["evaluate", "--reference", reference.path, night.path, "--audio", audio.path, "--json"])
        #expect(withLevels.status == 0, "\(withLevels.stderr)")
        let levelled = try JSONDecoder().decode(EvaluationReport.self, from: Data(withLevels.stdout.utf8))
        let levels = try #require(levelled.levels)
        for c in levelled.classes {
            let l = try #require(levels.first { $0.eventClass == c.eventClass })
            #expect(l.bins.reduce(0) { $0 + $1.referenceCount } + l.unmeasuredCount == c.scoredReferenceCount)
            #expect(l.bins.reduce(0) { $0 + $1.foundCount } == c.events.truePositives)
        }
        // A quiet bedroom: every snoring episode rises well clear of the room.
        let snoringLevels = try #require(levels.first { $0.eventClass == .snoring })
        #expect(snoringLevels.bins.dropLast(2).allSatisfy { $0.referenceCount == 0 }, "\(snoringLevels.bins)")
        let missingAudio = try CLI.run(["evaluate", "--reference", reference.path, night.path, "--audio", dir.appendingPathComponent("gone.wav").path])
        #expect(missingAudio.status != 0)
        #expect(missingAudio.stderr.split(separator: "\n").count == 1 && missingAudio.stderr.contains("gone.wav"), "\(missingAudio.stderr)")

        // The night folder holds what session.json promises.
        let session = try Session.load(from: night.appendingPathComponent("session.json"))
        #expect(!session.events.isEmpty)
        for e in session.events {
            let clip = try #require(e.clip)
            #expect(FileManager.default.fileExists(atPath: night.appendingPathComponent(clip).path))
        }
        let envelope = try EnvelopeFile.read(from: night.appendingPathComponent("envelope.bin"))
        #expect(abs(Double(envelope.values.count) / envelope.rate - session.duration) < 0.2)
    }

    @Test func theReadmesDemoNightFindsItsSnoringEpisodes() throws {
        // The night the README's first command shows: generated sounds in a quiet room, read by
        // the heuristic. It found every snoring episode; a rule that joined a rumble to a train
        // through a quiet room's noise frames (stop 18, unbounded) scored 0.667.
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["demo", "--out", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let session = try Session.load(from: dir.appendingPathComponent("demo-night.night/session.json"))
        let reference = try ReferenceCSV.parse(String(contentsOf: dir.appendingPathComponent("demo-night.csv"), encoding: .utf8))
        let found = session.events.map { ReferenceEvent(eventClass: $0.eventClass, start: $0.start, end: $0.end) }
        let report = Evaluator.evaluate(reference: reference, found: found, duration: session.duration)
        let snoring = try #require(report.classes.first { $0.eventClass == .snoring })
        #expect((snoring.events.f1 ?? 0) >= 0.8, "snoring episodes: \(snoring.events)")
        #expect((snoring.segments.f1 ?? 0) >= 0.95, "snoring time: \(snoring.segments)")
    }

    @Test func demoNeedsNoDataAndSaysItIsSynthetic() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["demo", "--out", dir.path, "--minutes", "5"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("synthetic"))
        #expect(r.stdout.contains("Night folder:"))
        let session = try Session.load(from: dir.appendingPathComponent("demo-night.night/session.json"))
        // Generated sounds are read by the baseline, which says why; the model is one flag away.
        #expect(session.settings.classifier == "heuristic" && r.stdout.contains("does not know these generated sounds"))
        let model = try CLI.run(["demo", "--out", dir.appendingPathComponent("model").path, "--minutes", "2",
                                 "--classifier", "model"])
        #expect(model.status == 0 && model.stdout.contains("classifier: somni-cnn"), "\(model.stdout)")
    }
}
