import Foundation

/// The analysis rate: everything in the core runs on 16 kHz mono Float samples.
public let analysisSampleRate = 16_000

/// A recording made below the analysis rate holds nothing above half its own rate (4 kHz for an
/// 8 kHz telephone recording), where much of what tells talk and coughs apart lies. A rate of 0
/// or less says nothing, as nil does.
public func isNarrowBand(recordedAt rate: Int?) -> Bool {
    rate.map { $0 > 0 && $0 < analysisSampleRate } ?? false
}

/// What a recording made below the analysis rate costs: talk and coughs lose most of what tells
/// them apart above the 4 kHz where a voice recorder or telephone cuts them off. Said of a file
/// by the analysis and of a microphone by the recorder (its night is resampled before the
/// morning analysis, which then cannot tell).
public func narrowBandWarning(recordedAt rate: Int) -> String {
    let cutoff = String(format: "%.1f", Double(rate) / 2000)
    return "the recording was made at \(rate) Hz and holds no sound above \(cutoff) kHz: sleep-talk and coughs "
        + "are found less reliably than in a recording made at \(analysisSampleRate) Hz or more"
}

/// A pull-based stream of 16 kHz mono Float samples in [-1, 1].
///
/// File decoders (SomniAudio), live capture and generated nights all look the same to the core.
/// Implementations stream: they never hold the whole recording. `NightAnalyzer` calls `read`
/// on a reading thread of its own, one call at a time: a source must not be tied to the main
/// actor or to the thread that made it.
public protocol AudioSource: AnyObject {
    /// Fills `buffer` from the start and returns how many samples were written; 0 means the end.
    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int
    /// Total duration in seconds when the container says so (for progress); nil when unknown.
    var expectedDuration: Double? { get }
    /// Problems met while reading that did not stop it (a file cut off at the end, say).
    var warnings: [String] { get }
    /// The rate the recording was made at, before resampling to the analysis rate, when known:
    /// a recording made below it holds nothing above half its rate.
    var recordedSampleRate: Int? { get }
    /// Of a recording in parts at different rates, the parts `recordedSampleRate` is of (the
    /// lowest), named for the warning; nil otherwise.
    var partsAtTheRecordedRate: [String]? { get }
    /// Everything `read` delivers, readable again at any position without keeping a copy, when
    /// the source can give that cheaply (a 16 kHz mono PCM file); nil when it must be spooled.
    func rereadableSamples() -> PCM16Samples?
    /// Stretches `read` filled with silence because there was no recording (between the files
    /// of a night recorded in parts), as far as read so far.
    var gaps: [RecordingGap] { get }
    /// What names the recording by its content (`RecordingFingerprint`), so the store knows it
    /// again under another name; nil for a source that is no file (a microphone, a buffer).
    var fingerprint: String? { get }
}

extension AudioSource {
    /// `read(into:)` held to its contract: a count below 0 or past the buffer (an app's source
    /// that miscounts) is an error, where it was taken for the end of the night without a word,
    /// or for samples that were never written.
    func checkedRead(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        let count = try read(into: buffer)
        guard count >= 0, count <= buffer.count else {
            throw SomniError(.internalError, "the audio source \(type(of: self)) said it wrote \(count) samples into a buffer "
                             + "of \(buffer.count): read(into:) returns how many it wrote, 0 at the end")
        }
        return count
    }

    public func rereadableSamples() -> PCM16Samples? { nil }
    public var recordedSampleRate: Int? { nil }
    public var partsAtTheRecordedRate: [String]? { nil }
    public var gaps: [RecordingGap] { [] }
    public var fingerprint: String? { nil }
}

/// A recording whose gaps are known from elsewhere: a night-mode master, where the recorder's
/// journal lists the time the microphone was away, filled with silence. The analysis then
/// weighs and rates the night over the time recorded, as it does a night joined from parts.
public final class SourceWithKnownGaps<Base: AudioSource>: AudioSource {
    private let base: Base
    public let gaps: [RecordingGap]

    public init(_ base: Base, gaps: [RecordingGap]) {
        self.base = base; self.gaps = gaps
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int { try base.read(into: buffer) }
    public var expectedDuration: Double? { base.expectedDuration }
    public var warnings: [String] { base.warnings }
    public var recordedSampleRate: Int? { base.recordedSampleRate }
    public var partsAtTheRecordedRate: [String]? { base.partsAtTheRecordedRate }
    public func rereadableSamples() -> PCM16Samples? { base.rereadableSamples() }
    public var fingerprint: String? { base.fingerprint }
}

/// Writes a short clip (16 kHz mono) to a compressed file a browser can play.
public protocol ClipEncoder: Sendable {
    /// File extension without the dot, e.g. "m4a".
    var fileExtension: String { get }
    func writeClip(_ samples: UnsafeBufferPointer<Float>, sampleRate: Int, to url: URL) throws
}

extension ClipEncoder {
    public func writeClip(_ samples: [Float], sampleRate: Int, to url: URL) throws {
        try samples.withUnsafeBufferPointer { try writeClip($0, sampleRate: sampleRate, to: url) }
    }
}

/// An in-memory source, for tests and generated audio.
public final class BufferAudioSource: AudioSource {
    private let samples: [Float]
    private var position = 0
    public let warnings: [String] = []
    public var expectedDuration: Double? { Double(samples.count) / Double(analysisSampleRate) }

    public init(_ samples: [Float]) { self.samples = samples }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        let n = min(buffer.count, samples.count - position)
        guard n > 0 else { return 0 }
        samples.withUnsafeBufferPointer { src in
            _ = UnsafeMutableBufferPointer(rebasing: buffer[0..<n])
                .initialize(from: src[position..<position + n])
        }
        position += n
        return n
    }
}

/// A streaming destination for mono Float samples: a WAV writer in the core, compressed
/// encoders in SomniAudio. `finish()` must be called to make the file complete.
public protocol AudioSink: AnyObject {
    func write(_ samples: UnsafeBufferPointer<Float>) throws
    func finish() throws
}

/// How a reader's warning of a file cut short begins: a recorder's master cut short by a full
/// disk or a crash is said in the night's own words instead (the user gave no file).
public let endsEarlyWarningPrefix = "the file ends early or is damaged"
