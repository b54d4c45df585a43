import Foundation

/// How a window of audio becomes the classifier's input: frames, FFT, mel bands, log.
/// Stored in the model file so a model is always fed what it was trained on.
public struct FeatureSettings: Codable, Sendable, Equatable {
    public var sampleRate: Int
    /// Samples per classified window.
    public var windowLength: Int
    /// Samples per Hann frame and hop between frames.
    public var frameLength: Int
    public var hopLength: Int
    public var fftSize: Int
    public var melBands: Int
    public var minFrequency: Double
    public var maxFrequency: Double
    /// Power below this is clamped before the log (keeps digital silence finite).
    public var logFloor: Float
    /// When set, a second input channel: each band less its value at this quantile over the
    /// window's frames, so the network also reads how far a sound rises above the window's own
    /// floor (which a steady fan or hum lifts in every frame alike). nil: the log-mel alone.
    public var windowFloorQuantile: Float? = nil

    /// Input channels: the log-mel, and the log-mel above the window's floor when asked for.
    public var channels: Int { windowFloorQuantile == nil ? 1 : 2 }
    /// What the network reads: channels × frames × mel bands.
    public var inputShape: TensorShape { TensorShape(channels: channels, height: frameCount, width: melBands) }
    /// Where the normalisation statistics of the `plane`-th frames × bands plane of consecutive
    /// inputs start (planes run channel by channel, input by input).
    func statisticsOffset(plane: Int) -> Int { plane % channels * melBands }

    /// 25 ms Hann frames every 20 ms, 40 mel bands 50–8000 Hz: 48 frames per 0.975 s window.
    /// (A 20 ms hop and 40 bands instead of 10 ms / 64 keep the network within its time budget.)
    public static let standard = FeatureSettings(
        sampleRate: analysisSampleRate, windowLength: classifierWindowLength, frameLength: 400, hopLength: 320,
        fftSize: 512, melBands: 40, minFrequency: 50, maxFrequency: 8000, logFloor: 1e-10)

    public var frameCount: Int { windowLength < frameLength ? 0 : 1 + (windowLength - frameLength) / hopLength }

    /// The most FFT samples (frames × FFT size) a window may take.
    public static let largestTransformWork = 1 << 21

    /// Throws `.badModel` when the settings cannot describe a working extractor.
    public func validate() throws {
        func fail(_ why: String) -> SomniError { SomniError(.badModel, "model feature settings are invalid: \(why)") }
        guard sampleRate == analysisSampleRate else { throw fail("sample rate \(sampleRate), Somni runs at \(analysisSampleRate)") }
        // A tenth of a second at the least: a window of one sample read one sample and stopped,
        // and a night of such short windows would be classified for days.
        guard windowLength >= analysisSampleRate / 10, windowLength <= 10 * analysisSampleRate else {
            throw fail("window length \(windowLength) samples, outside 0.1–10 s")
        }
        guard frameLength > 0, frameLength <= windowLength, hopLength > 0 else { throw fail("frame \(frameLength) / hop \(hopLength)") }
        guard fftSize >= 4, fftSize <= 65_536, fftSize & (fftSize - 1) == 0 else {
            throw fail("FFT size \(fftSize) is not a power of two from 4 to 65536")
        }
        guard fftSize >= frameLength else { throw fail("FFT size \(fftSize) is shorter than its frame of \(frameLength) samples") }
        // Each setting within bounds is not enough: a 65536-point FFT every sample took 20 s a
        // window. `somni train` makes at most 39 frames of 4096 points (about 160 k), the shipped
        // models 48 of 512; 2^21 leaves room for any model worth running on a night.
        guard frameCount * fftSize <= Self.largestTransformWork else {
            throw fail("\(frameCount) frames of a \(fftSize)-point FFT a window, far more work than any model needs")
        }
        guard melBands > 0, melBands <= 512 else { throw fail("\(melBands) mel bands") }
        guard minFrequency >= 0, maxFrequency > minFrequency, maxFrequency <= Double(sampleRate) / 2 else {
            throw fail("band \(minFrequency)–\(maxFrequency) Hz")
        }
        guard logFloor > 0, logFloor.isFinite else { throw fail("log floor \(logFloor)") }
        if let q = windowFloorQuantile, !(0...1).contains(q) { throw fail("window floor quantile \(q)") }
    }
}

