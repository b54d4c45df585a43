import Foundation
import Testing
@testable import SomniCore

/// Many nights scored together: each night's figures, their spread, and the pooled counts.
@Suite struct NightsEvaluationTests {
    private func event(_ c: EventClass, _ start: Double, _ end: Double) -> ReferenceEvent {
        ReferenceEvent(eventClass: c, start: start, end: end)
    }

    /// Night A: two snoring episodes, both found; two coughs, one found and one false cough.
    /// Night B (two hours): one episode, missed, and one found where there was none.
    /// Night C: noise alone, one false talk event.
    private func threeNights() -> [(name: String, report: EvaluationReport)] {
        let a = Evaluator.evaluate(
            reference: [event(.snoring, 100, 101), event(.snoring, 104, 105), event(.snoring, 900, 901),
                        event(.cough, 300, 300.3), event(.cough, 400, 400.3)],
            found: [event(.snoring, 100, 105), event(.snoring, 900, 901), event(.cough, 300, 300.3), event(.cough, 500, 500.3)],
            duration: 3600)
        let b = Evaluator.evaluate(reference: [event(.snoring, 1000, 1001)], found: [event(.snoring, 5000, 5001)], duration: 7200)
        let c = Evaluator.evaluate(reference: [], found: [event(.sleepTalk, 60, 61)], duration: 3600)
        return [("a", a), ("b", b), ("c", c)]
    }

    @Test func poolingSumsEveryNightsCounts() throws {
        let nights = threeNights()
        let pooled = NightsEvaluation(nights: nights).pooled
        #expect(pooled.duration == 4 * 3600)
        for c in EventClass.allCases {
            let results = nights.map { n in n.report.classes.first { $0.eventClass == c }! }
            let sum = results.dropFirst().reduce(results[0].events) { $0 + $1.events }
            #expect(pooled.classes.first { $0.eventClass == c }?.events == sum, "\(c)")
        }
        let snoring = try #require(pooled.classes.first { $0.eventClass == .snoring })
        #expect(snoring.events == DetectionScores(truePositives: 2, falsePositives: 1, falseNegatives: 1))
        #expect(snoring.scoredReferenceCount == 3 && snoring.referenceCount == 4)
        // Snoring time: 3 s of reference and 6 s found on night A, 1 s and 1 s on night B.
        #expect(abs(snoring.referenceSeconds - 4) < 1e-9 && abs(snoring.foundSeconds - 7) < 1e-9)
        // Three false events (a cough, a snoring episode, a talk) over four hours.
        #expect(abs(pooled.falseEventsPerHour - 0.75) < 1e-9)
        #expect(pooled.totalEvents.truePositives == 3)
    }

    @Test func eachFigureSpreadsOverTheNightsThatScoreIt() throws {
        let evaluation = NightsEvaluation(nights: threeNights())
        func spread(_ m: NightsEvaluation.Measure) throws -> NightsEvaluation.Spread {
            try #require(evaluation.spreads.first { $0.measure == m })
        }
        // Snoring F1: 1.0 on night A, 0 on night B; night C has no snoring reference and is left out.
        let episodes = try spread(.snoringEpisodes)
        #expect(episodes.nights == 2 && episodes.median == 0.5 && episodes.lowest == 0 && episodes.highest == 1)
        #expect(episodes.reaching.map(\.nights) == [1, 1])
        // Coughs only on night A: one of two found, one false (F1 0.5).
        let cough = try spread(.cough)
        #expect(cough.nights == 1 && cough.median == 0.5 && cough.reaching.map(\.nights) == [0, 0])
        // No night has talk to find, so talk has no F1 spread; its false event still counts.
        #expect(evaluation.spreads.first { $0.measure == .sleepTalk } == nil)
        let falseEvents = try spread(.falseEventsPerHour)
        #expect(falseEvents.nights == 3)
        #expect(falseEvents.median == 1 && falseEvents.lowest == 0.5 && falseEvents.highest == 1)
        #expect(falseEvents.reaching.map(\.line) == [1] && falseEvents.reaching.map(\.nights) == [3])

        let text = evaluation.text()
        #expect(text.hasPrefix("3 nights, 4.0 h in all"))
        #expect(text.contains("snoring episodes F1  median 0.500, mean 0.500, 0.000–1.000 over 2 nights; 1 at ≥ 0.8, 1 at ≥ 0.9"), "\(text)")
        #expect(text.contains("Pooled: every night's counts summed\nEvaluation over 4.0 h"))
    }

    /// A night of ten coughs, `found` of them found, and an hour long.
    private func coughNight(_ name: String, found: Int) -> (name: String, report: EvaluationReport) {
        let reference = (0..<10).map { event(.cough, 100 + 60 * Double($0), 100.3 + 60 * Double($0)) }
        return (name, Evaluator.evaluate(reference: reference, found: Array(reference.prefix(found)), duration: 3600))
    }

    @Test func aPooledFigureGetsAnIntervalFromTheNightsDrawnAgain() throws {
        // Too few nights for one, and the text says so.
        #expect(NightsEvaluation(nights: threeNights()).intervals.isEmpty)
        #expect(NightsEvaluation(nights: threeNights()).text().contains("needs 5 nights or more"))

        // Half the nights find every cough, half find four in ten: pooled recall 0.7, F1 0.824.
        func mixed(_ count: Int) -> NightsEvaluation {
            NightsEvaluation(nights: (0..<count).map { coughNight("n\($0)", found: $0 % 2 == 0 ? 10 : 4) })
        }
        let six = try #require(mixed(6).intervals.first { $0.measure == .cough })
        #expect(abs(six.pooled - 14.0 / 17) < 1e-9, "\(six)")
        #expect(six.low < six.pooled && six.pooled < six.high && six.draws == 2_000, "\(six)")
        // Drawn six at a time, all six can be the nights that found four in ten (F1 0.571), or
        // all the nights that found everything (1.0): the interval lies within those.
        #expect(six.low >= 8.0 / 14 - 1e-9 && six.high <= 1, "\(six)")
        // Four times the nights of the same mix: about half as wide.
        let many = try #require(mixed(24).intervals.first { $0.measure == .cough })
        let ratio = (many.high - many.low) / (six.high - six.low)
        #expect(ratio > 0.3 && ratio < 0.7, "\(six) against \(many)")
        // Nights all alike leave nothing to draw: the interval is the figure itself.
        let alike = try #require(NightsEvaluation(nights: (0..<6).map { coughNight("n\($0)", found: 7) }).intervals.first)
        #expect(alike.low == alike.pooled && alike.high == alike.pooled)
        // Seeded: the same nights give the same interval.
        #expect(mixed(6).intervals == mixed(6).intervals)
        // No snoring on these nights, so no snoring interval; false events per hour have one.
        #expect(Set(mixed(6).intervals.map(\.measure)) == [.cough, .falseEventsPerHour])
        #expect(mixed(6).text().contains(String(format: "cough F1             %.3f  (%.3f–%.3f)", six.pooled, six.low, six.high)),
                "\(mixed(6).text())")
    }

    @Test func theJSONReadsBack() throws {
        let evaluation = NightsEvaluation(nights: threeNights())
        #expect(try JSONDecoder().decode(NightsEvaluation.self, from: evaluation.jsonData()) == evaluation)
    }
}
