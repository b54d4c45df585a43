import Foundation

/// Mains hum heard in a recording: steady lines at harmonics of 50 or 60 Hz, as a cheap USB
/// microphone or a laptop on its charger adds.
public struct MainsHum: Sendable, Equatable {
    /// 50 or 60: the family with more of the lines heard.
    public var mainsFrequency: Int
    /// The frequencies notched out, in Hz, ascending.
    public var lines: [Int]
    /// Seconds from the start of the recording to the block where hum was first heard.
    public var firstHeard: Double
    /// RMS of the lines where they were heard, dBFS (20 log10 of the RMS, as the envelope).
    public var level: Float

    /// What a night's warnings say of it.
    public var warning: String {
        let t = Int(firstHeard.rounded(.down))
        let when = t == 0 ? "from the start" : String(format: "from %d:%02d:%02d", t / 3600, t / 60 % 60, t % 60)
        return String(format: "the recording has mains hum (%d Hz, about %.0f dBFS, %@), filtered out before analysis "
                      + "(%@ Hz): a microphone away from chargers and power leads records without it",
                      mainsFrequency, level, when, lines.map(String.init).joined(separator: ", "))
    }
}

/// Takes mains hum out of a stream before it is analysed.
///
/// Hum at about −45 dBFS fills the pauses between snores: they ran together into events of half
/// a minute, and snoring time read up to 2.5 × what it was. Notched out, those nights score as
/// without it.
///
/// The stream is held back one block (16 s) so that a block is filtered with what was heard in
/// it. The block is heard as eight 2 s segments (Hann window, ~0.5 Hz bins); a harmonic of 50 or
/// 60 Hz up to 1 kHz is heard in a segment when its line stands at least 10 dB over the median of
/// the bins 4–12 Hz either side, and is steady when heard in at least six of the eight with its
/// quieter segments within 6 dB of its middle ones: a tone held at one level for 12 s or more.
/// Snores, speech and a fan's airflow are broad or move; a generated snore train held on 100 Hz
/// comes and goes; an 8 s sound in a synthesised night with a line at 180 Hz, heard as hum with
/// 1 s segments, is too short. It is mains hum when the fundamental or two of the family's own
/// harmonics are steady (one alarm tone that sits on a harmonic is not), and when their lines
/// together are louder than −60 dBFS (weaker hum left every snoring figure as it was). From the
/// block where a line is first heard, a notch (bandwidth f / 30, at least 4 Hz) removes it for
/// the rest of the recording; lines never heard are left alone, so a recording without hum
/// passes through unchanged.
///
/// Samples that are not numbers pass through as they came (the feature loop counts them) and
/// reach the filters as silence. Buffers are allocated in `init`; `process` allocates only when
/// handed more than a block at once.
public final class HumRemover {
    static let segmentSeconds = 2
    static let segmentsPerBlock = 8
    public static let blockSeconds = segmentSeconds * segmentsPerBlock
    static let families = [50, 60]
    static let highestLine = 1_000
    /// A line this many times its neighbours' median power (10 dB) is heard in that segment.
    static let lineRatio: Float = 10
    static let neighbourhood = 4.0...12.0
    /// Segments of a block a line must be heard in.
    static let steadySegments = 6
    /// A line's second-quietest segment is at least this share of its middle one's power (−6 dB).
    static let steadyLevelRatio: Float = 0.25
    /// Hum whose lines together are quieter than this mean square (−60 dBFS) is left alone.
    static let quietestHum = 1e-6
    /// Below this power in a segment (a line about −110 dBFS) nothing counts, digital silence's
    /// rounding included.
    private let tinyPower: Float

    public let sampleRate: Int
    private let segmentLength: Int
    private let blockLength: Int
    private let fft: RealFFT
    private let window: [Float]
    private let windowEnergy: Float
    /// A block's segments, one per lane, zero-padded to the FFT size.
    private let spectrumInput: UnsafeMutablePointer<SIMD8<Float>>
    private let power: UnsafeMutablePointer<SIMD8<Float>>
    private var block: [Float]
    private var filled = 0
    private var blocksDone = 0
    private var output: [Float]
    private var scratch = [Float](repeating: 0, count: 64)
    private var peaks = [Float](repeating: 0, count: segmentsPerBlock)

