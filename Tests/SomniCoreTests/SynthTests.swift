import Foundation
import Testing
@testable import SomniCore

private func shortNight(seed: UInt64, scene: NightConfiguration.Scene = .quiet, minutes: Double = 4) -> NightConfiguration {
    .compressed(minutes: minutes, seed: seed, scene: scene)
}

private func renderAll(_ source: some AudioSource, blockSize: Int) throws -> [Float] {
    var out: [Float] = []
    var block = [Float](repeating: 0, count: blockSize)
    try block.withUnsafeMutableBufferPointer { buffer in
        while true {
            let n = try source.read(into: buffer)
            if n == 0 { break }
            out += buffer[0..<n]
        }
    }
    return out
}

private func rms(_ samples: ArraySlice<Float>) -> Double {
    guard !samples.isEmpty else { return 0 }
    return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
}

private func temporaryDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("somni-synth-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

private func writeWAV(_ samples: [Float], to url: URL, format: WAVWriter.Format = .pcm16) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let writer = try WAVWriter(url: url, format: format)
    try samples.withUnsafeBufferPointer { try writer.write($0) }
    try writer.finish()
}

@Suite struct SynthTests {
    @Test func seededRandomIsReproducibleAndUniform() {
        var a = SeededRandom(seed: 42), b = SeededRandom(seed: 42), c = SeededRandom(seed: 43)
        let xs = (0..<1000).map { _ in a.unit() }
        #expect(xs == (0..<1000).map { _ in b.unit() })
        #expect(xs != (0..<1000).map { _ in c.unit() })
        #expect(xs.allSatisfy { $0 >= 0 && $0 < 1 })
        let mean = xs.reduce(0, +) / 1000
        #expect(abs(mean - 0.5) < 0.05)
        var d = SeededRandom(seed: 1)
        #expect((0..<200).map { _ in d.int(3...6) }.allSatisfy { (3...6).contains($0) })
    }

    /// RMS in a band, through two cascaded biquads each side (4th order, as the screeners use).
    private func bandLevel(_ clip: [Float], _ low: Double, _ high: Double) -> Double {
        var filters = [SynthFilter(.highPass, frequency: low), SynthFilter(.highPass, frequency: low),
                       SynthFilter(.lowPass, frequency: high), SynthFilter(.lowPass, frequency: high)]
        var sum = 0.0
        for x in clip {
            var y = Double(x)
            for k in filters.indices { y = filters[k].process(y) }
            sum += y * y
        }
        return (sum / Double(max(1, clip.count))).squareRoot()
    }

    @Test func generatedSoundsHaveTheirBandsAndLengths() {
        let bank = GeneratedSoundBank()
        var rng = SeededRandom(seed: 99)
        let rate = Double(analysisSampleRate)
        for _ in 0..<8 {
            let snore = bank.clip(.snore, rng: &rng)
            #expect((0.8...2.0).contains(Double(snore.count) / rate))
            // Snoring is low-band dominant (the screener asks low > 2 × mid).
            #expect(bandLevel(snore, 40, 400) > 2 * bandLevel(snore, 250, 3000))
            let speech = bank.clip(.speech, rng: &rng)
            #expect((0.5...4.2).contains(Double(speech.count) / rate))
            // Speech carries its energy in the voice band (the screener asks mid > 0.35 × low).
            #expect(bandLevel(speech, 250, 3000) > 0.35 * bandLevel(speech, 40, 400))
            let cough = bank.clip(.cough, rng: &rng)
            #expect((0.2...0.5).contains(Double(cough.count) / rate))
            // A cough starts sharply: its loudest 10 ms come in the first fifth.
            let frames = cough.count / 160
            let loudest = (0..<frames).max { rms(cough[$0 * 160..<($0 + 1) * 160]) < rms(cough[$1 * 160..<($1 + 1) * 160]) }!
            #expect(loudest < max(1, frames / 5))
            #expect(bandLevel(cough, 1000, 4000) > 0.3 * bandLevel(cough, 40, 400))
        }
    }