/// Triangular filters on the HTK mel scale, stored sparsely (first bin and weights per band).
public struct MelFilterbank: Sendable {
    public let bands: Int
    public let binCount: Int
    /// First FFT bin of each band's weights.
    public let firstBin: [Int]
    /// Weights of each band, starting at `firstBin`.
    public let weights: [[Float]]

    public static func mel(hertz: Double) -> Double { 2595 * log10(1 + hertz / 700) }
    public static func hertz(mel: Double) -> Double { 700 * (pow(10, mel / 2595) - 1) }

    /// Band b rises from edge b to its peak at edge b+1 and falls to zero at edge b+2, with
    /// bands + 2 edges evenly spaced in mel between `minFrequency` and `maxFrequency`.
    public init(bands: Int, fftSize: Int, sampleRate: Int, minFrequency: Double, maxFrequency: Double) {
        self.bands = bands
        binCount = fftSize / 2 + 1
        let lo = Self.mel(hertz: minFrequency), hi = Self.mel(hertz: maxFrequency)
        let edges = (0..<(bands + 2)).map { Self.hertz(mel: lo + (hi - lo) * Double($0) / Double(bands + 1)) }
        let binHertz = Double(sampleRate) / Double(fftSize)
        var first: [Int] = [], all: [[Float]] = []
        for b in 0..<bands {
            let left = edges[b], centre = edges[b + 1], right = edges[b + 2]
            var start = -1
            var w: [Float] = []
            for k in 0..<binCount {
                let f = Double(k) * binHertz
                let v = f <= left || f >= right ? 0 : (f <= centre ? (f - left) / (centre - left) : (right - f) / (right - centre))
                if v > 0 {
                    if start < 0 { start = k }
                    w.append(Float(v))
                } else if start >= 0 {
                    break
                }
            }
            if start < 0 {  // narrower than one bin: take the nearest bin whole
                start = min(binCount - 1, Int((centre / binHertz).rounded()))
                w = [1]
            }
            first.append(start)
            all.append(w)
        }
        firstBin = first
        weights = all
    }
}

/// Turns one window of 16 kHz samples into `frameCount × melBands` log-mel values (frame-major).
/// Eight frames go through the FFT, the filterbank and the log together, one per SIMD lane.
/// One instance per thread: it owns its scratch buffers, allocated in `init`.
public final class LogMelExtractor {
    public let settings: FeatureSettings
    public let filterbank: MelFilterbank
    private let fft: RealFFT
    private let hann: [Float]
    private let frames: UnsafeMutablePointer<SIMD8<Float>>
    private let power: UnsafeMutablePointer<SIMD8<Float>>
    private let flatWeights: [Float]
    /// Band b's weights are flatWeights[weightOffset[b]..<weightOffset[b + 1]], from bin firstBin[b].
    private let weightOffset: [Int]
    /// The smallest values so far of eight bands, for their floor quantile.
    private let smallest: UnsafeMutablePointer<SIMD8<Float>>

