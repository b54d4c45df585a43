import Foundation
import SomniAudio
import SomniCore
import Testing

/// Files a user might hand over by mistake, or that broke on the way: one clear SomniError each,
/// or, when some audio is good, that audio plus a warning.
@Suite struct DamagedInputTests {
    /// The SomniError `body` throws (a failed expectation when it throws none or another type).
    private func error(_ body: () throws -> Void) -> SomniError? {
        do {
            try body()
            Issue.record("no error thrown")
        } catch let error as SomniError {
            return error
        } catch {
            Issue.record("not a SomniError: \(error)")
        }
        return nil
    }

    /// A 44-byte canonical WAV header for `format` (a WAVE format tag) and `dataBytes` of data.
    private func wavHeader(formatTag: UInt16, dataBytes: Int) -> Data {
        var header = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        header.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + dataBytes))
        header.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16))
        append(formatTag); append(UInt16(1)); append(UInt32(16_000)); append(UInt32(32_000)); append(UInt16(2)); append(UInt16(16))
        header.append(contentsOf: Array("data".utf8)); append(UInt32(dataBytes))
        return header
    }

    @Test func missingFile() {
        let error = error { _ = try AudioDecoder(url: URL(fileURLWithPath: "/nonexistent/night.m4a")) }
        #expect(error?.code == .badInput)
        #expect(error?.message == "no such file: /nonexistent/night.m4a")
    }

    @Test func folder() throws {
        let folder = try ScratchFolder()
        let error = error { _ = try AudioDecoder(url: folder.url) }
        #expect(error?.code == .badInput)
        #expect(error?.message.contains("is a folder") == true)
    }

    @Test func emptyFile() throws {
        let folder = try ScratchFolder()
        let url = try folder.file("empty.wav", contents: Data())
        let error = error { _ = try AudioDecoder(url: url) }
        #expect(error?.code == .badInput)
        #expect(error?.message.contains("empty") == true)
    }

    @Test(arguments: [
        ("notes.txt", Data("Went to bed at eleven, woke twice.\n".utf8)),
        ("noise.bin", TestSignals.noiseBytes(count: 20_000)),
        ("noise.mp3", TestSignals.noiseBytes(count: 20_000, seed: 7)),
        ("photo.png", Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==") ?? Data()),
    ])
    func notAudio(name: String, contents: Data) throws {
        let folder = try ScratchFolder()
        let url = try folder.file(name, contents: contents)
        let error = error { _ = try AudioDecoder(url: url) }
        #expect(error?.code == .badInput)
        #expect(error?.message.contains("not an audio file") == true)
    }

    @Test func videoWithoutAudio() throws {
        let folder = try ScratchFolder()
        var video = Data("YUV4MPEG2 W2 H2 F25:1 Ip A1:1 C420jpeg\n".utf8)
        for _ in 0..<3 { video.append(contentsOf: Array("FRAME\n".utf8) + [UInt8](repeating: 128, count: 6)) }
        let url = try folder.file("camera.y4m", contents: video)
        let error = error { _ = try AudioDecoder(url: url) }
        #expect(error?.code == .badInput)
        #expect(error?.message.contains("no audio stream (it holds video)") == true)
    }

    @Test func codecWithoutDecoder() throws {
        let folder = try ScratchFolder()
        let url = try folder.file("odd.wav", contents: wavHeader(formatTag: 0x7777, dataBytes: 3200) + Data(count: 3200))
        let error = error { _ = try AudioDecoder(url: url) }
        #expect(error?.code == .unsupported)
        #expect(error?.message.contains("no decoder") == true)
    }

    @Test func nothingDecodable() throws {
        let folder = try ScratchFolder()
        // An MP3-in-WAV whose data holds no MP3 frame at all.
        let url = try folder.file("hollow.wav", contents: wavHeader(formatTag: 0x0055, dataBytes: 32_000) + Data(count: 32_000))
        let error = error { _ = try AudioDecoder(url: url) }
        #expect(error?.code == .badInput)
        #expect(error?.message.contains("no audio could be decoded") == true)
    }

    /// What a recorder leaves when it is stopped as soon as it starts: a header and no sound. It
    /// is an empty recording, said so, not "not an audio file".
    @Test(arguments: [EncodedAudioWriter.Format.wav, .flac, .mp3, .m4a, .ogg])
    func aRecordingWithNoSoundInIt(format: EncodedAudioWriter.Format) throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode([], as: format, sampleRate: 44_100, in: folder.url)
        let error = error { _ = try AudioDecoder(url: url) }
        #expect(error?.code == .badInput)
        #expect(error?.message.contains("holds no audio") == true, "\(error?.message ?? "no error")")
    }

    @Test(arguments: [EncodedAudioWriter.Format.wav, .flac, .mp3, .m4a])
    func cutInHalf(format: EncodedAudioWriter.Format) throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(TestSignals.tones(seconds: 4, sampleRate: 44_100, channels: 2),
                                           as: format, sampleRate: 44_100, channels: 2, in: folder.url)
        let bytes = try Data(contentsOf: whole)
        let cut = try folder.file("cut.\(format.fileExtension)", contents: bytes.prefix(bytes.count / 2))

        let decoder = try AudioDecoder(url: cut)
        let seconds = Double(try TestSignals.readAll(decoder).count) / Double(analysisSampleRate)
        #expect(abs(seconds - 2) < 0.4)
        #expect(decoder.warnings.count == 1, "\(decoder.warnings)")
        #expect(decoder.warnings.first?.hasPrefix("the file ends early or is damaged: read ") == true)
        // FFmpeg's WAV reader trims the duration to the bytes there, so only the others know the 4 s.
        #expect(decoder.warnings.first?.hasSuffix(format == .wav ? " s" : " of 4.0 s") == true)
    }

    @Test func garbageAfterAGoodStart() throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(TestSignals.tones(seconds: 4, sampleRate: 44_100), as: .flac,
                                           sampleRate: 44_100, in: folder.url)
        let bytes = try Data(contentsOf: whole)
        let spoiled = bytes.prefix(bytes.count / 2) + TestSignals.noiseBytes(count: bytes.count / 2)
        let url = try folder.file("spoiled.flac", contents: spoiled)

        let decoder = try AudioDecoder(url: url)
        let samples = try TestSignals.readAll(decoder)
        #expect(Double(samples.count) / Double(analysisSampleRate) > 1.5)
        #expect(decoder.warnings.first?.hasPrefix("the file ends early or is damaged") == true)
        let start = samples[1_000..<17_000]
        #expect(TestSignals.power(at: 1000, in: start, sampleRate: analysisSampleRate)
                > 3 * TestSignals.power(at: 300, in: start, sampleRate: analysisSampleRate))
    }

    @Test func damageInTheMiddleIsSkipped() throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(TestSignals.tones(seconds: 4, sampleRate: 44_100), as: .mp3,
                                           sampleRate: 44_100, in: folder.url)
        var bytes = try Data(contentsOf: whole)
        let middle = bytes.count / 2
        bytes.replaceSubrange(middle..<middle + 1_500, with: TestSignals.noiseBytes(count: 1_500))
        let url = try folder.file("scratched.mp3", contents: bytes)

        let decoder = try AudioDecoder(url: url)
        let seconds = Double(try TestSignals.readAll(decoder).count) / Double(analysisSampleRate)
        #expect(seconds > 3.5)
        #expect(decoder.warnings.allSatisfy { !$0.hasPrefix("the file ends early") })
    }

    /// A phone app killed mid-recording leaves an M4A whose index (`moov`), written last, is
    /// missing or cut off: its audio is there but cannot be located. Said so, not "not audio".
    @Test func anM4AWithoutItsIndex() throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(TestSignals.tones(seconds: 4, sampleRate: 44_100), as: .m4a,
                                           sampleRate: 44_100, in: folder.url)
        let bytes = try Data(contentsOf: whole)
        // The file's top-level boxes (size, type), to drop or cut the index.
        var boxes: [(type: String, range: Range<Int>)] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            boxes.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), offset..<offset + size))
            offset += size
        }
        let index = try #require(boxes.first { $0.type == "moov" }).range
        let withoutIndex = boxes.filter { $0.type != "moov" }.reduce(into: Data()) { $0 += bytes[$1.range] }
        let indexCutOff = bytes.prefix(index.lowerBound + index.count / 2)
        for (name, contents) in [("no-moov.m4a", withoutIndex), ("moov-cut.m4a", Data(indexCutOff))] {
            let url = try folder.file(name, contents: contents)
            let error = error { _ = try AudioDecoder(url: url) }
            #expect(error?.code == .badInput)
            #expect(error?.message.contains("MP4/M4A recording without its index") == true, "\(name): \(error?.message ?? "no error")")
        }
        // Not every file FFmpeg cannot open that starts like an MP4 is one without its index.
        var foreign = bytes.prefix(index.upperBound)
        foreign.replaceSubrange(index.lowerBound + 8..<index.upperBound, with: TestSignals.noiseBytes(count: index.count - 8))
        let url = try folder.file("scrambled.m4a", contents: foreign + TestSignals.noiseBytes(count: 2_000))
        let scrambled = error { _ = try AudioDecoder(url: url) }
        #expect(scrambled?.message.contains("without its index") == false, "\(scrambled?.message ?? "no error")")
    }
}