    @Test func sameSeedSameNightOtherSeedOtherNight() throws {
        let bank = GeneratedSoundBank()
        let a = try renderAll(NightSynthesizer(configuration: shortNight(seed: 7, minutes: 2), bank: bank), blockSize: 4096)
        let b = try renderAll(NightSynthesizer(configuration: shortNight(seed: 7, minutes: 2), bank: bank), blockSize: 4096)
        let c = try renderAll(NightSynthesizer(configuration: shortNight(seed: 8, minutes: 2), bank: bank), blockSize: 4096)
        #expect(a.count == 2 * 60 * analysisSampleRate)
        #expect(a == b)
        #expect(a != c)
    }

    @Test func samplesDoNotDependOnBlockSize() throws {
        let config = shortNight(seed: 11, scene: .fan, minutes: 2)
        let bank = GeneratedSoundBank()
        let big = try renderAll(NightSynthesizer(configuration: config, bank: bank), blockSize: 16_000)
        let odd = try renderAll(NightSynthesizer(configuration: config, bank: bank), blockSize: 997)
        let tiny = try renderAll(NightSynthesizer(configuration: config, bank: bank), blockSize: 64)
        #expect(big == odd)
        #expect(big == tiny)
    }

    @Test func referenceEventsSitWhereTheSoundIs() throws {
        var config = shortNight(seed: 5)
        config.distractorsPerHour = 0
        let night = try NightSynthesizer(configuration: config, bank: GeneratedSoundBank())
        let samples = try renderAll(night, blockSize: 8192)
        let events = night.plan.events
        #expect(Set(events.map(\.eventClass)) == Set(EventClass.allCases))
        let rate = Double(analysisSampleRate)
        var inside = [Bool](repeating: false, count: samples.count)
        for e in events { for i in Int(e.start * rate)..<min(samples.count, Int(e.end * rate)) { inside[i] = true } }
        let outside = samples.indices.filter { !inside[$0] }.map { samples[$0] }
        let bed = rms(outside[...])
        #expect(abs(20 * log10(bed) + 60) < 2, "quiet bed should sit near -60 dBFS")
        for e in events {
            let span = samples[Int(e.start * rate)..<Int(e.end * rate)]
            #expect(rms(span) > 3.5 * bed, "\(e) should stand above the bed (snores go down to about -48 dBFS)")
            // Just before the onset there is only the bed (unless another event ends there).
            let before = Int((e.start - 0.1) * rate)..<Int(e.start * rate)
            if before.lowerBound >= 0, !events.contains(where: { $0.end > e.start - 0.15 && $0.start < e.start }) {
                #expect(rms(samples[before]) < 1.5 * bed, "sound before \(e)")
            }
        }
    }

