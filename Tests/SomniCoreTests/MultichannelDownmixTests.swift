import Foundation
import Testing
@testable import SomniCore

@Suite struct MultichannelDownmixTests {
    /// `seconds` of `channels` channels at 16 kHz, each sample `signal(channel, time)`, mixed in
    /// blocks of 1,024 frames as the decoder delivers them.
    func mixed(channels: Int, seconds: Double, _ signal: (Int, Double) -> Float) -> [Float] {
        let frames = Int(seconds * 16_000)
        var interleaved = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            for channel in 0..<channels { interleaved[frame * channels + channel] = signal(channel, Double(frame) / 16_000) }
        }
        var downmix = MultichannelDownmix(channels: channels, sampleRate: 16_000)
        var output = [Float](repeating: .nan, count: frames)
        interleaved.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                var start = 0
                while start < frames {
                    let count = min(1_024, frames - start)
                    downmix.mix(input.baseAddress! + channels * start, stride: channels, frames: count, into: out.baseAddress! + start)
                    start += count
                }
            }
        }
        return output
    }

    func peak(_ samples: [Float], from: Double, to: Double) -> Float {
        samples[Int(from * 16_000)..<Int(to * 16_000)].map(abs).max() ?? 0
    }

    func tone(_ t: Double, _ level: Float, _ hz: Double = 220) -> Float { level * Float(sin(2 * Double.pi * hz * t)) }

    /// A mono sound in the centre of 5.1 with a murmur (−100 dB) in the other five: at its own
    /// level after the first 2 s (averaged with them, it read 14 dB low).
    @Test func murmuringChannelsAreLeftOutAfterTheFirstSeconds() {
        var rng = SeededRandom(seed: 1)
        let out = mixed(channels: 6, seconds: 4) { channel, t in channel == 2 ? tone(t, 0.5) : 1e-5 * Float(rng.nextUniform(-1...1)) }
        #expect(abs(peak(out, from: 0.5, to: 1.5) - 0.5 / 6) < 0.01)  // before the evidence: the mean of six
        #expect(abs(peak(out, from: 2.2, to: 4) - 0.5) < 0.01)
    }

    /// Levels are compared over recent sound: when the loud microphone falls silent, the quieter
    /// ones (25 dB under it) come back within seconds. Judged over the whole file, they stayed
    /// out, and the night was silence, for three times as long as the loud one had sounded.
    @Test func quieterChannelsComeBackWhenTheLoudestFallsSilent() {
        let out = mixed(channels: 4, seconds: 40) { channel, t in
            channel == 0 ? (t < 20 ? tone(t, 0.3) : 0) : tone(t, 0.017, 330 + 50 * Double(channel))
        }
        #expect(abs(peak(out, from: 3, to: 19) - 0.3) < 0.01)  // the quiet ones are left out beside it
        // Back about 12 s after it stopped (its recent level fallen to 100 times theirs).
        let later = peak(out, from: 34, to: 40)
        #expect(later > 0.01 && later <= 0.017, "\(later)")  // the three quiet ones, each 0.017, averaged
    }

    /// A converter's DC offset on a dead input is no sound: it was taken for the loudest channel,
    /// and the microphones were left out.
    @Test func aDCOffsetIsNotTheLoudestSound() {
        let out = mixed(channels: 4, seconds: 6) { channel, t in channel == 0 ? 0.2 : tone(t, 0.05, 200 + 100 * Double(channel)) }
        // The microphones are heard; the offset's channel, 20 dB and more under them once its
        // offset is blocked, is left out (with it, their mean would sit at 0.05).
        let late = Array(out[64_000..<96_000])
        let mean = late.reduce(0, +) / Float(late.count)
        #expect(abs(mean) < 0.005 && peak(out, from: 4, to: 6) > 0.02, "mean \(mean), peak \(peak(out, from: 4, to: 6))")
    }
}
