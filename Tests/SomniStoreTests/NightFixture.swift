import Foundation
import SomniCore
@testable import SomniStore

/// A scratch directory removed when the test ends.
final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> URL { url.appendingPathComponent(name) }
}

enum NightFixture {
    /// A session with `events` alternating snoring / sleep-talk / cough every 60 s, each with a clip.
    static func session(startedAt: String?, duration: Double = 3600, events count: Int = 3) -> Session {
        let classes = EventClass.allCases
        let events = (0..<count).map { (i: Int) -> SessionEvent in
            let start = Double(60 * (i + 1))
            let peak: Double = -20 - Double(i)
            let episode: Int? = i % 3 == 0 ? 0 : nil
            return SessionEvent(id: String(format: "evt-%04d", i + 1), eventClass: classes[i % classes.count],
                                start: start, end: start + 4, confidence: 0.8, peakDBFS: peak, meanDBFS: -30,
                                severity: 50, clip: String(format: "clips/evt-%04d.m4a", i + 1), episode: episode)
        }
        let summary = SessionSummary(duration: duration, analysedSeconds: duration / 4, activeShare: 0.25,
                                     gateBypassed: false, events: events, episodes: [])
        return Session(source: "night.m4a", startedAt: startedAt, duration: duration, analysedSeconds: duration / 4,
                       activeShare: 0.25, settings: AnalysisSettings(sensitivity: 5, classifier: "heuristic"),
                       summary: summary, episodes: [], events: events, warnings: [])
    }

    /// Writes a complete night folder (session.json, envelope.bin, one small file per clip).
    @discardableResult
    static func folder(at url: URL, session: Session) throws -> URL {
        let fm = FileManager.default
        try fm.createDirectory(at: url.appendingPathComponent("clips"), withIntermediateDirectories: true)
        try session.jsonData().write(to: url.appendingPathComponent(Session.fileName))
        let values = (0..<Int(session.duration * 10)).map { Float(0.001 + 0.0001 * Double($0 % 7)) }
        try EnvelopeFile.write(values: values, rate: 10, start: session.startDate,
                               to: url.appendingPathComponent(EnvelopeFile.fileName))
        for e in session.events {
            if let clip = e.clip { try Data("clip \(e.id)".utf8).write(to: url.appendingPathComponent(clip)) }
        }
        return url
    }

    /// Names under a directory, recursively, relative to it (what "the folders are as before" compares).
    static func tree(_ url: URL) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: url.path) else { return [] }
        return e.compactMap { $0 as? String }.sorted()
    }
}
