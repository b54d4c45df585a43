import Foundation
import Testing
@testable import SomniCore

@Suite struct EvaluationTests {
    private func event(_ c: EventClass, _ start: Double, _ end: Double) -> ReferenceEvent {
        ReferenceEvent(eventClass: c, start: start, end: end)
    }
    private func result(_ r: EvaluationReport, _ c: EventClass) -> EvaluationReport.ClassResult {
        r.classes.first { $0.eventClass == c }!
    }

    @Test func perfectMatchScoresOne() {
        let ref = [event(.cough, 10, 10.4), event(.sleepTalk, 100, 102), event(.snoring, 200, 201)]
        let r = Evaluator.evaluate(reference: ref, found: ref, duration: 3600)
        for c in EventClass.allCases {
            #expect(result(r, c).events == DetectionScores(truePositives: 1, falsePositives: 0, falseNegatives: 0))
            #expect(result(r, c).events.f1 == 1)
            #expect(result(r, c).segments.f1 == 1)
        }
        #expect(r.totalEvents.truePositives == 3)
        #expect(r.falseEventsPerHour == 0)
    }

    @Test func onsetJustInsideAndOutsideTheCollar() {
        // Cough collar 0.5 s; a short reference keeps the offset tolerance at the collar.
        let ref = [event(.cough, 10, 10.3)]
        let inside = Evaluator.evaluate(reference: ref, found: [event(.cough, 10.49, 10.3)], duration: 60)
        #expect(result(inside, .cough).events.truePositives == 1)
        let outside = Evaluator.evaluate(reference: ref, found: [event(.cough, 10.51, 10.8)], duration: 60)
        #expect(result(outside, .cough).events == DetectionScores(truePositives: 0, falsePositives: 1, falseNegatives: 1))
        // Early onsets count the same way.
        let early = Evaluator.evaluate(reference: ref, found: [event(.cough, 9.45, 10.3)], duration: 60)
        #expect(result(early, .cough).events.truePositives == 0)
        // Exactly a collar apart in decimal times, rounded as sed_eval rounds |found - reference|
        // (checked against sed_eval 0.2.1): 1.08 - 0.58 is a hair over 0.5, 0.68 - 0.18 is 0.5.
        // Tested as reference - collar <= found <= reference + collar, each went the other way.
        let over = Evaluator.evaluate(reference: [event(.cough, 0.58, 2)], found: [event(.cough, 1.08, 2)], duration: 10)
        #expect(result(over, .cough).events.truePositives == 0)
        let at = Evaluator.evaluate(reference: [event(.cough, 0.18, 2)], found: [event(.cough, 0.68, 2)], duration: 10)
        #expect(result(at, .cough).events.truePositives == 1)
    }

    @Test func offsetToleranceGrowsWithLongReferences() {
        // Sleep-talk collar 1 s; a 10 s reference tolerates an offset 5 s away (50 % of its length).
        let ref = [event(.sleepTalk, 100, 110)]
        let near = Evaluator.evaluate(reference: ref, found: [event(.sleepTalk, 100.5, 105.1)], duration: 600)
        #expect(result(near, .sleepTalk).events.truePositives == 1)
        let far = Evaluator.evaluate(reference: ref, found: [event(.sleepTalk, 100.5, 104.9)], duration: 600)
        #expect(result(far, .sleepTalk).events.truePositives == 0)
        // A 1 s reference keeps the collar (1 s) as the offset tolerance, not 0.5 s.
        let short = Evaluator.evaluate(reference: [event(.sleepTalk, 50, 51)],
                                       found: [event(.sleepTalk, 50, 51.9)], duration: 600)
        #expect(result(short, .sleepTalk).events.truePositives == 1)
    }

    @Test func matchingIsOneToOne() {
        let ref = [event(.cough, 10, 10.3)]
        let found = [event(.cough, 10.1, 10.4), event(.cough, 10.2, 10.5)]
        let r = Evaluator.evaluate(reference: ref, found: found, duration: 3600)
        #expect(result(r, .cough).events == DetectionScores(truePositives: 1, falsePositives: 1, falseNegatives: 0))
        #expect(result(r, .cough).events.precision == 0.5)
        #expect(result(r, .cough).falseEventsPerHour == 1)
    }

    @Test func matchingIsOptimalNotGreedy() {
        // Found A fits both references, found B only the first: a greedy pass taking A for the
        // first reference would leave the second unmatched. The optimal matching pairs both.
        let ref = [event(.cough, 10.0, 10.3), event(.cough, 10.6, 10.9)]
        let found = [event(.cough, 10.3, 10.6), event(.cough, 9.6, 9.9)]
        let r = Evaluator.evaluate(reference: ref, found: found, duration: 3600)
        #expect(result(r, .cough).events.truePositives == 2)
    }