    @Test func planRespectsSpacingRules() throws {
        let plan = try NightPlan(configuration: shortNight(seed: 21, minutes: 6), bank: GeneratedSoundBank())
        let events = plan.events
        #expect(events == events.sorted { $0.start < $1.start })
        #expect(events.allSatisfy { $0.end <= plan.duration })
        for (a, b) in zip(events, events.dropFirst()) { #expect(a.end <= b.start, "\(a) overlaps \(b)") }
        let snores = events.filter { $0.eventClass == .snoring }
        #expect(snores.count > 10)
        #expect(snores.allSatisfy { (0.79...2.01).contains($0.duration) })
        for (a, b) in zip(snores, snores.dropFirst()) where b.start - a.start < 10 {
            #expect(b.start - a.start >= 3 - 1e-6, "pulses of one train are 3-6 s apart")
            #expect(b.start - a.start <= 6 + 1e-6 || b.start - a.start <= a.duration + 0.8 + 1e-6)
        }
        let coughs = events.filter { $0.eventClass == .cough }
        #expect(coughs.allSatisfy { (0.19...0.51).contains($0.duration) })
        for (a, b) in zip(coughs, coughs.dropFirst()) where b.start - a.start < 1 {
            #expect(b.start - a.start >= 0.4 - 1e-6, "coughs of a bout start 0.4-0.8 s apart")
        }
        let talk = events.filter { $0.eventClass == .sleepTalk }
        #expect(!talk.isEmpty)
        for t in talk {
            #expect(t.duration < 4.5)
            for other in events where other != t {
                #expect(other.end <= t.start - NightPlan.targetMargin + 1e-6 || other.start >= t.end + NightPlan.targetMargin - 1e-6)
            }
        }
        let rate = Double(analysisSampleRate)
        for p in plan.placements where p.kind.eventClass == nil {
            let s = Double(p.start) / rate, e = Double(p.end) / rate
            #expect(events.allSatisfy { $0.end <= s - NightPlan.distractorMargin + 1e-6 || $0.start >= e + NightPlan.distractorMargin - 1e-6 })
        }
    }

    /// Mains hum comes on top of the night, the same night otherwise, at its level, as a buzz:
    /// the fundamental and the odd harmonics above the even ones.
    @Test func mainsHumIsAddedAtItsLevelWithItsHarmonics() throws {
        let bank = GeneratedSoundBank()
        var plain = shortNight(seed: 5, minutes: 0.5)
        plain.noiseOnly = true
        var hummed = plain
        hummed.humFrequency = 50
        hummed.humLevel = -40
        let a = try renderAll(NightSynthesizer(configuration: plain, bank: bank), blockSize: 4096)
        let b = try renderAll(NightSynthesizer(configuration: hummed, bank: bank), blockSize: 4096)
        try #require(a.count == b.count)
        let hum = zip(b, a).map { $0 - $1 }
        #expect(abs(20 * log10(rms(hum[...])) - (-40)) < 0.3, "\(20 * log10(rms(hum[...]))) dBFS")
        func power(_ frequency: Double) -> Double {  // over the first second, one bin's worth
            var re = 0.0, im = 0.0
            for (n, x) in hum.prefix(16_000).enumerated() {
                let phase = 2 * Double.pi * frequency * Double(n) / 16_000
                re += Double(x) * cos(phase); im += Double(x) * sin(phase)
            }
            return re * re + im * im
        }
        let (first, second, third, off) = (power(50), power(100), power(150), power(75))
        #expect(first > third && third > second && second > 100 * off, "\([first, second, third, off])")
        var wrong = hummed
        wrong.humFrequency = 5
        #expect(throws: SomniError.self) { try wrong.validate() }
    }

    @Test func noiseOnlyNightHasNoTargets() throws {
        var config = shortNight(seed: 3, scene: .street)
        config.noiseOnly = true
        let plan = try NightPlan(configuration: config, bank: GeneratedSoundBank())
        #expect(plan.events.isEmpty)
        #expect(plan.placements.contains { $0.kind == .traffic })
    }

    /// More talk and coughs than a night has room for (each keeps 3 s from the others and the
    /// snoring) are placed as far as they go, and the plan says how many did.
    @Test func eventsWithNoRoomLeftAreCountedNotDroppedInSilence() throws {
        var crowded = NightConfiguration(hours: 0.2)
        crowded.speechPerHour = 600
        crowded.coughBoutsPerHour = 600
        let plan = try NightPlan(configuration: crowded, bank: GeneratedSoundBank())
        let talk = plan.events.filter { $0.eventClass == .sleepTalk }.count
        #expect(plan.shortfalls.contains { $0.hasPrefix("only \(talk) of the 120 utterances asked for found room") }, "\(plan.shortfalls)")
        #expect(plan.shortfalls.contains { $0.contains("of the 120 cough bouts asked for") }, "\(plan.shortfalls)")
        #expect(try NightPlan(configuration: NightConfiguration(hours: 0.2), bank: GeneratedSoundBank()).shortfalls.isEmpty)
    }

    @Test func badHoursAreRefused() {
        #expect(throws: SomniError.self) { try NightPlan(configuration: .init(hours: 0), bank: GeneratedSoundBank()) }
        // Ranges past a day never finish planning (a step past Int.max trapped), and a night
        // under a second has no samples.
        for change in [{ (c: inout NightConfiguration) in c.quietMinutes = 1e300...1e300 },
                       { c in c.snoreEpisodeMinutes = 0...1e300 }, { c in c.snoreInterval = 3...1e9 },
                       { c in c.firstSnoreMinutes = 0...Double.infinity }, { c in c.hours = 1e-9 }] {
            var config = NightConfiguration(hours: 0.02)
            change(&config)
            #expect(throws: SomniError.self) { try NightPlan(configuration: config, bank: GeneratedSoundBank()) }
        }
        #expect(throws: SomniError.self) { try NightPlan(configuration: .init(hours: .nan), bank: GeneratedSoundBank()) }
        var endless = NightConfiguration.compressed(minutes: 2)
        endless.snoreEpisodeMinutes = 0...0
        endless.quietMinutes = 0...0
        #expect(throws: SomniError.self) { try NightPlan(configuration: endless, bank: GeneratedSoundBank()) }
        var flood = NightConfiguration.compressed(minutes: 2)
        flood.speechPerHour = .infinity
        #expect(throws: SomniError.self) { try NightPlan(configuration: flood, bank: GeneratedSoundBank()) }
    }

    @Test(arguments: [WAVWriter.Format.pcm16, .float32])
    func wavWriterRoundTrip(format: WAVWriter.Format) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("t.wav")
        let samples = (0..<5000).map { Float(sin(Double($0) * 0.01)) * 0.8 }
        let writer = try WAVWriter(url: url, format: format)
        try samples[0..<1234].withUnsafeBufferPointer { try writer.write($0) }
        try samples[1234...].withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        let bytes = [UInt8](try Data(contentsOf: url))
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        let width = format == .pcm16 ? 2 : 4
        #expect(u32(4) == bytes.count - 8)
        #expect(u32(bytes.count - 5000 * width - 4) == 5000 * width)
        #expect(u32(24) == 16_000)
        let (read, rate) = try WAVReader.read(url)
        #expect(rate == 16_000)
        #expect(read.count == samples.count)
        let tolerance: Float = format == .pcm16 ? 0.5 / 32768 : 0
        let worst = zip(read, samples).map { abs($0 - $1) }.max() ?? 0
        #expect(worst <= tolerance, "worst \(worst)")
    }

