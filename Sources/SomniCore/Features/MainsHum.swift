import Foundation

/// Mains hum heard in a recording: steady lines at harmonics of 50 or 60 Hz, as a cheap USB
/// microphone or a laptop on its charger adds.
public struct MainsHum: Sendable, Equatable {
    /// The mains frequency as measured (a grid holds 50 or 60 Hz to ±0.05 Hz; a generator or an
    /// inverter may be a few tenths off), in Hz.
    public var mainsFrequency: Double
    /// The harmonics notched out (1 is the mains frequency itself), ascending.
    public var harmonics: [Int]
    /// Seconds from the start of the recording to the block where hum was first heard.
    public var firstHeard: Double
    /// RMS of the lines in the median block of those hum was heard in, dBFS (20 log10 of the
    /// RMS, as the envelope).
    public var level: Float
    /// The other family's mains frequency and harmonics, where both were heard.
    public var alsoHeard: [(mainsFrequency: Double, harmonics: [Int])] = []

    public static func == (a: MainsHum, b: MainsHum) -> Bool {
        a.mainsFrequency == b.mainsFrequency && a.harmonics == b.harmonics && a.firstHeard == b.firstHeard && a.level == b.level
            && a.alsoHeard.map(\.mainsFrequency) == b.alsoHeard.map(\.mainsFrequency) && a.alsoHeard.map(\.harmonics) == b.alsoHeard.map(\.harmonics)
    }

    /// What a night's warnings say of it.
    public var warning: String {
        let t = Int(firstHeard.rounded(.down))
        let when = t == 0 ? "from the start" : String(format: "from %d:%02d:%02d", t / 3600, t / 60 % 60, t % 60)
        let others = alsoHeard.map { String(format: "; and of %.1f Hz, harmonics %@", $0.mainsFrequency, Self.runs(of: $0.harmonics)) }
        return String(format: "the recording has mains hum (%.1f Hz, about %.0f dBFS, %@), filtered out before analysis "
                      + "(harmonics %@%@): a microphone away from chargers and power leads records without it",
                      mainsFrequency, level, when, Self.runs(of: harmonics), others.joined())
    }

    /// "1–5, 7, 9–13": consecutive harmonics as one run.
    static func runs(of numbers: [Int]) -> String {
        var parts: [String] = []
        var i = 0
        while i < numbers.count {
            var j = i
            while j + 1 < numbers.count, numbers[j + 1] == numbers[j] + 1 { j += 1 }
            parts.append(j > i ? "\(numbers[i])–\(numbers[j])" : "\(numbers[i])")
            i = j + 1
        }
        return parts.joined(separator: ", ")
    }
}

