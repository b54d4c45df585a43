import Foundation
@testable import SomniAudio
import SomniCore
import Testing

/// A plain M4A read through its own index (`IndexedM4A`) gives exactly what FFmpeg's demuxer
/// gives: the same frames to the same decoder, the encoder's priming skipped the same way.
@Suite struct IndexedM4ATests {
    /// A tone whose level steps each half second, so that a frame out of place would show.
    private func steppedTone(seconds: Double, sampleRate: Int, channels: Int) -> [Float] {
        var random = SeededRandom(seed: 5)
        let frames = Int(seconds * Double(sampleRate))
        let levels = (0..<Int(seconds * 2) + 1).map { _ in Float(random.uniform(0.02...0.5)) }
        var samples = [Float](repeating: 0, count: frames * channels)
        for index in 0..<frames {
            let value = levels[index * 2 / sampleRate] * Float(sin(2 * .pi * 330 * Double(index) / Double(sampleRate)))
            for channel in 0..<channels { samples[index * channels + channel] = channel == 0 ? value : 0.5 * value }
        }
        return samples
    }

    private func decoded(_ url: URL, itself: Bool) throws -> (samples: [Float], decoder: AudioDecoder) {
        let decoder = try AudioDecoder(url: url, sampleRate: analysisSampleRate, like: nil, readsMP4IndexItself: itself)
        return (try TestSignals.readAll(decoder), decoder)
    }

    /// The file with its index moved after the audio, as phones write it: the chunk offsets
    /// (`stco`) move back by the index's size.
    private func indexLast(_ bytes: Data) throws -> Data {
        let boxes = Dictionary(TestSignals.mp4Boxes(bytes).map { ($0.type, $0.range) }) { first, _ in first }
        let ftyp = try #require(boxes["ftyp"]), moov = try #require(boxes["moov"]), mdat = try #require(boxes["mdat"])
        #expect(moov.upperBound <= mdat.lowerBound, "the writer puts the index first")
        var index = [UInt8](bytes[moov])
        let stco = try #require((0..<index.count - 4).first { index[$0..<$0 + 4] == [0x73, 0x74, 0x63, 0x6F] })
        let count = index[stco + 8..<stco + 12].reduce(0) { $0 << 8 | Int($1) }
        for entry in 0..<count {
            let at = stco + 12 + 4 * entry
            let moved = UInt32(index[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } - moov.count)
            index.replaceSubrange(at..<at + 4, with: withUnsafeBytes(of: moved.bigEndian) { Array($0) })
        }
        let between = bytes[moov.upperBound..<mdat.lowerBound]  // a free box, if any
        return bytes[ftyp] + between + bytes[mdat] + Data(index)
    }

