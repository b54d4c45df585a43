import Foundation

/// The kinds of sound a synthesised night is built from.
public enum SoundKind: String, Sendable, CaseIterable, Codable {
    case snore, speech, cough, door, footsteps, traffic, fan
    case roomNoise = "room_noise"

    /// The class a reference event of this kind gets; nil for distractors and beds.
    public var eventClass: EventClass? {
        switch self {
        case .snore: .snoring
        case .speech: .sleepTalk
        case .cough: .cough
        case .door, .footsteps, .traffic, .fan, .roomNoise: nil
        }
    }
}

/// Where the sounds of a synthesised night come from.
///
/// `clip` must be deterministic in `rng`: the synthesiser measures each clip while planning and
/// asks for it again (with a copy of the same generator) when rendering, so it never keeps a
/// night's clips in memory. A clip is 16 kHz mono and starts and ends where its sound does.
public protocol SoundBank: AnyObject {
    func clip(_ kind: SoundKind, rng: inout SeededRandom) throws -> [Float]
    /// True when `.roomNoise` clips are recordings to lay under the whole night as a bed.
    var providesBeds: Bool { get }
}

/// Sounds generated in code: no recordings needed, fully deterministic.
public final class GeneratedSoundBank: SoundBank {
    public init() {}

    public var providesBeds: Bool { false }

    public func clip(_ kind: SoundKind, rng: inout SeededRandom) -> [Float] {
        switch kind {
        case .snore: snore(&rng)
        case .speech: speech(&rng)
        case .cough: cough(&rng)
        case .door: door(&rng)
        case .footsteps: footsteps(&rng)
        case .traffic: trafficPass(&rng)
        case .fan: steady(RoomBed.Component.fan(hum: rng.uniform(40...70)), seconds: 8, &rng)
        case .roomNoise: steady(RoomBed.Component.room, seconds: 8, &rng)
        }
    }

    private static let rate = Double(analysisSampleRate)

    /// One snore: a 0.8–2 s low voiced pulse (60–140 Hz with harmonics) through a low resonance,
    /// with breathy noise, a slow swell and a quicker fall.
    private func snore(_ rng: inout SeededRandom) -> [Float] {
        let length = rng.uniform(0.8...2.0)
        let n = Int(length * Self.rate)
        let f0 = rng.uniform(60...140)
        let drift = rng.uniform(-0.15...0.1)  // pitch change over the pulse
        let breath = rng.uniform(0.15...0.5)
        let flutter = rng.chance(0.3) ? rng.uniform(20...40) : 0  // palatal flutter
        var resonance = SynthFilter(.bandPass, frequency: rng.uniform(150...450), q: 1.2)
        var body = SynthFilter(.lowPass, frequency: rng.uniform(500...900))
        var breathFilter = SynthFilter(.lowPass, frequency: 700)
        var phase = 0.0
        var out = [Float](repeating: 0, count: n)
        for i in 0..<n {
            let t = Double(i) / Double(n)
            let f = f0 * (1 + drift * t) * (1 + 0.01 * (rng.unit() - 0.5))
            phase += f / Self.rate
            if phase >= 1 { phase -= 1 }
            var voice = glottalPulse(phase) - 0.35
            if flutter > 0 { voice *= 0.6 + 0.4 * sin(2 * Double.pi * flutter * Double(i) / Self.rate) }
            let noise = breathFilter.process(rng.unit() * 2 - 1)
            let x = body.process(0.6 * resonance.process(voice) + 0.5 * voice + breath * noise)
            out[i] = Float(x * envelope(t, attack: 0.3, release: 0.35))
        }
        return normalizedToPeak(out)
    }

    /// Speech-like babble: 1–4 s of syllables at 3–6 Hz, voiced at 100–250 Hz through three
    /// formant resonators whose frequencies change per syllable, with a short consonant burst.
    private func speech(_ rng: inout SeededRandom) -> [Float] {
        let length = rng.uniform(1...4)
        let syllableRate = rng.uniform(3...6)
        let syllables = max(1, Int((length * syllableRate).rounded()))
        let syllableSamples = Int(Self.rate / syllableRate)
        let n = syllables * syllableSamples
        let f0 = rng.uniform(100...250)
        var out = [Float](repeating: 0, count: n)
        var phase = 0.0
        var fricative = SynthFilter(.highPass, frequency: 2500)
        var soundEnd = 1
        for s in 0..<syllables {
            var formants = [SynthFilter(.bandPass, frequency: rng.uniform(300...800), q: 5),
                            SynthFilter(.bandPass, frequency: rng.uniform(900...2300), q: 8),
                            SynthFilter(.bandPass, frequency: rng.uniform(2400...3000), q: 10)]
            let weights = [1.0, 0.6, 0.3]
            let pitch = f0 * rng.uniform(0.9...1.15) * (1 - 0.1 * Double(s) / Double(syllables))
            let voicedShare = rng.uniform(0.7...0.9)
            let burst = rng.chance(0.6) ? Int(rng.uniform(0.02...0.04) * Self.rate) : 0
            let voiced = Int(Double(syllableSamples) * voicedShare)
            let base = s * syllableSamples
            for i in 0..<voiced {
                let index = base + i
                phase += pitch / Self.rate
                if phase >= 1 { phase -= 1 }
                let source = glottalPulse(phase) - 0.35
                var x = 0.0
                for k in 0..<3 { x += weights[k] * formants[k].process(source) }
                if i < burst { x += 0.3 * fricative.process(rng.unit() * 2 - 1) }
                let t = Double(i) / Double(voiced)
                out[index] = Float(x * envelope(t, attack: 0.15, release: 0.3))
            }
            soundEnd = base + voiced
        }
        // The last syllable's unvoiced tail is silence: cut it so the clip ends with the sound.
        return normalizedToPeak(Array(out[0..<soundEnd]))
    }

