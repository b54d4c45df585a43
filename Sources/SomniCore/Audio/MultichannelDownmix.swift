import Foundation

/// Mixes three channels or more into one: the mean of the channels that hold sound.
///
/// A channel of digital silence in a block (a recorder's unused inputs) is left out, so one
/// microphone among dead channels keeps its level (averaged with 15 silent ones, it read 24 dB
/// low). Once `StereoDownmix.evidenceSeconds` are heard, so is a channel more than 20 dB under the
/// loudest over the last `memorySeconds`, as in the stereo mix: a mono sound placed in the centre
/// of a 5.1 mix, the usual placement, has a codec's murmur in the other five (AC-3 leaves −118 dB
/// there) or a dither's, which counted as sound, and the centre read 14 dB low. Levels are
/// compared over recent sound, not the whole file, so that channels come back within about ten
/// seconds when the loudest falls silent (judged over the whole file they stayed out for hours), and after a
/// DC blocker, so that a converter's offset on a dead input is not taken for the loudest sound.
public struct MultichannelDownmix: Sendable {
    /// The channels mixed: at most 64.
    public let channels: Int
    /// How far back the channels' levels are compared.
    public static let memorySeconds = 10.0
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
        var sounding: UInt64 = 0
        var loudest = 0.0
        // The blockers start from the first samples: from 0, an offset's step would count as sound.
        if framesSeen == 0 { for channel in 0..<n { blockerInput[channel] = interleaved[channel] } }
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
            if any { sounding |= 1 << UInt64(channel) }
            recentPower[channel] = kept * recentPower[channel] + (1 - kept) * Double(sum) / Double(count)
            loudest = max(loudest, recentPower[channel])
        }
        framesSeen += count
        var live = sounding
        if framesSeen >= evidenceFrames {
            let floor = StereoDownmix.silentBelow * loudest
            for channel in 0..<n where recentPower[channel] < floor { live &= ~(1 << UInt64(channel)) }
        }
        let scale: Float = live != 0 ? 1 / Float(live.nonzeroBitCount) : 0
        for frame in 0..<count {
            var sum: Float = 0
            for channel in 0..<n where live & (1 << UInt64(channel)) != 0 { sum += interleaved[frame * stride + channel] }
            output[frame] = sum * scale
        }
    }
}
