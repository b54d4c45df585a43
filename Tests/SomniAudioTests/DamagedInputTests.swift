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
        // FFmpeg takes it for FLAC by its name: not "audio whose header is damaged".
        ("notes.flac", Data("hello there\n".utf8)),
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

    /// A video whose picture runs on after its sound (a camera left recording): the sound is
    /// all there, so no "ends early" warning, in Matroska (whose streams carry their lengths as
    /// tags) or in a container that gives only the whole file's.
    @Test(arguments: ["matroska", "nut"])
    func aVideoLongerThanItsSoundIsNotCalledShort(container: String) throws {
        let folder = try ScratchFolder()
        let url = folder.url.appendingPathComponent("camera.\(container == "matroska" ? "mkv" : "nut")")
        try VideoFiles.write(to: url, container: container, videoSeconds: 6, audio: TestSignals.tones(seconds: 2, sampleRate: 16_000))
        let decoder = try AudioDecoder(url: url)
        let samples = try TestSignals.readAll(decoder)
        #expect(abs(samples.count - 32_000) < 400, "\(samples.count)")
        #expect(decoder.warnings.isEmpty, "\(decoder.warnings)")
        if container == "matroska" { #expect(decoder.expectedDuration.map { abs($0 - 2) < 0.05 } == true, "\(decoder.expectedDuration ?? 0)") }
    }

    /// A screen recording's two sound tracks: one is analysed, and the night says so, so a
    /// silent first track does not pass for a microphone that heard nothing.
    @Test func aFileOfTwoSoundTracksSaysOnlyOneWasAnalysed() throws {
        let folder = try ScratchFolder()
        let url = folder.url.appendingPathComponent("screen.mkv")
        let sound = TestSignals.tones(seconds: 2, sampleRate: 16_000)
        try VideoFiles.write(to: url, container: "matroska", videoSeconds: 2, audio: [Float](repeating: 0, count: sound.count),
                             secondAudio: sound)
        let decoder = try AudioDecoder(url: url)
        _ = try TestSignals.readAll(decoder)
        #expect(decoder.warnings == ["the file holds 2 audio streams and only one was analysed, stream 1 (pcm_s16le, 16000 Hz, 1 ch); "
                                     + "to analyse another, extract it to a file of its own first"], "\(decoder.warnings)")
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
        // FFmpeg's WAV reader trims the duration to the bytes there; the header's sizes say 4 s.
        #expect(decoder.warnings.first?.hasSuffix(" of 4.0 s") == true, "\(decoder.warnings)")
    }

    /// A WAV cut off at a whole sample (a recorder's file copied before it finished, or cut by a
    /// full disk at a block) decodes cleanly to where it stops; its finished header says how long
    /// it was, so it is still called short. One whose header was never finished (sizes of all
    /// ones, as recorders write while recording) promises nothing and is not.
    @Test func aWAVCutAtASampleIsStillCalledShort() throws {
        let folder = try ScratchFolder()
        let whole = folder.url.appendingPathComponent("whole.wav")
        let writer = try WAVWriter(url: whole)  // the canonical 44-byte header: the data's size at byte 40
        try TestSignals.tones(seconds: 6, sampleRate: 16_000).withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        let bytes = [UInt8](try Data(contentsOf: whole))
        let cut = try folder.file("cut.wav", contents: Data(bytes.prefix(44 + 2 * 16_000 * 3)))
        let decoder = try AudioDecoder(url: cut)
        #expect(try TestSignals.readAll(decoder).count == 48_000)
        #expect(decoder.warnings == ["the file ends early or is damaged: read 3.0 s of 6.0 s"], "\(decoder.warnings)")

        var unfinished = Array(bytes.prefix(44 + 2 * 16_000 * 3))
        for at in [4, 40] { unfinished.replaceSubrange(at..<at + 4, with: [0xFF, 0xFF, 0xFF, 0xFF]) }
        let open = try AudioDecoder(url: try folder.file("recording.wav", contents: Data(unfinished)))
        #expect(try TestSignals.readAll(open).count == 48_000)
        #expect(open.warnings.isEmpty, "\(open.warnings)")
    }

    /// A recording cut off inside its own header is called that, not "not an audio file"; one
    /// whose header describes no channels holds audio that cannot be read (it was "no audio
    /// stream (it holds audio)").
    @Test func aHeaderCutOffOrDamagedIsSaidToBe() throws {
        let folder = try ScratchFolder()
        let flac = try Data(contentsOf: try TestSignals.encode(TestSignals.tones(seconds: 2, sampleRate: 16_000), as: .flac,
                                                               sampleRate: 16_000, in: folder.url))
        let wav = wavHeader(formatTag: 1, dataBytes: 64_000) + Data(count: 64_000)
        for (name, contents, kind) in [("cut-8.flac", flac.prefix(8), "FLAC"), ("cut-20.flac", flac.prefix(20), "FLAC"),
                                       ("cut-60.flac", flac.prefix(60), "FLAC"), ("cut-30.wav", wav.prefix(30), "WAV")] {
            let error = error { _ = try AudioDecoder(url: try folder.file(name, contents: contents)) }
            #expect(error?.code == .badInput)
            #expect(error?.message.contains("it is a \(kind) recording whose header is cut off or damaged") == true,
                    "\(name): \(error?.message ?? "no error")")
        }
        var noChannels = wav
        noChannels.replaceSubrange(22..<24, with: [0, 0])
        let error = error { _ = try AudioDecoder(url: try folder.file("no-channels.wav", contents: noChannels)) }
        #expect(error?.code == .badInput)
        #expect(error?.message.contains("holds audio that cannot be read: its header is damaged") == true,
                "\(error?.message ?? "no error")")
    }

    /// 12- and 20-bit samples fill 2 and 3 bytes: an intact file was said to end early (its
    /// header's length taken as bits / 8 bytes a sample). 24-bit samples may fill 4. A WAV of compressed sound (IMA ADPCM)
    /// promises no length by its byte count at all.
    @Test(arguments: [(12, 2), (20, 3), (24, 4)])
    func samplesOfOddBitDepthsFillWholeBytes(bits: Int, bytes: Int) throws {
        let folder = try ScratchFolder()
        let seconds = 2, tone = TestSignals.tones(seconds: Double(seconds), sampleRate: 16_000)
        var header = wavHeader(formatTag: 1, dataBytes: tone.count * bytes)
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            withUnsafeBytes(of: value.littleEndian) { header.replaceSubrange(offset..<offset + $0.count, with: $0) }
        }
        put(UInt32(16_000 * bytes), at: 28); put(UInt16(bytes), at: 32); put(UInt16(bits), at: 34)
        var data = Data()
        for sample in tone {
            // Left-justified, as the format keeps them: the low bits of the container are zero.
            let full = Int32((Double(max(-1, min(1, sample))) * 2_147_483_000).rounded())
            let value = (full >> Int32(32 - bits)) << Int32(32 - bits)
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0.suffix(bytes)) }
        }
        let url = try folder.file("odd-\(bits).wav", contents: header + data)
        let decoder = try AudioDecoder(url: url)
        let read = try TestSignals.readAll(decoder)
        #expect(read.count == seconds * 16_000)
        // The samples themselves (24 bits in 4 bytes were read 3 bytes at a time: noise).
        let worst = zip(read, tone).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 2e-3, "differs by up to \(worst)")
        #expect(decoder.warnings.isEmpty, "\(decoder.warnings)")
        // The same through a pipe, whose header only FFmpeg reads (24 in 4 bytes was noise there).
        let fifo = folder.url.appendingPathComponent("odd-\(bits).pipe")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "exec cat \"$0\" > \"$1\"", url.path, fifo.path]
        try writer.run()
        defer { if writer.isRunning { writer.terminate() } }
        let piped = try TestSignals.readAll(try AudioDecoder(url: fifo))
        #expect(piped.count == read.count && zip(piped, tone).allSatisfy { abs($0 - $1) < 2e-3 }, "\(piped.count) samples")
        #expect(abs((decoder.expectedDuration ?? 0) - Double(seconds)) < 0.01)
        #expect(WAVLayout.promisedSeconds(of: url) == Double(seconds))

        // A block alignment larger than the samples need, which the byte rate does not bear out
        // (16-bit samples, block 4, 2 bytes a sample a second): the samples are packed, as
        // FFmpeg reads them; taken as 4-byte containers the night came out half its length.
        let packed = (0..<seconds * 16_000).map { Int16((Double(tone[$0]) * 30_000).rounded()) }
        var lying = wavHeader(formatTag: 1, dataBytes: packed.count * 2)
        lying.replaceSubrange(32..<34, with: [4, 0])
        let lyingURL = try folder.file("lying-\(bits).wav", contents: lying + packed.withUnsafeBytes { Data($0) })
        let lyingDecoder = try AudioDecoder(url: lyingURL)
        #expect(try TestSignals.readAll(lyingDecoder).count == seconds * 16_000 && lyingDecoder.warnings.isEmpty, "\(lyingDecoder.warnings)")

        var adpcm = wavHeader(formatTag: 0x11, dataBytes: 4_000)
        adpcm.replaceSubrange(34..<36, with: [4, 0])
        #expect(WAVLayout.promisedSeconds(of: try folder.file("adpcm.wav", contents: adpcm + Data(count: 4_000))) == nil)
    }

    /// A WAV whose header says less sound than follows it: a size left stale when a recorder
    /// stopped patching it, or one wrapped past 4 GiB. Read to its end (before: silently cut to
    /// what the header said), and said so; a real chunk after the declared end (LIST, id3) is
    /// not sound and stops it. The same for the plain 16 kHz reader the analysis reads back
    /// from, and for a file FFmpeg's WAV demuxer reads (48 kHz stereo).
    @Test(arguments: [(16_000, 1), (48_000, 2)])
    func aWAVHoldingMoreThanItsHeaderSaysIsReadWhole(sampleRate: Int, channels: Int) throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(TestSignals.tones(seconds: 6, sampleRate: sampleRate, channels: channels), as: .wav,
                                           sampleRate: sampleRate, channels: channels, in: folder.url)
        var bytes = [UInt8](try Data(contentsOf: whole))
        let layoutAt = try #require(bytes.indices.dropLast(3).first { bytes[$0..<$0 + 4].elementsEqual("data".utf8) })
        let perSecond = sampleRate * channels * 2
        // The header says two seconds of the six.
        withUnsafeBytes(of: UInt32(2 * perSecond).littleEndian) { bytes.replaceSubrange(layoutAt + 4..<layoutAt + 8, with: $0) }
        let stale = try folder.file("stale.wav", contents: Data(bytes))
        let decoder = try AudioDecoder(url: stale)
        #expect(try TestSignals.readAll(decoder).count == 6 * 16_000)
        #expect(decoder.warnings == ["the file's header says it holds 2.0 s of sound, but 6.0 s follow: all of it is read "
                                     + "(a header not brought up to date when recording stopped, or a WAV over 4 GB)"], "\(decoder.warnings)")
        if channels == 1 { #expect(PCM16Samples.wavFile(stale)?.count == 6 * 16_000) }

        // A LIST chunk at the declared end: the sound ends there, as declared.
        let listed = Array(bytes.prefix(layoutAt + 8 + 2 * perSecond)) + Array("LIST".utf8) + [4, 0, 0, 0] + Array("INFO".utf8)
        let tagged = try folder.file("tagged.wav", contents: Data(listed))
        let reader = try AudioDecoder(url: tagged)
        #expect(try TestSignals.readAll(reader).count == 2 * 16_000)
        #expect(reader.warnings.isEmpty, "\(reader.warnings)")
        if channels == 1 { #expect(PCM16Samples.wavFile(tagged)?.count == 2 * 16_000) }
    }

    /// Bytes past the data chunk that are not sound, in a valid file: an odd size's pad byte, and
    /// an ID3 tag a tagger appended. Both were read as sound past a stale header, with its
    /// warning (and the tag's 128 bytes as a click at the night's end).
    @Test func aPadByteAndAnAppendedTagAreNoSound() throws {
        let folder = try ScratchFolder()
        // 8-bit samples, an odd count of them, and the pad byte RIFF asks for.
        var eightBit = wavHeader(formatTag: 1, dataBytes: 16_001)
        eightBit.replaceSubrange(4..<8, with: [UInt8(truncatingIfNeeded: 36 + 16_002), UInt8((36 + 16_002) >> 8), 0, 0])
        eightBit.replaceSubrange(28..<36, with: [0x80, 0x3E, 0, 0, 1, 0, 8, 0])  // 16,000 bytes a second, 1 a sample
        let odd = try folder.file("odd.wav", contents: eightBit + Data((0..<16_001).map { UInt8(128 + Int(90 * sin(Double($0) * 0.3))) }) + Data([0]))
        let oddDecoder = try AudioDecoder(url: odd)
        #expect(try TestSignals.readAll(oddDecoder).count == 16_001)
        #expect(oddDecoder.warnings.isEmpty, "\(oddDecoder.warnings)")

        let tone = TestSignals.tones(seconds: 2, sampleRate: 16_000)
        let pcm = Data(tone.flatMap { sample in withUnsafeBytes(of: Int16(sample * 20_000).littleEndian) { Array($0) } })
        let id3v1 = Data("TAG".utf8) + Data("Night".utf8) + Data(count: 120)
        let id3v2 = Data("ID3".utf8) + Data([3, 0, 0, 0, 0, 0, 20]) + Data(count: 20)
        // Both, in the order the ID3v2.4 standard gives for appended tags.
        for (name, tag) in [("id3v1", id3v1), ("id3v2", id3v2), ("id3v2+v1", id3v2 + id3v1)] {
            let tagged = try folder.file("\(name).wav", contents: wavHeader(formatTag: 1, dataBytes: pcm.count) + pcm + tag)
            let decoder = try AudioDecoder(url: tagged)
            let read = try TestSignals.readAll(decoder)
            #expect(read.count == 32_000, "\(name)")
            #expect(decoder.warnings.isEmpty, "\(name): \(decoder.warnings)")
            #expect(PCM16Samples.wavFile(tagged)?.count == 32_000, "\(name)")
        }
        // The decoder and the in-place reader agree on where the sound ends (else the analysis
        // stops: "changed while it was being analysed"): a tag after a size never filled in, or
        // after a stale one, is left out by both; sound inside the declared data that happens to
        // spell TAG 128 bytes from the end is sound.
        var spelling = pcm
        spelling.replaceSubrange(pcm.count - 128..<pcm.count - 125, with: Data("TAG".utf8))
        var stale = wavHeader(formatTag: 1, dataBytes: 32_000)
        stale.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0xFF])
        for (name, bytes, samples, warned) in [("unfinished", wavHeader(formatTag: 1, dataBytes: 0) + pcm + id3v1, 32_000, false),
                                               ("stale", stale + pcm + id3v1, 32_000, true),
                                               ("spelling", wavHeader(formatTag: 1, dataBytes: pcm.count) + spelling, 32_000, false)] {
            let url = try folder.file("\(name).wav", contents: bytes)
            let decoder = try AudioDecoder(url: url)
            #expect(try TestSignals.readAll(decoder).count == samples, "\(name)")
            #expect(PCM16Samples.wavFile(url)?.count == samples, "\(name)")
            #expect(decoder.warnings.isEmpty == !warned, "\(name): \(decoder.warnings)")
        }
        // An odd size whose writer left out the pad byte, a LIST chunk straight after.
        let list = Data("LIST".utf8) + Data([4, 0, 0, 0]) + Data("INFO".utf8)
        let unpadded = try folder.file("unpadded.wav", contents: eightBit + Data((0..<16_001).map { UInt8(128 + Int(90 * sin(Double($0) * 0.3))) }) + list)
        let unpaddedDecoder = try AudioDecoder(url: unpadded)
        #expect(try TestSignals.readAll(unpaddedDecoder).count == 16_001)
        #expect(unpaddedDecoder.warnings.isEmpty, "\(unpaddedDecoder.warnings)")
    }

    /// RF64, the RIFF of WAVs over 4 GiB (a field recorder's night), keeps its sizes in a ds64
    /// chunk: its header was not read, so 24-bit samples in 4 bytes were said to end early (of a
    /// length FFmpeg estimates at 3 bytes a sample), and a cut one was not said to be cut.
    @Test func anRF64IsReadByItsOwnSizes() throws {
        let folder = try ScratchFolder()
        let tone = TestSignals.tones(seconds: 2, sampleRate: 16_000)
        func rf64(bits: Int, bytes: Int, keeping kept: Double = 1) -> Data {
            let riff = wavHeader(formatTag: 1, dataBytes: tone.count * bytes)
            var format = riff[12..<36]
            func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
                withUnsafeBytes(of: value.littleEndian) { format.replaceSubrange(12 + offset..<12 + offset + $0.count, with: $0) }
            }
            put(UInt32(16_000 * bytes), at: 16); put(UInt16(bytes), at: 20); put(UInt16(bits), at: 22)
            let data = Data(tone.flatMap { sample in
                withUnsafeBytes(of: ((Int32((Double(sample) * 2_147_483_000).rounded()) >> Int32(32 - bits)) << Int32(32 - bits)).littleEndian) {
                    Array($0.suffix(bytes))
                }
            })
            var file = Data("RF64".utf8) + Data([0xFF, 0xFF, 0xFF, 0xFF]) + Data("WAVEds64".utf8) + Data([28, 0, 0, 0])
            for size in [UInt64(4 + 36 + format.count + 8 + data.count), UInt64(data.count), UInt64(tone.count)] {
                withUnsafeBytes(of: size.littleEndian) { file.append(contentsOf: $0) }
            }
            file += Data(count: 4) + format + Data("data".utf8) + Data([0xFF, 0xFF, 0xFF, 0xFF])
            return file + data.prefix(Int(Double(data.count) * kept) / bytes * bytes)
        }
        for (bits, bytes) in [(16, 2), (24, 4)] {
            let whole = try folder.file("whole-\(bits).wav", contents: rf64(bits: bits, bytes: bytes))
            let decoder = try AudioDecoder(url: whole)
            let read = try TestSignals.readAll(decoder)
            #expect(read.count == tone.count && zip(read, tone).allSatisfy { abs($0 - $1) < 2e-3 }, "\(bits) bits: \(read.count)")
            #expect(decoder.warnings.isEmpty, "\(bits) bits: \(decoder.warnings)")
            #expect(WAVLayout.promisedSeconds(of: whole) == 2)

            let cut = try folder.file("cut-\(bits).wav", contents: rf64(bits: bits, bytes: bytes, keeping: 0.5))
            let cutDecoder = try AudioDecoder(url: cut)
            #expect(try TestSignals.readAll(cutDecoder).count == tone.count / 2)
            #expect(cutDecoder.warnings.first?.hasPrefix("the file ends early") == true, "\(bits) bits: \(cutDecoder.warnings)")
        }
        // A 16 kHz mono 16-bit one is read in place, as a recorded night is.
        #expect(PCM16Samples.wavFile(try folder.file("night.wav", contents: rf64(bits: 16, bytes: 2)))?.count == tone.count)
        // One whose ds64 sizes were never filled in (a writer killed, or writing to a pipe) holds
        // all its sound: FFmpeg took the size of 0 at its word, "holds no audio".
        var unfinished = rf64(bits: 16, bytes: 2)
        unfinished.replaceSubrange(20..<44, with: Data(count: 24))
        let unfinishedURL = try folder.file("unfinished.wav", contents: unfinished)
        let unfinishedDecoder = try AudioDecoder(url: unfinishedURL)
        #expect(try TestSignals.readAll(unfinishedDecoder).count == tone.count)
        #expect(unfinishedDecoder.warnings.isEmpty, "\(unfinishedDecoder.warnings)")
        // Sizes no file has (here near Int's range, where an offset plus the size overflowed and
        // trapped) are no sizes: the file is read as one whose sizes were never filled in.
        for huge in [UInt64(Int64.max), UInt64(1) << 56] {
            var forged = rf64(bits: 16, bytes: 2)
            withUnsafeBytes(of: huge.littleEndian) { forged.replaceSubrange(28..<36, with: $0) }
            let forgedURL = try folder.file("forged-\(huge).wav", contents: forged)
            #expect(WAVLayout.lengths(of: forgedURL)?.held == 2)
            #expect(PCM16Samples.wavFile(forgedURL)?.count == tone.count)
            let forgedDecoder = try AudioDecoder(url: forgedURL)
            #expect(try TestSignals.readAll(forgedDecoder).count == tone.count)
        }
    }

    /// A stream that starts away from 0 (here an Ogg Opus whose granules start 2 s in, as a
    /// start offset leaves them; a video cut without re-encoding has an edit list trimming its
    /// start) has lengths that count the offset: a whole file was said to end early, "read 6.0 s
    /// of 8.0 s".
    @Test func aStreamStartingAwayFromZeroIsNotCalledShort() throws {
        let folder = try ScratchFolder()
        let plain = try TestSignals.encode(TestSignals.tones(seconds: 6, sampleRate: 48_000), as: .opus,
                                           sampleRate: 48_000, in: folder.url)
        var bytes = [UInt8](try Data(contentsOf: plain))
        func crc(_ page: ArraySlice<UInt8>) -> UInt32 {  // Ogg's: polynomial 0x04C11DB7, unreflected
            var value: UInt32 = 0
            for byte in page {
                value ^= UInt32(byte) << 24
                for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? value << 1 ^ 0x04C1_1DB7 : value << 1 }
            }
            return value
        }
        var at = 0, shifted = 0
        while at + 27 <= bytes.count, bytes[at..<at + 4].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[at + 26])
            let length = 27 + segments + bytes[at + 27..<at + 27 + segments].reduce(0) { $0 + Int($1) }
            let granule = bytes[at + 6..<at + 14].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if granule != 0, granule != .max {
                withUnsafeBytes(of: (granule + 96_000).littleEndian) { bytes.replaceSubrange(at + 6..<at + 14, with: $0) }
                bytes.replaceSubrange(at + 22..<at + 26, with: [0, 0, 0, 0])
                withUnsafeBytes(of: crc(bytes[at..<at + length]).littleEndian) { bytes.replaceSubrange(at + 22..<at + 26, with: $0) }
                shifted += 1
            }
            at += length
        }
        #expect(shifted > 0 && at == bytes.count)
        let late = try folder.file("late.opus", contents: Data(bytes))
        let decoder = try AudioDecoder(url: late)
        let seconds = Double(try TestSignals.readAll(decoder).count) / Double(analysisSampleRate)
        #expect(abs(seconds - 6) < 0.1, "\(seconds) s")
        #expect(decoder.warnings.isEmpty, "\(decoder.warnings)")
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

    /// An Ogg cut off while it was written reads whole to its cut, its length taken from its
    /// last page, and said nothing: its stream was never closed, and that is said now. A file
    /// read whole with junk after it was said to "end early": now what is said is that the
    /// junk after the recording was skipped, all of it read.
    @Test(arguments: [EncodedAudioWriter.Format.ogg, .opus, .flac])
    func aCutOggAndJunkAfterTheEndAreToldApart(format: EncodedAudioWriter.Format) throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(TestSignals.tones(seconds: 4, sampleRate: 48_000), as: format,
                                           sampleRate: 48_000, in: folder.url)
        let bytes = try Data(contentsOf: whole)
        let clean = try AudioDecoder(url: whole)
        _ = try TestSignals.readAll(clean)
        #expect(clean.warnings.isEmpty, "\(clean.warnings)")

        if format != .flac {  // a cut FLAC is short of its header's length: cutInHalf
            let cut = try folder.file("cut.\(format.fileExtension)", contents: bytes.prefix(bytes.count / 2))
            let decoder = try AudioDecoder(url: cut)
            let seconds = Double(try TestSignals.readAll(decoder).count) / Double(analysisSampleRate)
            #expect(seconds > 1 && seconds < 3)
            #expect(decoder.warnings.count == 1 && decoder.warnings[0].hasPrefix("the file ends early (its stream was never closed"),
                    "\(decoder.warnings)")
        }

        let junk = try folder.file("junk.\(format.fileExtension)", contents: bytes + TestSignals.noiseBytes(count: 8_192))
        let decoder = try AudioDecoder(url: junk)
        let seconds = Double(try TestSignals.readAll(decoder).count) / Double(analysisSampleRate)
        #expect(abs(seconds - 4) < 0.1)
        #expect(decoder.warnings.allSatisfy { !$0.hasPrefix("the file ends early") }, "\(decoder.warnings)")
        #expect(decoder.warnings.count <= 1 && decoder.warnings.allSatisfy { $0.hasPrefix("the file holds unreadable data after the end") },
                "\(decoder.warnings)")
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

    /// 20 s of quiet murmur at 16 kHz with a loud 1 kHz burst from 15 s to 15.5 s: where the
    /// burst is found tells whether damage before it moved the night.
    private func quietNightWithABurstAt15s() -> [Float] {
        var signal = (0..<(20 * 16_000)).map { i in Float(0.05 * sin(Double(i) * 0.37) * sin(Double(i) * 0.011)) }
        for i in (15 * 16_000)..<(15 * 16_000 + 8_000) { signal[i] = Float(0.8 * sin(2 * .pi * 1000 * Double(i) / 16_000)) }
        return signal
    }

    /// A damaged stretch the demuxer skips is kept as silence: a burst 15 s in is still 15 s in
    /// (before, the night closed up over the hole, and everything after moved earlier, by 8 s
    /// on a Vorbis night with five zeroed 4 KiB blocks, without a word). A damaged Ogg page is
    /// skipped whole, its seconds with it; the pages after it carry their times.
    /// An M4A's frames the decoder refuses are a frame's length each, which its own index gives.
    @Test(arguments: [(EncodedAudioWriter.Format.ogg, 512), (.m4a, 1_024)])
    func aDamagedStretchKeepsWhatFollowsAtItsTime(format: EncodedAudioWriter.Format, bytesDamaged: Int) throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(quietNightWithABurstAt15s(), as: format, sampleRate: 16_000, in: folder.url)
        var bytes = [UInt8](try Data(contentsOf: whole))
        // A third of the way in, well before the burst (a 16 kHz Vorbis file of 20 s is about 20 KB).
        let damaged = bytes.count / 3
        bytes.replaceSubrange(damaged..<damaged + bytesDamaged, with: [UInt8](repeating: 0, count: bytesDamaged))
        let decoder = try AudioDecoder(url: try folder.file("scratched.\(format.fileExtension)", contents: Data(bytes)))
        let read = try TestSignals.readAll(decoder)
        let onset = try #require(read.indices.first { abs(read[$0]) > 0.4 }, "\(read.count) samples, \(decoder.warnings)")
        #expect(abs(Double(onset) / 16_000 - 15) < 0.05, "the burst at \(Double(onset) / 16_000) s")
        #expect(abs(Double(read.count) / 16_000 - 20) < 0.1, "\(read.count) samples")
        #expect(decoder.warnings.contains { $0.hasPrefix("1 stretch of the recording (") && $0.hasSuffix("so what follows stays at its time") },
                "\(decoder.warnings)")
        #expect(!decoder.warnings.contains { $0.hasPrefix("skipped") }, "\(decoder.warnings)")
    }

    /// A FLAC frame with bits flipped fails its checksum and is kept as silence at its time:
    /// unchecked, it decoded as noise up to full scale (a night's bad sector read as loud
    /// coughs), and a run of such frames (64) ended the night there. Now the quiet stretch stays
    /// quiet, what follows keeps its time, and the whole file is read.
    @Test(arguments: [1, 97])
    func aFLACFrameFailingItsChecksumIsSilenceNotNoise(everyNthByte: Int) throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(quietNightWithABurstAt15s(), as: .flac, sampleRate: 16_000, in: folder.url)
        var bytes = [UInt8](try Data(contentsOf: whole))
        // From a fifth to a half of the way in, well before the burst: one bit in each of a
        // few frames, or (every 97th byte) every frame there.
        let span = (bytes.count / 5)..<(bytes.count / 2)
        let flipped = everyNthByte == 1 ? Array(stride(from: span.lowerBound, to: span.upperBound, by: span.count / 12))
            : Array(stride(from: span.lowerBound, to: span.upperBound, by: everyNthByte))
        for i in flipped { bytes[i] ^= 0x10 }
        let decoder = try AudioDecoder(url: try folder.file("flipped.flac", contents: Data(bytes)))
        let read = try TestSignals.readAll(decoder)
        let loudest = read[..<(14 * 16_000)].map(abs).max() ?? 0
        #expect(loudest < 0.1, "\(loudest) before the burst")
        let onset = try #require(read.indices.first { abs(read[$0]) > 0.4 }, "\(read.count) samples, \(decoder.warnings)")
        #expect(abs(Double(onset) / 16_000 - 15) < 0.05, "the burst at \(Double(onset) / 16_000) s")
        #expect(abs(Double(read.count) / 16_000 - 20) < 0.1, "\(read.count) samples")
        #expect(decoder.warnings.count == 1 && decoder.warnings[0].hasSuffix("kept as silence, so what follows stays at its time"),
                "\(decoder.warnings)")
    }

    /// The first frames' headers lost (their sync code damaged): the frames are not found at
    /// all, and the night began at the first one that was, everything in it early by what was
    /// lost (4.7 s for 70 frames). FLAC numbers its frames, so that time is silence now.
    @Test func aFLACWhoseFirstFramesAreLostKeepsItsTimes() throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(quietNightWithABurstAt15s(), as: .flac, sampleRate: 16_000, in: folder.url)
        var bytes = [UInt8](try Data(contentsOf: whole))
        // A frame starts with the sync code 0xFFF8 (fixed block size); past the header and its
        // STREAMINFO (42 bytes), the first 20 are spoiled.
        let starts = (42..<(bytes.count - 1)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xF8 }
        for i in starts.prefix(20) { bytes[i] ^= 0x80 }
        let decoder = try AudioDecoder(url: try folder.file("headless.flac", contents: Data(bytes)))
        let read = try TestSignals.readAll(decoder)
        let onset = try #require(read.indices.first { abs(read[$0]) > 0.4 }, "\(read.count) samples, \(decoder.warnings)")
        #expect(abs(Double(onset) / 16_000 - 15) < 0.05, "the burst at \(Double(onset) / 16_000) s")
        #expect(abs(Double(read.count) / 16_000 - 20) < 0.1, "\(read.count) samples")
        #expect(decoder.warnings.contains { $0.hasSuffix("kept as silence, so what follows stays at its time") }, "\(decoder.warnings)")
    }

    /// A clock at odds with the frames (an M4A whose timescale was damaged to 1 jumps 1,024 s
    /// after every 64 ms frame) is not taken for lost stretches: the 10 s file became a 48-hour
    /// night of silence. Its audio is read as it comes, and the warning says why.
    @Test func aDamagedClockDoesNotInventSilence() throws {
        let folder = try ScratchFolder()
        let signal = TestSignals.tones(seconds: 10, sampleRate: 16_000)
        let whole = try TestSignals.encode(signal, as: .m4a, sampleRate: 16_000, in: folder.url)
        var bytes = [UInt8](try Data(contentsOf: whole))
        let mdhd = try #require(Data(bytes).range(of: Data("mdhd".utf8))).lowerBound
        #expect(bytes[mdhd + 4] == 0, "a version 0 mdhd")
        bytes.replaceSubrange(mdhd + 16..<mdhd + 20, with: [0, 0, 0, 1])
        let decoder = try AudioDecoder(url: try folder.file("timescale-1.m4a", contents: Data(bytes)))
        let read = try TestSignals.readAll(decoder)
        #expect(abs(Double(read.count) / 16_000 - 10) < 0.5, "read \(Double(read.count) / 16_000) s: \(decoder.warnings)")
        #expect(decoder.warnings.contains { $0.hasPrefix("the file's timestamps jumped") }, "\(decoder.warnings)")
        #expect(!decoder.warnings.contains { $0.contains("kept as silence") }, "\(decoder.warnings)")
        // Its length on that clock (48 h) does not make it "end early".
        #expect(!decoder.warnings.contains { $0.contains("ends early") }, "\(decoder.warnings)")
    }

    /// Two lost stretches a couple of frames apart, the first near the start, are both kept as
    /// silence at their times: the clock is doubted only when it moves on by a frame's samples at
    /// another rate (a rule of "4 frames on the clock first" dropped the second, and the rest of
    /// the night came early).
    @Test func lostStretchesCloseTogetherAreBothKept() throws {
        let folder = try ScratchFolder()
        let signal = TestSignals.tones(seconds: 30, sampleRate: 16_000)
        let bytes = [UInt8](try Data(contentsOf: try TestSignals.encode(signal, as: .flac, sampleRate: 16_000, in: folder.url)))
        // Frame starts: FLAC's sync code (0xFFF8, fixed block size) after the metadata.
        let frames = (4..<(bytes.count - 1)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xF8 }
        try #require(frames.count > 60, "\(frames.count) frames")
        for (first, last) in [(1, 20), (40, 49)] {
            var cut = bytes
            cut.removeSubrange(frames[last + 3]..<frames[last + 13])  // the second hole, two frames after the first
            cut.removeSubrange(frames[first]..<frames[last])
            let decoder = try AudioDecoder(url: try folder.file("holes-\(first).flac", contents: Data(cut)))
            let read = try TestSignals.readAll(decoder)
            #expect(abs(Double(read.count) / 16_000 - 30) < 0.3, "holes from frame \(first): read \(Double(read.count) / 16_000) s, \(decoder.warnings)")
            #expect(!decoder.warnings.contains { $0.contains("timestamps jumped") }, "\(decoder.warnings)")
        }
    }

    /// A header's absurd rate (1 Hz) is damage, not a 48-hour night; a chunk before the sound
    /// that claims more than the file holds is refused before FFmpeg allocates it (1.6 GB).
    @Test func aWAVHeadersAbsurdRateOrChunkSizeIsRefused() throws {
        let folder = try ScratchFolder()
        let sound = Data(repeating: 1, count: 32_000)
        var slow = wavHeader(formatTag: 1, dataBytes: sound.count) + sound
        slow.replaceSubrange(24..<28, with: [1, 0, 0, 0])
        let rate = error { _ = try AudioDecoder(url: try folder.file("rate-1.wav", contents: slow)) }
        #expect(rate?.code == .badInput && rate?.message.contains("sampled 1 times a second") == true, "\(String(describing: rate))")

        let header = wavHeader(formatTag: 1, dataBytes: sound.count)
        var list = Data("LIST".utf8) + Data([0xF0, 0xFF, 0xFF, 0xFF]) + Data("INFOINAM".utf8) + Data([0, 0, 0, 0x60]) + Data(count: 8)
        list = header.prefix(36) + list + header.suffix(8) + sound
        let chunk = error { _ = try AudioDecoder(url: try folder.file("list.wav", contents: list)) }
        #expect(chunk?.code == .badInput && chunk?.message.contains("'LIST' chunk declares") == true, "\(String(describing: chunk))")
    }

    /// An AMR recording with its recorder's silence frames (DTX: NO_DATA and SID, which FFmpeg's
    /// decoders refuse) is read whole, each such frame 20 ms of silence: before, 64 of them in
    /// a row ended the night, and a 15-minute file read as 0.1 s.
    @Test func anAMRRecordingsSilenceFramesAreSilence() throws {
        let folder = try ScratchFolder()
        var file = Array("#!AMR\n".utf8)
        let noise = [UInt8](TestSignals.noiseBytes(count: 31 * 400))
        func speech(_ k: Int) { file += [0x3C] + noise[(31 * k)..<(31 * k + 31)] }  // 12.2 kb/s, 31 bytes
        for k in 0..<100 { speech(k) }                     // 2 s of sound
        file += [0x44, 1, 2, 3, 4, 5]                      // a SID frame
        for _ in 0..<249 { file += [0x7C] }                // and 249 NO_DATA: 5 s of silence in all
        for k in 100..<200 { speech(k) }                   // 2 s more
        let decoder = try AudioDecoder(url: try folder.file("dtx.amr", contents: Data(file)))
        let read = try TestSignals.readAll(decoder)
        #expect(abs(Double(read.count) / 16_000 - 9) < 0.05, "\(Double(read.count) / 16_000) s")
        #expect(read[(3 * 16_000)..<(6 * 16_000)].allSatisfy { abs($0) < 1e-3 }, "the silence frames are silent")
        #expect(read[(7 * 16_000)..<(8 * 16_000)].contains { abs($0) > 1e-3 }, "the sound after them is where it was")
        #expect(decoder.warnings.isEmpty, "\(decoder.warnings)")
    }

    /// The file laid out as a phone's recorder writes it, index last (`EncodedAudioWriter` writes
    /// it first, for streaming): ftyp, mdat, moov. The index's offsets are then wrong, which no
    /// test here reads. Also gives where the audio lies in it.
    private func indexLast(_ bytes: Data) throws -> (file: Data, audio: Range<Int>, index: Range<Int>) {
        let found = TestSignals.mp4Boxes(bytes)
        func box(_ type: String) throws -> Data { bytes[try #require(found.first { $0.type == type }).range] }
        let ftyp = try box("ftyp"), mdat = try box("mdat"), moov = try box("moov")
        let file = ftyp + mdat + moov
        return (file, ftyp.count + 8..<ftyp.count + mdat.count, ftyp.count + mdat.count..<file.count)
    }

    /// A 400 Hz tone whose level steps every half second through a fixed run of levels: where the
    /// audio is in time shows in its levels.
    private func steppedTone(seconds: Int, sampleRate: Int) -> [Float] {
        var random = SeededRandom(seed: 11)
        let levels = (0..<seconds * 2).map { _ in Float(random.uniform(0.02...0.5)) }
        return (0..<seconds * sampleRate).map { index in
            levels[index * 2 / sampleRate] * Float(sin(2 * .pi * 400 * Double(index) / Double(sampleRate)))
        }
    }

    /// The RMS level of each half second's middle 0.4 s, in dB.
    private func halfSecondLevels(_ samples: [Float]) -> [Float] {
        stride(from: 0, to: samples.count - 8_000 + 1, by: 8_000).map {
            TestSignals.decibels(TestSignals.rms(samples[$0 + 800..<$0 + 7_200]))
        }
    }

    /// How far apart two decodes' half-second levels come, over the part both have, in dB.
    private func largestLevelDifference(_ read: [Float], _ expected: [Float]) -> Float {
        zip(halfSecondLevels(read), halfSecondLevels(expected)).map { abs($0 - $1) }.max() ?? .infinity
    }

    /// A phone app killed mid-recording (a flat battery) leaves an M4A whose index (`moov`), written
    /// last, is missing: every frame of audio is there but nothing says where. Read from its frames,
    /// with the settings of a complete recording from the same app, since 48, 44.1 and 32 kHz
    /// frames parse alike and a wrong rate would misplace every event.
    @Test func anM4ACutOffBeforeItsIndexIsReadFromItsFrames() throws {
        let folder = try ScratchFolder()
        // 60 s at 64 kbit/s, about 480 KB: the cut file spans two of the probe's 256 KiB windows.
        let whole = try TestSignals.encode(steppedTone(seconds: 60, sampleRate: 48_000), as: .m4a, sampleRate: 48_000,
                                           in: folder.url, name: "whole")
        let (bytes, audio, _) = try indexLast(try Data(contentsOf: whole))
        let cutAt = audio.lowerBound + audio.count * 3 / 4 + 333  // mid-frame, as a dying app leaves it
        let cut = try folder.file("cut.m4a", contents: bytes.prefix(cutAt))

        let unsure = error { _ = try AudioDecoder(url: cut) }
        #expect(unsure?.code == .badInput)
        #expect(unsure?.message.contains("48, 44.1 or 32 kHz") == true, "\(unsure?.message ?? "no error")")
        #expect(unsure?.message.contains("--like") == true)

        // The complete recording's settings come from its index wherever it lies (a phone
        // writes it last), without FFmpeg indexing every frame of it first.
        let wholeIndexLast = try folder.file("whole-index-last.m4a", contents: bytes)
        #expect(try AudioDecoder(url: cut, like: wholeIndexLast).recordedSampleRate == 48_000)
        let rescued = try AudioDecoder(url: cut, like: whole)
        #expect(rescued.warnings.first?.contains("cut off before its index was written") == true, "\(rescued.warnings)")
        #expect(rescued.recordedSampleRate == 48_000)
        let estimate = try #require(rescued.expectedDuration)
        #expect(abs(estimate - 45) < 3, "estimated \(estimate) s")
        let read = try TestSignals.readAll(rescued)
        let expected = try TestSignals.readAll(AudioDecoder(url: whole))
        // Three quarters of the bytes, about as much of the time (the quiet steps take fewer).
        let seconds = Double(read.count) / 16_000
        #expect(abs(seconds - 45) < 2, "read \(seconds) s")
        #expect(rescued.warnings.contains { $0.hasPrefix("the file ends early or is damaged") })
        // Each half second's level where the whole file has it: nothing lost, added or moved
        // (the encoder's priming, 1,024 samples the index would have said to skip, is 21 ms).
        #expect(halfSecondLevels(read).count >= 85)
        let worst = largestLevelDifference(read, expected)
        #expect(worst < 0.5, "levels differ by up to \(worst) dB")

        // An index cut off a few bytes in opens in FFmpeg with no stream, or one it cannot
        // describe: read from the frames all the same (it was "no streams at all", --like or not).
        let (_, _, index) = try indexLast(try Data(contentsOf: whole))
        // ... and cut at a box's edge or in its first fields, where FFmpeg found a stream of no
        // samples and called the recording empty.
        let indexBytes = [UInt8](bytes[index])
        let boxEdges = ["stts", "stsc", "stco"].compactMap { type in
            (0..<indexBytes.count - 4).first { indexBytes[$0..<$0 + 4].elementsEqual(type.utf8) }
        }.flatMap { [$0 - 4, $0 + 4] }
        #expect(boxEdges.count == 6)
        for into in [8, 50, 120, 400] + boxEdges {
            let shortIndex = try folder.file("index-\(into).m4a", contents: bytes.prefix(index.lowerBound + into))
            let decoder = try AudioDecoder(url: shortIndex, like: whole)
            let all = try TestSignals.readAll(decoder)
            #expect(abs(Double(all.count) / 16_000 - 60) < 1, "\(into) bytes of index: read \(all.count) samples")
        }

        // Settings of another kind of recording are refused, not guessed with.
        let mp3 = try TestSignals.encode(TestSignals.tones(seconds: 1, sampleRate: 48_000), as: .mp3, sampleRate: 48_000, in: folder.url)
        #expect(error { _ = try AudioDecoder(url: cut, like: mp3) }?.message.contains("is not an AAC recording") == true)
    }

    /// The frames alone decide the rate when only one parses them (8 kHz has band tables of its
    /// own), and an index cut off part-way still holds the settings: no --like is needed.
    @Test func anM4AWhoseSettingsSurviveIsReadWithoutHelp() throws {
        let folder = try ScratchFolder()
        let narrow = try TestSignals.encode(steppedTone(seconds: 20, sampleRate: 8_000), as: .m4a, sampleRate: 8_000,
                                            in: folder.url, name: "narrow")
        let (bytes, audio, _) = try indexLast(try Data(contentsOf: narrow))
        let noIndex = try folder.file("narrow-cut.m4a", contents: bytes.prefix(audio.lowerBound + audio.count / 2))
        let alone = try AudioDecoder(url: noIndex)
        #expect(alone.recordedSampleRate == 8_000)
        #expect(alone.warnings.first?.contains("the only rate they decode at, 8 kHz") == true, "\(alone.warnings)")
        #expect(abs(Double(try TestSignals.readAll(alone).count) / 16_000 - 10) < 1)
        // A recorder that writes the audio box's size last leaves its placeholder: a bare header
        // (size 8), or a 64-bit size of 0. The audio still runs to the end of the file.
        var placeholder = bytes.prefix(audio.lowerBound + audio.count / 2)
        placeholder.replaceSubrange(audio.lowerBound - 8..<audio.lowerBound - 4, with: [0, 0, 0, 8])
        var wideZero = placeholder
        wideZero.replaceSubrange(audio.lowerBound - 8..<audio.lowerBound, with: Array("\u{0}\u{0}\u{0}\u{1}mdat".utf8) + [UInt8](repeating: 0, count: 8))
        for (name, contents) in [("size-8.m4a", placeholder), ("size-64-zero.m4a", wideZero)] {
            let read = try TestSignals.readAll(AudioDecoder(url: try folder.file(name, contents: contents)))
            #expect(abs(Double(read.count) / 16_000 - 10) < 1, "\(name): \(read.count) samples")
        }

        let wide = try TestSignals.encode(steppedTone(seconds: 10, sampleRate: 44_100), as: .m4a, sampleRate: 44_100,
                                          in: folder.url, name: "wide")
        let (wideBytes, _, index) = try indexLast(try Data(contentsOf: wide))
        let indexCut = try folder.file("index-cut.m4a", contents: wideBytes.prefix(index.lowerBound + index.count / 2))
        let fromIndex = try AudioDecoder(url: indexCut)
        #expect(fromIndex.recordedSampleRate == 44_100)
        #expect(fromIndex.warnings.first?.contains("left in what was written of its index") == true, "\(fromIndex.warnings)")
        let read = try TestSignals.readAll(fromIndex), expected = try TestSignals.readAll(AudioDecoder(url: wide))
        #expect(abs(read.count - expected.count) < 800, "\(read.count) against \(expected.count) samples")
        let worst = largestLevelDifference(read, expected)
        #expect(worst < 0.5, "levels differ by up to \(worst) dB")
    }

    /// An MP4 start with no whole index and no AAC in it is one clear error, not a guess.
    @Test func anMP4WithoutIndexOrAudioIsAnError() throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(TestSignals.tones(seconds: 4, sampleRate: 44_100), as: .m4a,
                                           sampleRate: 44_100, in: folder.url)
        let (bytes, audio, index) = try indexLast(try Data(contentsOf: whole))
        var noise = bytes.prefix(audio.upperBound)
        noise.replaceSubrange(audio, with: TestSignals.noiseBytes(count: audio.count))
        let url = try folder.file("noise.m4a", contents: noise)
        let failure = error { _ = try AudioDecoder(url: url) }
        #expect(failure?.code == .badInput)
        #expect(failure?.message.contains("without its index") == true, "\(failure?.message ?? "no error")")

        // Not every file FFmpeg cannot open that starts like an MP4 is one without its index.
        var foreign = bytes.prefix(index.upperBound)
        foreign.replaceSubrange(index.lowerBound + 8..<index.upperBound, with: TestSignals.noiseBytes(count: index.count - 8))
        let scrambledURL = try folder.file("scrambled.m4a", contents: foreign + TestSignals.noiseBytes(count: 2_000))
        let scrambled = error { _ = try AudioDecoder(url: scrambledURL) }
        #expect(scrambled?.message.contains("without its index") == false, "\(scrambled?.message ?? "no error")")
    }

    /// Sizes an MP4's boxes claim are read as claims. A 64-bit box size of 2^64 − 1 is one box
    /// running past the end, not an overflow; a track header saying 149 hours for a 4 s clip
    /// decodes the 4 s, without first asking for 34 GB to hold the 149 hours.
    @Test func anMP4sDamagedSizesAreNeverTrusted() throws {
        let folder = try ScratchFolder()
        var huge = Data([0, 0, 0, 16] + Array("ftypM4A ".utf8) + [0, 0, 0, 0])
        huge += Data([0, 0, 0, 1] + Array("free".utf8) + [UInt8](repeating: 0xFF, count: 8)) + TestSignals.noiseBytes(count: 64)
        let hugeURL = try folder.file("huge-box.m4a", contents: huge)
        #expect(error { _ = try AudioDecoder(url: hugeURL) }?.code == .badInput)

        let clip = try TestSignals.encode(TestSignals.tones(seconds: 4, sampleRate: 8_000), as: .m4a, sampleRate: 8_000, in: folder.url)
        var bytes = [UInt8](try Data(contentsOf: clip))
        let mdhd = try #require((0..<bytes.count - 4).first { bytes[$0..<$0 + 4].elementsEqual("mdhd".utf8) }) + 4
        try #require(bytes[mdhd] == 0)  // version 0: 32-bit times, duration after the time scale
        #expect(bytes[mdhd + 12..<mdhd + 16].reduce(0) { $0 << 8 | Int($1) } == 8_000)
        bytes.replaceSubrange(mdhd + 16..<mdhd + 20, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let longURL = try folder.file("long-header.m4a", contents: Data(bytes))
        let samples = try AudioDecoder.decodeWhole(longURL)
        #expect(abs(samples.count - 4 * analysisSampleRate) < analysisSampleRate / 10, "\(samples.count) samples")
    }

    /// The index is what Somni parses itself (`IndexedM4A`), so it is damaged on its own, where
    /// its sizes and counts lie: random bytes, and whole 32-bit words set to 0, 1 or all ones.
    /// Each file is refused with a bad-input error or read; none crashes.
    @Test func anIndexDamagedAnywhereIsReadOrRefused() throws {
        let folder = try ScratchFolder()
        let good = [UInt8](try Data(contentsOf: TestSignals.encode(TestSignals.tones(seconds: 3, sampleRate: 48_000), as: .m4a,
                                                                  sampleRate: 48_000, in: folder.url)))
        let moov = try #require(TestSignals.mp4Boxes(Data(good)).first { $0.type == "moov" }).range
        var random = SeededRandom(seed: 43)
        var refused = 0
        for trial in 0..<300 {
            var bytes = good
            func at() -> Int { moov.lowerBound + Int(random.next() % UInt64(moov.count - 4)) }
            if trial % 2 == 0 {
                for _ in 0..<(1 + trial % 3) { bytes[at()] = UInt8(truncatingIfNeeded: random.next()) }
            } else {
                let word: [UInt8] = [[0, 0, 0, 0], [0, 0, 0, 1], [0xFF, 0xFF, 0xFF, 0xFF]][trial % 3]
                let start = at() & ~3
                bytes.replaceSubrange(start..<start + 4, with: word)
            }
            if !(try readsOrRefuses(try folder.file("index-\(trial).m4a", contents: Data(bytes)), trial: trial)) { refused += 1 }
        }
        #expect(refused < 300, "some damage leaves the audio readable")
    }

    /// Reads a damaged file to its end (true), or sees it refused as bad input (false); any
    /// other error is a failure.
    private func readsOrRefuses(_ url: URL, like: URL? = nil, trial: Int) throws -> Bool {
        do {
            _ = try TestSignals.readAll(AudioDecoder(url: url, like: like))
            return true
        } catch let error as SomniError {
            #expect(error.code == .badInput, "trial \(trial): \(error.message)")
            return false
        }
    }

    /// A recording cut off before its index is read from its frames by Somni's own walk
    /// (`UnindexedM4A`), so its frames are damaged too: random bytes and words of 0 or all ones
    /// in the audio, read with and without `--like`. Each is read or refused; none crashes or
    /// hangs.
    @Test func aCutRecordingsDamagedFramesAreReadOrRefused() throws {
        let folder = try ScratchFolder()
        let whole = try TestSignals.encode(TestSignals.tones(seconds: 4, sampleRate: 8_000), as: .m4a, sampleRate: 8_000,
                                           in: folder.url, name: "whole")
        let (bytes, audio, _) = try indexLast(try Data(contentsOf: whole))
        let cut = [UInt8](bytes.prefix(audio.upperBound - 100))
        var random = SeededRandom(seed: 44)
        var read = 0
        for trial in 0..<200 {
            var damaged = cut
            func at() -> Int { audio.lowerBound + Int(random.next() % UInt64(audio.count - 104)) }
            if trial % 2 == 0 {
                for _ in 0..<(1 + trial % 8) { damaged[at()] = UInt8(truncatingIfNeeded: random.next()) }
            } else {
                let start = at()
                damaged.replaceSubrange(start..<start + 4, with: [UInt8](repeating: trial % 4 == 1 ? 0 : 0xFF, count: 4))
            }
            if try readsOrRefuses(try folder.file("cut-\(trial).m4a", contents: Data(damaged)), like: trial % 3 == 0 ? whole : nil,
                                  trial: trial) { read += 1 }
        }
        #expect(read > 0, "some damaged cut recordings are still read")
    }

    /// Damage of every kind a copy or a dying disk leaves (flipped bits, overwritten or zeroed
    /// blocks, repeated or missing stretches, a cut), seeded, in each format and in six-channel
    /// AAC: each file either fails to open with a bad-input error or is read to its end, never
    /// an I/O or internal error or a crash. (A damaged AAC frame claiming 19 channels once
    /// stopped a night with "cannot set up resampling".)
    @Test(arguments: [(EncodedAudioWriter.Format.m4a, 6), (.m4a, 1), (.mp3, 2), (.ogg, 1), (.flac, 1), (.opus, 1), (.wav, 2)])
    func damageOfEveryKind(format: EncodedAudioWriter.Format, channels: Int) throws {
        let folder = try ScratchFolder()
        let sound = TestSignals.tones(seconds: 6, sampleRate: 48_000, channels: channels)
        let good = try Data(contentsOf: TestSignals.encode(sound, as: format, sampleRate: 48_000, channels: channels, in: folder.url))
        var random = SeededRandom(seed: UInt64(channels * 100 + good.count % 97))
        for trial in 0..<40 {
            var bytes = [UInt8](good)
            func at() -> Int { Int(random.next() % UInt64(bytes.count)) }
            switch trial % 5 {
            case 0: for _ in 0..<(1 + trial % 4) { bytes[at()] ^= UInt8(1) << UInt8(random.next() % 8) }
            case 1: for _ in 0..<(20 + trial * 5) { bytes[at()] = UInt8(truncatingIfNeeded: random.next()) }
            case 2:
                let start = at()
                bytes.replaceSubrange(start..<min(bytes.count, start + 1 + at() % 4_096), with: [UInt8](repeating: 0, count: min(bytes.count, start + 1 + at() % 4_096) - start))
            case 3:
                let from = at(), to = at(), length = min(2_000, bytes.count - max(from, to))
                bytes.replaceSubrange(to..<to + length, with: bytes[from..<from + length])
            default: bytes = Array(bytes.prefix(at()))
            }
            _ = try readsOrRefuses(try folder.file("damaged-\(trial).\(format.fileExtension)", contents: Data(bytes)), trial: trial)
        }
    }
}