    @Test func snoringIsScoredAsEpisodes() {
        // Reference pulses 4 s apart form one episode 100–129.5; a 20 s gap starts another at 150.
        var ref: [ReferenceEvent] = stride(from: 100.0, through: 128.0, by: 4).map { event(.snoring, $0, $0 + 1.5) }
        ref.append(event(.snoring, 150, 151))
        // Found: one long event for the first episode (onset 2 s late, offset 2 s early), nothing for the second.
        let found = [event(.snoring, 102, 127.5)]
        let r = Evaluator.evaluate(reference: ref, found: found, duration: 3600)
        let s = result(r, .snoring)
        #expect(s.referenceCount == 9)
        #expect(s.scoredReferenceCount == 2)
        #expect(s.events == DetectionScores(truePositives: 1, falsePositives: 0, falseNegatives: 1))
        // Without merging the pulses cannot match the long event.
        var rules = EvaluationProtocol.somniDefault
        rules.perClass[.snoring]?.mergeGap = nil
        let unmerged = Evaluator.evaluate(reference: ref, found: found, duration: 3600, protocol: rules)
        #expect(result(unmerged, .snoring).events.truePositives == 0)
        #expect(result(unmerged, .snoring).scoredReferenceCount == 9)
    }

    /// A point label at another event's start joins it at a merge gap of 0 whichever comes first
    /// in the file: the score does not depend on the order of the lines.
    @Test func aMergeGapOfZeroScoresTheSameInAnyOrder() {
        var rules = EvaluationProtocol.somniDefault
        rules.perClass[.cough]?.mergeGap = 0
        let reference = [event(.cough, 10, 12)]
        let orders = [[event(.cough, 10, 10), event(.cough, 10, 12)], [event(.cough, 10, 12), event(.cough, 10, 10)]]
        for found in orders {
            let c = result(Evaluator.evaluate(reference: reference, found: found, duration: 60, protocol: rules), .cough)
            #expect(c.scoredFoundCount == 1 && c.events == DetectionScores(truePositives: 1, falsePositives: 0, falseNegatives: 0))
        }
    }

