import Foundation
import Testing
@testable import SomniCore

@Suite struct SessionTests {
    @Test func sessionJSONUsesClassKeyAndRoundTrips() throws {
        let e = SessionEvent(id: "evt-0001", eventClass: .sleepTalk, start: 1, end: 2.5, confidence: 0.8,
                             peakDBFS: -20, meanDBFS: -30, severity: 40)
        let summary = SessionSummary(duration: 3600, analysedSeconds: 100, activeShare: 0.1, gateBypassed: false,
                                     events: [e], episodes: [])
        let s = Session(source: "x.wav", startedAt: "2026-11-29T23:00:00+01:00", duration: 3600, analysedSeconds: 100,
                        activeShare: 0.1, settings: .init(sensitivity: 5, classifier: "heuristic"),
                        summary: summary, episodes: [], events: [e], warnings: [])
        let data = try s.jsonData()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"class\" : \"sleep_talk\""))
        #expect(try JSONDecoder().decode(Session.self, from: data) == s)
        #expect(summary.eventsPerHour["sleep_talk"] == 1)
        #expect(s.startDate == ISO8601DateFormatter().date(from: "2026-11-29T22:00:00Z"))
    }

    @Test func envelopeFileRoundTripsAndIgnoresPartialTail() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("envelope.bin")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try EnvelopeFile.write(values: [0.5, 0.25, 1e-4], rate: 10, start: start, to: url)
        var data = try Data(contentsOf: url)
        data.append(contentsOf: [1, 2])  // a crash mid-value
        try data.write(to: url)
        let c = try EnvelopeFile.read(from: url)
        #expect(c.values == [0.5, 0.25, 1e-4])
        #expect(c.rate == 10)
        #expect(c.start == start)
        try Data("nope".utf8).write(to: url)
        #expect(throws: SomniError.self) { try EnvelopeFile.read(from: url) }
    }
}
