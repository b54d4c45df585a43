import Foundation

/// The continuous background of a synthesised night, generated sample by sample so an 8-hour bed
/// costs no memory and does not depend on how the night is cut into blocks.
struct RoomBed {
    enum Component: Equatable {
        /// Pink and brown noise: the hiss and rumble of a quiet room and its microphone.
        case room
        /// A fan or air conditioner: broadband airflow with a motor hum and slow blade swish.
        case fan(hum: Double)
        /// Distant traffic: heavy low rumble.
        case streetRumble
        /// Mains hum picked up by a cheap microphone or a laptop on its charger: the mains
        /// frequency and its harmonics to the 13th, the odd ones strongest (a buzz, not a tone).
        case mainsHum(frequency: Double)
    }

    /// One component's generator with its filter state.
    struct Source {
        let component: Component
        private var rng: SeededRandom
        private var pink = PinkNoise()
        private var brown = BrownNoise()
        private var airflow = SynthFilter(.lowPass, frequency: 1200)
        private var rumbleFilter = SynthFilter(.lowPass, frequency: 150)
        private var slow: Oscillator
        private var motor: Oscillator

        init(_ component: Component, rng: SeededRandom) {
            self.component = component
            self.rng = rng
            switch component {
            case .room: slow = Oscillator(frequency: 0); motor = Oscillator(frequency: 0)
            case .fan(let hum): slow = Oscillator(frequency: 0.8); motor = Oscillator(frequency: hum)
            case .streetRumble: slow = Oscillator(frequency: 0.05); motor = Oscillator(frequency: 0)
            case .mainsHum(let frequency): slow = Oscillator(frequency: 0); motor = Oscillator(frequency: frequency)
            }
        }

        mutating func next() -> Double {
            switch component {
            case .room:
                return pink.next(&rng) + 0.5 * brown.next(&rng)
            case .fan:
                let swish = 1 + 0.15 * slow.next()
                // Hum with its second harmonic: sin 2x = 2 sin x cos x.
                let hum = motor.sine, second = 2 * motor.sine * motor.cosine
                _ = motor.next()
                return airflow.process(rng.unit() * 2 - 1) * swish + 0.08 * hum + 0.04 * second
            case .streetRumble:
                return rumbleFilter.process(brown.next(&rng)) * (1 + 0.3 * slow.next())
            case .mainsHum:
                // sin kx from sin x and cos x: sin (k+1)x = 2 cos x sin kx − sin (k−1)x.
                let sine = motor.sine, twiceCosine = 2 * motor.cosine
                _ = motor.next()
                var previous = 0.0, current = sine, sum = 0.0
                for k in 1...13 {
                    sum += current * (k % 2 == 1 ? 1 : 0.3) / Double(k)
                    (previous, current) = (current, twiceCosine * current - previous)
                }
                return sum
            }
        }
    }

    private var sources: [Source] = []
    private var gains: [Double] = []

    /// `levels` pairs a component with its RMS level in dBFS; each is calibrated on its own first
    /// seconds (a copy of its generator) so the level is what the caller asked for.
    init(levels: [(Component, Double)], rng: inout SeededRandom) {
        for (component, level) in levels {
            let source = Source(component, rng: rng.split())
            var probe = source
            var sum = 0.0
            let probeLength = 2 * analysisSampleRate
            for _ in 0..<probeLength { let x = probe.next(); sum += x * x }
            let rms = (sum / Double(probeLength)).squareRoot()
            sources.append(source)
            gains.append(rms > 0 ? pow(10, level / 20) / rms : 0)
        }
    }

    mutating func next() -> Float {
        var x = 0.0
        for k in sources.indices { x += gains[k] * sources[k].next() }
        return Float(x)
    }
}
