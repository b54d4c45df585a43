import Foundation
import SomniCore
import Testing

/// `somni evaluate --errors`: where a night's score was lost, as text and as JSON.
@Suite struct EvaluateCommandTests {
    @Test func errorsListWhatWasMissedFoundLateAndFalse() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reference = dir.appendingPathComponent("reference.csv")
        let found = dir.appendingPathComponent("found.csv")
        // Two snoring episodes (snores 5 s apart): the first found from its third snore on, 10 s
        // late; the second not at all. A cough found where there was none.
        try "start,end,class\n100,101,snoring\n105,106,snoring\n110,111,snoring\n115,116,snoring\n300,301,snoring\n305,306,snoring\n"
            .write(to: reference, atomically: true, encoding: .utf8)
        try "start,end,class\n110,111,snoring\n115,116,snoring\n500,500.3,cough\n"
            .write(to: found, atomically: true, encoding: .utf8)

        let text = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", "3600", "--errors"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("snoring") && $0.contains("onset") && $0.hasSuffix("found 110.0–116.0 (onset +10.0 s)") },
                "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("snoring") && $0.contains("missed") && $0.contains("300.0–306.0 s") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("cough") && $0.contains("false") && $0.contains("500.0–500.3 s") }, "\(text.stdout)")

        let json = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", "3600", "--errors", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSONDecoder().decode(EvaluationReport.self, from: Data(json.stdout.utf8))
        let errors = try #require(report.errors)
        #expect(errors.map(\.kind) == [.onset, .missed, .falseEvent], "\(errors)")
        #expect(errors.first?.onsetError == 10)

