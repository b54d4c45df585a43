import Foundation
import SomniAudio
import SomniCore
import Testing

@Suite struct WriterTests {
    @Test func unfinishedWriterLeavesNoFile() throws {
        let folder = try ScratchFolder()
        let url = folder.url.appendingPathComponent("night.opus")
        do {
            let writer = try EncodedAudioWriter(url: url, format: .opus, sampleRate: 16_000)
            try TestSignals.tones(seconds: 1, sampleRate: 16_000).withUnsafeBufferPointer { try writer.write($0) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    @Test func finishedFileReplacesAnOlderOne() throws {
        let folder = try ScratchFolder()
        let url = try folder.file("clip.flac", contents: Data("old".utf8))
        try TestSignals.encode(TestSignals.tones(seconds: 1, sampleRate: 16_000), as: .flac, sampleRate: 16_000,
                               in: folder.url, name: "clip")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["clip.flac"])
        #expect(abs((try AudioDecoder(url: url).expectedDuration ?? 0) - 1) < 0.01)
    }

    /// A recorder links the final name to the temporary one while it writes (crash safety):
    /// finishing leaves the final name alone. The rename between two names of one file did
    /// nothing, and the hidden temporary name stayed beside every Opus master and clip.
    @Test func aFinalNameLinkedToTheTemporaryOneLeavesOnlyTheFinalName() throws {
        let folder = try ScratchFolder()
        let url = folder.url.appendingPathComponent("master.opus")
        let partial = folder.url.appendingPathComponent(".master.opus.partial")
        let writer = try EncodedAudioWriter(url: url, format: .opus, sampleRate: 16_000, temporaryURL: partial)
        try FileManager.default.linkItem(at: partial, to: url)
        try TestSignals.tones(seconds: 1, sampleRate: 16_000).withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["master.opus"])
        #expect(abs((try AudioDecoder(url: url).expectedDuration ?? 0) - 1) < 0.05)
    }

    @Test func missingFolderIsAnIOError() {
        do {
            _ = try EncodedAudioWriter(url: URL(fileURLWithPath: "/nonexistent/folder/x.wav"), format: .wav, sampleRate: 16_000)
            Issue.record("no error thrown")
        } catch let error as SomniError {
            #expect(error.code == .io)
            #expect(error.message.hasPrefix("cannot write /nonexistent/folder/x.wav: "))
        } catch {
            Issue.record("not a SomniError: \(error)")
        }
    }

    @Test func samplesMustFillWholeFrames() throws {
        let folder = try ScratchFolder()
        let writer = try EncodedAudioWriter(url: folder.url.appendingPathComponent("s.wav"), format: .wav,
                                            sampleRate: 16_000, channels: 2)
        #expect(throws: SomniError.self) {
            try [Float](repeating: 0, count: 3).withUnsafeBufferPointer { try writer.write($0) }
        }
    }

    @Test func writesInManySmallPiecesLikeOneBigOne() throws {
        let folder = try ScratchFolder()
        let signal = TestSignals.tones(seconds: 2, sampleRate: 16_000)
        let url = folder.url.appendingPathComponent("pieces.flac")
        let writer = try EncodedAudioWriter(url: url, format: .flac, sampleRate: 16_000)
        try signal.withUnsafeBufferPointer { all in
            for start in stride(from: 0, to: all.count, by: 333) {
                try writer.write(UnsafeBufferPointer(rebasing: all[start..<min(start + 333, all.count)]))
            }
        }
        try writer.finish()
        let decoded = try TestSignals.readAll(try AudioDecoder(url: url))
        #expect(decoded.count == signal.count)
        #expect((zip(decoded, signal).map { abs($0 - $1) }.max() ?? 1) < 1.0 / 32_000)
    }

