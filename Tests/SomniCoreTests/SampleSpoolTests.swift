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
        // Rounded to 1/32768 steps (the decoder's); NaN is silence, overs and infinities clip.
        let expected: [Float] = [0, 16384, -16384, 32767, -32768, 32767, -32768, 0, 32767, -32768, 8192, -33]
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
