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
    }

    /// One component's generator with its filter state.
    struct Source {
        let component: Component
        private var rng: SeededRandom
        private var pink = PinkNoise()
        private var brown = BrownNoise()
        private var airflow = SynthFilter(.lowPass, frequency: 1200)
        private var rumbleFilter = SynthFilter(.lowPass, frequency: 150)
        private var sampleIndex = 0

        init(_ component: Component, rng: SeededRandom) {
            self.component = component
            self.rng = rng
        }

        mutating func next() -> Double {
            sampleIndex += 1
            let t = Double(sampleIndex) / Double(analysisSampleRate)
            switch component {
            case .room:
                return pink.next(&rng) + 0.5 * brown.next(&rng)
            case .fan(let hum):
                let swish = 1 + 0.15 * sin(2 * Double.pi * 0.8 * t)
                let motor = 0.08 * sin(2 * Double.pi * hum * t) + 0.04 * sin(4 * Double.pi * hum * t)
                return airflow.process(rng.unit() * 2 - 1) * swish + motor
            case .streetRumble:
                return rumbleFilter.process(brown.next(&rng)) * (1 + 0.3 * sin(2 * Double.pi * 0.05 * t))
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
