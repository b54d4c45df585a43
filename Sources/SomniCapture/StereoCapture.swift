import SomniCore

/// What a device that captures two channels needs to hand out one: room for the interleaved
/// frames it reads, their `StereoDownmix`, and the warning the mix earns.
final class StereoCapture {
    private var frames: UnsafeMutableBufferPointer<Float> = .allocate(capacity: 2)
    private var downmix: StereoDownmix
    /// What the mix says of the whole recording so far.
    var warnings: [String] { downmix.warnings }

    init(rate: Int) { downmix = StereoDownmix(sampleRate: rate) }

    deinit { frames.deallocate() }

    /// Room for `count` interleaved two-channel frames, valid until the next call.
    func buffer(frames count: Int) -> UnsafeMutablePointer<Float> {
        if frames.count < 2 * count {
            frames.deallocate()
            frames = .allocate(capacity: 2 * count)
        }
        return frames.baseAddress!  // never nil: the capacity is at least 2
    }

    /// Mixes the `count` frames read into `buffer(frames:)` into `output`.
    func mix(frames count: Int, into output: UnsafeMutablePointer<Float>) {
        guard let stereo = frames.baseAddress else { return }
        downmix.mix(stereo, frames: count, into: output)
    }
}