    /// A candidate line: its frequency, its FFT bin and its neighbours' bins.
    private struct Line {
        let frequency: Int
        let bin: Int
        let neighbours: [Int]
    }
    private let candidates: [Line]
    private var heardInBlock: [Bool]
    private var lineEnergyScratch: [Double]
    private var notches = NotchCascade()
    private var notched: Set<Int> = []
    private var humEnergy: Double = 0
    private var humSegments = 0
    private var firstHeard: Double?

    /// The hum heard so far, nil while none has been.
    public var hum: MainsHum? {
        guard let firstHeard, !notched.isEmpty else { return nil }
        let lines = notched.sorted()
        let family = Self.families.max { a, b in
            lines.filter { $0 % a == 0 }.count < lines.filter { $0 % b == 0 }.count
        } ?? 50
        let meanSquare = humSegments > 0 ? humEnergy / Double(humSegments) : 0
        return MainsHum(mainsFrequency: family, lines: lines, firstHeard: firstHeard,
                        level: Float(10 * log10(max(meanSquare, 1e-20))))
    }

    /// True once any line is being notched out.
    public var isFiltering: Bool { notches.count > 0 }

    public init(sampleRate: Int = analysisSampleRate) {
        self.sampleRate = sampleRate
        segmentLength = Self.segmentSeconds * sampleRate
        blockLength = Self.segmentsPerBlock * segmentLength
        var size = 4
        while size < segmentLength { size *= 2 }
        fft = try! RealFFT(size: size)  // a power of two from 4 up: valid for any positive rate
        let n = segmentLength
        window = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n))) }
        windowEnergy = window.reduce(0) { $0 + $1 * $1 }
        spectrumInput = .allocate(capacity: size)
        spectrumInput.initialize(repeating: SIMD8(), count: size)
        power = .allocate(capacity: size / 2 + 1)
        power.initialize(repeating: SIMD8(), count: size / 2 + 1)
        block = [Float](repeating: 0, count: blockLength)
        output = [Float](repeating: 0, count: blockLength)
        let binWidth = Double(sampleRate) / Double(size)
        var lines: [Line] = []
        for frequency in Set(Self.families.flatMap { stride(from: $0, through: Self.highestLine, by: $0) }).sorted()
        where Double(frequency) + Self.neighbourhood.upperBound < 0.45 * Double(sampleRate) {
            let bin = Int((Double(frequency) / binWidth).rounded())
            let neighbours = (1...size / 2).filter { Self.neighbourhood.contains(abs(Double($0) * binWidth - Double(frequency))) }
            lines.append(Line(frequency: frequency, bin: bin, neighbours: neighbours))
        }
        candidates = lines
        heardInBlock = [Bool](repeating: false, count: lines.count)
        lineEnergyScratch = [Double](repeating: 0, count: lines.count)
        // A sine of RMS r puts about r² · size · windowEnergy / 2 into its line's bins.
        tinyPower = 1e-11 * Float(size) * windowEnergy / 2
    }

    deinit {
        spectrumInput.deallocate()
        power.deallocate()
    }

    /// Takes the next samples; returns those whose block is complete, filtered, valid until the
    /// next call (empty while a block is still filling).
    public func process(_ input: UnsafeBufferPointer<Float>) -> UnsafeBufferPointer<Float> {
        var produced = 0
        var i = 0
        while i < input.count {
            let n = min(input.count - i, blockLength - filled)
            block.withUnsafeMutableBufferPointer { b in
                for k in 0..<n { b[filled + k] = input[i + k] }
            }
            filled += n
            i += n
            if filled == blockLength { completeBlock(appendingAt: &produced) }
        }
        return output.withUnsafeBufferPointer { UnsafeBufferPointer(rebasing: $0[0..<produced]) }
    }

    /// The samples still held back, filtered; call once at the end.
    public func finish() -> UnsafeBufferPointer<Float> {
        var produced = 0
        if filled > 0 { completeBlock(appendingAt: &produced) }
        return output.withUnsafeBufferPointer { UnsafeBufferPointer(rebasing: $0[0..<produced]) }
    }

    private func completeBlock(appendingAt produced: inout Int) {
        listen()
        if output.count < produced + filled { output.append(contentsOf: repeatElement(0, count: produced + filled - output.count)) }
        let count = filled, start = produced
        block.withUnsafeBufferPointer { b in
            output.withUnsafeMutableBufferPointer { out in
                let o = UnsafeMutableBufferPointer(rebasing: out[start..<start + count])
                guard notches.count > 0 else {
                    for k in 0..<count { o[k] = b[k] }
                    return
                }
                notches.filter(UnsafeBufferPointer(rebasing: b[0..<count]), into: o)
                // A sample that was not a number goes on as one: the feature loop counts it.
                for k in 0..<count where !b[k].isFinite { o[k] = b[k] }
            }
        }
        produced += count
        filled = 0
        blocksDone += 1
    }

    /// Hears the block's segments and starts a notch for each line of mains hum heard in it.
    private func listen() {
        let segments = min(Self.segmentsPerBlock, filled / segmentLength)
        // A short last block is heard by the same rule, so it needs all its segments.
        let needed = segments == Self.segmentsPerBlock ? Self.steadySegments : segments
        guard segments >= 2 else { return }  // too little to call a tone steady
        let size = fft.size, n = segmentLength
        block.withUnsafeBufferPointer { b in
            for k in 0..<size {
                var v = SIMD8<Float>()
                if k < n {
                    for lane in 0..<segments {
                        let x = b[lane * n + k]
                        v[lane] = x.isFinite ? x * window[k] : 0
                    }
                }
                spectrumInput[k] = v
            }
        }
        fft.powerSpectra(spectrumInput, into: power)
        var lineEnergy = lineEnergyScratch
        for (index, line) in candidates.enumerated() {
            var count = 0
            lineEnergy[index] = 0
            for lane in 0..<segments {
                var peak: Float = 0
                for b in line.bin - 1...line.bin + 1 { peak = max(peak, power[b][lane]) }
                peaks[lane] = peak
                let m = min(line.neighbours.count, scratch.count)
                for j in 0..<m { scratch[j] = power[line.neighbours[j]][lane] }
                scratch[0..<m].sort()
                let median = scratch[m / 2]
                guard peak > tinyPower, peak >= Self.lineRatio * median else { continue }
                count += 1
                // The line's bins less the noise under them, as the mean square of a sine.
                var sum: Float = 0
                for b in line.bin - 2...line.bin + 2 { sum += power[b][lane] - median }
                lineEnergy[index] += Double(max(0, sum)) * 2 / (Double(size) * Double(windowEnergy))
            }
            // Hum is there all the time at one level, and sounds only add to it: its line's
            // quieter segments are as loud as its middle ones. A tone that comes and goes (a
            // generated snore train held on 100 Hz) is 10–20 dB quieter in some.
            peaks[0..<segments].sort()
            heardInBlock[index] = count >= needed && peaks[1] >= Self.steadyLevelRatio * peaks[segments / 2]
        }
        lineEnergyScratch = lineEnergy
        // Mains hum: a family's fundamental, or two of its harmonics that are not the other's
        // (300 Hz is both), heard; only its lines are notched (another steady tone heard with it
        // is not hum).
        func isHum(_ family: Int) -> Bool {
            var harmonics = 0
            for (index, line) in candidates.enumerated() where heardInBlock[index] && line.frequency % family == 0 {
                if line.frequency == family { return true }
                if Self.families.allSatisfy({ $0 == family || line.frequency % $0 != 0 }) { harmonics += 1 }
            }
            return harmonics >= 2
        }
        let families = Self.families.filter(isHum)
        var energy = 0.0
        for (index, line) in candidates.enumerated() where heardInBlock[index] && families.contains(where: { line.frequency % $0 == 0 }) {
            energy += lineEnergy[index]
        }
        guard !families.isEmpty, energy / Double(segments) >= Self.quietestHum else { return }
        if firstHeard == nil { firstHeard = Double(blocksDone * Self.blockSeconds) }
        humEnergy += energy
        humSegments += segments
        // A notch's width is a trade: a narrow one rings after each sound that crosses it (2 Hz
        // rings for 0.16 s, and snores lasted longer: 7.1 snoring minutes where the reference
        // holds 5.7 and the night without hum found 5.8), a wide one dents every sound's
        // spectrum (a comb of them made a kitchen sound look voiced, talk at 0.92). f / 30, at
        // least 4 Hz, found 6.5 there, and ±0.05 Hz of mains drift (±0.65 Hz at the 13th
        // harmonic) is still 20 dB down.
        for (index, line) in candidates.enumerated()
        where heardInBlock[index] && families.contains(where: { line.frequency % $0 == 0 })
            && notches.count < NotchCascade.sections && notched.insert(line.frequency).inserted {
            let bandwidth = max(4, Double(line.frequency) / 30)
            notches.add(.notch(frequency: Double(line.frequency), q: Double(line.frequency) / bandwidth,
                               sampleRate: Double(sampleRate)))
        }
    }
}

