/// Mixes two channels into one without letting a microphone wired in opposite phase cancel itself.
///
/// Averaging left and right is right for a stereo recording. But the built-in microphone of many
/// laptops delivers one channel phase-inverted (a digital microphone pair read as a difference
/// signal), and the average of those is near silence: a night recorded through one, or mixed to
/// mono by the sound server, holds nothing. So the mix follows the sign of the channels'
/// correlation over everything mixed so far, and subtracts the second channel once that is
/// clearly negative. A real stereo pair never comes near −0.5: a room's low frequencies, where
/// most of its energy lies, reach both microphones in phase.
public struct StereoDownmix: Sendable {
    /// Correlation under which the channels count as one signal in opposite phase.
    public static let oppositeBelow = -0.5
    /// Said once when the channels are found in opposite phase.
    public static let oppositePhaseWarning = "the two channels are in opposite phase (as some laptops' built-in microphones "
        + "record), so they were mixed as their difference: their average would have cancelled to near silence"

    /// The second channel is being subtracted rather than added.
    public private(set) var isOpposite = false
    private var leftEnergy = 0.0
    private var rightEnergy = 0.0
    private var crossEnergy = 0.0

    public init() {}

    /// Mixes `frames` interleaved stereo frames from `interleaved` into `frames` samples of
    /// `output`, at half the sum (or difference), so levels stay in [-1, 1].
    public mutating func mix(_ interleaved: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>) {
        // Sums per block in Float, across blocks in Double: a night is a billion samples.
        var ll: Float = 0, rr: Float = 0, lr: Float = 0
        for i in 0..<frames {
            let left = interleaved[2 * i], right = interleaved[2 * i + 1]
            ll += left * left
            rr += right * right
            lr += left * right
        }
        leftEnergy += Double(ll)
        rightEnergy += Double(rr)
        crossEnergy += Double(lr)
        let scale = (leftEnergy * rightEnergy).squareRoot()
        if scale > 0 { isOpposite = crossEnergy < Self.oppositeBelow * scale }
        let second: Float = isOpposite ? -0.5 : 0.5
        for i in 0..<frames { output[i] = 0.5 * interleaved[2 * i] + second * interleaved[2 * i + 1] }
    }
}
