import Foundation

/// Mixes three channels or more into one: the mean of the channels that hold sound.
///
/// A channel of digital silence in a block (a recorder's unused inputs) is left out, so one
/// microphone among dead channels keeps its level (averaged with 15 silent ones, it read 24 dB
/// low). Once `StereoDownmix.evidenceSeconds` are heard, so is a channel whose level over the last
/// `memorySeconds`, after a DC blocker, is under `deadBelow` (−85 dBFS), where no microphone's own
/// noise lies but a codec's murmur and a dither do: a mono sound placed in the centre of a 5.1 mix,
/// the usual placement, has AC-3's −118 dB in the other five, or a 16-bit dither's −92 dB, which
/// counted as sound, and the centre read 14 dB low. When every channel is that quiet, all that
/// hold sound are mixed. The level is absolute, not relative to the loudest channel: a burst on
/// one microphone left the others out, and their snores with them, for a minute and more.
///
/// Among the first `phaseChannels`, a channel in opposite phase to the loudest (correlation under
/// `StereoDownmix.oppositeBelow` over everything so far, after the DC blocker and the evidence) is
/// added inverted; the loudest when first judged stays the reference while it is live. A
/// laptop's microphone pair recorded as a difference signal, captured with the device's unused
/// inputs (4 channels, 2 of them silent), cancelled to silence in the mean.
public struct MultichannelDownmix: Sendable {
    /// The channels mixed: at most 64.
    public let channels: Int
    /// How far back a channel's level is measured.
    public static let memorySeconds = 10.0
    /// Mean power (of samples in [-1, 1]) under which a channel is taken for dead: −85 dBFS.
    public static let deadBelow = 3.16e-9
    private var recentPower: [Double]
    private var blockerInput: [Float], blockerOutput: [Float]
    private let blockerPole: Float
    private let sampleRate: Double
    private let evidenceFrames: Int
    private var framesSeen = 0
    /// Channels whose correlations are followed; past them a channel is always added as it is.
    public static let phaseChannels = 8
    private let phased: Int
    /// Energies and cross energies of the phase channels after the blocker, over everything mixed:
    /// [i * phased + j] for i ≤ j.
    private var products: [Double]
    /// The phase channels' blocked samples of the block being mixed, frame by frame.
    private var blocked: [Float] = []
    /// Every channel ever added inverted, and the loudest one it was opposite to when first.
    private var invertedEver: UInt64 = 0
    private var oppositeTo: Int?
    /// Some blocks after the evidence were mixed with no channel inverted.
    private var mixedUpright = false
    /// The channel the others' phase is judged against: the loudest when first needed, kept
    /// while it is live (re-chosen each block, two about as loud took turns, and the mix's sign
    /// flipped at each turn, a click).
    private var reference: Int?

    public init(channels: Int, sampleRate: Int) {
        self.channels = min(max(channels, 1), 64)
        recentPower = [Double](repeating: 0, count: self.channels)
        blockerInput = [Float](repeating: 0, count: self.channels)
        blockerOutput = [Float](repeating: 0, count: self.channels)
        // A 10 Hz corner, as the stereo mix's.
        blockerPole = Float(1 - 2 * Double.pi * 10 / Double(max(sampleRate, 100)))
        self.sampleRate = Double(max(sampleRate, 1))
        evidenceFrames = Int(StereoDownmix.evidenceSeconds * Double(sampleRate))
        phased = min(self.channels, Self.phaseChannels)
        products = [Double](repeating: 0, count: phased * phased)
    }

    /// What to tell the user about the mix: a channel added inverted, for the whole recording
    /// after its first seconds, or for part of it (the correlation can climb back).
    public var warnings: [String] {
        guard invertedEver != 0, let reference = oppositeTo else { return [] }
        let names = (0..<phased).filter { invertedEver & (1 << UInt64($0)) != 0 }.map { "\($0 + 1)" }
        let which = names.count == 1 ? "channel \(names[0]) is" : "channels \(names.joined(separator: ", ")) are"
        return ["\(which) in opposite phase to channel \(reference + 1) (as some laptops' built-in microphones record)"
                + (mixedUpright ? " for part of the recording" : "") + ", so \(names.count == 1 ? "it was" : "they were") "
                + "mixed inverted\(mixedUpright ? " there" : ""): the mean would have cancelled to near silence"]
    }