/// Up to 24 notches in cascade, pipelined across the lanes of three `Octet`s as the band filters
/// are (`PipelinedBands`): lane k holds section k and filters what section k − 1 produced one
/// step earlier, so all sections advance in one step; unused lanes pass their input through.
/// One at a time, fourteen sections in cascade made an hour of audio take 3 s longer to analyse.
struct NotchCascade {
    static let sections = 24
    /// Steps between a sample going in and its output coming out of the last lane.
    static let latency = sections - 1

    private struct Stage {
        var b0 = Octet(repeating: 1), b1 = Octet(repeating: 0), b2 = Octet(repeating: 0)
        var a1 = Octet(repeating: 0), a2 = Octet(repeating: 0)
        var z1 = Octet(repeating: 0), z2 = Octet(repeating: 0)
        var y = Octet(repeating: 0)

        @inline(__always)
        mutating func step(_ x: Octet) {
            let new = b0 * x + z1
            z1 = b1 * x - a1 * new + z2
            z2 = b2 * x - a2 * new
            y = new
        }

        /// Digital silence would leave the memories decaying through denormals.
        mutating func flushTiny() {
            z1 = z1.flushed(below: 1e-30)
            z2 = z2.flushed(below: 1e-30)
        }

        mutating func set(lane: Int, to section: Biquad) {
            func put(_ v: inout Octet, _ value: Float) {
                switch lane {
                case 0: v.a = value
                case 1: v.b = value
                case 2: v.c = value
                case 3: v.d = value
                case 4: v.e = value
                case 5: v.f = value
                case 6: v.g = value
                default: v.h = value
                }
            }
            put(&b0, section.b0); put(&b1, section.b1); put(&b2, section.b2); put(&a1, section.a1); put(&a2, section.a2)
        }
    }

