import Foundation

/// The peak and mean level of a stretch of a recording measured as the morning pass measures an
/// event's (`EventDetector.levels`): over the recording's own 50 ms frames that the stretch
/// touches, each frame's RMS about its own mean, so a DC offset is not loudness and a level is a
/// level, not one sample's peak. Fed the samples in order, in blocks of any size, with their
/// positions in the recording; samples before the stretch's first frame or from `limit` on are
/// not measured.
public struct FrameLevelMeter: Sendable {
    public let frameLength: Int
    /// Where the next measured sample must lie, in samples from the start of the recording.
    private var next: Int
    /// Samples from here on are not measured: the end of the last frame the stretch touches.
    private var limit = Int.max
    private var sum: Double = 0, squares: Double = 0, filled = 0
    private var peak: Double = 0, power: Double = 0, frames = 0

    /// Measures from the frame that holds sample `start`.
    public init(from start: Int, frameLength: Int = analysisSampleRate / Int(FrameTrack.rate)) {
        self.frameLength = max(frameLength, 1)
        next = max(start, 0) / self.frameLength * self.frameLength
    }

    /// Ends the stretch at sample `end` (exclusive): the frame holding it is measured whole.
    public mutating func end(at end: Int) {
        let frameEnd = (max(end, 0) + frameLength - 1) / frameLength * frameLength
        limit = max(frameEnd, next)
    }

    /// Measures the part of `piece` (whose first sample is sample `position` of the recording)
    /// that lies in the stretch and has not been measured yet.
    public mutating func measure(_ piece: UnsafeBufferPointer<Float>, at position: Int) {
        var index = max(position, next)
        let upper = min(position + piece.count, limit)
        while index < upper {
            let frameEnd = min((index / frameLength + 1) * frameLength, upper)
            for i in (index - position)..<(frameEnd - position) {
                let x = Double(piece[i])
                guard x.isFinite else { continue }
                sum += x; squares += x * x
            }
            filled += frameEnd - index
            index = frameEnd
            if index % frameLength == 0 { closeFrame() }
        }
        next = max(next, index)
    }

    /// Peak and power-mean frame level so far in dBFS, a frame still filling counted as it is.
    public var levels: (peakDBFS: Double, meanDBFS: Double) {
        var meter = self
        if meter.filled > 0 { meter.closeFrame() }
        guard meter.frames > 0 else { return (EventDetector.dbfs(0), EventDetector.dbfs(0)) }
        return (EventDetector.dbfs(meter.peak), EventDetector.dbfs((meter.power / Double(meter.frames)).squareRoot()))
    }

    private mutating func closeFrame() {
        let n = Double(filled)
        let mean = sum / n
        let variance = max(squares / n - mean * mean, 0)
        peak = max(peak, variance.squareRoot())
        power += variance
        frames += 1
        sum = 0; squares = 0; filled = 0
    }
}
