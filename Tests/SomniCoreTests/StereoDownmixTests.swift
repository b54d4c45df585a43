import Testing
@testable import SomniCore

@Suite struct StereoDownmixTests {
    /// Interleaves two channels.
    func stereo(_ left: [Float], _ right: [Float]) -> [Float] {
        zip(left, right).flatMap { [$0, $1] }
    }

    /// Mixes `interleaved` in blocks of `block` frames, as a decoder or a device delivers it.
    func mix(_ interleaved: [Float], block: Int = 800, with downmix: inout StereoDownmix) -> [Float] {
        let frames = interleaved.count / 2
        var output = [Float](repeating: .nan, count: frames)
        interleaved.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                var start = 0
                while start < frames {
                    let count = min(block, frames - start)
                    downmix.mix(input.baseAddress! + 2 * start, frames: count, into: out.baseAddress! + start)
                    start += count
                }
            }
        }
        return output
    }

    func maxDifference(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).map { abs($0 - $1) }.max() ?? .infinity
    }

    @Test func aSignalInBothChannelsComesOutUnchanged() {
        let tone = Signals.sine(150, seconds: 1)
        var downmix = StereoDownmix()
        #expect(maxDifference(mix(stereo(tone, tone), with: &downmix), tone) < 1e-6)
        #expect(!downmix.isOpposite)
    }

    @Test func channelsInOppositePhaseAreMixedAsTheirDifferenceAndKeepTheSignal() {
        let snore = Signals.snore(seconds: 3)
        var downmix = StereoDownmix()
        let mixed = mix(stereo(snore, snore.map { -$0 }), with: &downmix)
        #expect(downmix.isOpposite)
        #expect(maxDifference(mixed, snore) < 1e-6)
    }

    @Test func unrelatedChannelsAreAveraged() {
        let left = Signals.noise(seconds: 2, rms: 0.1, seed: 1), right = Signals.noise(seconds: 2, rms: 0.1, seed: 2)
        var downmix = StereoDownmix()
        let mixed = mix(stereo(left, right), with: &downmix)
        #expect(!downmix.isOpposite)
        #expect(maxDifference(mixed, zip(left, right).map { 0.5 * ($0 + $1) }) < 1e-6)
    }

    @Test func oneSilentChannelHalvesTheOther() {
        let tone = Signals.sine(300, seconds: 1)
        var downmix = StereoDownmix()
        let mixed = mix(stereo(tone, [Float](repeating: 0, count: tone.count)), with: &downmix)
        #expect(!downmix.isOpposite)
        #expect(maxDifference(mixed, tone.map { 0.5 * $0 }) < 1e-6)
    }

    /// Silence first (nothing to decide on), then an inverted microphone: its very first block is
    /// already mixed as a difference, decided from that block itself.
    @Test func theFirstSoundAfterSilenceIsAlreadyKept() {
        let silence = [Float](repeating: 0, count: 8_000)
        let tone = Signals.sine(150, seconds: 1)
        var downmix = StereoDownmix()
        let mixed = mix(stereo(silence + tone, silence + tone.map { -$0 }), with: &downmix)
        #expect(downmix.isOpposite)
        #expect(mixed[..<8_000].allSatisfy { $0 == 0 })
        #expect(maxDifference(Array(mixed[8_000...]), tone) < 1e-6)
    }

    /// The decision weighs everything heard so far: in a real stereo recording, one sound that
    /// happens to reach the channels in opposite phase does not flip the mix.
    @Test func aBriefOppositeSoundDoesNotFlipALongStereoRecording() {
        let tone = Signals.sine(150, seconds: 10, amplitude: 0.2)
        let burst = Signals.sine(150, seconds: 0.5, amplitude: 0.2)
        var downmix = StereoDownmix()
        let mixed = mix(stereo(tone + burst, tone + burst.map { -$0 }), with: &downmix)
        #expect(!downmix.isOpposite)
        #expect(mixed[tone.count...].allSatisfy { abs($0) < 1e-6 })
    }
}