/// Takes mains hum out of a stream before it is analysed.
///
/// Hum at about −45 dBFS fills the pauses between snores: they ran together into events of half
/// a minute, and snoring time read up to 2.5 × what it was. Notched out, those nights score as
/// without it.
///
/// The stream is held back one block (16 s) so that a block is filtered with what was heard in
/// it. The block is heard at a quarter of the rate (the lines lie below 1 kHz) as eight 2 s
/// segments (Hann window, ~0.5 Hz bins). The mains frequency is measured first, from the
/// clearest of its first four harmonics in the block's mean spectrum (within 1 Hz of 50 or 60:
/// a notch left at 50 Hz under hum at 49.7 Hz took the lines down by 10–16 dB only, and what was
/// left read as snoring for minutes); then each harmonic up to 1 kHz is heard in a segment when
/// its line stands at least 10 dB over the median of the bins 4–12 Hz either side, and is steady
/// when heard in at least six of the eight with its quieter segments within 6 dB of its middle
/// ones: a tone held at one level for 12 s or more. Snores, speech and a fan's airflow are broad
/// or move; a generated snore train held on 100 Hz comes and goes; an 8 s sound in a synthesised
/// night with a line at 180 Hz, heard as hum with 1 s segments, is too short. It is mains hum
/// when the fundamental or two of the family's own harmonics are steady (one alarm tone that
/// sits on a harmonic is not; 300 Hz belongs to both families), and when their lines together
/// are louder than −60 dBFS (weaker hum left every snoring figure as it was). From the block
/// where a line is first heard, a notch (bandwidth f / 30, at least 4 Hz) at the measured
/// frequency removes it for the rest of the recording; lines never heard are left alone, so a
/// recording without hum passes through unchanged.
///
/// Samples beyond full scale reach the filters clipped, as the feature loop reads them (one at
/// 3e38 overflowed the sections' memories to NaN for the rest of the night); samples that are
/// not numbers pass through as they came (the feature loop counts them) and reach the filters
/// as silence. Buffers are allocated in `init`; `process` allocates only when handed more than a
/// block at once.
public final class HumRemover {
    static let segmentSeconds = 2
    static let segmentsPerBlock = 8
    public static let blockSeconds = segmentSeconds * segmentsPerBlock
    /// Heard at a quarter of the rate, through a 7-tap triangle (two 4-sample means): what lies
    /// 3–4 kHz, folding onto 0–1 kHz, is 20–40 dB down, and the FFTs are a quarter the size
    /// (listening at the full rate took 40 % of a WAV night's analysis).
    static let decimation = 4
    private static let decimationTaps: [Float] = [1, 2, 3, 4, 3, 2, 1].map { $0 / 16 }
    static let families = [50, 60]
    static let highestLine = 1_000.0
    /// How far from 50 or 60 Hz the mains frequency is looked for.
    static let mainsTolerance = 1.0
    /// A line this many times its neighbours' median power (10 dB) is heard in that segment.
    static let lineRatio: Float = 10
    static let neighbourhood = 4.0...12.0
    /// Segments of a block a line must be heard in.
    static let steadySegments = 6
    /// A line's second-quietest segment is at least this share of its middle one's power (−6 dB).
    static let steadyLevelRatio: Float = 0.25
    /// Hum whose lines together are quieter than this mean square (−60 dBFS) is left alone.
    static let quietestHum = 1e-6

    public let sampleRate: Int
    private let heardRate: Double
    private let segmentLength: Int
    private let blockLength: Int
    private let fft: RealFFT
    private let binWidth: Double
    private let window: [Float]
    private let windowEnergy: Float
    /// Below this power in a segment (a line about −110 dBFS) nothing counts, digital silence's
    /// rounding included.
    private let tinyPower: Float
    /// A block's segments, one per lane, zero-padded to the FFT size.
    private let spectrumInput: UnsafeMutablePointer<SIMD8<Float>>
    private let power: UnsafeMutablePointer<SIMD8<Float>>
    private var block: [Float]
    private var heard: [Float]
    private var filled = 0
    private var blocksDone = 0
    private var output: [Float]
    private var scratch = [Float](repeating: 0, count: 64)
    private var peaks = [Float](repeating: 0, count: segmentsPerBlock)

    /// Each family's measured mains frequency, fixed once one of its lines is notched.
    private var measured: [Int: Double] = [:]
    /// The harmonics notched, by family.
    private var notchedHarmonics: [Int: Set<Int>] = [:]
    private var notches = NotchCascade()
    private var notchedFrequencies: [Double] = []
    /// Each hum block's mean square of its lines.
    private var blockLevels: [Double] = []
    private var firstHeard: Double?

    /// The hum heard so far, nil while none has been: the family with more lines notched, and
    /// the other's too where both were heard (a 60 Hz generator in a 50 Hz country).
    public var hum: MainsHum? {
        let families = notchedHarmonics.filter { !$0.value.isEmpty }
            .sorted { $0.value.count > $1.value.count || ($0.value.count == $1.value.count && $0.key < $1.key) }
        guard let firstHeard, let family = families.first?.key else { return nil }
        let levels = blockLevels.sorted()
        let meanSquare = levels.isEmpty ? 0 : levels[levels.count / 2]
        var hum = MainsHum(mainsFrequency: measured[family] ?? Double(family), harmonics: (notchedHarmonics[family] ?? []).sorted(),
                           firstHeard: firstHeard, level: Float(10 * log10(max(meanSquare, 1e-20))))
        hum.alsoHeard = families.dropFirst().map { (measured[$0.key] ?? Double($0.key), $0.value.sorted()) }
        return hum
    }

