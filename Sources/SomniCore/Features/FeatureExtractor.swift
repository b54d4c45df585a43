import Foundation

/// Per-frame features of a recording: 50 ms frames, 20 per second.
public struct FrameTrack: Sendable, Equatable {
    /// Unfiltered RMS about the frame's own mean. A DC offset (a cheap USB microphone or sound
    /// card may add one) is not sound, and counted it would raise every level and the gate's
    /// floor; swings slower than about 10 Hz, which no one hears, go with it.
    public var raw: [Float] = []
    /// RMS in the snore band, `lowBand`.
    public var low: [Float] = []
    /// RMS in the voice band, `midBand`.
    public var mid: [Float] = []
    /// Crossings of the previous frame's mean (of zero, when the audio has no DC offset) ÷ frame
    /// length (a 1 kHz sine gives 0.125 at 16 kHz); empty when the extractor was told not to keep them.
    public var zcr: [Float] = []

    /// The snore band and the voice band, in Hz (MoyiSnore's).
    public static let lowBand: ClosedRange<Double> = 40...400
    public static let midBand: ClosedRange<Double> = 250...3000

    public static let rate = 20.0
    /// Seconds per frame.
    public static let duration = 1 / rate

    public init() {}
    public init(raw: [Float], low: [Float], mid: [Float], zcr: [Float]) {
        self.raw = raw; self.low = low; self.mid = mid; self.zcr = zcr
    }

    public var count: Int { raw.count }
}

/// The overnight loop: turns 16 kHz samples into frame features and a 10 Hz loudness envelope.
///
/// Each band is a 4th-order Butterworth high-pass at the lower edge cascaded with a 4th-order
/// Butterworth low-pass at the upper edge (`Biquad.butterworthBand`): four biquads per band,
/// eight per sample, run pipelined in `PipelinedBands`; samples arrive in blocks of any size and a
/// partial frame is carried over to the next call. Nothing is allocated per sample or per frame
/// beyond the amortised growth of the output arrays.
public final class FeatureExtractor {
    /// Samples per 50 ms frame.
    public let frameLength: Int
    public let sampleRate: Int
    /// The frames so far. Reading this while still processing hands out a copy-on-write value:
    /// the next frame then copies the arrays once, so read it at the end.
    public private(set) var frames = FrameTrack()
    /// 10 Hz loudness: the larger raw RMS of each two frames, so short peaks survive.
    public private(set) var envelope: [Float] = []
    public static let envelopeRate = 10.0

    private var bands: PipelinedBands
    /// Band outputs still to come out of the pipeline that belong to the previous frame (already
    /// counted there by `pendingEnergy`), or to no sample at all at the start.
    private var bandOutputsToSkip = PipelinedBands.latency
    private var filled = 0
    /// Samples are taken less the previous frame's mean, so a DC offset neither cancels the
    /// frame's variance away in Float nor stops the zero crossings.
    private var previousMean: Float = 0
    private var rawSum: Float = 0, centredSum: Float = 0
    private var lowSum: Float = 0, midSum: Float = 0
    private var crossings = 0
    /// 1 when the previous sample was below zero.
    private var previousNegative: UInt32 = 0
    private var envelopeTaken = 0
    /// False leaves `frames.zcr` empty: the morning pass reads the bands, not the crossings,
    /// and 8 hours of them are 2.3 MB while FFmpeg may still hold a compressed night's index.
    public let keepsZeroCrossingRate: Bool
    /// Samples that were not numbers (NaN, or infinite), read as silence. One such sample in a
    /// float WAV stayed in the band filters' state for good: every level after it was NaN, and
    /// the rest of the night lost its envelope, its gate and its events without a word.
    public private(set) var notNumbers = 0

    /// What a night's (or a classification's) warning says of `count` samples that were not
    /// numbers: one wording wherever they are counted.
    public static func notNumbersWarning(_ count: Int) -> String {
        "\(count) sample\(count == 1 ? " was" : "s were") not a number (NaN or infinite) and "
            + "\(count == 1 ? "was" : "were") read as silence: the recording may be damaged"
    }

    public init(sampleRate: Int = analysisSampleRate, keepsZeroCrossingRate: Bool = true) {
        self.keepsZeroCrossingRate = keepsZeroCrossingRate
        self.sampleRate = max(sampleRate, 20)
        frameLength = self.sampleRate / 20
        let rate = Double(self.sampleRate)
        bands = PipelinedBands(low: Biquad.butterworthBand(FrameTrack.lowBand, sampleRate: rate),
                               mid: Biquad.butterworthBand(FrameTrack.midBand, sampleRate: rate))
    }

    /// Makes room for the frames and envelope of `seconds` of audio at once. Growing by doubling
    /// would hold up to twice a night's frames (7 MB more for 8 hours), and a copy of them while
    /// each doubling moves them.
    public func reserveCapacity(seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        let count = Int(min(seconds, 24 * 3600) * Double(sampleRate) / Double(frameLength)) + 2
        frames.raw.reserveCapacity(count)
        frames.low.reserveCapacity(count)
        frames.mid.reserveCapacity(count)
        if keepsZeroCrossingRate { frames.zcr.reserveCapacity(count) }
        envelope.reserveCapacity(count / 2 + 1)
    }

