import Foundation

/// Live mode's view of the snore band, for bridging as the morning pass does
/// (`EventDetector.bridgedSnores`): the classifier misses some snores of a faint train (under a
/// fan, every other one), and a train whose heard snores lie more than 10 s apart would end and
/// start again at each miss. Fed the 50 ms frames' band levels as they come, it keeps the bursts
/// of the last `memory` seconds where the snore band (40–400 Hz) or the voice band
/// (250–3000 Hz) rises over `factor` × its floor, at most `EventDetector.longestSnore` long (a
/// longer sound is not a snore), and says how far a chain of them, every step shorter than a
/// gap, reaches from a given time.
///
/// The morning pass takes each band's floor from the frames 15 s either side of the gap; live,
/// only the past is known, so the floor is the 20th percentile of the last `context` seconds,
/// taken again every second (allocating then only).
public struct SnoreBandBursts: Sendable {
    public let factor: Float
    public let context: Double
    public let memory: Double

    /// The last `context` seconds of each band, as rings.
    private var lowHistory: [Float]
    private var midHistory: [Float]
    private var lowThreshold: Float = .infinity
    private var midThreshold: Float = .infinity
    /// Frames fed so far.
    private var frameCount = 0
    /// The run of frames above the thresholds now going on (frame indices), and its last active frame.
    private var runStart: Int?
    private var runLastActive = 0
    /// Finished bursts (frame ranges), oldest first.
    private var bursts: [Range<Int>] = []

    /// Active frames at most this many apart belong to one run (100 ms), as `snoreBursts` joins them.
    static let frameBridge = 2

    /// The morning bridge's factor, and its ±15 s of context as the past 30 s.
    public static let defaultFactor: Float = EventDetector.bridgeFactor
    public static let defaultContext = 2 * BoundaryRefiner.context

    public init(factor: Float = defaultFactor, context: Double = defaultContext, memory: Double = 120) {
        self.factor = factor
        self.context = context
        self.memory = memory
        let frames = max(1, Int(context * FrameTrack.rate))
        lowHistory = [Float](repeating: 0, count: frames)
        midHistory = [Float](repeating: 0, count: frames)
        // A burst and the pause after it take 4 frames at least.
        bursts.reserveCapacity(Int(memory * FrameTrack.rate) / 4 + 8)
    }

    /// Seconds of frames fed.
    public var heardUntil: Double { Double(frameCount) / FrameTrack.rate }

    /// Takes the next 50 ms frame's band levels (RMS).
    public mutating func feed(low: Float, mid: Float) {
        // A level that is not a number is silence, as the frames read such samples.
        let low = low.isFinite ? low : 0, mid = mid.isFinite ? mid : 0
        let slot = frameCount % lowHistory.count
        lowHistory[slot] = low
        midHistory[slot] = mid
        if frameCount % Int(FrameTrack.rate) == 0 || frameCount < Int(FrameTrack.rate) {
            let filled = min(frameCount + 1, lowHistory.count)
            lowThreshold = threshold(lowHistory, filled: filled)
            midThreshold = threshold(midHistory, filled: filled)
        }
        let frame = frameCount
        frameCount += 1
        if low > lowThreshold || mid > midThreshold {
            if runStart == nil { runStart = frame }
            runLastActive = frame
        } else if let start = runStart, frame - runLastActive > Self.frameBridge {
            keep(start..<(runLastActive + 1))
            runStart = nil
        }
    }

    /// How far a chain of bursts reaches from `time`: each burst starting less than `gap` after
    /// the chain's end so far extends it. A run still going on counts as long as it is short
    /// enough to be a snore. `time` itself when no burst follows in time.
    public func chainEnd(from time: Double, gap: Double) -> Double {
        var end = time
        func extend(_ burst: Range<Int>) -> Bool {
            let start = Double(burst.lowerBound) / FrameTrack.rate, stop = Double(burst.upperBound) / FrameTrack.rate
            guard stop > end else { return true }
            guard start - end < gap else { return false }
            end = stop
            return true
        }
        for burst in bursts where !extend(burst) { return end }
        if let start = runStart, isSnoreLength(start..<frameCount) { _ = extend(start..<frameCount) }
        return end
    }

    private func isSnoreLength(_ run: Range<Int>) -> Bool {
        Double(run.count) / FrameTrack.rate <= EventDetector.longestSnore
    }

    private mutating func keep(_ run: Range<Int>) {
        guard isSnoreLength(run) else { return }
        let oldest = frameCount - Int(memory * FrameTrack.rate)
        if let first = bursts.first, first.upperBound < oldest { bursts.removeAll { $0.upperBound < oldest } }
        bursts.append(run)
    }

    /// The band's floor (the morning's percentile of its nonzero frames) × `factor`, never
    /// below the level under which a band is silent.
    private func threshold(_ history: [Float], filled: Int) -> Float {
        let floor = SilenceGate.roomFloor(Array(history[0..<filled]), BoundaryRefiner.floorPercentile)
        return max(floor * factor, BoundaryRefiner.absoluteMinimum)
    }
}
