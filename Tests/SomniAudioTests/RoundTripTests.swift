import Foundation
import SomniAudio
import SomniCore
import Testing

/// Encode a known signal with EncodedAudioWriter, decode it with AudioDecoder, compare.
@Suite struct RoundTripTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let format: EncodedAudioWriter.Format
        let sampleRate: Int
        let channels: Int
        let codecName: String
        var testDescription: String { "\(format) \(sampleRate) Hz \(channels) ch" }
    }

    static let cases: [Case] = [
        Case(format: .wav, sampleRate: 16_000, channels: 1, codecName: "pcm_s16le"),
        Case(format: .wav, sampleRate: 48_000, channels: 2, codecName: "pcm_s16le"),
        Case(format: .flac, sampleRate: 44_100, channels: 2, codecName: "flac"),
        Case(format: .mp3, sampleRate: 44_100, channels: 2, codecName: "mp3"),
        Case(format: .mp3, sampleRate: 16_000, channels: 1, codecName: "mp3"),
        Case(format: .ogg, sampleRate: 48_000, channels: 1, codecName: "vorbis"),
        Case(format: .opus, sampleRate: 48_000, channels: 2, codecName: "opus"),
        Case(format: .opus, sampleRate: 16_000, channels: 1, codecName: "opus"),
        Case(format: .opus, sampleRate: 8_000, channels: 1, codecName: "opus"),
        Case(format: .m4a, sampleRate: 48_000, channels: 2, codecName: "aac"),
        Case(format: .m4a, sampleRate: 16_000, channels: 1, codecName: "aac"),
    ]

    @Test(arguments: cases)
    func decodesWhatWasEncoded(_ test: Case) throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(TestSignals.tones(seconds: 3, sampleRate: test.sampleRate, channels: test.channels),
                                         as: test.format, sampleRate: test.sampleRate, channels: test.channels, in: folder.url)
        let decoder = try AudioDecoder(url: url)
        #expect(decoder.formatDescription.hasPrefix("\(test.codecName), "))
        #expect(decoder.formatDescription.hasSuffix(" \(test.channels) ch"))
        #expect(decoder.sampleRate == analysisSampleRate)
        // Opus always decodes at 48 kHz; the rate it was fed comes from its header.
        #expect(decoder.recordedSampleRate == test.sampleRate)
        let expected = try #require(decoder.expectedDuration)
        #expect(abs(expected - 3) < 0.1)

        let samples = try TestSignals.readAll(decoder)
        #expect(decoder.warnings.isEmpty)
        #expect(abs(Double(samples.count) / Double(analysisSampleRate) - 3) < 0.1)

        // The middle two seconds: away from codec priming and the end's padding.
        let middle = samples[8_000..<40_000]
        let tone = TestSignals.power(at: 1000, in: middle, sampleRate: analysisSampleRate)
        let hum = TestSignals.power(at: 300, in: middle, sampleRate: analysisSampleRate)
        let elsewhere = TestSignals.power(at: 2_170, in: middle, sampleRate: analysisSampleRate)
        #expect(tone > 3 * hum)  // 6.25 × in the signal
        #expect(hum > 100 * elsewhere)
        #expect(abs(TestSignals.decibels(TestSignals.rms(middle) / TestSignals.tonesRMS)) < 1)
    }

    @Test func sixteenKilohertzMonoWavComesBackSampleExact() throws {
        let folder = try ScratchFolder()
        let original = TestSignals.tones(seconds: 3, sampleRate: 16_000)
        let url = try TestSignals.encode(original, as: .wav, sampleRate: 16_000, in: folder.url)
        let decoder = try AudioDecoder(url: url)
        #expect(decoder.formatDescription == "pcm_s16le, 16000 Hz, 1 ch")
        #expect(decoder.expectedDuration == 3)
        let decoded = try TestSignals.readAll(decoder)
        #expect(decoded.count == original.count)
        let worst = zip(decoded, original).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1.0 / 32_000)  // 16-bit quantisation
    }

    @Test func blockSizesDoNotChangeTheSamples() throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(TestSignals.tones(seconds: 1, sampleRate: 44_100, channels: 2),
                                         as: .flac, sampleRate: 44_100, channels: 2, in: folder.url)
        let reference = try TestSignals.readAll(try AudioDecoder(url: url), blockSize: 16_000)
        for blockSize in [1, 7, 1_000, 100_000] {
            #expect(try TestSignals.readAll(try AudioDecoder(url: url), blockSize: blockSize) == reference)
        }
    }

    @Test func readingOnAfterTheEndKeepsReturningNothing() throws {
        // The decoder frees FFmpeg's handles when the stream ends; later reads must still be safe.
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(TestSignals.tones(seconds: 1, sampleRate: 48_000), as: .m4a,
                                         sampleRate: 48_000, in: folder.url)
        let decoder = try AudioDecoder(url: url)
        #expect(try TestSignals.readAll(decoder).count > 15_000)
        var block = [Float](repeating: 1, count: 512)
        for _ in 0..<3 { #expect(try block.withUnsafeMutableBufferPointer { try decoder.read(into: $0) } == 0) }
        #expect(decoder.formatDescription == "aac, 48000 Hz, 1 ch" && decoder.warnings.isEmpty)
    }

    @Test func stereoIsAveragedNotSummed() throws {
        let folder = try ScratchFolder()
        let mono = TestSignals.tones(seconds: 2, sampleRate: 48_000)
        var leftOnly = [Float](repeating: 0, count: mono.count * 2)
        for (index, value) in mono.enumerated() { leftOnly[2 * index] = value }
        let url = try TestSignals.encode(leftOnly, as: .flac, sampleRate: 48_000, channels: 2, in: folder.url)
        let decoded = try TestSignals.readAll(try AudioDecoder(url: url))
        let level = TestSignals.decibels(TestSignals.rms(decoded[4_000..<28_000]) / TestSignals.tonesRMS)
        #expect(abs(level + 6.02) < 0.3)
    }

    /// A mono microphone on one side of a stereo input: once two seconds are heard, the live
    /// channel at its own level, not halved, and a warning that says so.
    @Test func aSilentChannelIsLeftOutOfALongerRecording() throws {
        let folder = try ScratchFolder()
        let mono = TestSignals.tones(seconds: 5, sampleRate: 48_000)
        var rightOnly = [Float](repeating: 0, count: mono.count * 2)
        for (index, value) in mono.enumerated() { rightOnly[2 * index + 1] = value }
        let url = try TestSignals.encode(rightOnly, as: .flac, sampleRate: 48_000, channels: 2, in: folder.url)
        let decoder = try AudioDecoder(url: url)
        let decoded = try TestSignals.readAll(decoder)
        let level = TestSignals.decibels(TestSignals.rms(decoded[40_000..<72_000]) / TestSignals.tonesRMS)
        #expect(abs(level) < 0.3, "decoded at \(level) dB against the channel")
        #expect(decoder.warnings == [StereoDownmix.silentChannelWarning(.left)])
    }

    /// A recording from a laptop microphone whose second channel is in opposite phase: averaged,
    /// it would be silence; mixed as the difference (once two seconds have been heard) it keeps
    /// the signal at its own level.
    @Test(arguments: [EncodedAudioWriter.Format.flac, .m4a])
    func channelsInOppositePhaseDoNotCancel(format: EncodedAudioWriter.Format) throws {
        let folder = try ScratchFolder()
        var inverted = TestSignals.tones(seconds: 4, sampleRate: 48_000, channels: 2)
        for index in stride(from: 1, to: inverted.count, by: 2) { inverted[index] = -inverted[index] }
        let url = try TestSignals.encode(inverted, as: format, sampleRate: 48_000, channels: 2, in: folder.url)
        let decoder = try AudioDecoder(url: url)
        let decoded = try TestSignals.readAll(decoder)
        let level = TestSignals.decibels(TestSignals.rms(decoded[36_000..<60_000]) / TestSignals.tonesRMS)
        #expect(abs(level) < 0.5, "decoded at \(level) dB against the channel")
        #expect(decoder.warnings == [StereoDownmix.oppositePhaseWarning])
    }

    @Test func stereoInPhaseDecodesAtItsLevelWithoutAWarning() throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(TestSignals.tones(seconds: 2, sampleRate: 44_100, channels: 2),
                                         as: .flac, sampleRate: 44_100, channels: 2, in: folder.url)
        let decoder = try AudioDecoder(url: url)
        let decoded = try TestSignals.readAll(decoder)
        #expect(abs(TestSignals.decibels(TestSignals.rms(decoded[4_000..<28_000]) / TestSignals.tonesRMS)) < 0.3)
        #expect(decoder.warnings.isEmpty)
    }

    @Test func decodesAtOtherRatesWhenAsked() throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(TestSignals.tones(seconds: 2, sampleRate: 44_100), as: .flac,
                                         sampleRate: 44_100, in: folder.url)
        let decoder = try AudioDecoder(url: url, sampleRate: 8_000)
        let decoded = try TestSignals.readAll(decoder)
        #expect(abs(decoded.count - 16_000) < 100)
        #expect(TestSignals.power(at: 1000, in: decoded[2_000..<14_000], sampleRate: 8_000)
                > 3 * TestSignals.power(at: 300, in: decoded[2_000..<14_000], sampleRate: 8_000))
    }
}

