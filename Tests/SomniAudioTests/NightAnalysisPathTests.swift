import Foundation
import SomniAudio
import SomniCore
import Testing

/// The morning pass reads a 16 kHz mono 16-bit WAV back from the file instead of spooling it,
/// and spreads windows and clips over worker threads: neither may change what it finds.
@Suite struct NightAnalysisPathTests {
    @Test func analysisRateWAVIsReadBackExactlyAsDecoded() throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(TestSignals.tones(seconds: 2, sampleRate: 16_000), as: .wav,
                                         sampleRate: 16_000, in: folder.url)
        let decoder = try AudioDecoder(url: url)
        let decoded = try TestSignals.readAll(decoder)
        let samples = try #require(decoder.rereadableSamples())
        #expect(samples.count == decoded.count)
        for start in [0, 1, 12_345, decoded.count - 100] {
            var back = [Float](repeating: 9, count: 300)
            try back.withUnsafeMutableBufferPointer { try samples.read(from: start, into: $0) }
            let inside = min(300, decoded.count - start)
            #expect(Array(back[0..<inside]) == Array(decoded[start..<start + inside]), "from \(start)")
            #expect(back[inside...].allSatisfy { $0 == 0 }, "past the end reads as silence")
        }
    }

    @Test func otherFilesAreNotReadBack() throws {
        let folder = try ScratchFolder()
        let tones = TestSignals.tones(seconds: 1, sampleRate: 16_000)
        let cases: [(EncodedAudioWriter.Format, Int, Int)] = [(.wav, 48_000, 1), (.wav, 16_000, 2), (.flac, 16_000, 1)]
        for (format, rate, channels) in cases {
            let url = try TestSignals.encode(TestSignals.tones(seconds: 1, sampleRate: rate, channels: channels), as: format,
                                             sampleRate: rate, channels: channels, in: folder.url, name: "\(rate)-\(channels)")
            #expect(try AudioDecoder(url: url).rereadableSamples() == nil, "\(format) \(rate) Hz \(channels) ch")
        }
        let float = folder.url.appendingPathComponent("float.wav")
        let writer = try WAVWriter(url: float, format: .float32)
        try tones.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        #expect(try AudioDecoder(url: float).rereadableSamples() == nil)
        #expect(PCM16Samples.wavFile(folder.url.appendingPathComponent("missing.wav")) == nil)
        #expect(PCM16Samples.wavFile(try folder.file("text.wav", contents: Data("RIFF but not really".utf8))) == nil)
    }

    @Test func headerSizesThatLieAreBoundedByTheFile() throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(TestSignals.tones(seconds: 1, sampleRate: 16_000), as: .wav,
                                         sampleRate: 16_000, in: folder.url)
        var bytes = try [UInt8](Data(contentsOf: url))
        let dataBody = try #require(findChunk("data", in: bytes)) + 8
        let sampleBytes = bytes.count - dataBody
        // A recorder that never patched its header, and a file cut off mid-way.
        bytes.replaceSubrange(dataBody - 4..<dataBody, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let unpatched = try folder.file("unpatched.wav", contents: Data(bytes))
        #expect(PCM16Samples.wavFile(unpatched)?.count == sampleBytes / 2)
        let cut = try folder.file("cut.wav", contents: Data(bytes[0..<dataBody + 1_001]))
        #expect(PCM16Samples.wavFile(cut)?.count == 500)
    }

    @Test func workersAndSampleSourceDoNotChangeTheNight() throws {
        let folder = try ScratchFolder()
        let configuration = NightConfiguration(hours: 0.1, seed: 11, scene: .quiet)
        let wav = folder.url.appendingPathComponent("night.wav")
        try NightSynthesizer(configuration: configuration, bank: GeneratedSoundBank()).render(to: WAVWriter(url: wav))

        func analyse(workers: Int, spooled: Bool) throws -> Session {
            let out = folder.url.appendingPathComponent("night-\(workers)-\(spooled)")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), clipEncoder: MP3ClipEncoder())
            analyzer.workers = workers
            let decoder = try AudioDecoder(url: wav)
            let session = spooled
                ? try analyzer.analyze(source: Spooled(decoder), sourceName: "night.wav", into: out)
                : try analyzer.analyze(source: decoder, sourceName: "night.wav", into: out)
            for event in session.events {
                let clip = try #require(event.clip)
                #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(clip).path), "\(clip)")
            }
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent(".samples.spool").path))
            return session
        }
        let reference = try analyse(workers: 1, spooled: false)
        #expect(reference.events.count >= 10)
        for workers in [2, 5] {
            #expect(try analyse(workers: workers, spooled: false).events == reference.events, "\(workers) workers")
        }
        // The spool keeps 16-bit audio exactly, so a night spooled is the night read back.
        #expect(try analyse(workers: 2, spooled: true).events == reference.events)
    }

    @Test func snoresTheGateKeptFromTheClassifierAreHeardBetweenAndBeforeATrain() throws {
        // Two trains of loud 110 Hz "snores" every 5 s (20–35 s and 60–75 s) over steady noise;
        // between and before them (10, 15 and 40–55 s) the same breaths are too quiet for the
        // gate (the snore band rises about an eighth above its mean, under the gate's 2.5 × its
        // floor and the bridging bursts' 2 ×), but the classifier hears them.
        let loud = [20.0, 25, 30, 35, 60, 65, 70, 75], quiet = [10.0, 15, 40, 45, 50, 55]
        let session = try analyseToneNight(seed: 7, loud: loud, quiet: quiet)

        let snores = session.events.filter { $0.eventClass == .snoring }
        for at in loud + quiet {
            #expect(snores.contains { $0.start < at + 1 && $0.end > at }, "a snore at \(at) s: \(snores.map { ($0.start, $0.end) })")
        }
        #expect(session.episodes.count == 1)
        #expect(session.episodes.first.map { abs($0.start - 10) < 1 && abs($0.end - 76) < 1 } == true,
                "\(session.episodes)")
        #expect(session.analysedSeconds > 60, "the stretches classified around the snoring count as analysed")
        #expect(session.inconsistency == nil, "the store would refuse the night: \(session.inconsistency ?? "")")
    }

    @Test func aLoneSureSnoreTheGateLetThroughLeadsTheSearchIntoItsTrain() throws {
        // A train of 110 Hz "snores" every 5 s (20–80 s) over steady noise, all too quiet for
        // the gate but the one at 50 s. That one alone is a lone snore and makes no event; the
        // classifier is sure of it, so the search around snoring starts there and finds the rest.
        let quiet = stride(from: 20.0, through: 80, by: 5).filter { $0 != 50 }
        let session = try analyseToneNight(seed: 11, loud: [50], quiet: quiet)

        #expect(session.activeShare < 0.1, "the gate passes little more than the loud snore")
        let snores = session.events.filter { $0.eventClass == .snoring }
        for at in quiet + [50] {
            #expect(snores.contains { $0.start < at + 1 && $0.end > at }, "a snore at \(at) s: \(snores.map { ($0.start, $0.end) })")
        }
        #expect(session.episodes.count == 1)
        #expect(session.episodes.first.map { abs($0.start - 20) < 1 && abs($0.end - 81) < 1 } == true, "\(session.episodes)")
    }

    @Test func aDCOffsetIsNotHeardAsLoudness() throws {
        // A cheap microphone's DC offset (here −26 dBFS, over a room at −46) is not sound: the
        // gate, the events and their levels are those of the same night without it. Counted as
        // loudness it raised the gate's floor tenfold, past the snores themselves.
        let loud = [20.0, 25, 30, 35, 60, 65, 70, 75]
        let plain = try analyseToneNight(seed: 5, loud: loud, quiet: [])
        let offset = try analyseToneNight(seed: 5, loud: loud, quiet: [], dcOffset: 0.05)
        #expect(plain.events.count == loud.count, "\(plain.events.map { ($0.start, $0.end) })")
        #expect(offset.events.count == plain.events.count, "\(offset.events.map { ($0.start, $0.end) })")
        for (a, b) in zip(plain.events, offset.events) {
            #expect(abs(a.start - b.start) <= 0.05 && abs(a.end - b.end) <= 0.05, "\(a.start)–\(a.end) against \(b.start)–\(b.end)")
            #expect(abs(a.peakDBFS - b.peakDBFS) < 0.1 && abs(a.meanDBFS - b.meanDBFS) < 0.1,
                    "levels \(a.peakDBFS)/\(a.meanDBFS) against \(b.peakDBFS)/\(b.meanDBFS) dBFS")
        }
        // The offset starts as a step at the first sample, where the band filters ring for a
        // moment: the gate may open there for its 2 s of padding, and nowhere else.
        #expect(abs(plain.activeShare - offset.activeShare) <= 0.025, "active \(plain.activeShare) against \(offset.activeShare)")
    }

    @Test func windowsAndClipsMadeWhileReadingAreTheOnesTheFinalPassWouldMake() throws {
        let folder = try ScratchFolder()
        let wav = folder.url.appendingPathComponent("night.wav")
        try NightSynthesizer(configuration: NightConfiguration(hours: 0.1, seed: 5, scene: .quiet),
                             bank: GeneratedSoundBank()).render(to: WAVWriter(url: wav))
        for spooled in [false, true] {
            func analyse(speculating: Bool) throws -> (Session, URL, NightAnalyzer<LoudnessClassifier>) {
                let out = folder.url.appendingPathComponent("night-\(spooled)-\(speculating)")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                var analyzer = NightAnalyzer(classifier: LoudnessClassifier(), clipEncoder: MP3ClipEncoder())
                analyzer.workers = 2
                analyzer.speculates = speculating
                // Four minutes in, the source waits until a clip has been written ahead (the
                // first settled events end by then); without speculation it never waits.
                let aheadClips = out.appendingPathComponent(".speculative-clips")
                let source = StallingDecoder(try AudioDecoder(url: wav), readsBack: !spooled,
                                             stallAt: speculating ? 240 : nil, longest: 60) {
                    !((try? FileManager.default.contentsOfDirectory(atPath: aheadClips.path)) ?? []).isEmpty
                }
                let session = try analyzer.analyze(source: source, sourceName: "night.wav", into: out)
                return (session, out, analyzer)
            }
            let (plain, plainFolder, _) = try analyse(speculating: false)
            let (ahead, aheadFolder, analyzer) = try analyse(speculating: true)
            #expect(plain.events.count >= 10)
            #expect(ahead.events == plain.events, "spooled: \(spooled)")
            #expect(analyzer.speculation.windowsUsed > 0, "windows classified while reading were used: \(analyzer.speculation)")
            #expect(analyzer.speculation.clipsUsed > 0, "clips written while reading were used: \(analyzer.speculation)")
            for event in ahead.events {
                let clip = try #require(event.clip)
                #expect(try Data(contentsOf: aheadFolder.appendingPathComponent(clip))
                        == Data(contentsOf: plainFolder.appendingPathComponent(clip)), "\(clip) byte for byte")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: aheadFolder.path).sorted()
            #expect(left == ["clips", "envelope.bin", "session.json"], "no speculative clips left behind")
        }
    }

    @Test func aClassifierThatReadsTheNightsFloorIsNeverRunAhead() throws {
        let folder = try ScratchFolder()
        let wav = try TestSignals.encode(TestSignals.tones(seconds: 120, sampleRate: 16_000), as: .wav,
                                         sampleRate: 16_000, in: folder.url)
        var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), clipEncoder: nil)
        // A second of nothing to read, half way: time enough to run ahead, were it allowed.
        let source = StallingDecoder(try AudioDecoder(url: wav), readsBack: true, stallAt: 60, longest: 1) { false }
        _ = try analyzer.analyze(source: source, sourceName: "tones.wav", into: folder.url)
        #expect(analyzer.speculation.windowsClassified == 0)
    }

    /// A night with samples that are not numbers is analysed whole, and says how many were read as silence.
    @Test func samplesThatAreNotNumbersAreSilenceAndSaidSo() throws {
        let folder = try ScratchFolder()
        var night = TestSignals.tones(seconds: 120, sampleRate: 16_000)
        for i in stride(from: 16_000, to: night.count, by: 10_000) { night[i] = .nan }
        var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), clipEncoder: nil)
        let session = try analyzer.analyze(source: BufferAudioSource(night), sourceName: "nan.wav", into: folder.url)
        let count = (night.count - 16_000 + 9_999) / 10_000
        #expect(session.warnings.contains("\(count) samples were not a number (NaN or infinite) and were read as silence: "
                                          + "the recording may be damaged"), "\(session.warnings)")
        let envelope = try EnvelopeFile.read(from: folder.url.appendingPathComponent(EnvelopeFile.fileName)).values
        #expect(envelope.count == 1_200 && envelope.allSatisfy(\.isFinite) && envelope.suffix(100).allSatisfy { $0 > 0.01 })

        // Infinities in the same places are the same silence: the windows and clips are read
        // back from the spool, where they were full-scale clicks.
        // A generated night with snores and coughs, so there are events and clips to compare.
        let synthesizer = try NightSynthesizer(configuration: .compressed(minutes: 2, seed: 5), bank: GeneratedSoundBank())
        var sounds: [Float] = [], block = [Float](repeating: 0, count: 16_000)
        while case let n = try block.withUnsafeMutableBufferPointer({ try synthesizer.read(into: $0) }), n > 0 { sounds += block[..<n] }
        var withNaN = sounds, infinite = sounds
        for (k, i) in stride(from: 16_000, to: sounds.count, by: 4_001).enumerated() {
            withNaN[i] = .nan
            infinite[i] = k % 2 == 0 ? .infinity : -.infinity
        }
        func analysed(_ samples: [Float], in name: String) throws -> Session {
            let out = folder.url.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), clipEncoder: WAVClipEncoder())
            return try analyzer.analyze(source: BufferAudioSource(samples), sourceName: "nan.wav", into: out)
        }
        let asNaN = try analysed(withNaN, in: "nan"), asInfinity = try analysed(infinite, in: "infinite")
        #expect(!asNaN.events.isEmpty && asInfinity.events == asNaN.events && asInfinity.warnings == asNaN.warnings)
        for clip in asNaN.events.compactMap(\.clip) {
            #expect(try Data(contentsOf: folder.url.appendingPathComponent("infinite/" + clip))
                    == Data(contentsOf: folder.url.appendingPathComponent("nan/" + clip)), "\(clip)")
        }
    }

    /// Settings an app sets by hand are refused, not clamped for the analysis and written into
    /// session.json as given (a sensitivity of 1000 was analysed as 10 and saved as 1000; a
    /// block of −1 samples aborted asking for 2⁶⁴ bytes).
    @Test func settingsOutOfRangeAreRefusedBeforeAnythingIsRead() throws {
        let folder = try ScratchFolder()
        for (sensitivity, blockLength, says) in [(1000, 16_000, "sensitivity must be between 1 and 10, got 1000"),
                                                 (0, 16_000, "got 0"), (5, 0, "blockLength must be at least 1"),
                                                 (5, -1, "blockLength must be at least 1")] {
            var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), sensitivity: sensitivity, clipEncoder: nil)
            analyzer.blockLength = blockLength
            let source = FailingSource(blocksBeforeFailing: 100)
            let error = #expect(throws: SomniError.self) { _ = try analyzer.analyze(source: source, sourceName: "x", into: folder.url) }
            #expect(error?.code == .badInput && error?.message.contains(says) == true, "\(String(describing: error))")
            #expect(source.reads == 0)
        }
    }

    /// The analyser and the learned classifier are Sendable: an app analyses off its main actor
    /// in a task of its own, and the progress it asked for arrives there, stage by stage, from
    /// the analysing threads.
    @Test func aNightIsAnalysedInADetachedTaskWithProgressFromItsThreads() async throws {
        let folder = try ScratchFolder()
        let wav = try TestSignals.encode(TestSignals.tones(seconds: 60, sampleRate: 16_000), as: .wav,
                                         sampleRate: 16_000, in: folder.url)
        final class Stages: @unchecked Sendable {
            private let lock = NSLock()
            private var seen: [AnalysisStage] = []
            func note(_ stage: AnalysisStage) { lock.withLock { if seen.last != stage { seen.append(stage) } } }
            var all: [AnalysisStage] { lock.withLock { seen } }
        }
        let stages = Stages()
        let analyzer = NightAnalyzer(classifier: try CNNClassifier.bundled(), clipEncoder: nil)
        let out = folder.url.appendingPathComponent("night")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let detached = try await Task.detached {
            var mine = analyzer
            return try mine.analyze(source: try AudioDecoder(url: wav), sourceName: "tones.wav", into: out) { stage, _ in
                stages.note(stage)
            }
        }.value
        #expect(stages.all == [.reading, .classifying], "\(stages.all)")
        // The same night as analysed here, by a copy of the same analyser.
        var here = analyzer
        let again = folder.url.appendingPathComponent("again")
        try FileManager.default.createDirectory(at: again, withIntermediateDirectories: true)
        let local = try here.analyze(source: try AudioDecoder(url: wav), sourceName: "tones.wav", into: again)
        #expect(detached.events == local.events && detached.duration == local.duration)
    }

    @Test func aSourceThatFailsMidwayFailsTheAnalysisAndStopsItsReader() throws {
        let folder = try ScratchFolder()
        for failAfter in [0, 3, 40] {
            var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), clipEncoder: nil)
            analyzer.blockLength = 4_000
            let source = FailingSource(blocksBeforeFailing: failAfter)
            #expect(throws: SomniError.self) {
                _ = try analyzer.analyze(source: source, sourceName: "failing", into: folder.url)
            }
            #expect(source.reads == failAfter + 1, "no reading after the failure")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty, "the spool is gone")
    }

    @Test func aWAVThatShrinksWhileItIsReadIsAnErrorNotANightOfSilence() throws {
        let folder = try ScratchFolder()
        let wav = try TestSignals.encode(TestSignals.tones(seconds: 10, sampleRate: 16_000), as: .wav,
                                         sampleRate: 16_000, in: folder.url)
        let source = ShrinkingSource(try AudioDecoder(url: wav), url: wav, keepBytes: 44 + 20_000)
        let out = folder.url.appendingPathComponent("night")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), clipEncoder: nil)
        #expect {
            _ = try analyzer.analyze(source: source, sourceName: "shrinking.wav", into: out)
        } throws: { ($0 as? SomniError)?.message.contains("changed while it was being analysed") == true }
    }

    @Test func aRecordingMadeBelowTheAnalysisRateIsAnalysedWithAWarning() throws {
        let folder = try ScratchFolder()
        func warnings(recordedAt rate: Int) throws -> [String] {
            let url = try TestSignals.encode(TestSignals.tones(seconds: 5, sampleRate: rate), as: .wav, sampleRate: rate,
                                             in: folder.url, name: "\(rate)")
            let decoder = try AudioDecoder(url: url)
            #expect(decoder.recordedSampleRate == rate)
            var analyzer = NightAnalyzer(classifier: ToneClassifier(), clipEncoder: nil)
            let out = folder.url.appendingPathComponent("\(rate).night")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let session = try analyzer.analyze(source: decoder, sourceName: "\(rate).wav", into: out)
            #expect(abs(session.duration - 5) < 0.05, "the whole recording is analysed at \(rate) Hz")
            // This classifier hears snoring only, and the night says so too.
            #expect(session.warnings.contains { $0.contains("include none for sleep_talk or cough") })
            return session.warnings.filter { !$0.contains("include none for") }
        }
        let telephone = try warnings(recordedAt: 8_000)
        #expect(telephone.count == 1)
        #expect(telephone.first?.hasPrefix("the recording was made at 8000 Hz and holds no sound above 4.0 kHz") == true)
        #expect(try warnings(recordedAt: 11_025).first?.contains("above 5.5 kHz") == true)
        #expect(try warnings(recordedAt: 16_000).isEmpty)
        #expect(try warnings(recordedAt: 48_000).isEmpty)
    }

    /// 100 s of steady noise with a 1 s 110 Hz tone at each of `loud` (0.1, past the gate) and
    /// `quiet` (0.0008, under it; the snore band rises about an eighth above its mean), analysed
    /// with `ToneClassifier`, which hears both.
    private func analyseToneNight(seed: UInt64, loud: [Double], quiet: [Double], dcOffset: Float = 0) throws -> Session {
        let rate = analysisSampleRate, seconds = 100
        var rng = SeededRandom(seed: seed)
        var x = (0..<(seconds * rate)).map { _ in dcOffset + 0.005 * rng.nextGaussian() }
        for (at, amplitude) in loud.map({ ($0, Float(0.1)) }) + quiet.map({ ($0, Float(0.0008)) }) {
            for i in 0..<rate { x[Int(at) * rate + i] += amplitude * sin(2 * Float.pi * 110 * Float(i) / Float(rate)) }
        }
        let folder = try ScratchFolder()
        let wav = folder.url.appendingPathComponent("night.wav")
        let writer = try WAVWriter(url: wav)
        try x.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        var analyzer = NightAnalyzer(classifier: ToneClassifier(), clipEncoder: nil)
        return try analyzer.analyze(source: try AudioDecoder(url: wav), sourceName: "night.wav", into: folder.url)
    }

    /// Mains hum that comes on mid-night is taken out of what is analysed and of the clips from
    /// where it is heard; what came before is analysed as it was, read back from the file or
    /// from the spool alike.
    @Test func mainsHumIsTakenOutOfTheNightAndItsClipsFromWhereItIsHeard() throws {
        let rate = analysisSampleRate, seconds = 100, humFrom = 50
        var rng = SeededRandom(seed: 21)
        let plain = (0..<(seconds * rate)).map { i -> Float in
            let t = Double(i) / Double(rate)
            // Two trains of five, one before the hum and one in it (a lone snore makes no event).
            let train = (t >= 10 && t < 30) || (t >= 60 && t < 80)
            let tone = train && t.truncatingRemainder(dividingBy: 4) < 1 ? 0.1 * sin(2 * Double.pi * 110 * t) : 0
            return Float(tone) + 0.002 * rng.nextGaussian()
        }
        // 50 Hz and its odd harmonics at −40 dBFS from 50 s: louder than the room (−54 dBFS).
        let hummed = plain.enumerated().map { i, x -> Float in
            let t = Double(i) / Double(rate)
            guard i >= humFrom * rate else { return x }
            return x + Float(0.0141 * (sin(2 * Double.pi * 50 * t) + sin(2 * Double.pi * 150 * t) / 3 + sin(2 * Double.pi * 250 * t) / 5) / 1.054)
        }
        let folder = try ScratchFolder()
        func analyse(_ samples: [Float], _ name: String, spooled: Bool = false) throws -> (Session, URL) {
            let wav = folder.url.appendingPathComponent("\(name).wav")
            let writer = try WAVWriter(url: wav)
            try samples.withUnsafeBufferPointer { try writer.write($0) }
            try writer.finish()
            let out = folder.url.appendingPathComponent(name + (spooled ? "-spooled" : ""))
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            var analyzer = NightAnalyzer(classifier: ToneClassifier(), clipEncoder: WAVClipEncoder())
            let decoder = try AudioDecoder(url: wav)
            return (spooled ? try analyzer.analyze(source: Spooled(decoder), sourceName: "\(name).wav", into: out)
                            : try analyzer.analyze(source: decoder, sourceName: "\(name).wav", into: out), out)
        }
        let (without, withoutFolder) = try analyse(plain, "plain")
        let (with, withFolder) = try analyse(hummed, "hummed")
        #expect(!without.warnings.contains { $0.contains("mains hum") })
        #expect(with.warnings.contains { $0.contains("mains hum (50.0 Hz, about -40 dBFS, from 0:00:48)") }, "\(with.warnings)")
        #expect(with.events.map(\.start) == without.events.map(\.start), "\(with.events.map(\.start))")
        #expect(with.events.count == 10)
        func clip(_ session: Session, _ folder: URL, at start: Double) throws -> [Float] {
            let event = try #require(session.events.first { abs($0.start - start) < 0.5 }, "no event at \(start) s")
            return try WAVReader.read(folder.appendingPathComponent(try #require(event.clip))).samples
        }
        // Before the hum the night's own samples, read back from the file after the spool began.
        #expect(try clip(with, withFolder, at: 16) == clip(without, withoutFolder, at: 16))
        // After it, the clip holds the tone and hardly any hum (it was 17 dB under the tone).
        func magnitude(_ x: [Float], _ frequency: Double) -> Double {
            var re = 0.0, im = 0.0
            for (n, v) in x.enumerated() {
                re += Double(v) * cos(2 * Double.pi * frequency * Double(n) / Double(rate))
                im += Double(v) * sin(2 * Double.pi * frequency * Double(n) / Double(rate))
            }
            return (re * re + im * im).squareRoot()
        }
        let late = try clip(with, withFolder, at: 64)
        #expect(magnitude(late, 50) < 0.01 * magnitude(late, 110), "\(magnitude(late, 50) / magnitude(late, 110))")
        // The envelope under the hum is the room's, not the hum's.
        let envelope = try EnvelopeFile.read(from: withFolder.appendingPathComponent(EnvelopeFile.fileName)).values
        let roomEnvelope = try EnvelopeFile.read(from: withoutFolder.appendingPathComponent(EnvelopeFile.fileName)).values
        let quiet = 810..<1000
        let ratio = quiet.map { envelope[$0] }.reduce(0, +) / quiet.map { roomEnvelope[$0] }.reduce(0, +)
        #expect(abs(ratio - 1) < 0.1, "\(ratio)")
        // Spooled from the start, the same night.
        let (spooled, _) = try analyse(hummed, "hummed", spooled: true)
        #expect(spooled.events == with.events)
    }

    private func findChunk(_ id: String, in bytes: [UInt8]) -> Int? {
        let tag = Array(id.utf8)
        return (12..<bytes.count - 4).first { Array(bytes[$0..<$0 + 4]) == tag }
    }
}

/// Calls a window snoring when it holds a 110 Hz tone, however quiet: a classifier that hears
/// snores the silence gate does not let through.
private struct ToneClassifier: SoundClassifier {
    let labels = ["snoring", "other"]
    let windowLength = classifierWindowLength
    let name = "tone"
    mutating func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {
        // Goertzel at 110 Hz: a tone of amplitude A over n samples gives a magnitude near A·n/2.
        let w = 2 * Float.pi * 110 / Float(analysisSampleRate), c = 2 * cos(w)
        var s1: Float = 0, s2: Float = 0
        for x in window { let s0 = x + c * s1 - s2; s2 = s1; s1 = s0 }
        let magnitude = (s1 * s1 + s2 * s2 - c * s1 * s2).squareRoot()
        scores[0] = magnitude > 3 ? 0.9 : 0  // white noise at 0.005 RMS gives about 0.4
        scores[1] = 1 - scores[0]
    }
}

/// Calls a window snoring when it is loud: judged on the window alone (so the analyser may
/// classify ahead of the gate with it), and cheap enough for a debug build to keep up.
private struct LoudnessClassifier: SoundClassifier {
    let labels = ["snoring", "other"]
    let windowLength = classifierWindowLength
    let name = "loudness"
    mutating func classify(_ window: UnsafeBufferPointer<Float>, scores: UnsafeMutableBufferPointer<Float>) {
        var power: Float = 0
        for i in stride(from: 0, to: window.count, by: 8) { power += window[i] * window[i] }
        let loud = (power / Float(window.count / 8)).squareRoot() > 0.004  // −48 dBFS
        scores[0] = loud ? 0.9 : 0
        scores[1] = 1 - scores[0]
    }
}

/// A decoder, with or without its read-back, that stalls once before block `stallAt` until
/// `resume` holds or `longest` seconds have passed: the analysing thread then has nothing to
/// read, as while a compressed night's decoder works, however busy the machine is.
private final class StallingDecoder: AudioSource {
    let decoder: AudioDecoder
    let readsBack: Bool
    let stallAt: Int?
    let longest: Double
    let resume: () -> Bool
    private var reads = 0
    init(_ decoder: AudioDecoder, readsBack: Bool, stallAt: Int?, longest: Double, until resume: @escaping () -> Bool) {
        self.decoder = decoder; self.readsBack = readsBack; self.stallAt = stallAt; self.longest = longest; self.resume = resume
    }
    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        if reads == stallAt {
            let until = Date(timeIntervalSinceNow: longest)
            while !resume(), Date() < until { Thread.sleep(forTimeInterval: 0.01) }
        }
        reads += 1
        return try decoder.read(into: buffer)
    }
    func rereadableSamples() -> PCM16Samples? { readsBack ? decoder.rereadableSamples() : nil }
    var expectedDuration: Double? { decoder.expectedDuration }
    var warnings: [String] { decoder.warnings }
}

