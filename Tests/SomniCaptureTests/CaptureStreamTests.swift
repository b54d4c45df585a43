import Foundation
import Testing
@testable import SomniCapture
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
}
