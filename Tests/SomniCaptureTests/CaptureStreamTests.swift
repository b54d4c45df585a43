import Foundation
import Testing
@testable import SomniCapture
import SomniAudio
import SomniCore

@Suite struct CaptureStreamTests {
    @Test func aFortyEightKilohertzDeviceComesOutAtSixteenWithTheSameSignal() throws {
        // 3 s of a 440 Hz tone at 16 kHz, played as a 48 kHz device and converted back.
        let n = 3 * analysisSampleRate
        let tone = (0..<n).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 16_000)) }
        let stream = try CaptureStream(device: SourceAsDevice(BufferAudioSource(tone)))
        var out: [Float] = []
        var buffer = [Float](repeating: 0, count: 1_000)   // not a multiple of the 1600-sample block
        while true {
            let got = try buffer.withUnsafeMutableBufferPointer { try stream.read(into: $0) }
            if got == 0 { break }
            out += buffer[0..<got]
        }
        #expect(abs(out.count - n) <= 2)
        // Same tone after the filter's few-sample delay: correlate with the input at the best lag.
        let best = (0..<40).map { lag -> Double in
            var dot = 0.0
            for i in 2_000..<40_000 { dot += Double(out[i + lag] * tone[i]) }
            return dot / 38_000
        }.max() ?? 0
        #expect(abs(best - 0.125) < 0.01)   // mean of (0.5 sin)² = 0.125
    }

    /// A file played as the microphone (`somni record --backend file`) says what its decoder
    /// noticed: here a recording whose channels are in opposite phase, heard, not cancelled.
    @Test func aFilePlayedAsTheMicrophoneReportsItsDecodersWarnings() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-capture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let n = 4 * analysisSampleRate
        var interleaved = [Float](repeating: 0, count: 2 * n)
        for i in 0..<n {
            let x = Float(0.5 * sin(2 * Double.pi * 440 * Double(i) / 16_000))
            interleaved[2 * i] = x
            interleaved[2 * i + 1] = -x
        }
        let url = folder.appendingPathComponent("inverted.flac")
        let writer = try EncodedAudioWriter(url: url, format: .flac, sampleRate: analysisSampleRate, channels: 2)
        try interleaved.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()

        let stream = try CaptureStream(device: SourceAsDevice(AudioDecoder(url: url)))
        var heard: [Float] = []
        var block = [Float](repeating: 0, count: 4_000)
        while true {
            let count = try block.withUnsafeMutableBufferPointer { try stream.read(into: $0) }
            if count == 0 { break }
            heard += block[0..<count]
        }
        #expect(stream.warnings == [StereoDownmix.oppositePhaseWarning])
        // Past the two seconds the mix waits for: the tone at its own level, not cancelled.
        let late = heard[(5 * analysisSampleRate / 2)..<(7 * analysisSampleRate / 2)]
        let rms = (late.reduce(0) { $0 + $1 * $1 } / Float(late.count)).squareRoot()
        #expect(abs(rms - Float(0.5 / 2.0.squareRoot())) < 0.02, "RMS \(rms)")
    }
}