    @Test func clipEncoderWritesCompactMP3OfTheRightLength() throws {
        let folder = try ScratchFolder()
        let encoder = MP3ClipEncoder()
        let url = folder.url.appendingPathComponent("event.\(encoder.fileExtension)")
        #expect(url.pathExtension == "mp3")
        let tones = TestSignals.tones(seconds: 2.5, sampleRate: 16_000)
        try encoder.writeClip(tones, sampleRate: 16_000, to: url)

        let bitsPerSecond = Double(try Data(contentsOf: url).count * 8) / 2.5
        #expect(bitsPerSecond < 48_000)  // 40 kb/s asked, plus the Xing/LAME header frame
        let decoder = try AudioDecoder(url: url)
        #expect(decoder.formatDescription == "mp3, 16000 Hz, 1 ch")
        let decoded = try TestSignals.readAll(decoder)
        // The LAME header carries the encoder delay and padding, which the decoder trims.
        #expect(abs(Double(decoded.count) / 16_000 - 2.5) < 0.01)
        let level = { (x: ArraySlice<Float>) in (x.reduce(0) { $0 + $1 * $1 } / Float(x.count)).squareRoot() }
        let middle = decoded.count / 4..<decoded.count * 3 / 4
        #expect(abs(level(decoded[middle]) / level(tones[middle]) - 1) < 0.1)  // the sound, not silence
    }

    @Test func mp3ClipsKeepTheirSoundWhereItWas() throws {
        // A 0.3 s burst 1.2 s into a 3 s clip of near-silence: the LAME header's delay and
        // padding are trimmed, so the burst decodes where it was, and nothing else is left.
        let folder = try ScratchFolder()
        let url = folder.url.appendingPathComponent("event.mp3")
        var clip = [Float](repeating: 0, count: 48_000)
        for i in 19_200..<24_000 { clip[i] = 0.5 * sin(2 * Float.pi * 440 * Float(i) / 16_000) }
        try MP3ClipEncoder().writeClip(clip, sampleRate: 16_000, to: url)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["event.mp3"])

        let decoded = try TestSignals.readAll(try AudioDecoder(url: url))
        #expect(abs(decoded.count - clip.count) <= 160)
        let onset = try #require(decoded.firstIndex { abs($0) > 0.1 })
        let end = try #require(decoded.lastIndex { abs($0) > 0.1 })
        #expect(abs(onset - 19_200) <= 80, "onset at \(onset)")  // within 5 ms
        #expect(abs(end - 24_000) <= 80, "end at \(end)")
    }

    @Test func anMP3ClipThatCannotBeWrittenIsAnIOErrorAndLeavesNothing() throws {
        let folder = try ScratchFolder()
        func expectIOError(writingTo url: URL) throws {
            do {
                try MP3ClipEncoder().writeClip(TestSignals.tones(seconds: 1, sampleRate: 16_000), sampleRate: 16_000, to: url)
                Issue.record("no error thrown")
            } catch let error as SomniError {
                #expect(error.code == .io)
                #expect(error.message.hasPrefix("cannot write \(url.path): "))
            }
        }
        try expectIOError(writingTo: folder.url.appendingPathComponent("gone/event.mp3"))
        // A folder in the clip's place is an error too, and is left as it was with what it holds.
        let blocked = folder.url.appendingPathComponent("event.mp3")
        try FileManager.default.createDirectory(at: blocked.appendingPathComponent("inside"), withIntermediateDirectories: true)
        try expectIOError(writingTo: blocked)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["event.mp3"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: blocked.path) == ["inside"])
    }

    @Test func clipEncoderWritesBrowserFriendlyM4A() throws {
        let folder = try ScratchFolder()
        let encoder = M4AClipEncoder()
        let url = folder.url.appendingPathComponent("event.\(encoder.fileExtension)")
        try encoder.writeClip(TestSignals.tones(seconds: 2.5, sampleRate: 16_000), sampleRate: 16_000, to: url)

        let bytes = try Data(contentsOf: url)
        let bitsPerSecond = Double(bytes.count * 8) / 2.5
        #expect(bitsPerSecond < 64_000)  // 48 kb/s asked, plus the container
        let moov = try #require(bytes.range(of: Data("moov".utf8)))
        let mdat = try #require(bytes.range(of: Data("mdat".utf8)))
        #expect(moov.lowerBound < mdat.lowerBound)  // index first: plays before it has fully loaded
        let decoder = try AudioDecoder(url: url)
        #expect(decoder.formatDescription == "aac, 16000 Hz, 1 ch")
        let seconds = Double(try TestSignals.readAll(decoder).count) / 16_000
        #expect(abs(seconds - 2.5) < 0.07)  // FFmpeg 5.1 keeps AAC's end padding: under one 64 ms frame
    }
}
