import Foundation
import Testing
@testable import SomniCore

/// Mains hum is found by its steady lines at harmonics of 50 or 60 Hz and notched out; what is
/// not hum passes through untouched.
@Suite struct MainsHumTests {
    static let rate = 16_000

    /// Hum as a cheap microphone picks it up (and as `somni synth --hum` makes it): the mains
    /// frequency and its harmonics to the 13th, odd ones strongest, at `level` dBFS RMS.
    static func hum(_ mains: Double, seconds: Double, level: Double, from start: Double = 0) -> [Float] {
        let n = Int(seconds * Double(rate)), first = Int(start * Double(rate))
        var x = [Double](repeating: 0, count: n)
        for i in first..<n {
            let t = Double(i) / Double(rate)
            for k in 1...13 { x[i] += (k % 2 == 1 ? 1 : 0.3) / Double(k) * sin(2 * Double.pi * mains * Double(k) * t) }
        }
        let rms = (x[first...].reduce(0) { $0 + $1 * $1 } / Double(max(1, n - first))).squareRoot()
        let gain = pow(10, level / 20) / rms
        return x.map { Float($0 * gain) }
    }

    static func tone(_ frequency: Double, seconds: Double, level: Double, from start: Double = 0, to end: Double? = nil) -> [Float] {
        let amplitude = pow(10, level / 20) * 2.0.squareRoot()
        return (0..<Int(seconds * Double(rate))).map { i in
            let t = Double(i) / Double(rate)
            return t >= start && t < (end ?? seconds) ? Float(amplitude * sin(2 * Double.pi * frequency * t)) : 0
        }
    }

    static func add(_ a: [Float], _ b: [Float]) -> [Float] { zip(a, b).map { $0 + $1 } }

    /// Runs `input` through a remover in uneven pieces, as blocks arrive from a decoder.
    static func removeHum(_ input: [Float]) -> (output: [Float], hum: MainsHum?) {
        let remover = HumRemover()
        var output: [Float] = []
        var i = 0, piece = 7_001
        input.withUnsafeBufferPointer { all in
            while i < all.count {
                let n = min(piece, all.count - i)
                output += remover.process(UnsafeBufferPointer(rebasing: all[i..<i + n]))
                i += n
                piece = piece == 7_001 ? 23_456 : 7_001
            }
        }
        output += remover.finish()
        return (output, remover.hum)
    }

