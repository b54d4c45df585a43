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

    public init(channels: Int, sampleRate: Int) {
        self.channels = min(max(channels, 1), 64)
        recentPower = [Double](repeating: 0, count: self.channels)
        blockerInput = [Float](repeating: 0, count: self.channels)
        blockerOutput = [Float](repeating: 0, count: self.channels)
        // A 10 Hz corner, as the stereo mix's.
        blockerPole = Float(1 - 2 * Double.pi * 10 / Double(max(sampleRate, 100)))
        self.sampleRate = Double(max(sampleRate, 1))
        evidenceFrames = Int(StereoDownmix.evidenceSeconds * Double(sampleRate))
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
        for channel in 0..<n {
            var x = blockerInput[channel], y = blockerOutput[channel]
            var sum: Float = 0, any = false
            for frame in 0..<count {
                let sample = interleaved[frame * stride + channel]
                any = any || sample != 0
                y = sample - x + pole * y
                x = sample
                sum += y * y
            }
            blockerInput[channel] = x; blockerOutput[channel] = y
            recentPower[channel] = kept * recentPower[channel] + (1 - kept) * Double(sum) / Double(count)
            if any { sounding |= 1 << UInt64(channel) }
            if recentPower[channel] >= Self.deadBelow { alive |= 1 << UInt64(channel) }
        }
        framesSeen += count
        var live = sounding
        if framesSeen >= evidenceFrames, sounding & alive != 0 { live = sounding & alive }
        let scale: Float = live != 0 ? 1 / Float(live.nonzeroBitCount) : 0
        for frame in 0..<count {
            var sum: Float = 0
            for channel in 0..<n where live & (1 << UInt64(channel)) != 0 { sum += interleaved[frame * stride + channel] }
            output[frame] = sum * scale
        }
    }
}