    /// A WAV file is whole or absent: until `finish()` it is written under a hidden name, and a
    /// writer dropped unfinished (a full disk, an error) leaves neither it nor an older file's
    /// loss behind.
    @Test func aWAVFileAppearsOnlyWhenFinished() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("night.wav")
        let older = Data("an older night".utf8)
        try older.write(to: url)
        let samples = [Float](repeating: 0.25, count: 16_000)
        do {
            let writer = try WAVWriter(url: url)
            try samples.withUnsafeBufferPointer { try writer.write($0) }
            #expect(try Data(contentsOf: url) == older)
        }
        #expect(try Data(contentsOf: url) == older)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["night.wav"])

        let writer = try WAVWriter(url: url)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        #expect(try WAVReader.read(url).samples.count == 16_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["night.wav"])

        // Two writers of one name at once (two `somni synth --out same.wav`) each write a file of
        // their own: both finish, and the name holds the last one whole. With one shared
        // temporary name the second had truncated the first's, whose finish then failed.
        let first = try WAVWriter(url: url), second = try WAVWriter(url: url)
        try samples.withUnsafeBufferPointer { try first.write($0) }
        try samples.withUnsafeBufferPointer { try second.write(UnsafeBufferPointer(rebasing: $0[0..<8_000])) }
        try first.finish()
        try second.finish()
        #expect(try WAVReader.read(url).samples.count == 8_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["night.wav"])
    }

    @Test func wavReaderRejectsGarbage() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("bad.wav")
        try Data("RIFF....WAVEjunk".utf8).write(to: url)
        #expect(throws: SomniError.self) { try WAVReader.read(url) }
    }

    /// The size rule itself, for what no test file here can hold: a data size wrapped past 4 GiB.
    @Test func aDataSizeWrappedPast4GiBReachesTheEndOfTheFile() throws {
        var layout = try WAVLayout.find { offset, count in
            offset == 0 ? Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8)
                : offset == 12 ? Array("fmt ".utf8) + [16, 0, 0, 0] : offset == 20 ? [3, 0, 4, 0, 0, 0xEE, 2, 0] + [0, 0, 0, 0, 32, 0, 64, 0]
                : offset == 36 ? Array("data".utf8) + [0x10, 0, 0, 0] : nil
        }
        #expect(layout.dataOffset == 44 && layout.declaredDataSize == 16)
        // 4 GiB and 16 bytes of sound, of which the header kept the 16 past 4 GiB.
        let fileSize = 44 + (1 << 32) + 16
        #expect(layout.dataBytes(fileSize: fileSize) { _ in [0x12, 0x80, 0x01, 0xFF, 0, 0, 0, 0] } == (1 << 32) + 16)
        layout.declaredDataSize = 8
        #expect(layout.dataBytes(fileSize: 44 + 16) { _ in Array("id3 ".utf8) + [0, 0, 0, 0] } == 8)
        // A frame here is 32 bytes (4 channels of 64-bit floats): less than one past the declared
        // end is no sound (an odd size's pad byte), a frame or more is.
        #expect(layout.dataBytes(fileSize: 44 + 8 + 32) { _ in [0x12, 0x80, 0x01, 0xFF, 0, 0, 0, 0] } == 40)
        #expect(layout.dataBytes(fileSize: 44 + 16) { _ in [0x12, 0x80, 0x01, 0xFF, 0, 0, 0, 0] } == 8)
        #expect(layout.dataBytes(fileSize: 44 + 4) { _ in nil } == 4, "cut off: what the file holds")
    }
}

