import Foundation

/// Where the classifier reads: window start offsets (in samples) covering the gate's stretches.
public enum WindowPlanner {
    /// The grid's step: half a window (50 % overlap).
    public static let hop = classifierWindowLength / 2

    /// Windows sit on one grid for the whole file (multiples of `hop`), so a window's time is its
    /// true position in the recording and stretches that meet or overlap share windows instead of
    /// duplicating them. Each stretch gets the fewest grid windows that cover it — a stretch shorter
    /// than a window still gets one — and a window that would run past the end of the file is
    /// moved back to end at the last sample. Offsets are sorted and unique.
    public static func windowStarts(stretches: [TimeRange], totalSamples: Int,
                                    windowLength: Int = classifierWindowLength,
                                    hop: Int = WindowPlanner.hop,
                                    sampleRate: Int = analysisSampleRate) -> [Int] {
        guard totalSamples > 0, windowLength > 0, hop > 0 else { return [] }
        let lastStart = max(0, totalSamples - windowLength)
        var starts: [Int] = []
        for stretch in stretches {
            let samples = stretch.indices(rate: Double(sampleRate), limit: totalSamples)
            guard !samples.isEmpty else { continue }
            let (a, b) = (samples.lowerBound, samples.upperBound)
            let first = a / hop
            let last = max(first, ceilDiv(b - windowLength, hop))
            for k in first...last { starts.append(min(k * hop, lastStart)) }
        }
        starts.sort()
        var unique: [Int] = []
        unique.reserveCapacity(starts.count)
        for s in starts where s != unique.last { unique.append(s) }
        return unique
    }

    private static func ceilDiv(_ a: Int, _ b: Int) -> Int {
        a >= 0 ? (a + b - 1) / b : -((-a) / b)
    }
}
