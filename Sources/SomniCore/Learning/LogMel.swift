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

    /// 25 ms Hann frames every 20 ms, 40 mel bands 50–8000 Hz: 48 frames per 0.975 s window.
    /// (A 20 ms hop and 40 bands instead of 10 ms / 64 keep the network within its time budget.)
    public static let standard = FeatureSettings(
        sampleRate: analysisSampleRate, windowLength: classifierWindowLength, frameLength: 400, hopLength: 320,
        fftSize: 512, melBands: 40, minFrequency: 50, maxFrequency: 8000, logFloor: 1e-10)

    public var frameCount: Int { windowLength < frameLength ? 0 : 1 + (windowLength - frameLength) / hopLength }

    /// Throws `.badModel` when the settings cannot describe a working extractor.
    public func validate() throws {
        func fail(_ why: String) -> SomniError { SomniError(.badModel, "model feature settings are invalid: \(why)") }
        guard sampleRate == analysisSampleRate else { throw fail("sample rate \(sampleRate), Somni runs at \(analysisSampleRate)") }
        guard windowLength > 0, windowLength <= 10 * analysisSampleRate else { throw fail("window length \(windowLength)") }
        guard frameLength > 0, frameLength <= windowLength, hopLength > 0 else { throw fail("frame \(frameLength) / hop \(hopLength)") }
        guard fftSize >= frameLength, fftSize >= 4, fftSize <= 65_536, fftSize & (fftSize - 1) == 0 else {
            throw fail("FFT size \(fftSize)")
        }
        guard melBands > 0, melBands <= 512 else { throw fail("\(melBands) mel bands") }
        guard minFrequency >= 0, maxFrequency > minFrequency, maxFrequency <= Double(sampleRate) / 2 else {
            throw fail("band \(minFrequency)–\(maxFrequency) Hz")
        }
        guard logFloor > 0, logFloor.isFinite else { throw fail("log floor \(logFloor)") }
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
/// One instance per thread: it owns its scratch buffers, allocated in `init`.
public final class LogMelExtractor {
    public let settings: FeatureSettings
    public let filterbank: MelFilterbank
    private let fft: RealFFT
    private let hann: [Float]
    private var frame: [Float]
    private var power: [Float]
    private let flatWeights: [Float]
    private let weightOffset: [Int]

    public init(settings: FeatureSettings) throws {
        do { try settings.validate() } catch let e as SomniError { throw SomniError(.badInput, e.message) }
        self.settings = settings
        fft = try RealFFT(size: settings.fftSize)
        filterbank = MelFilterbank(bands: settings.melBands, fftSize: settings.fftSize, sampleRate: settings.sampleRate,
                                   minFrequency: settings.minFrequency, maxFrequency: settings.maxFrequency)
        let n = settings.frameLength
        hann = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n))) }
        frame = [Float](repeating: 0, count: settings.fftSize)
        power = [Float](repeating: 0, count: settings.fftSize / 2 + 1)
        flatWeights = filterbank.weights.flatMap { $0 }
        weightOffset = filterbank.weights.reduce(into: [0]) { $0.append($0.last! + $1.count) }
    }

    public var outputCount: Int { settings.frameCount * settings.melBands }

    /// `window.count` must equal `settings.windowLength`; `output.count` must equal `outputCount`.
    public func extract(_ window: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        precondition(window.count == settings.windowLength && output.count == outputCount)
        let s = settings
        let floor = s.logFloor
        frame.withUnsafeMutableBufferPointer { frame in
            power.withUnsafeMutableBufferPointer { power in
                hann.withUnsafeBufferPointer { hann in
                    flatWeights.withUnsafeBufferPointer { weights in
                        for t in 0..<s.frameCount {
                            let base = t * s.hopLength
                            for i in 0..<s.frameLength { frame[i] = window[base + i] * hann[i] }
                            fft.powerSpectrum(UnsafeBufferPointer(frame), into: power)
                            for b in 0..<s.melBands {
                                let first = filterbank.firstBin[b]
                                let offset = weightOffset[b]
                                var sum: Float = 0
                                for j in 0..<(weightOffset[b + 1] - offset) { sum += weights[offset + j] * power[first + j] }
                                output[t * s.melBands + b] = log(max(sum, floor))
                            }
                        }
                    }
                }
            }
        }
    }
}