@Suite struct RecordingSoundBankTests {
    /// A miniature data folder: tones padded with silence stand in for snores and words.
    private func makeDataFolder() throws -> URL {
        let root = try temporaryDirectory()
        let rate = analysisSampleRate
        func tone(_ f: Double, seconds: Double, pad: Double) -> [Float] {
            let silence = [Float](repeating: 0, count: Int(pad * Double(rate)))
            return silence + (0..<Int(seconds * Double(rate))).map { Float(0.5 * sin(2 * Double.pi * f * Double($0) / Double(rate))) } + silence
        }
        for i in 0..<100 { try writeWAV(tone(110, seconds: 0.6, pad: 0.2), to: root.appendingPathComponent("snoring-khan/snoring/1_\(i).wav")) }
        for i in 100..<150 { try writeWAV(tone(60, seconds: 0.3, pad: 0.1), to: root.appendingPathComponent("snoring-khan/no_snoring/0_\(i).wav")) }
        for i in 400..<410 { try writeWAV(tone(200, seconds: 0.5, pad: 0), to: root.appendingPathComponent("snoring-khan/no_snoring/0_\(i).wav")) }
        for speaker in (0..<20).map({ String(format: "%08x", $0 * 7919) }) {
            for n in 0..<3 {
                try writeWAV(tone(180, seconds: 0.4, pad: 0.3), to: root.appendingPathComponent("speech-commands/one/\(speaker)_nohash_\(n).wav"))
            }
        }
        for r in 0..<10 {
            let url = root.appendingPathComponent("cough-coughseg/cough/rec\(r).wav")
            try writeWAV(tone(500, seconds: 4, pad: 0), to: url)
            try "0.5\t0.8\t\n1.25\t1.6\t\n".write(to: url.deletingPathExtension().appendingPathExtension("txt"), atomically: true, encoding: .utf8)
        }
        var noiseRandom = SeededRandom(seed: 9)
        try writeWAV((0..<(10 * rate)).map { _ in 0.1 * noiseRandom.noise() }, to: root.appendingPathComponent("noise/pink_noise.wav"))
        return root
    }

