import Foundation
import Testing
@testable import SomniCore

@Suite struct SampleSpoolTests {
    @Test func samplesComeBackAs16BitWithDamagedValuesMadeSafe() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)")
        // A small buffer so appends and reads cross its edges.
        let spool = try SampleSpool(url: url, bufferSamples: 7)
        let input: [Float] = [0, 0.5, -0.5, 1, -1, 1.5, -2, .nan, .infinity, -.infinity, 0.25, -0.001]
        for _ in 0..<3 { try input.withUnsafeBufferPointer { try spool.append($0) } }
        #expect(spool.count == 3 * input.count - (3 * input.count) % 7)   // the rest waits in the buffer

        let samples = try spool.samples()
        #expect(spool.count == 3 * input.count && samples.count == spool.count)
        var back = [Float](repeating: 9, count: 3 * input.count + 4)
        try back.withUnsafeMutableBufferPointer { try samples.read(from: 0, into: $0) }
        // Rounded to 1/32768 steps (the decoder's); overs clip; NaN and infinities are silence,
        // as the features read them (clipped, an infinity was a full-scale click in the windows).
        let expected: [Float] = [0, 16384, -16384, 32767, -32768, 32767, -32768, 0, 0, 0, 8192, -33]
            .map { $0 / 32768 }
        for k in 0..<3 * input.count {
            #expect(abs(back[k] - expected[k % input.count]) < 1e-7, "sample \(k): \(back[k])")
        }
        #expect(back.suffix(4) == [0, 0, 0, 0])   // past the end reads as silence

        var middle = [Float](repeating: 0, count: 5)
        try middle.withUnsafeMutableBufferPointer { try samples.read(from: input.count + 4, into: $0) }
        #expect(zip(middle, expected[4..<9]).allSatisfy { abs($0 - $1) < 1e-7 })
        withExtendedLifetime(spool) {}
    }

    /// Audio that was 16-bit to begin with comes back exactly, quietest steps included.
    @Test func sixteenBitSamplesComeBackExactly() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)")
        let spool = try SampleSpool(url: url, bufferSamples: 1_000)
        let steps = (-32768...32767).map { Float($0) / 32768 }
        try steps.withUnsafeBufferPointer { try spool.append($0) }
        let samples = try spool.samples()
        var back = [Float](repeating: 9, count: steps.count)
        try back.withUnsafeMutableBufferPointer { try samples.read(from: 0, into: $0) }
        #expect(back == steps)
        // Between the steps, the nearest one: no dead zone around silence.
        let between: [Float] = [0.4, 0.6, -0.4, -0.6, 1.49, -1.51].map { $0 / 32768 }
        let spool2 = try SampleSpool(url: url.appendingPathExtension("2"))
        try between.withUnsafeBufferPointer { try spool2.append($0) }
        var near = [Float](repeating: 9, count: between.count)
        try near.withUnsafeMutableBufferPointer { try spool2.samples().read(from: 0, into: $0) }
        #expect(near == [0, 1, 0, -1, 1, -2].map { $0 / 32768 })
        withExtendedLifetime((spool, spool2)) {}
    }

    @Test func handedOutSamplesOutliveTheSpoolAndItsFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)")
        var spool: SampleSpool? = try SampleSpool(url: url)
        try [Float](repeating: 0.5, count: 100).withUnsafeBufferPointer { try spool?.append($0) }
        let samples = try #require(try spool?.samples())
        spool = nil
        #expect(!FileManager.default.fileExists(atPath: url.path))   // no working file left behind
        var back = [Float](repeating: 0, count: 100)
        try back.withUnsafeMutableBufferPointer { try samples.read(from: 0, into: $0) }
        #expect(back.allSatisfy { abs($0 - 0.5) < 1e-4 })
    }
}

/// A night in parts, read as one recording with the pauses between parts kept as silence.
@Suite struct JoinedAudioSourceTests {
    final class Rated: AudioSource {
        let inner: BufferAudioSource
        let recordedSampleRate: Int?
        let warnings: [String]
        init(_ samples: [Float], rate: Int?, warnings: [String] = []) {
            inner = BufferAudioSource(samples); recordedSampleRate = rate; self.warnings = warnings
        }
        var expectedDuration: Double? { inner.expectedDuration }
        func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int { try inner.read(into: buffer) }
    }