/// The container's creation time, which phones write into their M4A recordings.
@Suite struct CreationTimeTests {
    static func write(_ format: EncodedAudioWriter.Format, metadata: [String: String]) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("somni-created-\(UUID().uuidString).\(format.fileExtension)")
        let writer = try EncodedAudioWriter(url: url, format: format, sampleRate: 16_000, metadata: metadata)
        let tone = (0..<16_000).map { Float(0.3 * sin(2 * Double.pi * 220 * Double($0) / 16_000)) }
        try tone.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        return url
    }

    @Test func anM4AsCreationTimeIsRead() throws {
        let dated = try Self.write(.m4a, metadata: ["creation_time": "2026-11-28T22:14:02.000000Z"])
        defer { try? FileManager.default.removeItem(at: dated) }
        #expect(try AudioDecoder(url: dated).recordingStart == RecordingStart(date: Date(timeIntervalSince1970: 1_795_904_042), origin: .creationTime))

        let undated = try Self.write(.m4a, metadata: [:])
        defer { try? FileManager.default.removeItem(at: undated) }
        #expect(try AudioDecoder(url: undated).recordingStart == nil)
        // A muxer that left the time at 0 says 1970: not a time a night was recorded.
        let zero = try Self.write(.m4a, metadata: ["creation_time": "1970-01-01T00:00:00.000000Z"])
        defer { try? FileManager.default.removeItem(at: zero) }
        #expect(try AudioDecoder(url: zero).recordingStart == nil)
    }

    /// A plain WAV of `channels` channels (no channel mask), `signal` in channel `index` only.
    /// `dithered`: the other channels hold ±1 LSB of dither, not digital silence.
    private static func multichannelWAV(channels: Int, index: Int, signal: [Float], dithered: Bool = false) throws -> URL {
        var rng = SeededRandom(seed: 3)
        var file = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { file.append(contentsOf: $0) } }
        let bytes = signal.count * channels * 2
        file.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + bytes))
        file.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16))
        append(UInt16(1)); append(UInt16(channels)); append(UInt32(16_000)); append(UInt32(32_000 * channels))
        append(UInt16(2 * channels)); append(UInt16(16))
        file.append(contentsOf: Array("data".utf8)); append(UInt32(bytes))
        for value in signal {
            for channel in 0..<channels {
                append(channel == index ? Int16(value * 32_000) : dithered ? Int16(rng.nextUniform(-1.5...1.5).rounded()) : Int16(0))
            }
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-\(channels)ch-\(UUID().uuidString).wav")
        try file.write(to: url)
        return url
    }

    /// Every channel is heard, at its level: FFmpeg's mono mix left out the low-frequency one
    /// (sound in channel 4 of 6 was a "silent" night) and those past the eighth of 16, had no mix
    /// for 10 channels (refused as too many), and averaged one microphone with its dead
    /// neighbours (16 dB and more low). Channels of digital silence are left out of the mean, and
    /// after the first 2 s channels more than 20 dB under the loudest: a mono sound in the centre
    /// of a 5.1 mix, with a dither's murmur in the other five, read 14 dB low.
    @Test(arguments: [(6, 3, false), (10, 9, false), (16, 12, false), (24, 20, false), (6, 2, true), (16, 0, true)])
    func everyChannelIsHeardAtItsLevel(channels: Int, index: Int, dithered: Bool) throws {
        let tone = (0..<64_000).map { Float(0.5 * sin(2 * Double.pi * 220 * Double($0) / 16_000)) }
        let one = try Self.multichannelWAV(channels: channels, index: index, signal: tone, dithered: dithered)
        defer { try? FileManager.default.removeItem(at: one) }
        let heard = try TestSignals.readAll(try AudioDecoder(url: one))
        // Past the first 2 s, where murmuring channels are still averaged in.
        let peak = heard.dropFirst(dithered ? 34_000 : 1_000).dropLast(1_000).map(abs).max() ?? 0
        #expect(abs(peak - 0.5) < 0.03, "\(channels) channels, sound in channel \(index + 1)\(dithered ? ", dithered" : ""): peak \(peak)")
    }

    /// More channels than FFmpeg's resampler takes are said as such, not as a damaged file.
    @Test func tooManyChannelsAreSaidSo() throws {
        let tone = (0..<1_600).map { Float(0.5 * sin(2 * Double.pi * 220 * Double($0) / 16_000)) }
        let many = try Self.multichannelWAV(channels: 65, index: 0, signal: tone)
        defer { try? FileManager.default.removeItem(at: many) }
        let error = #expect(throws: SomniError.self) { try AudioDecoder(url: many) }
        #expect(error?.code == .unsupported && error?.message.contains("65 channels") == true, "\(String(describing: error))")
    }

    /// A broadcast WAV's origination date and time (its `bext` chunk, as field recorders write
    /// it) date the night, in local time: FFmpeg gives them as `date` and a `creation_time`
    /// holding a time of day alone, and the night was undated.
    @Test func aBroadcastWAVsOriginationDatesIt() throws {
        var file = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { file.append(contentsOf: $0) } }
        func text(_ s: String, _ width: Int) { file.append(contentsOf: Array(s.utf8) + [UInt8](repeating: 0, count: width - s.utf8.count)) }
        let samples = (0..<16_000).map { Int16(8_000 * sin(2 * Double.pi * 220 * Double($0) / 16_000)) }
        let bextBytes = 602
        file.append(contentsOf: Array("RIFF".utf8)); append(UInt32(4 + 24 + 8 + bextBytes + 8 + 2 * samples.count))
        file.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16))
        append(UInt16(1)); append(UInt16(1)); append(UInt32(16_000)); append(UInt32(32_000)); append(UInt16(2)); append(UInt16(16))
        file.append(contentsOf: Array("bext".utf8)); append(UInt32(bextBytes))
        text("night", 256); text("recorder", 32); text("", 32)
        text("2026:11:25", 10); text("22.30.00", 8)  // separators the standard allows besides - and :
        file.append(contentsOf: [UInt8](repeating: 0, count: bextBytes - 256 - 32 - 32 - 18))
        file.append(contentsOf: Array("data".utf8)); append(UInt32(2 * samples.count))
        for sample in samples { append(sample) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-bext-\(UUID().uuidString).wav")
        try file.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try AudioDecoder(url: url).recordingStart
                == RecordingStart.parse("2026-11-25 22:30:00").map { RecordingStart(date: $0, origin: .creationTime) })
    }

    /// An MP3's ID3 recording time (TDRC) and an Ogg or FLAC DATE comment, in local time; a
    /// date without a time of day gives no bedtime.
    @Test(arguments: [EncodedAudioWriter.Format.mp3, .ogg, .flac])
    func aRecordingDateWithATimeIsRead(format: EncodedAudioWriter.Format) throws {
        let dated = try Self.write(format, metadata: ["date": "2026-11-28T23:14:02"])
        defer { try? FileManager.default.removeItem(at: dated) }
        #expect(try AudioDecoder(url: dated).recordingStart == RecordingStart.parse("2026-11-28 23:14:02").map { RecordingStart(date: $0, origin: .dateTag) })
        for dayOnly in ["2026", "2026-11-28"] {
            let url = try Self.write(format, metadata: ["date": dayOnly])
            defer { try? FileManager.default.removeItem(at: url) }
            #expect(try AudioDecoder(url: url).recordingStart == nil, "\(dayOnly)")
        }
    }
}