    private func loadWAV(_ url: URL) throws -> [Float] { try WAVReader.read(url).samples }

    @Test func scanFindsEverySourceAndSplitsByGroup() throws {
        let root = try makeDataFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let files = try RecordingSoundBank.scan(root)
        #expect(Set(files.map(\.source)) == Set(RecordingFile.Source.allCases))
        let test = try RecordingSoundBank(dataDirectory: root, split: .test, loader: loadWAV)
        let train = try RecordingSoundBank(dataDirectory: root, split: .train, loader: loadWAV)
        #expect(test.files.filter { $0.source == .khanSnoring }.allSatisfy { (30..<40).contains($0.index! % 50) })
        #expect(train.files.filter { $0.source == .khanSnoring }.allSatisfy { !(30..<40).contains($0.index! % 50) })
        let testSpeakers = Set(test.files.filter { $0.source == .speechCommands }.map(\.group))
        let trainSpeakers = Set(train.files.filter { $0.source == .speechCommands }.map(\.group))
        #expect(testSpeakers.isDisjoint(with: trainSpeakers))
        #expect(test.files.count + train.files.count == files.count + 1)  // the noise file is in both
        #expect(!test.recordedKinds.contains(.footsteps))
    }

    /// Folds 1–4 of the held-out rule hold out the other parts of the data in turn: over the five
    /// folds every Khan clip of indices 0–39, every speaker, every cough recording and every fifth
    /// of a noise recording is held out once, and fold 0 is the shared rule itself.
    @Test func foldsHoldOutEveryPartOfTheDataOnce() throws {
        let root = try makeDataFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let files = try RecordingSoundBank.scan(root)
        for file in files where file.source != .noise {
            let heldOutIn = DataSplit.folds.filter { DataSplit.of(file, fold: $0) == .test }
            if let index = file.index, index % 50 >= 40 {
                #expect(heldOutIn.isEmpty, "\(file.url.lastPathComponent) held out in \(heldOutIn)")
            } else {
                #expect(heldOutIn.count == 1, "\(file.url.lastPathComponent) held out in \(heldOutIn)")
            }
            // Fold 0 is the rule test nights were always made from.
            let shared = file.index.map { (30..<40).contains($0 % 50) } ?? (DataSplit.stableHash(file.group) % 5 == 0)
            #expect((DataSplit.of(file, fold: 0) == .test) == shared)
            #expect(DataSplit.of(file) == DataSplit.of(file, fold: 0))
        }
        // Khan's fold 4 holds out none of its clips, and each block of ten indices goes whole.
        let khan = files.filter { $0.source == .khanSnoring }
        #expect(!khan.contains { DataSplit.of($0, fold: 4) == .test })
        #expect(khan.filter { DataSplit.of($0, fold: 2) == .test }.map { $0.index! % 50 }.allSatisfy { (10..<20).contains($0) })
        // A noise recording's parts: each fold's held-out fifth and the rest on either side of it
        // cover it without overlap, and the five fifths tile it.
        var heldOut: [ClosedRange<Double>] = []
        for fold in DataSplit.folds {
            let test = DataSplit.test.noiseShares(fold: fold), train = DataSplit.train.noiseShares(fold: fold)
            #expect(test.count == 1)
            let parts = (test + train).sorted { $0.lowerBound < $1.lowerBound }
            #expect(parts.first?.lowerBound == 0 && parts.last?.upperBound == 1)
            for (a, b) in zip(parts, parts.dropFirst()) { #expect(abs(a.upperBound - b.lowerBound) < 1e-12) }
            heldOut += test
        }
        #expect(heldOut.sorted { $0.lowerBound < $1.lowerBound }.map(\.lowerBound).enumerated()
            .allSatisfy { abs($0.element - 0.2 * Double($0.offset)) < 1e-12 })
        #expect(DataSplit.test.noiseShares(fold: 0) == [0.8...1])
        // A bank of fold 2 draws its noise from seconds 2–4 of the 10 s recording, and training
        // material from the rest joined: 8 s.
        let noise = try loadWAV(root.appendingPathComponent("noise/pink_noise.wav"))
        var rng = SeededRandom(seed: 3)
        let testBank = try RecordingSoundBank(dataDirectory: root, split: .test, fold: 2, loader: loadWAV)
        #expect(try testBank.clip(.roomNoise, rng: &rng) == Array(noise[32_000..<64_000]))
        let trainBank = try RecordingSoundBank(dataDirectory: root, split: .train, fold: 2, loader: loadWAV)
        #expect(try trainBank.clip(.roomNoise, rng: &rng) == Array(noise[0..<32_000] + noise[64_000...]))
        #expect(DataSplit.train.noiseSamples(of: noise, fold: 2) == Array(noise[0..<32_000] + noise[64_000...]))
        #expect(DataSplit.train.noiseSamples(of: noise) == Array(noise[0..<128_000]))
        #expect(testBank.files.filter { $0.source == .khanSnoring }.allSatisfy { (10..<20).contains($0.index! % 50) })
        // Fold 4 holds out no Khan clip, so its test part has no snores to build a night from: said so.
        #expect {
            try RecordingSoundBank(dataDirectory: root, split: .test, fold: 4, loader: loadWAV)
        } throws: { error in
            "\(error)".contains("no snore recordings") && "\(error)".contains("test selection of fold 4, which holds out none of Khan's clips")
        }
    }

    @Test func clipsAreTrimmedAndCutAtMarks() throws {
        let root = try makeDataFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let bank = try RecordingSoundBank(dataDirectory: root, split: nil, loader: loadWAV)
        var rng = SeededRandom(seed: 1)
        let rate = Double(analysisSampleRate)
        for _ in 0..<5 {
            #expect(abs(Double(try bank.clip(.snore, rng: &rng).count) / rate - 0.6) < 0.011)
            let cough = Double(try bank.clip(.cough, rng: &rng).count) / rate
            #expect(abs(cough - 0.3) < 1e-3 || abs(cough - 0.35) < 1e-3)
            let words = Double(try bank.clip(.speech, rng: &rng).count) / rate
            let twoToFourWords: ClosedRange<Double> = 0.93...2.84   // 0.4 s words, 0.15–0.4 s pauses
            #expect(twoToFourWords.contains(words))
            // Doors come from the door block only, never from "people talking" (0.5 s tones here).
            #expect(abs(Double(try bank.clip(.door, rng: &rng).count) / rate - 0.3) < 0.011)
        }
        var a = SeededRandom(seed: 5), b = SeededRandom(seed: 5)
        #expect(try bank.clip(.speech, rng: &a) == bank.clip(.speech, rng: &b))
        #expect(bank.providesBeds)
        // The test split of a noise recording is its last 20 %.
        let testBank = try RecordingSoundBank(dataDirectory: root, split: .test, loader: loadWAV)
        #expect(try testBank.clip(.roomNoise, rng: &rng).count == 2 * analysisSampleRate)
    }

    @Test func nightFromRecordingsPlacesRecordedClips() throws {
        let root = try makeDataFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let bank = try RecordingSoundBank(dataDirectory: root, split: .test, loader: loadWAV)
        let night = try NightSynthesizer(configuration: shortNight(seed: 2, minutes: 2), bank: bank)
        let snores = night.plan.events.filter { $0.eventClass == .snoring }
        #expect(!snores.isEmpty)
        #expect(snores.allSatisfy { abs($0.duration - 0.6) < 0.011 })
        #expect(night.plan.placements.contains { $0.kind == .roomNoise })
        let samples = try renderAll(night, blockSize: 5000)
        #expect(samples.count == 2 * 60 * analysisSampleRate)
        let again = try renderAll(NightSynthesizer(plan: night.plan, bank: bank), blockSize: 777)
        #expect(samples == again)
    }

    @Test func withoutTheRecordedBedOnlyTheGeneratedSceneIsUnderTheNight() throws {
        let root = try makeDataFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let bank = try RecordingSoundBank(dataDirectory: root, split: .test, loader: loadWAV)
        var configuration = shortNight(seed: 2, minutes: 2)
        configuration.scene = .fan
        configuration.recordedBed = false
        let steady = try NightSynthesizer(configuration: configuration, bank: bank)
        #expect(!steady.plan.placements.contains { $0.kind == .roomNoise })
        // The same targets from recordings, whether the recordings also make the bed or not.
        #expect(steady.plan.events.contains { $0.eventClass == .snoring })
        #expect(steady.plan.events.allSatisfy { $0.eventClass != .snoring || abs($0.duration - 0.6) < 0.011 })
        configuration.recordedBed = true
        let withBed = try NightSynthesizer(configuration: configuration, bank: bank)
        #expect(withBed.plan.placements.contains { $0.kind == .roomNoise })
    }

    @Test func emptySelectionIsABadInput() throws {
        let root = try makeDataFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(throws: SomniError.self) {
            try RecordingSoundBank(dataDirectory: root, split: .test, filter: { _ in false }, loader: loadWAV)
        }
        #expect(throws: SomniError.self) {
            try RecordingSoundBank(dataDirectory: root.appendingPathComponent("missing"), loader: loadWAV)
        }
        // Without coughs a night would silently get generated ones: refused unless asked for.
        let noCoughs: (RecordingFile) -> Bool = { $0.source != .coughSeg }
        #expect(throws: SomniError.self) {
            try RecordingSoundBank(dataDirectory: root, split: nil, filter: noCoughs, loader: loadWAV)
        }
        let generatedCoughs = try RecordingSoundBank(dataDirectory: root, split: nil, filter: noCoughs,
                                                     requiredKinds: [.snore, .speech], loader: loadWAV)
        #expect(!generatedCoughs.recordedKinds.contains(.cough))
    }

    static let sharedData = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/data")

    @Test(.enabled(if: FileManager.default.fileExists(atPath: sharedData.path), "../shared/data is absent"))
    func realDataLayoutScansAndSplitsHonestly() throws {
        let files = try RecordingSoundBank.scan(Self.sharedData)
        for source in RecordingFile.Source.allCases {
            #expect(files.contains { $0.source == source }, "no \(source) files found")
        }
        let coughs = files.filter { $0.source == .coughSeg }
        #expect(coughs.filter { !$0.coughs.isEmpty }.count > coughs.count * 9 / 10)
        for source in [RecordingFile.Source.speechCommands, .coughSeg] {
            let groups = files.filter { $0.source == source }
            let test = Set(groups.filter { DataSplit.of($0) == .test }.map(\.group))
            let train = Set(groups.filter { DataSplit.of($0) == .train }.map(\.group))
            #expect(test.isDisjoint(with: train))
            let share = Double(test.count) / Double(test.count + train.count)
            #expect((0.1...0.3).contains(share), "\(source) test share \(share)")
        }
        let doors = files.filter { $0.khanCategory == 2 }
        #expect(!doors.isEmpty)
        // Both splits have snoring to draw from.
        let snores = files.filter { $0.source == .khanSnoring }
        #expect(snores.contains { DataSplit.of($0) == .test } && snores.contains { DataSplit.of($0) == .train })
    }
}
