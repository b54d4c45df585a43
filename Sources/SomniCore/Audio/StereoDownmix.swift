/// Mixes two channels into one without letting a microphone wired in opposite phase cancel itself.
///
/// Averaging left and right is right for a stereo recording. But the built-in microphone of many
/// laptops delivers one channel phase-inverted (a digital microphone pair read as a difference
/// signal), and the average of those is near silence: a night recorded through one, or mixed to
/// mono by the sound server, holds nothing. So the mix follows the sign of the channels'
/// correlation over everything mixed so far, and subtracts the second channel while that is
/// clearly negative. A real stereo pair never comes near −0.5: a room's low frequencies, where
/// most of its energy lies, reach both microphones in phase.
///
/// Two things would mislead it, and are kept out. A converter's DC offset, often of opposite
/// sign in the two channels, makes a quiet start look inverted (nine of Khan's stereo snoring
/// clips begin so), so the correlation is taken after a DC blocker. And a fraction of a second
/// is too little to judge a recording's wiring by, so nothing is decided before
/// `evidenceSeconds`: until then the channels are averaged, as anything shorter always is.
///
/// A channel that carries (almost) nothing (a mono microphone on one side of a stereo jack, a USB
/// adapter with one dead input, a phone that fills its second channel with its other microphone's
/// murmur) would halve the other in the average: every level 6 dB low, and quieter snores under
/// the gate. Once the evidence is in, a channel more than 20 dB below the other (no room puts two
/// microphones of one recording that far apart; what it adds to the mix is under a tenth) is left
/// out and the other used alone.
public struct StereoDownmix: Sendable {
    /// Correlation under which the channels count as one signal in opposite phase.
    public static let oppositeBelow = -0.5
    /// Audio heard before the mix may follow the correlation.
    public static let evidenceSeconds = 2.0
    /// What every warning of channels in opposite phase says, by which a later one replaces an earlier.
    private static let oppositePhrase = "in opposite phase"
    /// Said when the channels were mixed as their difference.
    public static let oppositePhaseWarning = "the two channels are \(oppositePhrase) (as some laptops' built-in microphones "
        + "record), so they were mixed as their difference: their average would have cancelled to near silence"
    /// Said when they were so for part of the recording only (the correlation climbed back over
    /// the line, or crossed it late): elsewhere they were averaged.
    static let partlyOppositePhaseWarning = "the two channels were \(oppositePhrase) for part of the recording (as some laptops' "
        + "built-in microphones record), and mixed as their difference there: their average would have cancelled to near "
        + "silence; elsewhere they were averaged"

    /// Energy ratio under which a channel counts as carrying nothing (−20 dB).
    public static let silentBelow = 1e-2
    public enum Channel: String, Sendable { case left, right }
    /// What every warning of a silent channel says, by which a later one replaces an earlier.
    private static let silentPhrase = "silent or nearly (over 20 dB under the other)"
    /// Said when one channel was silent and the other was used alone.
    public static func silentChannelWarning(_ silent: Channel) -> String {
        "the \(silent.rawValue) channel is \(silentPhrase), so the "
            + "\(silent == .left ? "right" : "left") one was used alone: their average would have been 6 dB too quiet"
    }

    /// Said when a channel was left out as silent for part of the recording only: the rest was
    /// averaged, and its levels read lower than the same sound's where one channel was used alone.
    /// Of no length or time, so a recorder asking every block says it once.
    static func partlySilentWarning(leftOut: [Channel]) -> String {
        let which = leftOut.map { "the \($0.rawValue) one (the \($0 == .left ? "right" : "left") used alone)" }
        return "one channel was \(silentPhrase) for part of the recording only, and left out "
            + "there: \(which.joined(separator: ", then ")); elsewhere the two were averaged, so a sound there reads up to 6 dB "
            + "quieter than the same sound where one channel was used alone"
    }