/// Hides a decoder's read-back, so the analyser spools its samples.
private final class Spooled: AudioSource {
    let decoder: AudioDecoder
    init(_ decoder: AudioDecoder) { self.decoder = decoder }
    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int { try decoder.read(into: buffer) }
    var expectedDuration: Double? { decoder.expectedDuration }
    var warnings: [String] { decoder.warnings }
}

/// A decoder whose file is cut short after the first block has been read.
private final class ShrinkingSource: AudioSource {
    let decoder: AudioDecoder
    let url: URL
    let keepBytes: UInt64
    private var reads = 0
    init(_ decoder: AudioDecoder, url: URL, keepBytes: UInt64) { self.decoder = decoder; self.url = url; self.keepBytes = keepBytes }
    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        reads += 1
        let n = try decoder.read(into: buffer)
        if reads == 1 { try FileHandle(forWritingTo: url).truncate(atOffset: keepBytes) }
        return n
    }
    func rereadableSamples() -> PCM16Samples? { decoder.rereadableSamples() }
    var expectedDuration: Double? { decoder.expectedDuration }
    var warnings: [String] { decoder.warnings }
}

/// Noise for some blocks, then an I/O error, as a disk or network share that goes away.
private final class FailingSource: AudioSource {
    let blocksBeforeFailing: Int
    private(set) var reads = 0
    init(blocksBeforeFailing: Int) { self.blocksBeforeFailing = blocksBeforeFailing }
    var expectedDuration: Double? { nil }
    var warnings: [String] { [] }
    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        reads += 1
        guard reads <= blocksBeforeFailing else { throw SomniError(.io, "the recording went away") }
        for i in buffer.indices { buffer[i] = Float(i % 7) * 0.01 }
        return buffer.count
    }
}