    /// True once any line is being notched out.
    public var isFiltering: Bool { notches.count > 0 }

    public init(sampleRate: Int = analysisSampleRate) {
        self.sampleRate = sampleRate
        heardRate = Double(sampleRate) / Double(Self.decimation)
        segmentLength = Self.segmentSeconds * sampleRate / Self.decimation
        blockLength = Self.segmentsPerBlock * Self.segmentSeconds * sampleRate
        var size = 4
        while size < segmentLength { size *= 2 }
        fft = try! RealFFT(size: size)  // a power of two from 4 up: valid for any positive rate
        binWidth = heardRate / Double(size)
        let n = segmentLength
        window = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n))) }
        windowEnergy = window.reduce(0) { $0 + $1 * $1 }
        spectrumInput = .allocate(capacity: size)
        spectrumInput.initialize(repeating: SIMD8(), count: size)
        power = .allocate(capacity: size / 2 + 1)
        power.initialize(repeating: SIMD8(), count: size / 2 + 1)
        block = [Float](repeating: 0, count: blockLength)
        heard = [Float](repeating: 0, count: blockLength / Self.decimation)
        output = [Float](repeating: 0, count: blockLength)
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
                (b.baseAddress! + filled).update(from: input.baseAddress! + i, count: n)
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

    /// What the notches take of a sample: clipped to full scale, silence where it is not a number.
    @inline(__always)
    static func clipped(_ x: Float) -> Float { x.isFinite ? min(1, max(-1, x)) : 0 }

    private func completeBlock(appendingAt produced: inout Int) {
        listen()
        if output.count < produced + filled { output.append(contentsOf: repeatElement(0, count: produced + filled - output.count)) }
        let count = filled, start = produced
        block.withUnsafeBufferPointer { b in
            output.withUnsafeMutableBufferPointer { out in
                let o = UnsafeMutableBufferPointer(rebasing: out[start..<start + count])
                guard notches.count > 0 else {
                    o.baseAddress!.update(from: b.baseAddress!, count: count)
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

    /// The block at a quarter of the rate. A sum that is not a number (a damaged sample) is
    /// silence; one beyond full scale is heard as a click at full scale.
    private func decimate() -> Int {
        let count = filled / Self.decimation
        let taps = Self.decimationTaps, reach = taps.count / 2
        block.withUnsafeBufferPointer { b in
            heard.withUnsafeMutableBufferPointer { h in
                for m in 0..<count {
                    let centre = m * Self.decimation
                    var sum: Float = 0
                    if centre >= reach && centre + reach < filled {
                        let x = b.baseAddress! + (centre - reach)
                        sum = taps[0] * (x[0] + x[6]) + taps[1] * (x[1] + x[5]) + taps[2] * (x[2] + x[4]) + taps[3] * x[3]
                    } else {
                        for j in 0..<taps.count where centre - reach + j >= 0 && centre - reach + j < filled {
                            sum += taps[j] * b[centre - reach + j]
                        }
                    }
                    // Clipped as a sample is: 3e38 squared in the FFT filled every bin of its
                    // segment with infinity, and the mains frequency was measured as 48.8 Hz.
                    h[m] = sum.isFinite ? min(1, max(-1, sum)) : 0
                }
            }
        }
        return count
    }

    /// Power of bin `b` summed over the first `segments` lanes: the block's mean spectrum, times
    /// the segment count.
    @inline(__always)
    private func summed(_ b: Int, _ segments: Int) -> Float {
        var sum: Float = 0
        for lane in 0..<segments { sum += power[b][lane] }
        return sum
    }

    /// The median of `count` values in `scratch` (reordered).
    private func scratchMedian(_ count: Int) -> Float {
        scratch[0..<count].sort()
        return scratch[count / 2]
    }

    /// Bins whose centres lie `neighbourhood` away from `frequency`, on either side.
    private func neighbourBins(of frequency: Double) -> (ClosedRange<Int>, ClosedRange<Int>) {
        let lower = Int(((frequency - Self.neighbourhood.upperBound) / binWidth).rounded(.up))
            ... Int(((frequency - Self.neighbourhood.lowerBound) / binWidth).rounded(.down))
        let upper = Int(((frequency + Self.neighbourhood.lowerBound) / binWidth).rounded(.up))
            ... Int(((frequency + Self.neighbourhood.upperBound) / binWidth).rounded(.down))
        return (lower, upper)
    }

    /// The mains frequency of `family` measured from the block's mean spectrum: the peak of the
    /// clearest of the first four harmonics, placed between bins by a parabola through the
    /// logarithms of its power and its neighbours'. Nil where none stands 10 dB clear.
    private func measureMains(_ family: Int, segments: Int) -> Double? {
        var best: (clearance: Float, frequency: Double)?
        for k in 1...4 {
            let low = Int(((Double(k) * (Double(family) - Self.mainsTolerance)) / binWidth).rounded(.down))
            let high = Int(((Double(k) * (Double(family) + Self.mainsTolerance)) / binWidth).rounded(.up))
            var peakBin = low, peak: Float = 0
            for b in low...high {
                let p = summed(b, segments)
                if p > peak { peak = p; peakBin = b }
            }
            let (below, above) = neighbourBins(of: Double(peakBin) * binWidth)
            var m = 0
            for b in below where m < scratch.count && b > 0 { scratch[m] = summed(b, segments); m += 1 }
            for b in above where m < scratch.count { scratch[m] = summed(b, segments); m += 1 }
            guard m > 0 else { continue }
            let median = scratchMedian(m)
            guard peak.isFinite, peak > tinyPower, peak >= Self.lineRatio * median else { continue }
            let clearance = peak / max(median, .leastNormalMagnitude)
            let (l, c, r) = (log(max(summed(peakBin - 1, segments), 1e-30)), log(peak), log(max(summed(peakBin + 1, segments), 1e-30)))
            let curvature = l - 2 * c + r
            let offset = curvature < 0 ? Double(0.5 * (l - r) / curvature) : 0
            let frequency = (Double(peakBin) + max(-0.5, min(0.5, offset))) * binWidth / Double(k)
            if best == nil || clearance > best!.clearance { best = (clearance, frequency) }
        }
        return best?.frequency
    }

    /// Hears the block's segments and starts a notch for each line of mains hum heard in it.
    private func listen() {
        let count = decimate()
        let segments = min(Self.segmentsPerBlock, count / segmentLength)
        // A short last block is heard by the same rule, so it needs all its segments.
        let needed = segments == Self.segmentsPerBlock ? Self.steadySegments : segments
        guard segments >= 2 else { return }  // too little to call a tone steady
        let size = fft.size, n = segmentLength
        heard.withUnsafeBufferPointer { h in
            window.withUnsafeBufferPointer { w in
                for k in n..<size { spectrumInput[k] = SIMD8() }
                for k in 0..<n {
                    var v = SIMD8<Float>()
                    for lane in 0..<segments { v[lane] = h[lane * n + k] * w[k] }
                    spectrumInput[k] = v
                }
            }
        }
        fft.powerSpectra(spectrumInput, into: power)

        struct Steady { let family: Int, harmonic: Int, frequency: Double, energy: Double }
        var steady: [Steady] = []
        for family in Self.families {
            guard let mains = measured[family] ?? measureMains(family, segments: segments) else { continue }
            var harmonic = 1
            while Double(harmonic) * mains <= Self.highestLine, Double(harmonic) * mains + Self.neighbourhood.upperBound < 0.45 * heardRate {
                defer { harmonic += 1 }
                let frequency = Double(harmonic) * mains
                let bin = Int((frequency / binWidth).rounded())
                let (below, above) = neighbourBins(of: frequency)
                var heardIn = 0
                var energy = 0.0
                for lane in 0..<segments {
                    var peak: Float = 0
                    for b in bin - 1...bin + 1 { peak = max(peak, power[b][lane]) }
                    peaks[lane] = peak
                    var m = 0
                    for b in below where m < scratch.count { scratch[m] = power[b][lane]; m += 1 }
                    for b in above where m < scratch.count { scratch[m] = power[b][lane]; m += 1 }
                    let median = scratchMedian(m)
                    guard peak > tinyPower, peak >= Self.lineRatio * median else { continue }
                    heardIn += 1
                    // The line's bins less the noise under them, as the mean square of a sine.
                    var sum: Float = 0
                    for b in bin - 2...bin + 2 { sum += power[b][lane] - median }
                    energy += Double(max(0, sum)) * 2 / (Double(size) * Double(windowEnergy))
                }
                // Hum is there all the time at one level, and sounds only add to it: its line's
                // quieter segments are as loud as its middle ones. A tone that comes and goes (a
                // generated snore train held on 100 Hz) is 10–20 dB quieter in some.
                peaks[0..<segments].sort()
                if heardIn >= needed && peaks[1] >= Self.steadyLevelRatio * peaks[segments / 2] {
                    steady.append(Steady(family: family, harmonic: harmonic, frequency: frequency, energy: energy))
                }
            }
        }
        // Mains hum: a family's fundamental, or two of its harmonics that are not the other's
        // (300 Hz is both), steady; only its lines are notched (another steady tone heard with
        // it is not hum).
        let humFamilies = Self.families.filter { family in
            let mine = steady.filter { $0.family == family }
            return mine.contains { $0.harmonic == 1 }
                || mine.filter { line in Self.families.allSatisfy { $0 == family || (line.harmonic * family) % $0 != 0 } }.count >= 2
        }
        let lines = steady.filter { humFamilies.contains($0.family) }
        let energy = lines.reduce(0) { $0 + $1.energy }
        guard !lines.isEmpty, energy / Double(segments) >= Self.quietestHum else { return }
        if firstHeard == nil { firstHeard = Double(blocksDone * Self.blockSeconds) }
        // The level said is the median block's: a tone that sits on a harmonic for a minute
        // (an alarm on 950 Hz) is notched with the hum but does not raise it.
        blockLevels.append(energy / Double(segments))
        // A notch's width is a trade: a narrow one rings after each sound that crosses it (2 Hz
        // rings for 0.16 s, and snores lasted longer: 7.1 snoring minutes where the reference
        // holds 5.7 and the night without hum found 5.8), a wide one dents every sound's
        // spectrum (a comb of them made a kitchen sound look voiced, talk at 0.92). f / 30, at
        // least 4 Hz, found 6.5 there; a grid's ±0.05 Hz of drift (±0.65 Hz at the 13th
        // harmonic) is still 20 dB down.
        for line in lines where notches.count < NotchCascade.sections {
            // 300 Hz is 6 × 50 and 5 × 60: one notch for both families.
            guard !notchedFrequencies.contains(where: { abs($0 - line.frequency) < 1 }),
                  notchedHarmonics[line.family, default: []].insert(line.harmonic).inserted else { continue }
            notchedFrequencies.append(line.frequency)
            if measured[line.family] == nil { measured[line.family] = line.frequency / Double(line.harmonic) }
            let bandwidth = max(4, line.frequency / 30)
            notches.add(.notch(frequency: line.frequency, q: line.frequency / bandwidth, sampleRate: Double(sampleRate)))
        }
    }
}

/// Up to 24 notches in cascade, pipelined across the lanes of three `Octet`s as the band filters
/// are (`PipelinedBands`): lane k holds section k and filters what section k − 1 produced one
/// step earlier, so all sections advance in one step; unused lanes pass their input through.
/// One at a time, fourteen sections in cascade made an hour of audio take 3 s longer to analyse.
struct NotchCascade {
    static let sections = 24

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

    /// Stages stepped: only those holding a section, so that hum of eight lines or fewer costs
    /// one stage a sample, not three.
    private var stagesInUse: Int { (count + 7) / 8 }

    /// Filters `input` into `output` (as long), going on from the samples before; a sample enters
    /// clipped to full scale, as silence when it is not a number. The last outputs come from a
    /// copy run on with silence, and the pipeline's own outputs for them are dropped in the next
    /// call (as are those of the samples before the pipeline started, or before it grew a stage:
    /// a sample then still in flight was handed out by the copy).
    mutating func filter(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        switch stagesInUse {
        case 1: run(input, output) { $0.stepOne($1) }
        case 2: run(input, output) { $0.stepTwo($1) }
        default: run(input, output) { $0.stepThree($1) }
        }
        first.flushTiny(); second.flushTiny(); third.flushTiny()
    }

    @inline(__always)
    private mutating func run(_ input: UnsafeBufferPointer<Float>, _ output: UnsafeMutableBufferPointer<Float>,
                              _ step: (inout NotchCascade, Float) -> Float) {
        let n = input.count, latency = 8 * stagesInUse - 1
        for j in 0..<n {
            let y = step(&self, HumRemover.clipped(input[j]))
            if j >= latency { output[j - latency] = y }
        }
        var copy = self
        for j in n..<n + latency {
            let y = step(&copy, 0)
            if j >= latency { output[j - latency] = y }
        }
    }

    @inline(__always)
    private mutating func stepOne(_ input: Float) -> Float {
        let f = first.y
        first.step(Octet(input, f.a, f.b, f.c, f.d, f.e, f.f, f.g))
        return first.y.h
    }

    @inline(__always)
    private mutating func stepTwo(_ input: Float) -> Float {
        let f = first.y, s = second.y
        first.step(Octet(input, f.a, f.b, f.c, f.d, f.e, f.f, f.g))
        second.step(Octet(f.h, s.a, s.b, s.c, s.d, s.e, s.f, s.g))
        return second.y.h
    }

    @inline(__always)
    private mutating func stepThree(_ input: Float) -> Float {
        let f = first.y, s = second.y, t = third.y
        first.step(Octet(input, f.a, f.b, f.c, f.d, f.e, f.f, f.g))
        second.step(Octet(f.h, s.a, s.b, s.c, s.d, s.e, s.f, s.g))
        third.step(Octet(s.h, t.a, t.b, t.c, t.d, t.e, t.f, t.g))
        return third.y.h
    }
}

/// A source with mains hum taken out by a `HumRemover`, for what reads a recording outside
/// `NightAnalyzer` (which runs its own): `somni classify` then hears the windows as an
/// analysis does. It hands samples out one block (16 s) after it has read them; the night's
/// hum warning joins the source's own once it has been read to the end.
public final class HumFilteredSource: AudioSource {
    private let base: any AudioSource
    private let remover: HumRemover
    private var readBuffer: [Float]
    /// Filtered samples not yet handed out, from `pendingStart`.
    private var pending: [Float] = []
    private var pendingStart = 0
    private var baseEnded = false

    public init(_ base: any AudioSource) {
        self.base = base
        remover = HumRemover()
        readBuffer = [Float](repeating: 0, count: analysisSampleRate)
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        while pending.count - pendingStart < buffer.count && !baseEnded {
            let n = try readBuffer.withUnsafeMutableBufferPointer { try base.checkedRead(into: $0) }
            let filtered = n == 0 ? remover.finish()
                : readBuffer.withUnsafeBufferPointer { remover.process(UnsafeBufferPointer(rebasing: $0[0..<n])) }
            baseEnded = n == 0
            if pendingStart > 0 {
                pending.removeFirst(pendingStart)
                pendingStart = 0
            }
            pending.append(contentsOf: filtered)
        }
        let count = min(buffer.count, pending.count - pendingStart)
        pending.withUnsafeBufferPointer { p in
            for k in 0..<count { buffer[k] = p[pendingStart + k] }
        }
        pendingStart += count
        return count
    }

    public var expectedDuration: Double? { base.expectedDuration }
    public var warnings: [String] { base.warnings + (remover.hum.map { [$0.warning] } ?? []) }
    public var recordedSampleRate: Int? { base.recordedSampleRate }
    public var partsAtTheRecordedRate: [String]? { base.partsAtTheRecordedRate }
    public var gaps: [RecordingGap] { base.gaps }
    public var fingerprint: String? { base.fingerprint }
    /// What the hum remover heard so far.
    public var hum: MainsHum? { remover.hum }
}