    /// Decimal times are not exact in binary: events exactly the merge gap apart stay apart, and
    /// an event starting on a segment boundary starts in that segment, whatever their decimals.
    @Test func boundariesInDecimalTimesAreWhereTheDecimalsSay() {
        for (first, second) in [(5.4, 16.4), (5.5, 16.5), (6.9, 17.9), (5.0, 16.0)] {
            let apart = Evaluator.merged([event(.snoring, first, first + 1), event(.snoring, second, second + 1)], gap: 10)
            #expect(apart.count == 2, "\(first + 1) and \(second) are 10 s apart, not less")
            let within = Evaluator.merged([event(.snoring, first, first + 1), event(.snoring, second - 0.001, second + 1)], gap: 10)
            #expect(within.count == 1)
        }
        let ref = [event(.cough, 0.6, 0.7)], found = [event(.cough, 0.4, 0.5)]
        #expect(Evaluator.segmentScores(reference: ref, found: found, duration: 10, segmentLength: 0.2)
                == DetectionScores(truePositives: 0, falsePositives: 1, falseNegatives: 1))
        // Ending on a boundary (0.7 / 0.1 is 6.999999999999999) does not reach the next segment.
        #expect(Evaluator.segmentScores(reference: [event(.cough, 0.7, 0.8)], found: [event(.cough, 0.5, 0.7)],
                                        duration: 10, segmentLength: 0.1)
                == DetectionScores(truePositives: 0, falsePositives: 2, falseNegatives: 1))
        #expect(Evaluator.segmentScores(reference: ref, found: [event(.cough, 0.61, 0.62)], duration: 10, segmentLength: 0.2)
                == DetectionScores(truePositives: 1, falsePositives: 0, falseNegatives: 0))
    }

    @Test func segmentCountsOnTenSecondSegments() {
        // Duration 100 s → 10 segments. Reference active in segments 1, 2 (15–25) and 5 (50–55).
        // Found active in 2 (20–29.9), 5 (52–53) and 8 (80–81). TP 2 (2, 5), FP 1 (8), FN 1 (1).
        let ref = [event(.snoring, 15, 25), event(.snoring, 50, 55)]
        let found = [event(.snoring, 20, 29.9), event(.snoring, 52, 53), event(.snoring, 80, 81)]
        let segments = Evaluator.segmentScores(reference: ref, found: found, duration: 100, segmentLength: 10)
        #expect(segments == DetectionScores(truePositives: 2, falsePositives: 1, falseNegatives: 1))
        #expect(segments.f1 == 4.0 / 6.0)
        // An event ending exactly on a boundary does not touch the next segment.
        let edge = Evaluator.segmentScores(reference: [event(.cough, 1, 2)], found: [event(.cough, 2, 3)],
                                           duration: 10, segmentLength: 1)
        #expect(edge == DetectionScores(truePositives: 0, falsePositives: 1, falseNegatives: 1))
        // An event of no length on a boundary touches no segment (sed_eval's event roll), at the
        // timeline's end as in its middle; inside a segment it touches that one.
        for at in [10.0, 600.0] {
            let point = Evaluator.segmentScores(reference: [event(.cough, at - 0.8, at - 0.2)], found: [event(.cough, at, at)],
                                                duration: 600, segmentLength: 1)
            #expect(point == DetectionScores(truePositives: 0, falsePositives: 0, falseNegatives: 1), "at \(at): \(point)")
        }
        let inside = Evaluator.segmentScores(reference: [event(.cough, 9.2, 9.8)], found: [event(.cough, 9.5, 9.5)],
                                             duration: 600, segmentLength: 1)
        #expect(inside == DetectionScores(truePositives: 1, falsePositives: 0, falseNegatives: 0))
    }

    @Test func absurdTimesDoNotBlowUpTheTimeline() {
        // An event far past the end is scored within a day past the recording, not allocated to its end.
        let r = Evaluator.evaluate(reference: [event(.cough, 1, 1.2)], found: [event(.cough, 1e300, 1e301)],
                                   duration: 60)
        #expect(result(r, .cough).events == DetectionScores(truePositives: 0, falsePositives: 1, falseNegatives: 1))
        #expect(result(r, .cough).segments == DetectionScores(truePositives: 0, falsePositives: 1, falseNegatives: 1))
        // A duration in the wrong unit (nanoseconds) is no longer than a night may be: it trapped
        // converting to a segment count, or asked for 10¹¹ segments.
        for duration in [1e20, 1e12] {
            let long = Evaluator.evaluate(reference: [event(.cough, 5, 6)], found: [event(.cough, 5, 6)], duration: duration)
            #expect(result(long, .cough).segments == DetectionScores(truePositives: 1, falsePositives: 0, falseNegatives: 0))
        }
    }

    @Test func falseEventsPerHourPerClassAndTotal() {
        // Two hours; 3 unmatched coughs and 1 unmatched sleep-talk → 1.5/h and 0.5/h, total 2/h.
        let found = [event(.cough, 100, 100.3), event(.cough, 200, 200.3), event(.cough, 300, 300.3),
                     event(.sleepTalk, 400, 402)]
        let r = Evaluator.evaluate(reference: [], found: found, duration: 7200)
        #expect(result(r, .cough).falseEventsPerHour == 1.5)
        #expect(result(r, .sleepTalk).falseEventsPerHour == 0.5)
        #expect(r.falseEventsPerHour == 2)
        #expect(result(r, .cough).events.precision == 0)
        #expect(result(r, .cough).events.recall == nil)
    }

    /// A night with gaps (a joined night's pause, a lost microphone) gives its false events per
    /// hour recorded, as every other rate Somni gives; before, the gap lowered them.
    @Test func falseEventsPerHourAreOverTheTimeRecorded() throws {
        let found = [event(.cough, 100, 100.3), event(.cough, 200, 200.3)]
        let r = Evaluator.evaluate(reference: [], found: found, duration: 7200, recordedSeconds: 3600)
        #expect(result(r, .cough).falseEventsPerHour == 2 && r.falseEventsPerHour == 2)
        #expect(r.text().hasPrefix("Evaluation over 2.0 h, 1.0 h of it recorded"), "\(r.text())")
        let decoded = try JSONDecoder().decode(EvaluationReport.self, from: r.jsonData())
        #expect(decoded.recordedSeconds == 3600 && decoded.falseEventsPerHour == 2)
        // Pooled with a night without gaps: 3 false events in 1 h + 2 h recorded.
        let whole = Evaluator.evaluate(reference: [], found: [event(.cough, 50, 50.3)], duration: 7200)
        #expect(whole.recordedSeconds == nil && !whole.text().contains("recorded"))
        let pooled = NightsEvaluation(nights: [("gapped", r), ("whole", whole)]).pooled
        #expect(pooled.duration == 14_400 && pooled.recordedSeconds == 10_800 && pooled.falseEventsPerHour == 1)
    }

    @Test func scoringErrorsSayHowEachUnmatchedEventWasLost() throws {
        let ref = [
            event(.cough, 10, 10.3),                                    // found: no error
            event(.cough, 20, 20.3),                                    // nothing near: missed
            event(.cough, 30, 30.3),                                    // found 0.7 s early: onset
            event(.cough, 40, 40.3),                                    // onset fine, ends 3 s late: offset
            event(.sleepTalk, 100, 104),                                // two pieces, neither within the rules: split
            event(.snoring, 200, 201), event(.snoring, 205, 206),       // one episode (< 10 s apart), found whole
        ]
        let found = [
            event(.cough, 10.1, 10.3), event(.cough, 10.2, 10.35),      // the second: a piece of a matched cough
            event(.cough, 29.3, 30.2), event(.cough, 40.1, 43.3),
            event(.cough, 70, 70.2),                                    // overlaps nothing: false
            event(.sleepTalk, 98, 101), event(.sleepTalk, 102, 104.2),
            event(.snoring, 200.5, 201), event(.snoring, 204, 206),
        ]
        let errors = Evaluator.scoringErrors(reference: ref, found: found)
        let coughs = errors.filter { $0.eventClass == .cough }
        #expect(coughs.map(\.kind) == [.extra, .missed, .onset, .offset, .falseEvent], "\(coughs)")
        let onset = try #require(coughs.first { $0.kind == .onset })
        #expect(abs((onset.onsetError ?? 0) + 0.7) < 1e-9 && onset.found == [TimeRange(start: 29.3, end: 30.2)])
        let talk = errors.filter { $0.eventClass == .sleepTalk }
        #expect(talk.map(\.kind) == [.split] && talk.first?.found.count == 2 && talk.first?.onsetError == -2)
        #expect(!errors.contains { $0.eventClass == .snoring })

        // The reference errors are the event score's misses, the rest its false events.
        let report = Evaluator.evaluate(reference: ref, found: found, duration: 3600)
        for c in EventClass.allCases {
            let mine = errors.filter { $0.eventClass == c }
            let unmatchedReferences = mine.filter { ![.falseEvent, .extra].contains($0.kind) }.count
            #expect(unmatchedReferences == result(report, c).events.falseNegatives, "\(c)")
            // Found events shown with a reference are counted there, not again.
            let shownFound = mine.reduce(0) { $0 + $1.found.count } + mine.count - unmatchedReferences
            #expect(shownFound >= result(report, c).events.falsePositives, "\(c)")
        }

        var withErrors = report
        withErrors.errors = errors
        let onsetLine = withErrors.text().split(separator: "\n").first { $0.hasPrefix("cough") && $0.contains("onset ") }
        #expect(onsetLine?.hasSuffix("30.0–30.3 s  found 29.3–30.2 (onset -0.7 s)") == true, "\(withErrors.text())")
        let decoded = try JSONDecoder().decode(EvaluationReport.self, from: withErrors.jsonData())
        #expect(decoded == withErrors)
        #expect(!report.text().contains("Scoring errors"))
    }

    @Test func reportEncodesAndPrints() throws {
        let r = Evaluator.evaluate(reference: [event(.cough, 1, 1.2)], found: [], duration: 3600)
        let decoded = try JSONDecoder().decode(EvaluationReport.self, from: r.jsonData())
        #expect(decoded == r)
        let text = r.text()
        #expect(text.contains("cough"))
        #expect(text.split(separator: "\n").contains { $0.hasPrefix("total") })
    }

    @Test func csvParsesHeaderCommentsAndAliases() throws {
        let text = "start,end,class\n# a comment\n\n1.5,2.0,snore\r\n3, 4.25 ,Sleep_Talk\n5,5.3,cough\n6,7,speech\n"
        let events = try ReferenceCSV.parse(text)
        #expect(events == [event(.snoring, 1.5, 2), event(.sleepTalk, 3, 4.25), event(.cough, 5, 5.3),
                           event(.sleepTalk, 6, 7)])
        #expect(try ReferenceCSV.parse(ReferenceCSV.write(events)) == events)
    }

    /// Columns after the class (an annotator's notes, a confidence) are left alone, with a header
    /// or without: they had been taken for DCASE's file-name column, and the line refused as
    /// "end 'cough' is not a time in seconds".
    @Test func columnsAfterTheClassAreNotes() throws {
        #expect(try ReferenceCSV.parse("start,end,class,note\n1,2,cough,loud\n3,4,snore,\n")
                == [event(.cough, 1, 2), event(.snoring, 3, 4)])
        #expect(try ReferenceCSV.parse("1,2,cough,loud\n3,4,snore\n") == [event(.cough, 1, 2), event(.snoring, 3, 4)])
        #expect(try ReferenceCSV.parse("1\t2\tcough\t0.9\tloud\n") == [event(.cough, 1, 2)])
    }

    /// Annotations as they are usually made: an Audacity label track (with the frequency lines a
    /// spectral selection adds) and DCASE's tab-separated metadata.
    @Test func tabSeparatedLabelTracksParse() throws {
        let audacity = "12.500000\t14.250000\tsnore\n\\\t80.000000\t400.000000\n20\t20.4\tCough\n31.5\t33\tsleep talk\n"
        #expect(try ReferenceCSV.parse(audacity) == [event(.snoring, 12.5, 14.25), event(.cough, 20, 20.4), event(.sleepTalk, 31.5, 33)])
        let dcase = "onset\toffset\tevent_label\n1.0\t1.3\tcough\n2\t4\tsnort\n5\t6\ttalk\n"
        #expect(try ReferenceCSV.parse(dcase) == [event(.cough, 1, 1.3), event(.snoring, 2, 4), event(.sleepTalk, 5, 6)])
        // DCASE's metadata of a data set: the night's own lines, by file name.
        let dataset = "filename\tonset\toffset\tevent_label\naudio/night-3.wav\t1\t2\tsnore\naudio/night-4.wav\t5\t6\tcough\n"
            + "audio/night-3.wav\t7\t7.3\tcough\n"
        #expect(try ReferenceCSV.parse(dataset, recording: "night-3.flac") == [event(.snoring, 1, 2), event(.cough, 7, 7.3)])
        #expect(try ReferenceCSV.parse(dataset, recording: "night-4.m4a") == [event(.cough, 5, 6)])
        #expect(throws: SomniError.self) { try ReferenceCSV.parse(dataset, recording: "night-5.m4a") }
        // One recording named: its lines, whatever the night's file is called now.
        var named: [String] = []
        #expect(try ReferenceCSV.parse("x.wav\t1\t2\tcough\n", recording: "renamed.m4a") { named.append($0) } == [event(.cough, 1, 2)])
        // And said to be another name than the night's (it was scored without a word).
        #expect(named == ["x"])
        #expect(try ReferenceCSV.parse("x.wav\t1\t2\tcough\n", recording: "x.m4a") { named.append($0) } == [event(.cough, 1, 2)])
        #expect(named == ["x"])
        // An annotator's other labels are left out only when named, in any case.
        let mixed = "1\t2\tsnore\n3\t4\tDOOR\n5\t5.2\tcough\n"
        #expect(throws: SomniError.self) { try ReferenceCSV.parse(mixed) }
        #expect(try ReferenceCSV.parse(mixed, ignoring: ["door"]) == [event(.snoring, 1, 2), event(.cough, 5, 5.2)])
    }

    @Test(arguments: [
        ("1,2,snoring\nabc,2,cough\n", "line 2"),
        ("1,0.5,cough\n", "before start"),
        ("# header-less\n1,2,burp\n", "unknown class 'burp'"),
        ("1,2\n", "expected 'start,end,class'"),
        ("1,2,cough\nstart,end,class\n", "line 2"),
        ("1\t2\tsnore, loud\n", "unknown class 'snore, loud'"),
        ("filename\tonset\toffset\tevent_label\na.wav\t1\t2\tcough\t0.9\n", "line 2: expected"),
        ("a.wav\t1\t2\tcough\n3\t4\tcough\n", "line 2: expected"),
        ("a.wav\t1\t2\tcough\nb.wav\t3\t4\tcough\n", "the reference holds 2 recordings (a, b) and does not say which one this is"),
    ])
    func csvErrorsNameTheLine(text: String, message: String) {
        do {
            _ = try ReferenceCSV.parse(text)
            Issue.record("parsed malformed CSV")
        } catch let e as SomniError {
            #expect(e.code == .badInput)
            #expect(e.message.contains(message), "\(e.message)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func synthesisedNightScoresPerfectlyAgainstItselfAndDropsWithMisses() throws {
        let plan = try NightPlan(configuration: .compressed(minutes: 6, seed: 9), bank: GeneratedSoundBank())
        let perfect = Evaluator.evaluate(reference: plan.events, found: plan.events, duration: plan.duration)
        #expect(perfect.totalEvents.f1 == 1)
        #expect(perfect.totalSegments.f1 == 1)
        // Each snore episode is one scored unit: fewer units than pulses.
        let snoring = result(perfect, .snoring)
        #expect(snoring.scoredReferenceCount < snoring.referenceCount)
        // Dropping every cough leaves cough recall at 0 and the other classes untouched.
        let noCoughs = Evaluator.evaluate(reference: plan.events, found: plan.events.filter { $0.eventClass != .cough },
                                          duration: plan.duration)
        #expect(result(noCoughs, .cough).events.recall == 0)
        #expect(result(noCoughs, .sleepTalk).events.f1 == 1)
    }

    // MARK: recall by level

    /// A track of `seconds` whose every band sits at `rms`, with `loud` stretches set higher.
    private func frames(seconds: Double, rms: Float, loud: [(start: Double, end: Double, rms: Float)]) -> FrameTrack {
        var band = [Float](repeating: rms, count: Int(seconds * FrameTrack.rate))
        for l in loud {
            for i in Int(l.start * FrameTrack.rate)..<Int(l.end * FrameTrack.rate) { band[i] = l.rms }
        }
        return FrameTrack(raw: band, low: band, mid: band, zcr: [])
    }
    private func levels(_ all: [LevelRecall], _ c: EventClass) -> LevelRecall { all.first { $0.eventClass == c }! }

    @Test func riseIsTheEventsPowerOverItsBackgroundInDecibels() {
        // Background power 1e-4; an event of power 1e-3 rises 10·log10(9) = 9.54 dB, one of 2e-4 0 dB.
        #expect(abs(Evaluator.rise(peak: 1e-3, background: 1e-4) - 9.542) < 0.001)
        #expect(abs(Evaluator.rise(peak: 2e-4, background: 1e-4)) < 1e-9)
        // No louder than the background: the floor of −30 dB; around digital silence: very high.
        #expect(Evaluator.rise(peak: 1e-4, background: 1e-4) == -30)
        #expect(Evaluator.rise(peak: 1e-4, background: 0) > 60)
    }

    @Test func referencesAreBinnedByRiseAndCountedFoundWhenMatched() {
        let loud = event(.cough, 100, 100.5), faint = event(.cough, 200, 200.5), lost = event(.cough, 300, 300.5)
        let track = frames(seconds: 600, rms: 0.01, loud: [(100, 100.5, 0.01 * Float(10).squareRoot()), (200, 200.5, 0.01 * Float(2).squareRoot()),
                                                          (300, 300.5, 0.1)])
        // Only the loud cough is found; the faint one (0 dB) and the 20 dB one are missed.
        let all = Evaluator.recallByLevel(reference: [loud, faint, lost], found: [loud], frames: track)
        let cough = levels(all, .cough)
        #expect(cough.bandHz == 250...3000)
        let byBin = cough.bins.map { [$0.foundCount, $0.referenceCount] }
        // Bins: < 3, 3–6, 6–9, 9–12, 12–18, ≥ 18 dB.
        #expect(byBin == [[0, 1], [0, 0], [0, 0], [1, 1], [0, 0], [0, 1]])
        #expect(cough.bins[3].recall == 1 && cough.bins[0].recall == 0 && cough.bins[1].recall == nil)
        #expect(levels(all, .snoring).bins.allSatisfy { $0.referenceCount == 0 })
    }

    @Test func aReferenceFarPastTheRecordingIsBinnedWithoutOverflow() {
        // 1e18 s is 2e19 frames, past any Int: the reference lies beyond the track and is heard at
        // nothing, where an unclamped conversion had stopped the process.
        let far = event(.cough, 1e18, 1e18 + 1), near = event(.cough, 100, 100.5)
        let track = frames(seconds: 600, rms: 0.01, loud: [(100, 100.5, 0.1)])
        let cough = levels(Evaluator.recallByLevel(reference: [near, far], found: [near], frames: track), .cough)
        #expect(cough.bins.last?.foundCount == 1)
        #expect(BandLevels.frameRange(far, count: track.count).isEmpty)
        #expect(BandLevels.frameRange(event(.cough, -5, 1e300), count: track.count) == 0..<track.count)
    }

    @Test func aSnoringEpisodeTakesTheMedianRiseOfItsSnoresAndIsOneUnit() {
        // Three snores 4 s apart (one episode) rising 0, 9.5 and 20 dB: the episode reads 9.5 dB.
        let snores = [event(.snoring, 50, 51), event(.snoring, 55, 56), event(.snoring, 60, 61)]
        let track = frames(seconds: 300, rms: 0.01, loud: [(50, 51, 0.01 * Float(2).squareRoot()), (55, 56, 0.01 * Float(10).squareRoot()),
                                                          (60, 61, 0.1)])
        let snoring = levels(Evaluator.recallByLevel(reference: snores, found: [event(.snoring, 50.5, 60)], frames: track), .snoring)
        #expect(snoring.bins.map { $0.referenceCount } == [0, 0, 0, 1, 0, 0])
        #expect(snoring.bins[3].foundCount == 1)
        #expect(snoring.bandHz == 40...400)
    }

    @Test func aSnoringEpisodeIsAlsoBinnedByItsFirstSnore() {
        // Two episodes over a background of power 1e-4. The first opens with a faint snore (power
        // 1.8e-4: 10·log10(0.8) = −1 dB by the rise's measure) and its later snores rise 20 dB;
        // found from its second snore, 5 s late, it is missed. The second's snores all rise 20 dB
        // and it is found. By the median both read 18 dB and over, one of two found; by the first
        // snore the miss sits under 3 dB.
        let loud = 0.01 * Float(101).squareRoot(), faint = 0.01 * Float(1.8).squareRoot()
        let first = [event(.snoring, 100, 101), event(.snoring, 105, 106), event(.snoring, 110, 111)]
        let second = [event(.snoring, 300, 301), event(.snoring, 305, 306), event(.snoring, 310, 311)]
        let track = frames(seconds: 600, rms: 0.01, loud: [(100, 101, faint)] + (first.dropFirst() + second).map { ($0.start, $0.end, loud) })
        let found = [event(.snoring, 105, 111), event(.snoring, 300, 311)]
        let all = Evaluator.recallByLevel(reference: first + second, found: found, frames: track)
        let snoring = levels(all, .snoring)
        #expect(snoring.bins.map { [$0.foundCount, $0.referenceCount] } == [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [1, 2]])
        #expect(snoring.firstEventBins?.map { [$0.foundCount, $0.referenceCount] } == [[0, 1], [0, 0], [0, 0], [0, 0], [0, 0], [1, 1]])
        // Single events are their own first event: no second binning.
        #expect(levels(all, .cough).firstEventBins == nil)
        var report = Evaluator.evaluate(reference: first + second, found: found, duration: 600)
        report.levels = all
        #expect(report.text().contains("by 1st snore"))
    }

    @Test func theBackgroundLeavesOutOtherEventsAndLooksOnlyNearby() {
        // A cough (power 1e-3) between two long loud talks, in a stretch whose background is 1e-4
        // while the rest of the night is at 1e-6. Counting the talks as background would read
        // the cough below it; counting the far quiet would read it 30 dB up. Right: 9.5 dB.
        let cough = event(.cough, 200, 200.5)
        let talks = [event(.sleepTalk, 140.5, 199.5), event(.sleepTalk, 201, 259)]
        let track = frames(seconds: 600, rms: 0.001, loud: [(130, 270, 0.01), (140.5, 199.5, 0.1), (201, 259, 0.1),
                                                           (200, 200.5, 0.01 * Float(10).squareRoot())])
        let all = Evaluator.recallByLevel(reference: [cough] + talks, found: [], frames: track)
        #expect(levels(all, .cough).bins.map { $0.referenceCount } == [0, 0, 0, 1, 0, 0])
        // Past the end of the audio: not measured, and said so.
        let late = Evaluator.recallByLevel(reference: [event(.cough, 700, 701)], found: [], frames: track)
        #expect(levels(late, .cough).unmeasuredCount == 1)
        #expect(levels(late, .cough).bins.allSatisfy { $0.referenceCount == 0 })
    }

    @Test func timeInEventsCountsOverlapsOnceAndComparesFoundWithTheReference() throws {
        // Reference snoring 10–20 s and 15–30 s (overlapping: 20 s covered) and 100–110 s: 30 s.
        // Found 12–25 s and 24–27 s (15 s) and a false 200–206 s: 21 s, 30 % short.
        let report = Evaluator.evaluate(
            reference: [event(.snoring, 10, 20), event(.snoring, 15, 30), event(.snoring, 100, 110), event(.cough, 50, 50.5)],
            found: [event(.snoring, 12, 25), event(.snoring, 24, 27), event(.snoring, 200, 206)],
            duration: 3600)
        let snoring = try #require(report.classes.first { $0.eventClass == .snoring })
        #expect(abs(snoring.referenceSeconds - 30) < 1e-9 && abs(snoring.foundSeconds - 21) < 1e-9)
        let cough = try #require(report.classes.first { $0.eventClass == .cough })
        #expect(abs(cough.referenceSeconds - 0.5) < 1e-9 && cough.foundSeconds == 0)
        // Talk has no reference time: its figures are given without a share.
        let line = try #require(report.text().split(separator: "\n").first { $0.hasPrefix("Time in events") })
        #expect(line == "Time in events, found / reference: snoring 0.3 / 0.5 min (-30 %), sleep_talk 0.0 / 0.0 min, cough 0.0 / 0.0 min (-100 %)")
        // Times that are not finite cover nothing.
        #expect(Evaluator.coveredSeconds([event(.snoring, 0, .infinity), event(.snoring, 1, 2)]) == 1)
    }

    @Test func levelsAppearInTheTextAndRoundTripThroughJSON() throws {
        let track = frames(seconds: 120, rms: 0.01, loud: [(10, 10.5, 0.1)])
        let ref = [event(.cough, 10, 10.5)]
        var report = Evaluator.evaluate(reference: ref, found: ref, duration: 120)
        #expect(!report.text().contains("Recall by level"))
        report.levels = Evaluator.recallByLevel(reference: ref, found: ref, frames: track)
        #expect(report.text().contains("Recall by level"))
        #expect(report.text().contains("cough      250-3000 Hz"))
        let decoded = try JSONDecoder().decode(EvaluationReport.self, from: report.jsonData())
        #expect(decoded == report)
    }

    // MARK: classifier hearing

    /// Windows of 1 s every 0.5 s over `seconds`, scoring 0 for every label except where `score` says.
    private func windows(seconds: Double, labels: Int, score: (Double) -> (label: Int, value: Float)?) -> [ScoredWindow] {
        stride(from: 0.0, through: seconds - 1, by: 0.5).map { start in
            var scores = [Float](repeating: 0, count: labels)
            if let s = score(start) { scores[s.label] = s.value }
            return ScoredWindow(start: start, end: start + 1, scores: scores)
        }
    }

    @Test func hearingCountsEventsAWindowScoresByLevelAndFalseWindowsFarFromThem() throws {
        let labels = ["cough", "other", "snoring"]
        // A loud snore (20 dB over the floor) at 100 s, a faint one (0 dB) at 200 s, a cough at
        // 300.95–301.15 s (9.5 dB), all at the background 1e-4 elsewhere.
        let reference = [event(.snoring, 100, 101), event(.snoring, 200, 201), event(.cough, 300.95, 301.15)]
        let track = frames(seconds: 3_600, rms: 0.01, loud: [(100, 101, 0.1), (200, 201, 0.01 * Float(2).squareRoot()),
                                                             (300.95, 301.15, 0.01 * Float(10).squareRoot())])
        let all = windows(seconds: 3_600, labels: 3) { start in
            switch start {
            case 100: (2, 0.9)                  // the loud snore, heard
            case 200: (2, 0.3)                  // the faint one, under the threshold
            case 300: (0, 0.8)                  // holds a quarter of the cough only: not heard
            case 300.5: (0, 0.4)                // holds it whole, but under the threshold
            case 1_000, 1_500: (2, 0.6)         // snoring far from every reference: false
            case 101.5: (2, 0.95)               // 0.5 s after the loud snore: near it, not false
            case 2_000: (0, 0.7)                // a false cough window
            default: nil
            }
        }
        let hearing = Evaluator.hearingByLevel(reference: reference, windows: all, labels: labels, frames: track, threshold: 0.5)
        // No speech label: no sleep_talk line.
        #expect(hearing.map(\.eventClass) == [.snoring, .cough])
        let snoring = try #require(hearing.first { $0.eventClass == .snoring })
        // Bins: < 3, 3–6, 6–9, 9–12, 12–18, ≥ 18 dB.
        #expect(snoring.bins.map { [$0.heardCount, $0.referenceCount] } == [[0, 1], [0, 0], [0, 0], [0, 0], [0, 0], [1, 1]])
        #expect(snoring.falseWindows == 2)
        let cough = try #require(hearing.first { $0.eventClass == .cough })
        #expect(cough.bins.map { [$0.heardCount, $0.referenceCount] } == [[0, 0], [0, 0], [0, 0], [0, 1], [0, 0], [0, 0]])
        #expect(cough.falseWindows == 1)
        // Windows within 1 s of a reference are not counted as away: for each of the three
        // events, those starting from 1 s before the window can touch it to 1 s after it ends.
        let near = all.filter { w in reference.contains { w.start < $0.end + 1 && w.end > $0.start - 1 } }.count
        #expect(snoring.windowsAway == all.count - near)
        #expect(abs(snoring.falseWindowsPerHour! - 2 / (Double(snoring.windowsAway) * 0.5 / 3_600)) < 1e-9)
        // The same cough window over the threshold is heard.
        let louder = all.map { w in w.start == 300.5 ? ScoredWindow(start: w.start, end: w.end, scores: [0.7, 0, 0]) : w }
        let heard = Evaluator.hearingByLevel(reference: reference, windows: louder, labels: labels, frames: track, threshold: 0.5)
        #expect(heard.first { $0.eventClass == .cough }?.heardCount == 1)
        let text = hearing.text()
        #expect(text.contains("Classifier hearing"))
        #expect(text.contains("snoring    40-400 Hz"))
        #expect(text.contains("1/2"))
    }
}