        // Without the flag the report says nothing of errors.
        let plain = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", "3600", "--json"])
        #expect(try JSONDecoder().decode(EvaluationReport.self, from: Data(plain.stdout.utf8)).errors == nil)
        #expect(plain.stderr.isEmpty, "\(plain.stderr)")
    }

    /// A reference that is not text (a recording or a spreadsheet picked by mistake), or a path that
    /// names no file or a folder, is the user's input: one line and exit 65, as for a missing
    /// recording; a reference that is there but cannot be read is an I/O error.
    @Test func aReferenceThatIsNotTextIsBadInput() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let found = dir.appendingPathComponent("found.csv")
        try "start,end,class\n100,101,cough\n".write(to: found, atomically: true, encoding: .utf8)
        let binary = dir.appendingPathComponent("reference.csv")
        try Data([0x52, 0x49, 0x46, 0x46, 0xFF, 0xFE, 0x00, 0x80, 0xC3, 0x28]).write(to: binary)
        let result = try CLI.run(["evaluate", "--reference", binary.path, found.path, "--duration", "3600"])
        #expect(result.status == 65, "\(result.status) \(result.stderr)")
        #expect(result.errorLines.count == 1)
        #expect(result.stderr.contains("is not text: the reference must be a UTF-8 text file"), "\(result.stderr)")
        let missing = try CLI.run(["evaluate", "--reference", dir.appendingPathComponent("none.csv").path, found.path])
        #expect(missing.status == 65 && missing.errorLines.count == 1, "\(missing.status) \(missing.stderr)")
        #expect(missing.stderr.contains("no such file: \(dir.appendingPathComponent("none.csv").path)"), "\(missing.stderr)")
        let folder = try CLI.run(["evaluate", "--reference", dir.path, found.path])
        #expect(folder.status == 65 && folder.stderr.contains("is a folder"), "\(folder.status) \(folder.stderr)")
        if getuid() != 0 {  // root reads any file, so the I/O case needs an ordinary user
            let locked = dir.appendingPathComponent("locked.csv")
            try "start,end,class\n".write(to: locked, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: locked.path)
            let unreadable = try CLI.run(["evaluate", "--reference", locked.path, found.path])
            #expect(unreadable.status == 74 && unreadable.stderr.contains("cannot read the reference"), "\(unreadable.stderr)")
        }
    }

    /// A night folder whose session.json no analysis writes (edited by hand, made by another
    /// program) is refused by evaluate and report as by import, before its numbers size anything:
    /// a month-long night, a --duration of 1e12 s. Before, report laid out 1e11 ribbon cells and
    /// evaluate 1e12 segments, and an event at 1e19 s trapped in the report's clock.
    /// A night with a gap gives its false events per hour recorded, with --duration as without:
    /// the length given by hand changed the night's length and dropped its gaps too.
    @Test func aLengthGivenByHandKeepsTheNightsGaps() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reference = dir.appendingPathComponent("reference.csv")
        try "start,end,class\n50,51,cough\n".write(to: reference, atomically: true, encoding: .utf8)
        func writeNight(seconds: Double) throws {
            let cough = SessionEvent(id: "evt-0001", eventClass: .cough, start: 11.05, end: 11.45, confidence: 0.9,
                                     peakDBFS: -20, meanDBFS: -25, severity: 50, clip: nil)
            let summary = SessionSummary(duration: seconds, analysedSeconds: seconds / 2, activeShare: 0.5, gateBypassed: false,
                                         events: [cough], episodes: [])
            var session = Session(source: "night.wav", startedAt: nil, duration: seconds, analysedSeconds: seconds / 2,
                                  activeShare: 0.5, settings: AnalysisSettings(sensitivity: 5, classifier: "heuristic"),
                                  summary: summary, episodes: [], events: [cough], warnings: [])
            session.setGaps([RecordingGap(start: seconds / 2, duration: seconds / 2, reason: "microphone lost")])
            try session.jsonData().write(to: dir.appendingPathComponent("session.json"))
        }
        try writeNight(seconds: 1800)
        for extra in [[], ["--duration", "1800"]] {
            let r = try CLI.run(["evaluate", "--reference", reference.path, dir.path, "--json"] + extra)
            #expect(r.status == 0, "\(extra): \(r.stderr)")
            let report = try JSONDecoder().decode(EvaluationReport.self, from: Data(r.stdout.utf8))
            #expect(report.recordedSeconds == 900 && report.falseEventsPerHour == 4, "\(extra): \(r.stdout)")
        }
        // Short spans are given in seconds, not as "0.0 h" beside a rate per hour.
        try writeNight(seconds: 180)
        let text = try CLI.run(["evaluate", "--reference", reference.path, dir.path])
        #expect(text.stdout.hasPrefix("Evaluation over 180 s, 90 s of it recorded"), "\(text.stdout)\(text.stderr)")
    }

    @Test func aNightNoAnalysisWritesIsRefusedBeforeItsNumbersSizeAnything() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reference = dir.appendingPathComponent("reference.csv")
        try "start,end,class\n100,101,cough\n".write(to: reference, atomically: true, encoding: .utf8)
        let summary = SessionSummary(duration: 60, analysedSeconds: 60, activeShare: 0.5, gateBypassed: false,
                                     events: [], episodes: [])
        let valid = Session(source: "night.wav", startedAt: nil, duration: 60, analysedSeconds: 60, activeShare: 0.5,
                            settings: AnalysisSettings(sensitivity: 5, classifier: "heuristic"), summary: summary,
                            episodes: [], events: [], warnings: [])
        let found = dir.appendingPathComponent("found.csv")
        try "start,end,class\n".write(to: found, atomically: true, encoding: .utf8)
        for (name, edit) in [("long", { (s: inout Session) in s.duration = 1e12 }),
                             ("late", { (s: inout Session) in
                                 s.events = [SessionEvent(id: "evt-0001", eventClass: .cough, start: 1e19, end: 1e19, confidence: 0.9,
                                                          peakDBFS: -20, meanDBFS: -25, severity: 50, clip: nil)] })] {
            var session = valid
            edit(&session)
            let folder = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try session.jsonData().write(to: folder.appendingPathComponent("session.json"))
            let page = dir.appendingPathComponent("\(name).html")
            for arguments in [["evaluate", "--reference", reference.path, folder.path], ["report", folder.path, "-o", page.path]] {
                let r = try CLI.run(arguments)
                #expect(r.status == 65 && r.errorLines.count == 1
                        && r.stderr.contains("session.json is not a night Somni could have written"), "\(arguments): \(r.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: page.path))
        }
        // So is a --duration no recording has: a month and more, or less than a second (rates
        // per hour over 1e-320 s were inf, and --json stopped on them), or shorter than the
        // night's own analysis.
        for duration in ["1e12", "1e-320", "0.5"] {
            let r = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", duration, "--json"])
            #expect(r.status == 64 && r.stdout.isEmpty
                    && r.stderr.contains("--duration takes a number of seconds from 1 to 2678400 (31 days)"), "\(duration): \(r.stderr)")
        }
        let night = dir.appendingPathComponent("valid")
        try FileManager.default.createDirectory(at: night, withIntermediateDirectories: true)
        try valid.jsonData().write(to: night.appendingPathComponent("session.json"))
        let short = try CLI.run(["evaluate", "--reference", reference.path, night.path, "--duration", "30"])
        #expect(short.status == 64 && short.stderr.contains("--duration 30 s is shorter than the 60.0 s \(night.path) analysed"),
                "\(short.stderr)")
        #expect(try CLI.run(["evaluate", "--reference", reference.path, night.path, "--duration", "120"]).status == 0)
    }

    /// A night annotated in Audacity, its label track exported as it is: the annotator's other
    /// labels stop the score with a hint until they are named with --ignore.
    @Test func anAudacityLabelTrackIsScoredOnceItsOtherLabelsAreNamed() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let labels = dir.appendingPathComponent("Labels.txt")
        let found = dir.appendingPathComponent("found.csv")
        try "100.000000\t101.000000\tsnore\n\\\t60.000000\t500.000000\n150.000000\t152.500000\tDoor\n"
            .appending("200.000000\t200.300000\tcough\n300.000000\t300.000000\tfan on\n400.000000\t402.000000\ttalk\n")
            .write(to: labels, atomically: true, encoding: .utf8)
        try "start,end,class\n100,101,snoring\n200,200.3,cough\n".write(to: found, atomically: true, encoding: .utf8)

        let stopped = try CLI.run(["evaluate", "--reference", labels.path, found.path, "--duration", "3600"])
        #expect(stopped.status == 65 && stopped.errorLines.count == 1, "\(stopped.status) \(stopped.stderr)")
        #expect(stopped.stderr.contains("line 3: unknown class 'Door' (use snoring, sleep_talk, cough; --ignore 'Door' leaves such lines out)"),
                "\(stopped.stderr)")

        let r = try CLI.run(["evaluate", "--reference", labels.path, found.path, "--duration", "3600", "--json",
                             "--ignore", "door", "--ignore", "Fan on,alarm"])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONDecoder().decode(EvaluationReport.self, from: Data(r.stdout.utf8))
        func scores(_ c: EventClass) throws -> DetectionScores { try #require(report.classes.first { $0.eventClass == c }).events }
        #expect(try scores(.snoring).truePositives == 1 && scores(.cough).truePositives == 1)
        #expect(try scores(.sleepTalk).falseNegatives == 1 && scores(.sleepTalk).truePositives == 0)
        #expect(try [EventClass.snoring, .sleepTalk, .cough].map { try scores($0).falsePositives } == [0, 0, 0])

        // A scored class is not an "other" label: leaving out the reference's snores would score
        // every snore found as false.
        let scored = try CLI.run(["evaluate", "--reference", labels.path, found.path, "--duration", "3600", "--ignore", "door,Snore"])
        #expect(scored.status == 64 && scored.stderr.contains("'Snore' is one of the classes scored"), "\(scored.stderr)")
        // And a number where one is due says so in words; one in hexadecimal (Swift reads
        // "0xE10" as 3600) or not a number at all is not taken for one.
        for value in ["an hour", "0xE10", "nan", "inf"] {
            let word = try CLI.run(["evaluate", "--reference", labels.path, found.path, "--duration", value])
            #expect(word.status == 64 && word.stderr.contains("--duration takes a number, not '\(value)'"), "\(word.stderr)")
        }
    }

    /// A data set's DCASE metadata, one file for every recording: each night is scored against
    /// its own lines, found by its recording's name.
    @Test func aDataSetsMetadataScoresEachNightAgainstItsOwnLines() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let metadata = dir.appendingPathComponent("metadata.tsv")
        try "filename\tonset\toffset\tevent_label\naudio/night-1.wav\t100\t100.3\tcough\naudio/night-2.wav\t200\t200.3\tcough\n"
            .appending("audio/night-2.wav\t300\t300.3\tcough\n").write(to: metadata, atomically: true, encoding: .utf8)
        for (night, coughs) in [("night-1", [100.0]), ("night-2", [200.0, 300.0])] {
            let found = dir.appendingPathComponent("\(night).csv")
            try ("start,end,class\n" + coughs.map { "\($0),\($0 + 0.3),cough\n" }.joined()).write(to: found, atomically: true, encoding: .utf8)
            let r = try CLI.run(["evaluate", "--reference", metadata.path, found.path, "--duration", "3600", "--json"])
            #expect(r.status == 0, "\(r.stderr)")
            let report = try JSONDecoder().decode(EvaluationReport.self, from: Data(r.stdout.utf8))
            let cough = try #require(report.classes.first { $0.eventClass == .cough }).events
            #expect(cough.truePositives == coughs.count && cough.falsePositives == 0 && cough.falseNegatives == 0, "\(night): \(cough)")
        }
        let stranger = dir.appendingPathComponent("night-9.csv")
        try "start,end,class\n".write(to: stranger, atomically: true, encoding: .utf8)
        let r = try CLI.run(["evaluate", "--reference", metadata.path, stranger.path, "--duration", "3600"])
        #expect(r.status == 65 && r.stderr.contains("holds 2 recordings (night-1, night-2) and none of them is 'night-9.csv'"), "\(r.stderr)")

        // A reference of one recording: a found-events CSV, named for itself, is scored against
        // it without a word (it was warned of as another night's); a night folder of another
        // recording is warned of.
        let single = dir.appendingPathComponent("single.tsv")
        try "filename\tonset\toffset\tevent_label\naudio/night-1.wav\t100\t100.3\tcough\n".write(to: single, atomically: true, encoding: .utf8)
        let found = try CLI.run(["evaluate", "--reference", single.path, stranger.path, "--duration", "3600"])
        #expect(found.status == 0 && found.errorLines.isEmpty, "\(found.stderr)")
        let audio = dir.appendingPathComponent("other.wav")
        try CLI.synthesiseShortNight(at: audio)
        let night = dir.appendingPathComponent("other.night")
        #expect(try CLI.run(["analyze", audio.path, "--out", night.path, "--no-clips", "--classifier", "heuristic"]).status == 0)
        let other = try CLI.run(["evaluate", "--reference", single.path, night.path])
        #expect(other.status == 0 && other.stderr.contains("somni evaluate: warning: \(single.path): its lines name one recording, 'night-1'"),
                "\(other.stderr)")
    }

    @Test func aReferenceThatRunsPastTheNightIsScoredWithAWarning() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reference = dir.appendingPathComponent("reference.csv")
        let found = dir.appendingPathComponent("found.csv")
        try "start,end,class\n100,101,cough\n4000,4001,cough\n5000,5001,cough\n".write(to: reference, atomically: true, encoding: .utf8)
        try "start,end,class\n100,101,cough\n".write(to: found, atomically: true, encoding: .utf8)
        let result = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", "3600", "--json"])
        #expect(result.status == 0)
        #expect(result.errorLines.count == 1)
        #expect(result.stderr.contains("2 of 3 reference events start after the night's end (3600.0 s)"), "\(result.stderr)")
        // Still scored as missed: the warning explains the recall, it does not change it.
        let report = try JSONDecoder().decode(EvaluationReport.self, from: Data(result.stdout.utf8))
        let cough = try #require(report.classes.first { $0.eventClass == .cough })
        #expect(cough.events.truePositives == 1 && cough.events.falseNegatives == 2)

        // One that starts inside the night and runs on far past it is named too: its time
        // after the end is scored as missed segments.
        try "start,end,class\n100,101,cough\n3000,99999,snoring\n".write(to: reference, atomically: true, encoding: .utf8)
        let overrun = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", "3600"])
        #expect(overrun.status == 0)
        #expect(overrun.stderr.contains("1 of 2 reference events run on past the night's end (3600.0 s)"), "\(overrun.stderr)")
    }

    /// A segment shorter than a 50 ms frame is a usage error, not a night cut into a billion
    /// segments (1e-9 s asked for 360 GB).
    @Test func aSegmentShorterThanAFrameIsAUsageError() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reference = dir.appendingPathComponent("reference.csv")
        try "start,end,class\n100,101,cough\n".write(to: reference, atomically: true, encoding: .utf8)
        let tiny = try CLI.run(["evaluate", "--reference", reference.path, reference.path, "--duration", "3600", "--segment", "cough=1e-9"])
        #expect(tiny.status == 64 && tiny.stderr.contains("segments are at least 0.05 s"), "\(tiny.stderr)")
        let frame = try CLI.run(["evaluate", "--reference", reference.path, reference.path, "--duration", "3600", "--segment", "cough=0.05"])
        #expect(frame.status == 0, "\(frame.stderr)")
    }
}

