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
        var downmix = StereoDownmix(sampleRate: 16_000)
        #expect(maxDifference(mix(stereo(tone, tone), with: &downmix), tone) < 1e-6)
        #expect(!downmix.isOpposite)
    }

    /// Once two seconds have been heard, the difference: the signal at its own level.
    @Test func channelsInOppositePhaseAreMixedAsTheirDifferenceAndKeepTheSignal() {
        let snore = Signals.snore(seconds: 6)
        var downmix = StereoDownmix(sampleRate: 16_000)
        let mixed = mix(stereo(snore, snore.map { -$0 }), with: &downmix)
        #expect(downmix.isOpposite)
        #expect(maxDifference(Array(mixed[32_000...]), Array(snore[32_000...])) < 1e-6)
    }

    /// A recording mixed as the difference for a while keeps saying so when the correlation
    /// later climbs back over −0.5 and the mix returns to the average, and says it was for part
    /// of the recording; one in opposite phase throughout says it without that.
    @Test func aMixOnceMadeAsTheDifferenceIsSaidSoToTheEnd() {
        let snore = Signals.snore(seconds: 4), tone = Signals.sine(150, seconds: 12)
        var downmix = StereoDownmix(sampleRate: 16_000)
        _ = mix(stereo(snore + tone, snore.map { -$0 } + tone), with: &downmix)
        #expect(!downmix.isOpposite, "in phase for most of it")
        #expect(downmix.warnings == [StereoDownmix.partlyOppositePhaseWarning])
        #expect(StereoDownmix.replaces(StereoDownmix.partlyOppositePhaseWarning, StereoDownmix.oppositePhaseWarning))
        #expect(!StereoDownmix.replaces(StereoDownmix.partlyOppositePhaseWarning, StereoDownmix.silentChannelWarning(.left)))
        var throughout = StereoDownmix(sampleRate: 16_000)
        _ = mix(stereo(snore + tone, snore.map { -$0 } + tone.map { -$0 }), with: &throughout)
        #expect(throughout.warnings == [StereoDownmix.oppositePhaseWarning])
    }

    @Test func unrelatedChannelsAreAveraged() {
        let left = Signals.noise(seconds: 2, rms: 0.1, seed: 1), right = Signals.noise(seconds: 2, rms: 0.1, seed: 2)
        var downmix = StereoDownmix(sampleRate: 16_000)
        let mixed = mix(stereo(left, right), with: &downmix)
        #expect(!downmix.isOpposite)
        #expect(maxDifference(mixed, zip(left, right).map { 0.5 * ($0 + $1) }) < 1e-6)
    }

    /// A silent channel halves the other while nothing is decided; from two seconds on the live
    /// channel is used alone, at its own level, whichever side it is on.
    @Test func aSilentChannelIsLeftOutOnceTwoSecondsAreHeard() {
        let tone = Signals.sine(300, seconds: 4), nothing = [Float](repeating: 0, count: 4 * 16_000)
        for (left, right, silent) in [(tone, nothing, StereoDownmix.Channel.right), (nothing, tone, .left)] {
            var downmix = StereoDownmix(sampleRate: 16_000)
            let mixed = mix(stereo(left, right), with: &downmix)
            #expect(downmix.silentChannel == silent && !downmix.isOpposite)
            #expect(downmix.warnings == [StereoDownmix.silentChannelWarning(silent)])
            #expect(maxDifference(Array(mixed[..<31_200]), tone[..<31_200].map { 0.5 * $0 }) < 1e-6)
            #expect(maxDifference(Array(mixed[32_800...]), Array(tone[32_800...])) < 1e-6)
        }
        // 25 dB under the other (a phone's second channel of murmur) is left out too; 12 dB
        // under it is a microphone further away, and averaged.
        for (gain, leftOut) in [(Float(0.056), true), (0.25, false)] {
            var downmix = StereoDownmix(sampleRate: 16_000)
            let far = tone.map { $0 * gain }
            let mixed = mix(stereo(tone, far), with: &downmix)
            #expect((downmix.silentChannel == .right) == leftOut, "\(gain)")
            let expected = leftOut ? tone : zip(tone, far).map { 0.5 * ($0 + $1) }
            #expect(maxDifference(Array(mixed[32_800...]), Array(expected[32_800...])) < 1e-6, "\(gain)")
        }
    }

    /// A burst on the quiet channel that brings it back into the mix part-way (a call recorded
    /// with each party on a channel) is said as it was: which channel was left out for part of
    /// the recording, and that the rest was averaged, not that one was used alone throughout.
    @Test func aChannelLeftOutForPartOfTheRecordingIsSaidSo() {
        let tone = Signals.sine(300, seconds: 10), burst = Signals.noise(seconds: 1, rms: 0.3, seed: 3)
        var right = [Float](repeating: 0, count: tone.count)
        right.replaceSubrange(6 * 16_000..<7 * 16_000, with: burst)
        var downmix = StereoDownmix(sampleRate: 16_000)
        let mixed = mix(stereo(tone, right), with: &downmix)
        #expect(downmix.silentChannel == nil, "the burst brought the right channel back in")
        // Left alone from 2 s to the burst, averaged from it on.
        #expect(maxDifference(Array(mixed[32_800..<96_000]), Array(tone[32_800..<96_000])) < 1e-6)
        #expect(maxDifference(Array(mixed[112_000...]), tone[112_000...].map { 0.5 * $0 }) < 1e-6)
        #expect(downmix.warnings.count == 1
                && downmix.warnings.allSatisfy { StereoDownmix.replaces($0, StereoDownmix.silentChannelWarning(.right)) })
        let warning = downmix.warnings.first ?? ""
        #expect(warning.hasPrefix("one channel was silent or nearly (over 20 dB under the other) for part of the recording only")
                && warning.contains("left out there: the right one (the left used alone)") && warning.contains("the two were averaged"),
                "\(warning)")
        #expect(warning != StereoDownmix.silentChannelWarning(.right))
    }

    /// Under two seconds nothing is decided: a one-second clip in opposite phase is averaged, as
    /// it always was (Khan's stereo clips are one second long, and decode as they did).
    @Test func nothingIsDecidedBeforeTwoSeconds() {
        let tone = Signals.sine(150, seconds: 1.95)
        var downmix = StereoDownmix(sampleRate: 16_000)
        let mixed = mix(stereo(tone, tone.map { -$0 }), with: &downmix)
        #expect(!downmix.isOpposite)
        #expect(mixed.allSatisfy { abs($0) < 1e-6 })
    }

    /// Converters' DC offsets of opposite sign under a quiet start (as nine of Khan's clips
    /// begin) are not a microphone in opposite phase: the correlation is taken without DC.
    @Test func oppositeOffsetsUnderAQuietStartDoNotFlipTheMix() {
        let quiet = 3.0, loud = 3.0
        let left = Signals.noise(seconds: quiet, rms: 0.0002, seed: 3).map { $0 + 0.0003 }
        let right = Signals.noise(seconds: quiet, rms: 0.0002, seed: 4).map { $0 - 0.0004 }
        let snore = Signals.snore(seconds: loud)
        var downmix = StereoDownmix(sampleRate: 16_000)
        let mixed = mix(stereo(left + snore, right + snore), with: &downmix)
        #expect(!downmix.isOpposite)
        #expect(maxDifference(mixed, zip(left + snore, right + snore).map { 0.5 * ($0 + $1) }) < 1e-6)
        // With the DC left in, the same start reads as strongly opposite.
        let dc = zip(left, right).reduce(0.0) { $0 + Double($1.0 * $1.1) }
            / (left.reduce(0.0) { $0 + Double($1 * $1) } * right.reduce(0.0) { $0 + Double($1 * $1) }).squareRoot()
        #expect(dc < -0.5)
    }

    /// The decision weighs everything heard so far: in a real stereo recording, one sound that
    /// happens to reach the channels in opposite phase does not flip the mix.
    @Test func aBriefOppositeSoundDoesNotFlipALongStereoRecording() {
        let tone = Signals.sine(150, seconds: 10, amplitude: 0.2)
        let burst = Signals.sine(150, seconds: 0.5, amplitude: 0.2)
        var downmix = StereoDownmix(sampleRate: 16_000)
        let mixed = mix(stereo(tone + burst, tone + burst.map { -$0 }), with: &downmix)
        #expect(!downmix.isOpposite)
        #expect(mixed[tone.count...].allSatisfy { abs($0) < 1e-6 })
    }
}