    private var first = Stage(), second = Stage(), third = Stage()
    private(set) var count = 0

    /// Adds `section` after those already there; its lane passed samples through until now, so
    /// it starts from rest.
    mutating func add(_ section: Biquad) {
        precondition(count < Self.sections, "the cascade holds \(Self.sections) sections")
        switch count / 8 {
        case 0: first.set(lane: count % 8, to: section)
        case 1: second.set(lane: count % 8, to: section)
        default: third.set(lane: count % 8, to: section)
        }
        count += 1
    }

    /// Feeds one sample; returns the output for the sample fed `latency` steps earlier.
    @inline(__always)
    private mutating func step(_ input: Float) -> Float {
        let f = first.y, s = second.y, t = third.y
        first.step(Octet(input, f.a, f.b, f.c, f.d, f.e, f.f, f.g))
        second.step(Octet(f.h, s.a, s.b, s.c, s.d, s.e, s.f, s.g))
        third.step(Octet(s.h, t.a, t.b, t.c, t.d, t.e, t.f, t.g))
        return third.y.h
    }

    /// Filters `input` into `output` (as long), going on from the samples before; a sample that is
    /// not a number enters as silence. The last `latency` outputs come from a copy run on with
    /// silence, and the pipeline's own outputs for them are skipped in the next call.
    mutating func filter(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        let n = input.count, latency = Self.latency
        for j in 0..<n {
            let x = input[j]
            let y = step(x.isFinite ? x : 0)
            if j >= latency { output[j - latency] = y }
        }
        var copy = self
        for j in n..<n + latency {
            let y = copy.step(0)
            if j >= latency { output[j - latency] = y }
        }
        // The pipeline's first `latency` outputs next time are those handed out just now from
        // the copy (or, the first time, of nothing), and are dropped there.
        first.flushTiny(); second.flushTiny(); third.flushTiny()
    }
}
