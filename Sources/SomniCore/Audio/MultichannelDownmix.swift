/// Mixes three channels or more into one: the mean of the channels that hold sound.
///
/// A channel of digital silence in a block (a recorder's unused inputs) is left out, so one
/// microphone among dead channels keeps its level (averaged with 15 silent ones, it read 24 dB
/// low). Once `StereoDownmix.evidenceSeconds` are heard, so is a channel more than 20 dB under the
/// loudest over everything so far, as in the stereo mix: a mono sound placed in the centre of a
/// 5.1 mix, the usual placement, has a codec's murmur in the other five (AC-3 leaves −118 dB
/// there) or a dither's, which counted as sound, and the centre read 14 dB low.
public struct MultichannelDownmix: Sendable {
    /// The channels mixed: at most 64.
    public let channels: Int
    private var energy: [Double]
    private var blockEnergy: [Float]
    private let evidenceFrames: Int
    private var framesSeen = 0

    public init(channels: Int, sampleRate: Int) {
        self.channels = min(max(channels, 1), 64)
        energy = [Double](repeating: 0, count: self.channels)
        blockEnergy = [Float](repeating: 0, count: self.channels)
        evidenceFrames = Int(StereoDownmix.evidenceSeconds * Double(sampleRate))
    }

    /// Mixes `count` frames of `channels` interleaved samples (a frame may hold more, which are
    /// left out: `stride`) from `interleaved` into `count` samples of `output`.
    public mutating func mix(_ interleaved: UnsafePointer<Float>, stride: Int, frames count: Int,
                             into output: UnsafeMutablePointer<Float>) {
        let n = channels
        var loudest = 0.0
        for channel in 0..<n {
            var sum: Float = 0
            for frame in 0..<count {
                let x = interleaved[frame * stride + channel]
                sum += x * x
            }
            blockEnergy[channel] = sum
            energy[channel] += Double(sum)
            loudest = max(loudest, energy[channel])
        }
        framesSeen += count
        let floor = framesSeen >= evidenceFrames ? StereoDownmix.silentBelow * loudest : 0
        var live: UInt64 = 0
        for channel in 0..<n where blockEnergy[channel] > 0 && energy[channel] >= floor { live |= 1 << UInt64(channel) }
        let scale: Float = live != 0 ? 1 / Float(live.nonzeroBitCount) : 0
        for frame in 0..<count {
            var sum: Float = 0
            for channel in 0..<n where live & (1 << UInt64(channel)) != 0 { sum += interleaved[frame * stride + channel] }
            output[frame] = sum * scale
        }
    }
}
