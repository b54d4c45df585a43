import Foundation

/// Event clips as 16-bit PCM WAV, which every browser plays: for an app that uses the core
/// without FFmpeg. About 32 KB a second of clip, eight times the command line's MP3 clips
/// (SomniAudio's `MP3ClipEncoder`), and nothing to encode.
public struct WAVClipEncoder: ClipEncoder {
    public init() {}

    public var fileExtension: String { "wav" }

    public func writeClip(_ samples: UnsafeBufferPointer<Float>, sampleRate: Int, to url: URL) throws {
        let writer = try WAVWriter(url: url, sampleRate: sampleRate)
        try writer.write(samples)
        try writer.finish()
    }
}