    /// One cough: 0.2–0.5 s, a sharp broadband onset through two resonances decaying
    /// exponentially, with a voiced tail.
    private func cough(_ rng: inout SeededRandom) -> [Float] {
        let length = rng.uniform(0.2...0.5)
        let n = Int(length * Self.rate)
        var low = SynthFilter(.bandPass, frequency: rng.uniform(400...1200), q: 1.5)
        var high = SynthFilter(.bandPass, frequency: rng.uniform(1500...3500), q: 1.2)
        let tau = length / rng.uniform(2.5...4)
        let attack = Int(0.004 * Self.rate)
        let f0 = rng.uniform(250...400)
        var phase = 0.0
        var out = [Float](repeating: 0, count: n)
        for i in 0..<n {
            let seconds = Double(i) / Self.rate
            let white = rng.unit() * 2 - 1
            phase += f0 / Self.rate
            if phase >= 1 { phase -= 1 }
            let t = Double(i) / Double(n)
            let voiced = 0.4 * (glottalPulse(phase) - 0.35) * sin(Double.pi * t)
            let x = 1.5 * low.process(white) + high.process(white) + 0.3 * white + voiced
            let rise = i < attack ? Double(i) / Double(attack) : 1
            let fadeOut = min(1, Double(n - i) / (0.01 * Self.rate))
            out[i] = Float(x * rise * exp(-seconds / tau) * fadeOut)
        }
        return normalizedToPeak(out)
    }

    /// A door closing: a low decaying thud with a click, sometimes a second rattle.
    private func door(_ rng: inout SeededRandom) -> [Float] {
        let n = Int(rng.uniform(0.4...0.9) * Self.rate)
        var out = [Float](repeating: 0, count: n)
        addImpact(&out, at: 0, frequency: rng.uniform(40...90), decay: rng.uniform(0.08...0.2), click: 0.5, &rng)
        if rng.chance(0.5) {
            let at = Int(rng.uniform(0.05...0.15) * Self.rate)
            addImpact(&out, at: at, frequency: rng.uniform(90...160), decay: 0.05, click: 0.3, scale: 0.4, &rng)
        }
        return normalizedToPeak(out)
    }

    /// 4–10 footsteps 0.45–0.7 s apart, louder in the middle as someone passes.
    private func footsteps(_ rng: inout SeededRandom) -> [Float] {
        let steps = rng.int(4...10)
        let interval = rng.uniform(0.45...0.7)
        let n = Int((Double(steps - 1) * interval + 0.3) * Self.rate)
        var out = [Float](repeating: 0, count: n)
        for s in 0..<steps {
            let at = Int(Double(s) * interval * Self.rate * rng.uniform(0.95...1.05))
            let closeness = sin(Double.pi * (Double(s) + 0.5) / Double(steps))
            addImpact(&out, at: at, frequency: rng.uniform(70...110), decay: 0.04, click: 0.2,
                      scale: 0.3 + 0.7 * closeness, &rng)
        }
        return normalizedToPeak(out)
    }

    /// A vehicle passing: 8–20 s of low rumble with an engine tone, swelling and fading.
    private func trafficPass(_ rng: inout SeededRandom) -> [Float] {
        let n = Int(rng.uniform(8...20) * Self.rate)
        var rumble = BrownNoise()
        var lowPass = SynthFilter(.lowPass, frequency: rng.uniform(200...400))
        let engine = rng.uniform(30...60)
        var out = [Float](repeating: 0, count: n)
        for i in 0..<n {
            let t = Double(i) / Double(n)
            let bump = exp(-pow((t - 0.5) / 0.17, 2) / 2) * sin(Double.pi * t)
            let tone = 0.2 * sin(2 * Double.pi * engine * (1 + 0.05 * (0.5 - t)) * Double(i) / Self.rate)
            out[i] = Float((lowPass.process(rumble.next(&rng)) * 8 + tone) * bump)
        }
        return normalizedToPeak(out)
    }

    private func steady(_ component: RoomBed.Component, seconds: Double, _ rng: inout SeededRandom) -> [Float] {
        var source = RoomBed.Source(component, rng: rng.split())
        return normalizedToPeak((0..<Int(seconds * Self.rate)).map { _ in Float(source.next()) })
    }

    private func addImpact(_ out: inout [Float], at start: Int, frequency: Double, decay: Double, click: Double,
                           scale: Double = 1, _ rng: inout SeededRandom) {
        var clickFilter = SynthFilter(.bandPass, frequency: rng.uniform(1500...3000), q: 1)
        for i in start..<out.count {
            let seconds = Double(i - start) / Self.rate
            let body = sin(2 * Double.pi * frequency * seconds) * exp(-seconds / decay)
            let snap = seconds < 0.01 ? click * clickFilter.process(rng.unit() * 2 - 1) * (1 - seconds / 0.01) : 0
            out[i] += Float(scale * (body + snap))
        }
    }

    /// A smooth swell and fall over t in [0, 1].
    private func envelope(_ t: Double, attack: Double, release: Double) -> Double {
        if t < attack { return pow(sin(0.5 * Double.pi * t / attack), 2) }
        if t > 1 - release { return pow(sin(0.5 * Double.pi * (1 - t) / release), 2) }
        return 1
    }
}