    @Test(arguments: [1, 333, 16_000, 100_000])
    func partsFollowEachOtherAfterTheirPauseWhateverTheReads(block: Int) throws {
        // a: 1000 samples from t0; b starts 1 s after a ends; c starts 0.5 s early (an overlap,
        // joined end to end); d has no time (joined end to end, silently).
        let a = (0..<1000).map { Float($0 + 1) }, b = (0..<500).map { Float(-$0 - 1) }
        let c = [Float](repeating: 0.5, count: 16), d = [Float](repeating: 0.25, count: 8)
        let t0 = Date(timeIntervalSince1970: 1_795_904_042)
        let bStart = t0.addingTimeInterval(1000.0 / 16_000 + 1)
        let joined = JoinedAudioSource(parts: [
            .init(name: "a.wav", source: Rated(a, rate: 48_000, warnings: ["cut short"]), start: t0),
            .init(name: "b.wav", source: Rated(b, rate: 8_000), start: bStart),
            .init(name: "c.wav", source: Rated(c, rate: nil), start: bStart.addingTimeInterval(500.0 / 16_000 - 2)),
            .init(name: "d.wav", source: Rated(d, rate: nil)),
        ])
        #expect(abs((joined.expectedDuration ?? 0) - Double(1000 + 16_000 + 500 + 16 + 8) / 16_000) < 1e-9)
        var out: [Float] = []
        var buffer = [Float](repeating: .nan, count: block)
        while case let n = try buffer.withUnsafeMutableBufferPointer({ try joined.read(into: $0) }), n > 0 { out += buffer[..<n] }
        #expect(out == a + [Float](repeating: 0, count: 16_000) + b + c + d)
        #expect(joined.gaps == [RecordingGap(start: 1000.0 / 16_000, duration: 1,
                                             reason: "no recording between the files before b.wav")])
        #expect(joined.recordedSampleRate == 8_000)
        #expect(joined.warnings == ["c.wav starts 2 s before b.wav ends, by their times; joined end to end", "a.wav: cut short"])
    }

    @Test func aPartShorterThanItsHeaderSaysIsFollowedByThePauseItReallyLeft() throws {
        // A part whose header claims 2 s but which decodes 1 s (cut off): the next part, started 3 s
        // after it, follows 2 s of silence, not 1 s.
        final class CutShort: AudioSource {
            let inner = BufferAudioSource([Float](repeating: 0.1, count: 16_000))
            var expectedDuration: Double? { 2 }
            let warnings: [String] = []
            func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int { try inner.read(into: buffer) }
        }
        let t0 = Date(timeIntervalSince1970: 1_795_904_042)
        let joined = JoinedAudioSource(parts: [
            .init(name: "a.wav", source: CutShort(), start: t0),
            .init(name: "b.wav", source: BufferAudioSource([1, 1]), start: t0.addingTimeInterval(3)),
        ])
        var out: [Float] = []
        var buffer = [Float](repeating: 0, count: 4096)
        while case let n = try buffer.withUnsafeMutableBufferPointer({ try joined.read(into: $0) }), n > 0 { out += buffer[..<n] }
        #expect(out.count == 16_000 + 32_000 + 2)
        #expect(joined.gaps.map(\.duration) == [2])
    }

    /// After a part that overlapped the one before (joined end to end), the next part is placed
    /// from where that one was placed, not from its own time: a part starting right where the
    /// placed one ends follows it with no gap (a phantom 10 s gap moved every later event).
    @Test func aPartAfterAnOverlapIsPlacedFromWhereTheOverlapLanded() throws {
        let t0 = Date(timeIntervalSince1970: 1_795_904_042)
        func part(_ name: String, seconds: Int, at offset: Double) -> JoinedAudioSource.Part {
            .init(name: name, source: BufferAudioSource([Float](repeating: 0.1, count: seconds * 16_000)), start: t0.addingTimeInterval(offset))
        }
        // 90 s, then 60 s dated 80 s in (10 s of overlap, so placed at 90 s), then 30 s dated 150 s in.
        let parts = [part("a.wav", seconds: 90, at: 0), part("b.wav", seconds: 60, at: 80), part("c.wav", seconds: 30, at: 150)]
        let joined = JoinedAudioSource(parts: parts)
        #expect(joined.expectedDuration == 180)
        var total = 0
        var buffer = [Float](repeating: 0, count: 4096)
        while case let n = try buffer.withUnsafeMutableBufferPointer({ try joined.read(into: $0) }), n > 0 { total += n }
        #expect(total == 180 * 16_000 && joined.gaps.isEmpty, "\(joined.gaps)")
        #expect(joined.warnings == ["b.wav starts 10 s before a.wav ends, by their times; joined end to end"])
        // A part starting where the moved one ends by its own time overlaps it only where it was
        // put, and is said so.
        let after = JoinedAudioSource(parts: [part("a.wav", seconds: 60, at: 0), part("b.wav", seconds: 60, at: 50),
                                              part("c.wav", seconds: 10, at: 110)])
        while case let n = try buffer.withUnsafeMutableBufferPointer({ try after.read(into: $0) }), n > 0 {}
        #expect(after.gaps.isEmpty && after.warnings.last == "c.wav starts 10 s before b.wav ends, where it was put (10 s after its "
                + "own time, by the overlap before it); joined end to end", "\(after.warnings)")
    }

    /// A joined night is known by its parts and the pauses between them, not by the clock they
    /// are on: dated by hand later (`--started` moves every part alike), it is the same recording.
    /// Parts at different rates name the lowest's parts, which make the night narrow-band.
    @Test func aJoinedNightsFingerprintIsOfItsPartsAndPausesNotItsClock() {
        final class Fingerprinted: AudioSource {
            let fingerprint: String?, recordedSampleRate: Int?
            init(_ fingerprint: String, rate: Int) { self.fingerprint = fingerprint; recordedSampleRate = rate }
            var expectedDuration: Double? { 1 }
            let warnings: [String] = []
            func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int { 0 }
        }
        func night(_ starts: [Date?], rates: [Int] = [16_000, 16_000]) -> JoinedAudioSource {
            JoinedAudioSource(parts: zip(["a", "b"], zip(starts, rates)).map { name, s in
                .init(name: name + ".wav", source: Fingerprinted("fp-" + name, rate: s.1), start: s.0)
            })
        }
        let t0 = Date(timeIntervalSince1970: 1_795_904_042), t1 = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(night([nil, nil]).fingerprint == night([t0, nil]).fingerprint, "undated, then dated by hand")
        #expect(night([t0, t0 + 60]).fingerprint == night([t1, t1 + 60]).fingerprint, "moved alike")
        #expect(night([t0, t0 + 60]).fingerprint != night([t0, t0 + 90]).fingerprint, "another pause")
        #expect(night([nil, nil]).partsAtTheRecordedRate == nil)
        #expect(night([nil, nil], rates: [48_000, 8_000]).partsAtTheRecordedRate == ["b.wav"])
    }

    /// Parts days apart (a recorder whose clock was never set dates its file 1970) are refused
    /// once the first is read, rather than followed by days of silence.
    @Test func partsFurtherApartThanANightAreRefused() throws {
        let t0 = Date(timeIntervalSince1970: 0)
        let joined = JoinedAudioSource(parts: [
            .init(name: "a.wav", source: BufferAudioSource([Float](repeating: 0.1, count: 32_000)), start: t0),
            .init(name: "b.wav", source: BufferAudioSource([1, 1]), start: t0.addingTimeInterval(3 * 86_400)),
        ])
        var buffer = [Float](repeating: 0, count: 4096)
        var read = 0
        let error = #expect(throws: SomniError.self) {
            while case let n = try buffer.withUnsafeMutableBufferPointer({ try joined.read(into: $0) }), n > 0 { read += n }
        }
        #expect(error?.message.contains("b.wav starts 72.0 h after a.wav ends: not one night") == true, "\(String(describing: error))")
        #expect(read <= 32_000)
    }

    /// A source that says it wrote more than the buffer holds, or a negative count, is an error:
    /// samples never written were analysed, or the night ended early without a word.
    @Test(arguments: [-1, 4097])
    func aSourceThatMiscountsIsAnError(count: Int) throws {
        final class Miscounting: AudioSource {
            let said: Int
            var calls = 0
            init(_ said: Int) { self.said = said }
            var expectedDuration: Double? { nil }
            let warnings: [String] = []
            func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
                calls += 1
                buffer.update(repeating: 0.1)
                return calls == 3 ? said : buffer.count
            }
        }
        let joined = JoinedAudioSource(parts: [.init(name: "a.wav", source: Miscounting(count))])
        var buffer = [Float](repeating: 0, count: 4096)
        let error = #expect(throws: SomniError.self) {
            while case let n = try buffer.withUnsafeMutableBufferPointer({ try joined.read(into: $0) }), n > 0 {}
        }
        #expect(error?.message.contains("said it wrote \(count) samples into a buffer of 4096") == true, "\(String(describing: error))")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-miscount-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var analyzer = NightAnalyzer(classifier: HeuristicClassifier(), clipEncoder: nil)
        analyzer.blockLength = 4096
        #expect(throws: SomniError.self) {
            try NightFolder.writeAtomically(to: folder) { try analyzer.analyze(source: Miscounting(count), sourceName: "x", into: $0) }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
}
