import Foundation
import Testing
@testable import SomniCore

@Suite struct MultichannelDownmixTests {
    /// `seconds` of `channels` channels at 16 kHz, each sample `signal(channel, time)`, mixed in
    /// blocks of 1,024 frames as the decoder delivers them.
    func mixed(channels: Int, seconds: Double, _ signal: (Int, Double) -> Float) -> [Float] {
        mixedAndSaid(channels: channels, seconds: seconds, signal).samples
    }

    /// The same, and the mix's warnings.
    func mixedAndSaid(channels: Int, seconds: Double, _ signal: (Int, Double) -> Float) -> (samples: [Float], warnings: [String]) {
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
        return (output, downmix.warnings)
    }

    func peak(_ samples: [Float], from: Double, to: Double) -> Float {
        samples[Int(from * 16_000)..<Int(to * 16_000)].map(abs).max() ?? 0
    }

    func tone(_ t: Double, _ level: Float, _ hz: Double = 220) -> Float { level * Float(sin(2 * Double.pi * hz * t)) }

    /// A laptop's microphone pair read as a difference signal, captured with its two unused
    /// inputs: the pair is added with the second inverted once the evidence is in (the mean
    /// cancelled it to silence), and the warning names the channels; in phase, nothing changes.
    @Test func aPairInOppositePhaseAmongSilentChannelsKeepsItsSound() {
        let (pair, said) = mixedAndSaid(channels: 4, seconds: 5) { channel, t in
            channel == 0 ? tone(t, 0.4) : channel == 1 ? -tone(t, 0.4) : 0
        }
        #expect(peak(pair, from: 0.5, to: 1.5) < 1e-6)  // before the evidence: the mean, as before
        #expect(abs(peak(pair, from: 2.2, to: 5) - 0.4) < 0.01)
        #expect(said == ["channel 2 is in opposite phase to channel 1 (as some laptops' built-in microphones record), "
                         + "so it was mixed inverted: the mean would have cancelled to near silence"], "\(said)")
        // Two such pairs: both inverted channels are named, and the sound keeps its level.
        let (pairs, saidOfPairs) = mixedAndSaid(channels: 4, seconds: 5) { channel, t in
            channel % 2 == 0 ? tone(t, 0.4) : -tone(t, 0.4)
        }
        #expect(abs(peak(pairs, from: 2.2, to: 5) - 0.4) < 0.01)
        #expect(saidOfPairs.first?.hasPrefix("channels 2, 4 are in opposite phase to channel") == true, "\(saidOfPairs)")
        let (inPhase, nothingSaid) = mixedAndSaid(channels: 4, seconds: 5) { channel, t in channel < 2 ? tone(t, 0.4) : 0 }
        #expect(abs(peak(inPhase, from: 2.2, to: 5) - 0.4) < 0.01 && nothingSaid.isEmpty)
        // Opposite for its first seconds only: mixed inverted there, and said to be for part of it.
        let (_, partly) = mixedAndSaid(channels: 3, seconds: 14) { channel, t in
            channel == 0 ? tone(t, 0.4) : channel == 1 ? (t < 4 ? -tone(t, 0.4) : tone(t, 0.4)) : 0
        }
        #expect(partly.first?.contains("for part of the recording, so it was mixed inverted there") == true, "\(partly)")
    }

    /// A mono sound in the centre of 5.1 with a murmur (−105 dB) in the other five: at its own
    /// level after the first 2 s (averaged with them, it read 14 dB low).
    @Test func murmuringChannelsAreLeftOutAfterTheFirstSeconds() {
        var rng = SeededRandom(seed: 1)
        let out = mixed(channels: 6, seconds: 4) { channel, t in channel == 2 ? tone(t, 0.5) : 1e-5 * Float(rng.nextUniform(-1...1)) }
        #expect(abs(peak(out, from: 0.5, to: 1.5) - 0.5 / 6) < 0.01)  // before the evidence: the mean of six
        #expect(abs(peak(out, from: 2.2, to: 4) - 0.5) < 0.01)
    }

    /// A channel is dead by its own level, not by another's: a burst on one microphone (1 s every
    /// 30 s) left the quieter ones out, compared with the loudest, and a night's snores with them.
    /// Between the bursts (digital silence there) the quiet ones are heard at their level.
    @Test func aBurstOnOneMicrophoneLeavesTheOthersIn() {
        let out = mixed(channels: 3, seconds: 65) { channel, t in
            channel == 0 ? (t.truncatingRemainder(dividingBy: 30) < 1 ? tone(t, 0.3) : 0) : tone(t, 0.017, 330 + 50 * Double(channel))
        }
        for (from, to) in [(2.0, 29.5), (31.5, 59.5), (61.5, 65.0)] {
            let heard = peak(out, from: from, to: to)
            #expect(heard > 0.012 && heard <= 0.018, "\(from)–\(to) s: \(heard)")  // the two quiet ones, averaged
        }
    }

    /// Every channel quiet (a still room on a good recorder, under the dead level): all that hold
    /// sound are mixed, not none.
    @Test func aRoomQuieterThanTheDeadLevelIsStillHeard() {
        let out = mixed(channels: 4, seconds: 5) { channel, t in tone(t, 2e-5, 200 + 50 * Double(channel)) }
        #expect(peak(out, from: 3, to: 5) > 5e-6)
    }

    /// A converter's DC offset on a dead input is no sound: it was taken for the loudest channel,
    /// and the microphones were left out.
    @Test func aDCOffsetIsNotTheLoudestSound() {
        let out = mixed(channels: 4, seconds: 6) { channel, t in channel == 0 ? 0.2 : tone(t, 0.05, 200 + 100 * Double(channel)) }
        // The microphones are heard; the offset's channel, dead once its offset is blocked, is
        // left out (with it, their mean would sit at 0.05).
        let late = Array(out[64_000..<96_000])
        let mean = late.reduce(0, +) / Float(late.count)
        #expect(abs(mean) < 0.005 && peak(out, from: 4, to: 6) > 0.02, "mean \(mean), peak \(peak(out, from: 4, to: 6))")
    }
}