    /// Feeds samples; blocks of any size.
    public func process(_ samples: UnsafeBufferPointer<Float>) {
        var offset = 0
        while offset < samples.count {
            let take = min(frameLength - filled, samples.count - offset)
            accumulate(UnsafeBufferPointer(rebasing: samples[offset..<offset + take]))
            offset += take
            filled += take
            if filled == frameLength { closeFrame() }
        }
    }

    /// Closes a trailing partial frame (and a pending envelope value) at the end of a recording.
    /// Call once, after the last `process`.
    public func finish() {
        if filled > 0 { closeFrame() }
        if frames.count % 2 == 1, let last = frames.raw.last { envelope.append(last) }
    }

    /// Envelope values added since the previous call (for flushing envelope.bin every 30 s).
    public func takeNewEnvelopeValues() -> [Float] {
        let new = Array(envelope[envelopeTaken...])
        envelopeTaken = envelope.count
        return new
    }

    /// Forgets the frames whose envelope values `takeNewEnvelopeValues` has handed out, and those
    /// values: a recorder that takes them every 30 s keeps its memory flat all night. A partial
    /// frame, an odd frame awaiting its pair and the filters carry on, so blocks of any size, a
    /// gap's silence included, keep their envelope exactly as without forgetting.
    public func forgetTakenFrames() {
        let pairs = envelopeTaken
        guard pairs > 0 else { return }
        // After `finish` the last value may be a lone frame's, with no pair to drop.
        let taken = min(2 * pairs, frames.count)
        frames.raw.removeFirst(taken)
        frames.low.removeFirst(taken)
        frames.mid.removeFirst(taken)
        if keepsZeroCrossingRate { frames.zcr.removeFirst(taken) }
        envelope.removeFirst(pairs)
        envelopeTaken = 0
    }

    private func accumulate(_ block: UnsafeBufferPointer<Float>) {
        // Checking every sample cost a third of this loop's time; a block whose sums come out
        // beyond what samples within full scale can give is taken again, each sample checked.
        if !accumulate(block, checkingEachSample: false) { _ = accumulate(block, checkingEachSample: true) }
    }

    /// Adds `block` to the frame, or, unchecked, returns false and changes nothing when its
    /// sums show a sample that was not a number or far past full scale.
    @inline(__always)
    private func accumulate(_ block: UnsafeBufferPointer<Float>, checkingEachSample: Bool) -> Bool {
        var filters = bands
        var raw = rawSum, sum = centredSum, low = lowSum, mid = midSum, count = crossings, wasNegative = previousNegative
        var unreadable = 0
        let reference = previousMean
        // The first outputs after a frame closes were already counted by `pendingEnergy`.
        let skipped = min(bandOutputsToSkip, block.count)
        for i in block.indices {
            var x = block[i]
            if checkingEachSample, !(x.magnitude <= 1) {
                // Past full scale (a float recording): clipped, as a 16-bit one would hold it.
                if x.isFinite { x = x > 0 ? 1 : -1 } else { x = 0; unreadable += 1 }
            }
            let (l, m) = filters.step(x)
            let counted: Float = i < skipped ? 0 : 1
            low += counted * (l * l)
            mid += counted * (m * m)
            let centred = x - reference
            sum += centred
            raw += centred * centred
            // Branch-free: on noisy audio a branch here mispredicts about every other sample.
            let negative: UInt32 = centred < 0 ? 1 : 0
            count &+= Int(truncatingIfNeeded: negative ^ wasNegative)
            wasNegative = negative
        }
        // Samples within ±1 about a mean within ±1 add at most 4 each; NaN fails every test.
        if !checkingEachSample, !(raw - rawSum <= 4 * Float(block.count) && low.isFinite && mid.isFinite) { return false }
        bands = filters
        bandOutputsToSkip -= skipped
        rawSum = raw; centredSum = sum; lowSum = low; midSum = mid; crossings = count; previousNegative = wasNegative
        notNumbers += unreadable
        return true
    }

    private func closeFrame() {
        let n = Float(filled)
        let pending = bands.pendingEnergy(skipping: bandOutputsToSkip)  // > 0 only for frames under 3 samples
        let mean = centredSum / n
        frames.raw.append(max(rawSum / n - mean * mean, 0).squareRoot())
        previousMean += mean
        frames.low.append(((lowSum + pending.low) / n).squareRoot())
        frames.mid.append(((midSum + pending.mid) / n).squareRoot())
        if keepsZeroCrossingRate { frames.zcr.append(Float(crossings) / n) }
        rawSum = 0; centredSum = 0; lowSum = 0; midSum = 0; crossings = 0; filled = 0
        bandOutputsToSkip = PipelinedBands.latency
        bands.flushTiny()
        let c = frames.count
        if c % 2 == 0 { envelope.append(max(frames.raw[c - 2], frames.raw[c - 1])) }
    }
}