    static func rmsDecibels(_ x: ArraySlice<Float>) -> Double {
        10 * log10(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count))
    }

    @Test func humIsFoundAtItsLevelAndNotchedOutLeavingOtherSoundsInPlace() throws {
        let seconds = 64.0
        let noise = Signals.noise(seconds: seconds, rms: 0.0003, seed: 3)  // −70 dBFS
        let other = Self.tone(2_000, seconds: seconds, level: -40)  // steady, and far from any notch
        let hum = Self.hum(50, seconds: seconds, level: -45)
        let (output, found) = Self.removeHum(Self.add(noise, hum))
        #expect(output.count == noise.count)
        let heard = try #require(found)
        #expect(abs(heard.mainsFrequency - 50) < 0.02, "\(heard.mainsFrequency)")
        #expect(heard.firstHeard == 0)
        #expect(Set([1, 2, 3, 5, 7]).isSubset(of: heard.harmonics), "\(heard.harmonics)")
        #expect(abs(heard.level - -45) < 1.5, "\(heard.level) dBFS")
        #expect(heard.warning.contains("mains hum (50.0 Hz, about -45 dBFS, from the start)"), "\(heard.warning)")
        #expect(heard.warning.contains("(harmonics 1–"), "\(heard.warning)")
        // What is left of the hum after the notches' first moments: more than 20 dB less.
        let from = 2 * Self.rate
        let residual = zip(output[from...], noise[from...]).map { $0 - $1 }
        #expect(Self.rmsDecibels(residual[...]) < -65, "\(Self.rmsDecibels(residual[...])) dBFS")
        // A tone far from the notches is where it was, at its level: held back a block, the
        // samples come out in place (23 samples late, it would correlate 0.7).
        let withTone = Self.removeHum(Self.add(Self.add(noise, hum), other)).output
        var dot = 0.0, energy = 0.0
        for i in from..<withTone.count { dot += Double(withTone[i]) * Double(other[i]); energy += Double(other[i]) * Double(other[i]) }
        #expect(abs(dot / energy - 1) < 0.01, "\(dot / energy)")
    }

    /// A night without hum (noise, a snore train held on 100 Hz, talk, a 5 s beep) comes out
    /// sample for sample as it went in.
    @Test func aRecordingWithoutHumPassesThroughUnchanged() {
        let seconds = 70.0
        var x = Signals.noise(seconds: seconds, rms: 0.001, seed: 5)
        x = Signals.mix(x, Signals.snore(seconds: 40, amplitude: 0.2), at: 5)
        x = Signals.mix(x, Signals.speech(seconds: 6), at: 50)
        x = Self.add(x, Self.tone(1_000, seconds: seconds, level: -30, from: 60, to: 65))
        let (output, hum) = Self.removeHum(x)
        #expect(hum == nil, "\(String(describing: hum))")
        #expect(output == x)
    }

    @Test func oneSteadyToneOnAHarmonicIsNotHumButTheMainsFrequencyAloneIs() throws {
        let noise = Signals.noise(seconds: 40, rms: 0.0003, seed: 7)
        // An alarm or a fan's whine that sits on 850 Hz (17 × 50) all along: one line, no family.
        #expect(Self.removeHum(Self.add(noise, Self.tone(850, seconds: 40, level: -30))).hum == nil)
        // Two harmonics of one family, steady, are hum whatever the fundamental does.
        let pair = Self.add(Self.tone(120, seconds: 40, level: -45), Self.tone(180, seconds: 40, level: -50))
        #expect(Self.removeHum(Self.add(noise, pair)).hum?.harmonics == [2, 3])
        let mains = try #require(Self.removeHum(Self.add(noise, Self.tone(60, seconds: 40, level: -40))).hum)
        #expect(abs(mains.mainsFrequency - 60) < 0.02 && mains.harmonics == [1])
    }

    /// A synthesised night's 8 s fan with a line on 180 Hz was once taken for hum: a tone must
    /// hold for 12 s of a block.
    @Test func aSteadyToneShorterThanTwelveSecondsIsNotHum() {
        let noise = Signals.noise(seconds: 48, rms: 0.0003, seed: 9)
        var buzz = Self.tone(60, seconds: 48, level: -40, from: 17, to: 27)
        buzz = Self.add(buzz, Self.tone(120, seconds: 48, level: -45, from: 17, to: 27))
        buzz = Self.add(buzz, Self.tone(180, seconds: 48, level: -45, from: 17, to: 27))
        #expect(Self.removeHum(Self.add(noise, buzz)).hum == nil)
    }

    @Test func humThatComesLaterIsNotchedFromTheBlockItIsHeardIn() throws {
        let seconds = 120.0
        let noise = Signals.noise(seconds: seconds, rms: 0.0003, seed: 11)
        let x = Self.add(noise, Self.hum(60, seconds: seconds, level: -40, from: 97))
        let (output, found) = Self.removeHum(x)
        let hum = try #require(found)
        #expect(hum.firstHeard == 96, "blocks are 16 s; hum from 97 s fills seven of the 2 s segments of the one from 96 s")
        #expect(hum.warning.contains("from 0:01:36"), "\(hum.warning)")
        #expect(output[..<(96 * Self.rate)] == x[..<(96 * Self.rate)])
        #expect(Self.rmsDecibels(output[(99 * Self.rate)...]) < -65)
    }

    @Test func humTooQuietToMatterIsLeftAlone() {
        let x = Self.add(Signals.noise(seconds: 40, rms: 0.0001, seed: 13), Self.hum(50, seconds: 40, level: -65))
        let (output, hum) = Self.removeHum(x)
        #expect(hum == nil)
        #expect(output == x)
    }

    /// A sample that is not a number is handed on as one (the feature loop counts and silences
    /// it) without ruining the filters for the rest of the night.
    @Test func aSampleThatIsNotANumberPassesOnWithoutBreakingTheFilters() throws {
        var x = Self.add(Signals.noise(seconds: 40, rms: 0.0003, seed: 15), Self.hum(50, seconds: 40, level: -45))
        let broken = 20 * Self.rate + 17
        x[broken] = .nan
        x[broken + 1] = .infinity
        let (output, hum) = Self.removeHum(x)
        #expect(hum != nil)
        #expect(output[broken].isNaN && output[broken + 1] == .infinity)
        let finiteAfter = output[(broken + 2)...].allSatisfy { $0.isFinite }
        #expect(finiteAfter)
        #expect(Self.rmsDecibels(output[(30 * Self.rate)...]) < -65)
    }

    /// Hum off the grid's frequency (a generator's, an inverter's) is measured and notched where
    /// it is: notches left at 50 Hz under hum at 49.7 Hz took its lines down by 10–16 dB only.
    @Test func humOffFiftyHertzIsNotchedWhereItIs() throws {
        let noise = Signals.noise(seconds: 48, rms: 0.0003, seed: 17)
        for mains in [49.3, 49.7, 50.4, 59.6] {
            let (output, found) = Self.removeHum(Self.add(noise, Self.hum(mains, seconds: 48, level: -45)))
            let hum = try #require(found, "\(mains) Hz")
            #expect(abs(hum.mainsFrequency - mains) < 0.03, "\(hum.mainsFrequency) for \(mains) Hz")
            #expect(hum.harmonics.count >= 10, "\(mains) Hz: \(hum.harmonics)")
            let residual = zip(output[(2 * Self.rate)...], noise[(2 * Self.rate)...]).map { $0 - $1 }
            #expect(Self.rmsDecibels(residual[...]) < -65, "\(mains) Hz: \(Self.rmsDecibels(residual[...])) dBFS")
        }
    }

    /// A sample far beyond full scale (a broken float file) reaches the notches clipped, as the
    /// feature loop reads it: at 3e38 it overflowed their memories to NaN for the rest of the night.
    @Test func aSampleFarBeyondFullScaleDoesNotBreakTheFilters() {
        var x = Self.add(Signals.noise(seconds: 40, rms: 0.0003, seed: 19), Self.hum(50, seconds: 40, level: -45))
        let loud = 20 * Self.rate + 5
        x[loud] = 3e38
        let (output, hum) = Self.removeHum(x)
        #expect(hum != nil)
        let finite = output.allSatisfy { $0.isFinite }
        #expect(finite)
        #expect(output[loud] <= 1.01, "\(output[loud])")
        #expect(Self.rmsDecibels(output[(loud + Self.rate)...]) < -65)
    }

    /// Read through `HumFilteredSource` (as `somni classify` reads a file), a recording comes
    /// out as the remover makes it, whatever the reads ask for, with the hum said in its warnings.
    @Test func aFilteredSourceHandsOutWhatTheRemoverMakes() throws {
        let x = Self.add(Signals.noise(seconds: 37.3, rms: 0.0003, seed: 23), Self.hum(60, seconds: 37.3, level: -45))
        let expected = Self.removeHum(x).output
        let source = HumFilteredSource(BufferAudioSource(x))
        var got: [Float] = []
        var buffer = [Float](repeating: 0, count: 7_800)
        while true {
            let n = try buffer.withUnsafeMutableBufferPointer { try source.read(into: $0) }
            if n == 0 { break }
            got += buffer[0..<n]
        }
        #expect(got == expected)
        #expect(source.warnings.contains { $0.contains("mains hum (60.0 Hz") }, "\(source.warnings)")
    }

    /// From the re-check pass: a huge sample in the block where the mains frequency is first
    /// measured filled its segment's spectrum with infinity, and 48.8 Hz was fixed for the night.
    @Test func aHugeSampleWhereHumIsFirstHeardDoesNotMisplaceTheNotches() throws {
        var x = Self.add(Signals.noise(seconds: 40, rms: 0.0003, seed: 29), Self.hum(50, seconds: 40, level: -45))
        x[5 * Self.rate] = 3e38
        let hum = try #require(Self.removeHum(x).hum)
        #expect(abs(hum.mainsFrequency - 50) < 0.05 && hum.harmonics.count >= 10, "\(hum.warning)")
    }

    /// Both families at once are both notched, 300 Hz once, and both said; a tone that sits on a
    /// harmonic for a minute is notched with the hum but does not raise its level.
    @Test func twoFamiliesAreBothSaidAndAToneOnAHarmonicDoesNotRaiseTheLevel() throws {
        let seconds = 160.0
        let noise = Signals.noise(seconds: seconds, rms: 0.0003, seed: 31)
        let both = Self.add(Self.hum(50, seconds: seconds, level: -48), Self.hum(60, seconds: seconds, level: -48))
        let (output, found) = Self.removeHum(Self.add(noise, both))
        let hum = try #require(found)
        #expect(hum.alsoHeard.count == 1, "\(hum.warning)")
        #expect(hum.warning.contains("; and of 60.0 Hz") || hum.warning.contains("; and of 50.0 Hz"), "\(hum.warning)")
        let residual = zip(output[(20 * Self.rate)...], noise[(20 * Self.rate)...]).map { $0 - $1 }
        #expect(Self.rmsDecibels(residual[...]) < -62, "\(Self.rmsDecibels(residual[...])) dBFS")

        let alarm = Self.tone(950, seconds: seconds, level: -23, from: 60, to: 120)
        let withAlarm = try #require(Self.removeHum(Self.add(Self.add(noise, Self.hum(50, seconds: seconds, level: -45)), alarm)).hum)
        #expect(abs(withAlarm.level - -45) < 1.5, "\(withAlarm.warning)")
    }

    @Test func harmonicsAreListedInRuns() {
        #expect(MainsHum.runs(of: [1, 2, 3, 5, 7, 8]) == "1–3, 5, 7–8")
        #expect(MainsHum.runs(of: [2]) == "2")
    }

    @Test func aNotchRemovesItsFrequencyAndLittleElse() {
        let notch = Biquad.notch(frequency: 100, q: 100.0 / 3.3, sampleRate: 16_000)
        #expect(notch.gain(at: 100, sampleRate: 16_000) < 1e-3)
        #expect(abs(notch.gain(at: 100 + 3.3 / 2, sampleRate: 16_000) - 0.5.squareRoot()) < 0.02)
        #expect(notch.gain(at: 90, sampleRate: 16_000) > 0.98 && notch.gain(at: 200, sampleRate: 16_000) > 0.999)
    }
}
