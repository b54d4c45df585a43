import Foundation
import SomniAudio
import SomniCore

/// Signals, measurements and scratch files shared by the audio tests.
enum TestSignals {
    /// 0.5 × sin(1 kHz) + 0.2 × sin(300 Hz), the same in every channel, interleaved.
    static func tones(seconds: Double, sampleRate: Int, channels: Int = 1) -> [Float] {
        let frames = Int(seconds * Double(sampleRate))
        var samples = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            let t = Double(frame) / Double(sampleRate)
            let value = Float(0.5 * sin(2 * .pi * 1000 * t) + 0.2 * sin(2 * .pi * 300 * t))
            for channel in 0..<channels { samples[frame * channels + channel] = value }
        }
        return samples
    }

    /// RMS of the tones above: sqrt(0.5²/2 + 0.2²/2).
    static let tonesRMS = Float((0.125 + 0.02).squareRoot())

    /// Power at one frequency (Goertzel), normalised by length.
    static func power(at frequency: Double, in samples: ArraySlice<Float>, sampleRate: Int) -> Double {
        let coefficient = 2 * cos(2 * .pi * frequency / Double(sampleRate))
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return power / Double(samples.count * samples.count)
    }

    static func rms(_ samples: ArraySlice<Float>) -> Float {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0) { $0 + $1 * $1 } / Float(samples.count)).squareRoot()
    }

    static func decibels(_ ratio: Float) -> Float { 20 * log10(ratio) }

    /// Everything a source delivers, read in blocks of `blockSize` through one reused buffer.
    static func readAll(_ source: some AudioSource, blockSize: Int = 4000) throws -> [Float] {
        var all: [Float] = []
        var block = [Float](repeating: 0, count: blockSize)
        while true {
            let count = try block.withUnsafeMutableBufferPointer { try source.read(into: $0) }
            if count == 0 { return all }
            all.append(contentsOf: block[0..<count])
        }
    }

    /// Encodes `samples` (interleaved) to a file in `folder`.
    @discardableResult
    static func encode(_ samples: [Float], as format: EncodedAudioWriter.Format, sampleRate: Int, channels: Int = 1,
                       in folder: URL, name: String = "signal") throws -> URL {
        let url = folder.appendingPathComponent("\(name).\(format.fileExtension)")
        let writer = try EncodedAudioWriter(url: url, format: format, sampleRate: sampleRate, channels: channels)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        return url
    }

    /// An MP4's top-level boxes (type, byte range), to move, drop or cut its index.
    static func mp4Boxes(_ bytes: Data) -> [(type: String, range: Range<Int>)] {
        var boxes: [(type: String, range: Range<Int>)] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            boxes.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), offset..<offset + size))
            offset += max(size, 8)
        }
        return boxes
    }

    /// Deterministic bytes (xorshift), so "random" files are the same on every run.
    static func noiseBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[index] = UInt8(truncatingIfNeeded: state)
        }
        return Data(bytes)
    }
}

/// A fresh folder under the system temporary folder, removed when the value goes away.
final class ScratchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("somni-audio-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String, contents: Data) throws -> URL {
        let file = url.appendingPathComponent(name)
        try contents.write(to: file)
        return file
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