    /// Mixes `count` frames of `stride` interleaved samples (the first `channels` of each mixed)
    /// from `interleaved` into `count` samples of `output`.
    public mutating func mix(_ interleaved: UnsafePointer<Float>, stride: Int, frames count: Int,
                             into output: UnsafeMutablePointer<Float>) {
        guard count > 0 else { return }
        let n = channels, pole = blockerPole
        // Each block's weight in the recent level: a moving average over `memorySeconds`.
        let kept = exp(-Double(count) / (Self.memorySeconds * sampleRate))
        // The blockers start from the first samples: from 0, an offset's step would count as sound.
        if framesSeen == 0 { for channel in 0..<n { blockerInput[channel] = interleaved[channel] } }
        var sounding: UInt64 = 0, alive: UInt64 = 0
        let m = phased
        if blocked.count < count * m { blocked = [Float](repeating: 0, count: count * m) }  // grows, then stays
        var scratch = blocked
        blocked = []  // the one buffer, written through its pointer without a copy per sample
        scratch.withUnsafeMutableBufferPointer { b in
            for channel in 0..<n {
                var x = blockerInput[channel], y = blockerOutput[channel]
                var sum: Float = 0, any = false
                let followed = channel < m
                for frame in 0..<count {
                    let sample = interleaved[frame * stride + channel]
                    any = any || sample != 0
                    y = sample - x + pole * y
                    x = sample
                    sum += y * y
                    if followed { b[frame * m + channel] = y }
                }
                blockerInput[channel] = x; blockerOutput[channel] = y
                recentPower[channel] = kept * recentPower[channel] + (1 - kept) * Double(sum) / Double(count)
                if any { sounding |= 1 << UInt64(channel) }
                if recentPower[channel] >= Self.deadBelow { alive |= 1 << UInt64(channel) }
            }
            for i in 0..<m {
                for j in i..<m {
                    var sum: Float = 0
                    for frame in 0..<count { sum += b[frame * m + i] * b[frame * m + j] }
                    products[i * m + j] += Double(sum)
                }
            }
        }
        blocked = scratch
        framesSeen += count
        var live = sounding
        if framesSeen >= evidenceFrames, sounding & alive != 0 { live = sounding & alive }
        let inverted = framesSeen >= evidenceFrames ? oppositeChannels(among: live) : 0
        let scale: Float = live != 0 ? 1 / Float(live.nonzeroBitCount) : 0
        for frame in 0..<count {
            var sum: Float = 0
            for channel in 0..<n where live & (1 << UInt64(channel)) != 0 {
                let sample = interleaved[frame * stride + channel]
                sum += inverted & (1 << UInt64(channel)) != 0 ? -sample : sample
            }
            output[frame] = sum * scale
        }
    }

    /// The live phase channels in opposite phase to the reference, as a mask; notes them for the
    /// warning.
    private mutating func oppositeChannels(among live: UInt64) -> UInt64 {
        let m = phased
        var loudest = -1, livePhased = 0
        for c in 0..<m where live & (1 << UInt64(c)) != 0 {
            livePhased += 1
            if loudest < 0 || products[c * m + c] > products[loudest * m + loudest] { loudest = c }
        }
        guard livePhased >= 2 else { return 0 }
        if reference.map({ live & (1 << UInt64($0)) == 0 }) ?? true { reference = loudest }
        let reference = self.reference ?? loudest
        var inverted: UInt64 = 0
        for c in 0..<m where c != reference && live & (1 << UInt64(c)) != 0 {
            let cross = products[min(c, reference) * m + max(c, reference)]
            let scale = (products[c * m + c] * products[reference * m + reference]).squareRoot()
            if scale > 0, cross < StereoDownmix.oppositeBelow * scale { inverted |= 1 << UInt64(c) }
        }
        if inverted != 0 {
            if invertedEver == 0 { oppositeTo = reference }
            invertedEver |= inverted
        } else {
            mixedUpright = true
        }
        return inverted
    }
}