/// `somni evaluate` over several nights, each after its own `--reference`.
@Suite struct EvaluateNightsCommandTests {
    @Test func severalNightsAreScoredTogether() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ text: String) throws -> String {
            let url = dir.appendingPathComponent(name)
            try ("start,end,class\n" + text).write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }
        // Night 1: its snoring episode found; night 2: its episode missed, a false cough.
        let reference1 = try write("one.csv", "100,101,snoring\n105,106,snoring\n")
        let found1 = try write("one-found.csv", "100,106,snoring\n")
        let reference2 = try write("two.csv", "200,201,snoring\n")
        let found2 = try write("two-found.csv", "700,700.3,cough\n")
        let pairs = ["--reference", reference1, found1, "--reference", reference2, found2, "--duration", "3600"]

        let text = try CLI.run(["evaluate"] + pairs)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "2 nights, 2.0 h in all (somni evaluate's protocol, as for one night)")
        #expect(lines.contains { $0.hasPrefix("one-found ") && $0.contains("1.000") && $0.hasSuffix("0.00") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("two-found ") && $0.contains("0.000") && $0.hasSuffix("1.00") }, "\(text.stdout)")

        let json = try CLI.run(["evaluate"] + pairs + ["--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let evaluation = try JSONDecoder().decode(NightsEvaluation.self, from: Data(json.stdout.utf8))
        #expect(evaluation.nights.map(\.name) == ["one-found", "two-found"])
        let snoring = try #require(evaluation.pooled.classes.first { $0.eventClass == .snoring })
        #expect(snoring.events == DetectionScores(truePositives: 1, falsePositives: 0, falseNegatives: 1))
        #expect(evaluation.pooled.falseEventsPerHour == 0.5)
        #expect(json.stderr.isEmpty, "\(json.stderr)")

        // One night given twice (here through a link) is scored twice, and said to be.
        let link = dir.appendingPathComponent("again.csv")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: found1)
        let twice = try CLI.run(["evaluate"] + pairs + ["--reference", reference1, link.path])
        #expect(twice.status == 0 && twice.stdout.hasPrefix("3 nights")
                && twice.stderr == "somni evaluate: warning: \(link.path) is the same night as \(found1), given before it: "
                    + "it is scored, and pooled, once more\n", "\(twice.stderr)")

        // A night without its reference, and the one-night options with two nights, are usage errors.
        let unpaired = try CLI.run(["evaluate", "--reference", reference1, found1, found2, "--duration", "3600"])
        #expect(unpaired.status == 64 && unpaired.stderr.contains("1 --reference file for 2 nights"), "\(unpaired.stderr)")
        let errors = try CLI.run(["evaluate"] + pairs + ["--errors"])
        #expect(errors.status == 64 && errors.stderr.contains("one night at a time"), "\(errors.stderr)")
    }

    /// Five nights: each pooled figure with its 95 % interval, in the text and in the JSON.
    @Test func fiveNightsGiveEachPooledFigureAnInterval() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reference = dir.appendingPathComponent("reference.csv")
        try "start,end,class\n100,101,snoring\n300,301,snoring\n".write(to: reference, atomically: true, encoding: .utf8)
        var arguments = ["evaluate", "--duration", "3600"]
        for night in 0..<5 {
            // Three nights find both episodes, two only the first.
            let found = dir.appendingPathComponent("night-\(night).csv")
            try ("start,end,class\n100,101,snoring\n" + (night < 3 ? "300,301,snoring\n" : ""))
                .write(to: found, atomically: true, encoding: .utf8)
            arguments += ["--reference", reference.path, found.path]
        }
        let text = try CLI.run(arguments)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("Pooled, with a 95 % interval (the nights drawn again with replacement, 2000 times):"),
                "\(text.stdout)")
        let json = try CLI.run(arguments + ["--json"])
        let evaluation = try JSONDecoder().decode(NightsEvaluation.self, from: Data(json.stdout.utf8))
        let episodes = try #require(evaluation.intervals.first { $0.measure == .snoringEpisodes })
        // 8 of 10 episodes found, none false: F1 0.889; all five nights drawn from the two-episode
        // ones gives 1.0, from the one-episode ones 0.667.
        #expect(abs(episodes.pooled - 16.0 / 18) < 1e-9 && episodes.low < episodes.pooled && episodes.high > episodes.pooled,
                "\(episodes)")
        #expect(episodes.low >= 2.0 / 3 - 1e-9 && episodes.high <= 1, "\(episodes)")
        #expect(text.stdout.contains(String(format: "snoring episodes F1  0.889  (%.3f–%.3f)", episodes.low, episodes.high)))
    }

    @Test func nightsOfTheSameNameAreToldApartByTheFolderAbove() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var arguments = ["evaluate", "--duration", "3600", "--json"]
        for seed in ["seed-4", "seed-5"] {
            let folder = dir.appendingPathComponent(seed)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try "start,end,class\n100,101,cough\n".write(to: folder.appendingPathComponent("fan.csv"), atomically: true, encoding: .utf8)
            arguments += ["--reference", folder.appendingPathComponent("fan.csv").path, folder.appendingPathComponent("fan.csv").path]
        }
        let r = try CLI.run(arguments)
        #expect(r.status == 0, "\(r.stderr)")
        let evaluation = try JSONDecoder().decode(NightsEvaluation.self, from: Data(r.stdout.utf8))
        #expect(evaluation.nights.map(\.name) == ["seed-4/fan", "seed-5/fan"])
    }
}
