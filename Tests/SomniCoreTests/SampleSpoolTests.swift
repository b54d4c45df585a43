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
        // Truncated toward zero at 1/32767 steps; NaN is silence, overs and infinities clip.
        let expected: [Float] = [0, 16383, -16383, 32767, -32767, 32767, -32767, 0, 32767, -32767, 8191, -32]
            .map { $0 / 32767 }
        for k in 0..<3 * input.count {
            #expect(abs(back[k] - expected[k % input.count]) < 1e-7, "sample \(k): \(back[k])")
        }
        #expect(back.suffix(4) == [0, 0, 0, 0])   // past the end reads as silence

        var middle = [Float](repeating: 0, count: 5)
        try middle.withUnsafeMutableBufferPointer { try samples.read(from: input.count + 4, into: $0) }
        #expect(zip(middle, expected[4..<9]).allSatisfy { abs($0 - $1) < 1e-7 })
        withExtendedLifetime(spool) {}
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