    /// The second channel is being subtracted rather than added.
    public private(set) var isOpposite = false
    /// The channel left out as silent, if one is.
    public private(set) var silentChannel: Channel?
    /// What to tell the user about the mix, once something was decided: of the whole recording
    /// so far, not only of the latest block (a burst on the quiet channel brought it back in;
    /// the correlation can climb back over −0.5 after an hour mixed as the difference).
    public var warnings: [String] {
        var said: [String] = []
        if leftOut.count == 1, !averagedSince, let silent = leftOut.first { said.append(Self.silentChannelWarning(silent)) }
        else if !leftOut.isEmpty { said.append(Self.partlySilentWarning(leftOut: leftOut)) }
        if mixedAsDifference { said.append(averagedAfterEvidence ? Self.partlyOppositePhaseWarning : Self.oppositePhaseWarning) }
        return said
    }

    /// Whether `earlier` is a warning of the mix that `later` replaces, being of the same thing
    /// (a silent channel, or the phase) and of more of the recording: a recorder that noted the
    /// first is to keep only the last.
    public static func replaces(_ later: String, _ earlier: String) -> Bool {
        [silentPhrase, oppositePhrase].contains { later.contains($0) && earlier.contains($0) }
    }
    private let evidenceFrames: Int
    private var framesSeen = 0
    /// The channels left out as silent so far, in the order they first were.
    private var leftOut: [Channel] = []
    /// Some frames were averaged after a channel had been left out (a mix that went back to both).
    private var averagedSince = false
    /// Some frames were mixed as the channels' difference; some, past the evidence, averaged.
    private var mixedAsDifference = false
    private var averagedAfterEvidence = false
    private var leftEnergy = 0.0
    private var rightEnergy = 0.0
    private var crossEnergy = 0.0
    /// DC blockers' state: last input and output per channel.
    private var leftInput: Float = 0, leftOutput: Float = 0
    private var rightInput: Float = 0, rightOutput: Float = 0
    private let blockerPole: Float

    /// - Parameter sampleRate: the rate of the frames to be mixed.
    public init(sampleRate: Int) {
        evidenceFrames = Int(Self.evidenceSeconds * Double(sampleRate))
        // A pole for a 10 Hz corner whatever the rate: under any sound worth hearing.
        blockerPole = Float(1 - 2 * Double.pi * 10 / Double(max(sampleRate, 100)))
    }

    /// Mixes `frames` interleaved stereo frames from `interleaved` into `frames` samples of
    /// `output`, at half the sum (or difference), so levels stay in [-1, 1].
    public mutating func mix(_ interleaved: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>) {
        // Sums per block in Float, across blocks in Double: a night is a billion samples.
        var ll: Float = 0, rr: Float = 0, lr: Float = 0
        var xl = leftInput, yl = leftOutput, xr = rightInput, yr = rightOutput
        let pole = blockerPole
        for i in 0..<frames {
            let left = interleaved[2 * i], right = interleaved[2 * i + 1]
            yl = left - xl + pole * yl
            yr = right - xr + pole * yr
            xl = left
            xr = right
            ll += yl * yl
            rr += yr * yr
            lr += yl * yr
        }
        leftInput = xl; leftOutput = yl; rightInput = xr; rightOutput = yr
        leftEnergy += Double(ll)
        rightEnergy += Double(rr)
        crossEnergy += Double(lr)
        framesSeen += frames
        let scale = (leftEnergy * rightEnergy).squareRoot()
        if framesSeen >= evidenceFrames {
            if scale > 0 { isOpposite = crossEnergy < Self.oppositeBelow * scale }
            silentChannel = rightEnergy < Self.silentBelow * leftEnergy ? .right
                : leftEnergy < Self.silentBelow * rightEnergy ? .left : nil
        }
        if let silentChannel { if !leftOut.contains(silentChannel) { leftOut.append(silentChannel) } }
        else {
            if !leftOut.isEmpty { averagedSince = true }
            // Silence averaged says nothing of the phase.
            if isOpposite { mixedAsDifference = true } else if framesSeen >= evidenceFrames, scale > 0 { averagedAfterEvidence = true }
        }
        let (first, second): (Float, Float) = switch silentChannel {
        case .right: (1, 0)
        case .left: (0, 1)
        case nil: (0.5, isOpposite ? -0.5 : 0.5)
        }
        for i in 0..<frames { output[i] = first * interleaved[2 * i] + second * interleaved[2 * i + 1] }
    }
}
