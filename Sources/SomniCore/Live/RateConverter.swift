import Foundation

/// Converts a stream from a capture rate (48 kHz, 44.1 kHz, …) to the 16 kHz analysis rate.
///
/// A polyphase windowed-sinc FIR (Blackman window): the ratio is reduced to up/down = L/M and
/// each output sample is one dot product of `tapsPerPhase` inputs with one of L filter phases.
/// 48 kHz → 16 kHz is L = 1, M = 3: one phase, a plain decimating low-pass.
/// All buffers are allocated in `init`; `process` never allocates.
public final class RateConverter {
    public let inputRate: Int
    public let outputRate: Int
    public let up: Int
    public let down: Int
    public let tapsPerPhase: Int
    /// The most input samples one `process` call accepts.
    public let maxInputCount: Int

    /// Phase p's taps, reversed so a dot product with the oldest-first history is a convolution.
    private let phases: UnsafeMutableBufferPointer<Float>
    /// Last `tapsPerPhase - 1` inputs of the previous call, then this call's input.
    private let history: UnsafeMutableBufferPointer<Float>
    /// Position of the next output in units of 1/L input samples, relative to history[tapsPerPhase-1].
    private var position = 0

    /// - Parameters:
    ///   - tapsPerPhase: filter length per phase; 32 gives about 80 dB stop-band at these ratios.
    ///   - maxInputCount: the largest block `process` will be given.
    public init(inputRate: Int, outputRate: Int = analysisSampleRate, tapsPerPhase: Int = 32,
                maxInputCount: Int = 48_000) throws {
        guard inputRate >= 8_000, inputRate <= 384_000, outputRate > 0, outputRate <= inputRate else {
            throw SomniError(.unsupported, "cannot convert \(inputRate) Hz to \(outputRate) Hz (capture rates 8–384 kHz, down-sampling only)")
        }
        guard tapsPerPhase > 0, tapsPerPhase <= 1_024, maxInputCount > 0 else {
            throw SomniError(.badInput, "a rate converter needs 1–1024 taps a phase and room for at least one input sample, "
                             + "not \(tapsPerPhase) and \(maxInputCount)")
        }
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let g = gcd(inputRate, outputRate)
        self.inputRate = inputRate
        self.outputRate = outputRate
        up = outputRate / g
        down = inputRate / g
        guard up <= 1_000 else {
            throw SomniError(.unsupported, "capture rate \(inputRate) Hz needs \(up) filter phases; use 48000 or 44100")
        }
        // Round the length up to whole SIMD8 blocks.
        self.tapsPerPhase = (tapsPerPhase + 7) / 8 * 8
        self.maxInputCount = maxInputCount

        // Prototype low-pass at rate L × inputRate, cut-off a little under the output Nyquist.
        let taps = self.tapsPerPhase
        let length = up * taps
        let cutoff = 0.45 * Double(outputRate) / Double(up * inputRate)   // cycles per prototype sample
        let centre = Double(length - 1) / 2
        phases = .allocate(capacity: length)
        for p in 0..<up {
            for k in 0..<taps {
                let n = k * up + p
                let x = Double(n) - centre
                let sinc = x == 0 ? 2 * cutoff : sin(2 * .pi * cutoff * x) / (.pi * x)
                let w = 0.42 - 0.5 * cos(2 * .pi * Double(n) / Double(length - 1))
                    + 0.08 * cos(4 * .pi * Double(n) / Double(length - 1))
                // Gain L restores the level lost to zero-stuffing.
                phases[p * taps + (taps - 1 - k)] = Float(sinc * w * Double(up))
            }
        }
        history = .allocate(capacity: taps - 1 + maxInputCount)
        history.initialize(repeating: 0)
    }

    deinit {
        phases.deallocate()
        history.deallocate()
    }

    /// The largest output one call can produce for `inputCount` inputs.
    public func maxOutputCount(forInput inputCount: Int) -> Int { inputCount * up / down + 2 }

    /// Forgets the stream so far (after a capture device is reopened).
    public func reset() {
        for i in 0..<(tapsPerPhase - 1) { history[i] = 0 }
        position = 0
    }

    /// Converts `input` (at most `maxInputCount` samples) and returns how many samples were
    /// written to `output`, which must hold `maxOutputCount(forInput:)`.
    public func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) -> Int {
        precondition(input.count <= maxInputCount, "RateConverter block larger than maxInputCount")
        let taps = tapsPerPhase
        let keep = taps - 1
        for i in 0..<input.count { history[keep + i] = input[i] }
        let available = input.count   // inputs usable as the newest sample of a dot product
        var written = 0
        guard let h = history.baseAddress, let ph = phases.baseAddress else { return 0 }
        while true {
            let newest = position / up          // index (relative) of the newest input used
            guard newest < available, written < output.count else { break }
            let phase = position % up
            let x = UnsafeRawPointer(h + newest).assumingMemoryBound(to: Float.self)
            let c = UnsafeRawPointer(ph + phase * taps).assumingMemoryBound(to: Float.self)
            var acc = SIMD8<Float>()
            var k = 0
            while k < taps {
                let xs = UnsafeRawPointer(x + k).loadUnaligned(as: SIMD8<Float>.self)
                let cs = UnsafeRawPointer(c + k).loadUnaligned(as: SIMD8<Float>.self)
                acc += xs * cs
                k += 8
            }
            output[written] = acc.sum()
            written += 1
            position += down
        }
        // Keep the last `keep` inputs as history for the next call.
        let total = keep + input.count
        for i in 0..<keep { history[i] = history[total - keep + i] }
        position -= input.count * up
        return written
    }
}