    /// A whole M4A with a box Somni does not know between its audio and its index (`pdin`,
    /// `sidx`) reads whole: the audio box was taken to run to the end of the file, no index was
    /// found, and the file was refused as cut off before its index.
    @Test func aBoxUnknownBetweenTheAudioAndTheIndexIsNoCut() throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(steppedTone(seconds: 6, sampleRate: 48_000, channels: 1), as: .m4a,
                                         sampleRate: 48_000, channels: 1, in: folder.url)
        let phone = try indexLast(try Data(contentsOf: url))
        let mdat = try #require(TestSignals.mp4Boxes(phone).first { $0.type == "mdat" }).range
        var withBox = phone
        withBox.insert(contentsOf: [0, 0, 0, 20] + Array("pdin".utf8) + [UInt8](repeating: 0, count: 12), at: mdat.upperBound)
        let file = try folder.file("pdin.m4a", contents: withBox)
        let read = try decoded(file, itself: true), reference = try decoded(url, itself: false)
        #expect(read.samples.count == reference.samples.count && read.decoder.warnings.isEmpty, "\(read.decoder.warnings)")
    }

    @Test(arguments: [(48_000, 1), (44_100, 2), (16_000, 1), (8_000, 1)])
    func framesReadThroughTheIndexDecodeAsFFmpegsDemuxerGivesThem(rate: Int, channels: Int) throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(steppedTone(seconds: 12.3, sampleRate: rate, channels: channels), as: .m4a,
                                         sampleRate: rate, channels: channels, in: folder.url)
        let phone = try folder.file("index-last.m4a", contents: indexLast(try Data(contentsOf: url)))
        let reference = try decoded(url, itself: false)
        for file in [url, phone] {
            #expect(IndexedM4A.open(path: file.path) != nil, "\(file.lastPathComponent) is a plain M4A")
            let own = try decoded(file, itself: true)
            #expect(own.samples.count == reference.samples.count, "\(file.lastPathComponent): \(own.samples.count) against \(reference.samples.count)")
            let worst = zip(own.samples, reference.samples).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst == 0, "\(file.lastPathComponent): samples differ by up to \(worst)")
            #expect(own.decoder.warnings.isEmpty, "\(own.decoder.warnings)")
            #expect(own.decoder.recordedSampleRate == rate)
            #expect(abs((own.decoder.expectedDuration ?? 0) - (reference.decoder.expectedDuration ?? -1)) < 0.05)
        }
    }

    /// A file cut in its audio reads up to the cut, says so, as through FFmpeg; a creation time
    /// reads the same; what is not an M4A is left to FFmpeg.
    @Test func aCutFileItsDateAndWhatIsLeftToFFmpeg() throws {
        let folder = try ScratchFolder()
        let url = folder.url.appendingPathComponent("dated.m4a")
        let writer = try EncodedAudioWriter(url: url, format: .m4a, sampleRate: 48_000,
                                            metadata: ["creation_time": "2026-11-29T22:40:00.000000Z"])
        let tone = steppedTone(seconds: 20, sampleRate: 48_000, channels: 1)
        try tone.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        let own = try decoded(url, itself: true), reference = try decoded(url, itself: false)
        #expect(own.decoder.recordingStart == reference.decoder.recordingStart)
        #expect(own.decoder.recordingStart?.date == ISO8601DateFormatter().date(from: "2026-11-29T22:40:00Z"))

        let bytes = try Data(contentsOf: url)
        let cut = try folder.file("cut.m4a", contents: bytes.prefix(bytes.count * 2 / 3))
        let ownCut = try decoded(cut, itself: true), referenceCut = try decoded(cut, itself: false)
        #expect(abs(ownCut.samples.count - referenceCut.samples.count) <= 1_024, "\(ownCut.samples.count) against \(referenceCut.samples.count)")
        #expect(ownCut.decoder.warnings.contains { $0.hasPrefix("the file ends early or is damaged") }, "\(ownCut.decoder.warnings)")
        #expect(zip(ownCut.samples, referenceCut.samples).allSatisfy { $0 == $1 })

        let mp3 = try TestSignals.encode(tone, as: .mp3, sampleRate: 48_000, in: folder.url)
        #expect(IndexedM4A.open(path: mp3.path) == nil)
    }

    /// A damaged index naming a chunk near the top of the 64-bit range, or a frame longer than
    /// the file, is damage read up to: before, the offset's sum overflowed and trapped.
    @Test func anIndexPointingPastEveryByteIsDamageNotACrash() throws {
        let folder = try ScratchFolder()
        let url = try TestSignals.encode(steppedTone(seconds: 12.3, sampleRate: 48_000, channels: 1), as: .m4a,
                                         sampleRate: 48_000, channels: 1, in: folder.url)
        let bytes = [UInt8](try Data(contentsOf: url))
        func at(_ type: String) throws -> Int {
            try #require((0..<bytes.count - 4).first { bytes[$0..<$0 + 4].elementsEqual(type.utf8) })
        }
        func number(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }

        // stco (one chunk, 20 bytes) written as a co64 of 24 whose one offset is 0xFF…FFF0, which
        // any frame of 16 bytes or more overflowed; the boxes holding it grow by the 4 bytes.
        var farChunk = bytes
        let stco = try at("stco")
        try #require(number(stco + 8) == 1 && number(stco - 4) == 20, "one chunk")
        farChunk.replaceSubrange(stco - 4..<stco + 16, with: [0, 0, 0, 24] + Array("co64".utf8) + [0, 0, 0, 0, 0, 0, 0, 1]
                                 + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0])
        for parent in ["moov", "trak", "mdia", "minf", "stbl"] {
            let box = try at(parent) - 4
            try #require(box < stco)
            farChunk.replaceSubrange(box..<box + 4, with: withUnsafeBytes(of: UInt32(number(box) + 4).bigEndian) { Array($0) })
        }
        // The first frame's size as large as an unsigned 32-bit size goes.
        var longFrame = bytes
        let stsz = try at("stsz")
        try #require(number(stsz + 8) == 0, "each frame has its own size")
        longFrame.replaceSubrange(stsz + 16..<stsz + 20, with: [0xFF, 0xFF, 0xFF, 0xFF])

        for (name, damaged) in [("far-chunk.m4a", farChunk), ("long-frame.m4a", longFrame)] {
            let file = try folder.file(name, contents: Data(damaged))
            #expect(IndexedM4A.open(path: file.path) != nil, "\(name) is still read through its own index")
            do {
                let own = try decoded(file, itself: true)
                #expect(own.samples.isEmpty && own.decoder.warnings.contains { $0.hasPrefix("the file ends early or is damaged") },
                        "\(name): \(own.samples.count) samples, \(own.decoder.warnings)")
            } catch let error as SomniError {
                #expect(error.message.contains("damaged") || error.message.contains("no audio"), "\(name): \(error.message)")
            }
        }
    }

    /// A date tag (`©day`) beside a creation time changes nothing, and such a file is read here;
    /// one without a creation time is dated by its tag, which FFmpeg reads: left to it.
    @Test func aDateTagIsFFmpegsOnlyWhenNoCreationTimeIsThere() throws {
        let folder = try ScratchFolder()
        let tone = steppedTone(seconds: 3, sampleRate: 48_000, channels: 1)
        func written(_ name: String, _ metadata: [String: String]) throws -> URL {
            let url = folder.url.appendingPathComponent(name)
            let writer = try EncodedAudioWriter(url: url, format: .m4a, sampleRate: 48_000, metadata: metadata)
            try tone.withUnsafeBufferPointer { try writer.write($0) }
            try writer.finish()
            return url
        }
        let both = try written("both.m4a", ["creation_time": "2026-11-29T22:40:00.000000Z", "date": "2026-11-28 23:14"])
        #expect(IndexedM4A.open(path: both.path) != nil)
        #expect(try decoded(both, itself: true).decoder.recordingStart == decoded(both, itself: false).decoder.recordingStart)
        let tagOnly = try written("tag.m4a", ["date": "2026-11-28 23:14"])
        #expect(IndexedM4A.open(path: tagOnly.path) == nil)
        #expect(try decoded(tagOnly, itself: true).decoder.recordingStart?.origin == .dateTag)
    }
}
