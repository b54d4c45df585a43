import Foundation

/// Per-frame features of a recording: 50 ms frames, 20 per second.
public struct FrameTrack: Sendable, Equatable {
    /// Unfiltered RMS.
    public var raw: [Float] = []
    /// RMS in the snore band, 40–400 Hz.
    public var low: [Float] = []
    /// RMS in the voice band, 250–3000 Hz.
    public var mid: [Float] = []
    /// Zero crossings ÷ frame length (a 1 kHz sine gives 0.125 at 16 kHz).
    public var zcr: [Float] = []

    public static let rate = 20.0
    /// Seconds per frame.
    public static let duration = 1 / rate

    public init() {}
    public init(raw: [Float], low: [Float], mid: [Float], zcr: [Float]) {
        self.raw = raw; self.low = low; self.mid = mid; self.zcr = zcr
    }

    public var count: Int { raw.count }

    /// The frame holding time `t` (seconds), clamped to the track.
    public func frameIndex(at t: Double) -> Int {
        min(max(Int((t * Self.rate).rounded(.down)), 0), max(count - 1, 0))
    }
}

/// The overnight loop: turns 16 kHz samples into frame features and a 10 Hz loudness envelope.
///
/// Each band is a 4th-order Butterworth high-pass at the lower edge cascaded with a 4th-order
/// Butterworth low-pass at the upper edge (`Biquad.butterworthBand`): four biquads per band,
/// eight per sample. The two bands run side by side in the lanes of `SIMD2<Float>` so that each
/// section's feedback chain overlaps with the others; samples arrive in blocks of any size and a
/// partial frame is carried over to the next call. Nothing is allocated per sample or per frame
/// beyond the amortised growth of the output arrays.
public final class FeatureExtractor {
    /// Samples per 50 ms frame.
    public let frameLength: Int
    public let sampleRate: Int
    public private(set) var frames = FrameTrack()
    /// 10 Hz loudness: the larger raw RMS of each two frames, so short peaks survive.
    public private(set) var envelope: [Float] = []
    public static let envelopeRate = 10.0

    private var sections: (PairedSection, PairedSection, PairedSection, PairedSection)
    private var filled = 0
    private var rawSum: Float = 0
    private var bandSum = SIMD2<Float>()
    private var crossings = 0
    private var previousNegative = false
    private var envelopeTaken = 0

    public init(sampleRate: Int = analysisSampleRate) {
        self.sampleRate = max(sampleRate, 20)
        frameLength = self.sampleRate / 20
        let rate = Double(self.sampleRate)
        let nyquistGuard = 0.45 * rate
        let low = Biquad.butterworthBand(low: 40, high: min(400, nyquistGuard), sampleRate: rate)
        let mid = Biquad.butterworthBand(low: 250, high: min(3000, nyquistGuard), sampleRate: rate)
        sections = (PairedSection(low[0], mid[0]), PairedSection(low[1], mid[1]),
                    PairedSection(low[2], mid[2]), PairedSection(low[3], mid[3]))
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

    private func accumulate(_ block: UnsafeBufferPointer<Float>) {
        var (s0, s1, s2, s3) = sections
        var raw = rawSum, band = bandSum, count = crossings, wasNegative = previousNegative
        for x in block {
            var v = SIMD2(repeating: x)
            v = s0.step(v)
            v = s1.step(v)
            v = s2.step(v)
            v = s3.step(v)
            band += v * v
            raw += x * x
            let negative = x < 0
            count &+= negative != wasNegative ? 1 : 0
            wasNegative = negative
        }
        sections = (s0, s1, s2, s3)
        rawSum = raw; bandSum = band; crossings = count; previousNegative = wasNegative
    }

    private func closeFrame() {
        let n = Float(filled)
        frames.raw.append((rawSum / n).squareRoot())
        frames.low.append((bandSum.x / n).squareRoot())
        frames.mid.append((bandSum.y / n).squareRoot())
        frames.zcr.append(Float(crossings) / n)
        rawSum = 0; bandSum = .zero; crossings = 0; filled = 0
        // Digital silence would leave the filter memories decaying through denormals (very slow
        // on x86); values this small are far below any audio, so they are set to zero.
        sections.0.flushTiny(); sections.1.flushTiny(); sections.2.flushTiny(); sections.3.flushTiny()
        let c = frames.count
        if c % 2 == 0 { envelope.append(max(frames.raw[c - 2], frames.raw[c - 1])) }
    }
}

/// The same section position of two filter chains, one per SIMD lane.
struct PairedSection {
    var b0, b1, b2, a1, a2: SIMD2<Float>
    var z1 = SIMD2<Float>(), z2 = SIMD2<Float>()

    init(_ a: Biquad, _ b: Biquad) {
        b0 = [a.b0, b.b0]; b1 = [a.b1, b.b1]; b2 = [a.b2, b.b2]; a1 = [a.a1, b.a1]; a2 = [a.a2, b.a2]
    }

    @inline(__always)
    mutating func step(_ x: SIMD2<Float>) -> SIMD2<Float> {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }

    mutating func flushTiny() {
        let tiny = SIMD2<Float>(repeating: 1e-30)
        z1.replace(with: 0, where: (z1 .< tiny) .& (z1 .> -tiny))
        z2.replace(with: 0, where: (z2 .< tiny) .& (z2 .> -tiny))
    }
}
