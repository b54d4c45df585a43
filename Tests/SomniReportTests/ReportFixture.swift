import Foundation
import SomniCore
@testable import SomniReport

/// A scratch directory removed when the test ends.
final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> URL { url.appendingPathComponent(name) }
}

/// A two-hour night starting 23:40:00 (+01:00) with four known events, a 10 Hz envelope that is
/// quiet (−54 dBFS) except during the events, and a real playable WAV clip per event.
///
/// Ribbon: the first row is 23:00, so the night covers cells 240…959 of rows 23:00, 00:00 and 01:00
/// (720 cells). Events cover 3 + 2 snoring cells, 1 sleep-talk cell and 1 cough cell.
enum ReportFixture {
    static let events: [SessionEvent] = [
        event(1, .snoring, 600, 625, peak: -22),
        event(2, .sleepTalk, 1800, 1804, peak: -30),
        event(3, .cough, 3600, 3600.5, peak: -12),
        event(4, .snoring, 5000, 5012, peak: -25),
    ]
    static let expectedCells = 720
    static let expectedRows = 3
    static let expectedClassCells: [Character: Int] = ["s": 5, "t": 1, "c": 1]

    static func event(_ n: Int, _ c: EventClass, _ start: Double, _ end: Double, peak: Double) -> SessionEvent {
        let severity = 0.6 * min(100, max(0, (peak + 50) / 40 * 100)) + 0.4 * min(100, (end - start) / 20 * 100)
        return SessionEvent(id: String(format: "evt-%04d", n), eventClass: c, start: start, end: end, confidence: 0.8,
                            peakDBFS: peak, meanDBFS: peak - 8, severity: severity,
                            clip: String(format: "clips/evt-%04d.wav", n))
    }

    static func session(startedAt: String? = "2026-11-28T23:40:00+01:00", duration: Double = 7200,
                        events: [SessionEvent] = events, source: String = "bedroom <night>.m4a") -> Session {
        let summary = SessionSummary(duration: duration, analysedSeconds: 900, activeShare: 0.12, gateBypassed: false,
                                     events: events, episodes: [SnoringEpisode(start: 600, end: 625, eventCount: 1)])
        return Session(source: source, startedAt: startedAt, duration: duration, analysedSeconds: 900, activeShare: 0.12,
                       settings: AnalysisSettings(sensitivity: 5, classifier: "heuristic"), summary: summary,
                       episodes: [SnoringEpisode(start: 600, end: 625, eventCount: 1)], events: events, warnings: [])
    }

    static func envelope(duration: Double, events: [SessionEvent]) -> [Float] {
        var values = [Float](repeating: 0.002, count: Int(duration * 10))
        for e in events {
            let amplitude = Float(pow(10, e.peakDBFS / 20))
            for i in Int(e.start * 10)..<min(values.count, Int(e.end * 10) + 1) {
                values[i] = amplitude * Float(0.6 + 0.4 * sin(Double(i) * 0.7))
            }
        }
        return values
    }

    /// The fixture's events with clips of another kind ("m4a").
    static func events(clipExtension: String) -> [SessionEvent] {
        events.map { e in
            var e = e
            e.clip = e.clip.map { ($0 as NSString).deletingPathExtension + "." + clipExtension }
            return e
        }
    }

    /// Writes session.json, envelope.bin and one clip per event: a WAV written here, or whatever
    /// `encoder` makes of the same sound.
    @discardableResult
    static func folder(at url: URL, session: Session = session(), encoder: (any ClipEncoder)? = nil) throws -> URL {
        try FileManager.default.createDirectory(at: url.appendingPathComponent("clips"), withIntermediateDirectories: true)
        try session.jsonData().write(to: url.appendingPathComponent(Session.fileName))
        try EnvelopeFile.write(values: envelope(duration: session.duration, events: session.events), rate: 10,
                               start: session.startDate, to: url.appendingPathComponent(EnvelopeFile.fileName))
        for e in session.events {
            guard let clip = e.clip else { continue }
            let seconds = e.duration + 2
            if let encoder {
                let samples = (0..<Int(seconds * 16_000)).map { Float(sin(2 * .pi * 180 * Double($0) / 16_000) * 0.8) }
                try encoder.writeClip(samples, sampleRate: 16_000, to: url.appendingPathComponent(clip))
            } else {
                try wav(seconds: seconds, frequency: 180).write(to: url.appendingPathComponent(clip))
            }
        }
        return url
    }

    /// A 16 kHz mono 16-bit PCM WAV of a sine that swells and fades.
    static func wav(seconds: Double, frequency: Double) -> Data {
        let rate = 16_000
        let n = Int(seconds * Double(rate))
        var d = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        d.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + 2 * n)); d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(1); u32(UInt32(rate)); u32(UInt32(2 * rate)); u16(2); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(UInt32(2 * n))
        for i in 0..<n {
            let t = Double(i) / Double(rate)
            let v = sin(2 * .pi * frequency * t) * sin(.pi * t / seconds) * 0.8
            u16(UInt16(bitPattern: Int16(v * 32767)))
        }
        return d
    }
}
