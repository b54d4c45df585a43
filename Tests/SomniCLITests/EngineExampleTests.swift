import Foundation
import SomniCore
import Testing

/// `Examples/EngineExample`, the engine used from Swift with the core alone as docs/engine.md
/// shows it, gives the night the command line gives, and live episodes where the night snores.
@Suite struct EngineExampleTests {
    static var example: URL { CLI.executable.deletingLastPathComponent().appendingPathComponent("somni-engine-example") }

    @Test func theCoreAloneGivesTheNightTheCommandLineGives() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("night.wav")
        // Real held-out clips when the data is here (the model hears their snores); generated sounds otherwise.
        var synth = ["synth", "--out", wav.path, "--hours", "0.05", "--seed", "5"]
        if let data = CLI.sharedData { synth += ["--data", data.path, "--split", "test"] }
        else { print("../shared/data is absent: the night is made of generated sounds, which the model mostly misses") }
        let made = try CLI.run(synth)
        try #require(made.status == 0, "\(made.stderr)")

        let exampleNight = dir.appendingPathComponent("example.night"), cliNight = dir.appendingPathComponent("cli.night")
        let ran = try CLI.run(executable: Self.example, [wav.path, "--out", exampleNight.path])
        try #require(ran.status == 0, "\(ran.stderr)")
        let analysed = try CLI.run(["analyze", wav.path, "--out", cliNight.path])
        try #require(analysed.status == 0, "\(analysed.stderr)")

        let mine = try Session.load(from: exampleNight.appendingPathComponent("session.json"))
        let theirs = try Session.load(from: cliNight.appendingPathComponent("session.json"))
        #expect(theirs.inconsistency == nil, "\(theirs.inconsistency ?? "")")
        #expect(mine.summary == theirs.summary)
        #expect(mine.episodes == theirs.episodes)
        #expect(mine.settings == theirs.settings)
        #expect(mine.events.map { e in var e = e; e.clip = nil; return e } == theirs.events.map { e in var e = e; e.clip = nil; return e })
        if CLI.sharedData != nil { #expect(theirs.summary.snoringEpisodes >= 1) }

        // Each clip is a 16 kHz mono WAV of its event ± 1 s, levelled to 0.9 peak.
        for event in mine.events {
            let clip = try #require(event.clip.map { exampleNight.appendingPathComponent($0) })
            #expect(clip.pathExtension == "wav")
            let samples = try #require(PCM16Samples.wavFile(clip), "\(clip.path) is not a 16 kHz mono WAV")
            let expected = min(event.end + 1, mine.duration) - max(event.start - 1, 0)
            #expect(abs(Double(samples.count) / 16_000 - expected) < 0.01)
            var buffer = [Float](repeating: 0, count: samples.count)
            try buffer.withUnsafeMutableBufferPointer { try samples.read(from: 0, into: $0) }
            #expect(abs((buffer.map(abs).max() ?? 0) - 0.9) < 0.001)
        }

        // Live episodes: each lies within a morning episode (± the windows' reach), and every morning episode has one.
        let live = ran.stdout.split(separator: "\n").filter { $0.hasPrefix("live: snoring episode ") }.map { line -> (Double, Double) in
            let times = line.dropFirst("live: snoring episode ".count).prefix { $0 != " " }.split(separator: "–")
            return (Double(times[0]) ?? -1, Double(times[1]) ?? -1)
        }
        for (start, end) in live {
            #expect(theirs.episodes.contains { start < $0.end + 2 && end > $0.start - 2 }, "live \(start)–\(end) s")
        }
        for episode in theirs.episodes {
            #expect(live.contains { $0.0 < episode.end + 2 && $0.1 > episode.start - 2 }, "morning \(episode)")
        }
    }

    @Test func aFileItCannotReadIsOneErrorLine() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notAudio = dir.appendingPathComponent("notes.wav")
        try Data("not a recording".utf8).write(to: notAudio)
        let night = dir.appendingPathComponent("notes.night")
        let result = try CLI.run(executable: Self.example, [notAudio.path, "--out", night.path])
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1 && result.errorLines.first?.contains("not a readable 16 kHz mono 16-bit WAV") == true)
        #expect(!FileManager.default.fileExists(atPath: night.path))
    }
}