    public init(settings: FeatureSettings) throws {
        do { try settings.validate() } catch let e as SomniError { throw SomniError(.badInput, e.message) }
        self.settings = settings
        fft = try RealFFT(size: settings.fftSize)
        filterbank = MelFilterbank(bands: settings.melBands, fftSize: settings.fftSize, sampleRate: settings.sampleRate,
                                   minFrequency: settings.minFrequency, maxFrequency: settings.maxFrequency)
        let n = settings.frameLength
        hann = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n))) }
        frames = .allocate(capacity: settings.fftSize)
        frames.initialize(repeating: SIMD8(), count: settings.fftSize)
        power = .allocate(capacity: settings.fftSize / 2 + 1)
        power.initialize(repeating: SIMD8(), count: settings.fftSize / 2 + 1)
        flatWeights = filterbank.weights.flatMap { $0 }
        weightOffset = filterbank.weights.reduce(into: [0]) { $0.append($0[$0.count - 1] + $1.count) }
        smallest = .allocate(capacity: max(settings.frameCount, 1))
        smallest.initialize(repeating: SIMD8(), count: max(settings.frameCount, 1))
    }

    deinit {
        frames.deallocate()
        power.deallocate()
        smallest.deallocate()
    }

    public var outputCount: Int { settings.inputShape.count }

    /// `window.count` must equal `settings.windowLength`; `output.count` must equal `outputCount`.
    public func extract(_ window: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        precondition(window.count == settings.windowLength && output.count == outputCount)
        let s = settings, bands = s.melBands
        let floor = SIMD8<Float>(repeating: s.logFloor)
        hann.withUnsafeBufferPointer { hann in
            flatWeights.withUnsafeBufferPointer { weights in
                weightOffset.withUnsafeBufferPointer { offsets in
                    filterbank.firstBin.withUnsafeBufferPointer { firstBin in
                        var group = 0
                        while group < s.frameCount {
                            let lanes = min(8, s.frameCount - group)
                            // Lanes past the last frame repeat it; their results are dropped.
                            let base = window.baseAddress! + group * s.hopLength
                            func offset(_ lane: Int) -> Int { min(lane, lanes - 1) * s.hopLength }
                            let (o1, o2, o3, o4) = (offset(1), offset(2), offset(3), offset(4))
                            let (o5, o6, o7) = (offset(5), offset(6), offset(7))
                            for i in 0..<s.frameLength {
                                let p = base + i
                                frames[i] = SIMD8(p[0], p[o1], p[o2], p[o3], p[o4], p[o5], p[o6], p[o7]) * hann[i]
                            }
                            fft.powerSpectra(frames, into: power)
                            for b in 0..<bands {
                                var sum = SIMD8<Float>()
                                let first = firstBin[b], offset = offsets[b]
                                for j in 0..<(offsets[b + 1] - offset) { sum += weights[offset + j] * power[first + j] }
                                let logged = Self.log(sum.replacing(with: floor, where: sum .< floor))
                                for l in 0..<lanes { output[(group + l) * bands + b] = logged[l] }
                            }
                            group += 8
                        }
                    }
                }
            }
        }
        if let q = s.windowFloorQuantile { subtractBandFloors(output, quantile: q) }
    }

    /// Writes the second channel: each band of the first less its value at `quantile` over the
    /// frames. Eight bands at a time keep their `rank + 1` smallest values sorted lane by lane:
    /// each frame's values are pushed down that list with a min and a max per step.
    private func subtractBandFloors(_ output: UnsafeMutableBufferPointer<Float>, quantile: Float) {
        let bands = settings.melBands, count = settings.frameCount, plane = count * bands
        guard count > 0 else { return }
        let rank = Int((quantile * Float(count - 1)).rounded())
        let base = output.baseAddress!
        guard bands >= 8 else {
            for b in 0..<bands {
                for k in 0...rank { smallest[k] = SIMD8(repeating: .infinity) }
                for t in 0..<count { pushDown(SIMD8(repeating: base[t * bands + b]), rank: rank) }
                for t in 0..<count { base[plane + t * bands + b] = base[t * bands + b] - smallest[rank][0] }
            }
            return
        }
        var b = 0
        while b < bands {
            // A last group overlapping the one before covers bands past a multiple of eight: it
            // reads the first channel only, so writing an overlapped band twice gives the same.
            let first = min(b, bands - 8)
            for k in 0...rank { smallest[k] = SIMD8(repeating: .infinity) }
            for t in 0..<count { pushDown(Kernels.load8(base + t * bands + first), rank: rank) }
            let floor = smallest[rank]
            for t in 0..<count { Kernels.store8(Kernels.load8(base + t * bands + first) - floor, base + plane + t * bands + first) }
            b += 8
        }
    }

    @inline(__always)
    private func pushDown(_ value: SIMD8<Float>, rank: Int) {
        var v = value
        for k in 0...rank {
            let below = v .< smallest[k]
            let kept = smallest[k].replacing(with: v, where: below)
            v = v.replacing(with: smallest[k], where: below)
            smallest[k] = kept
        }
    }

    /// Natural log of positive normal floats, to about 1e-7 relative: exponent from the bits,
    /// the mantissa (moved into [√½, √2)) through the atanh series.
    @inline(__always)
    static func log(_ x: SIMD8<Float>) -> SIMD8<Float> {
        let bits = unsafeBitCast(x, to: SIMD8<UInt32>.self)
        var exponent = SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: bits &>> 23) &- 127)
        var m = unsafeBitCast((bits & 0x007F_FFFF) | 0x3F80_0000, to: SIMD8<Float>.self)
        let big = m .> 1.414_213_5
        m.replace(with: m * 0.5, where: big)
        exponent.replace(with: exponent + 1, where: big)
        let f = m - 1
        let t = f / (2 + f), t2 = t * t
        var series: SIMD8<Float> = t2 * (1 / 9 as Float) + (1 / 7 as Float)
        series = series * t2 + (1 / 5 as Float)
        series = series * t2 + (1 / 3 as Float)
        series = series * t2 + (1 as Float)
        let ln2: Float = 0.693_147_18
        return exponent * ln2 + 2 * t * series
    }
}
