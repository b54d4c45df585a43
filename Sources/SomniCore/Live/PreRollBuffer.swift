import Foundation

/// The last few seconds of the stream, in memory, addressed by absolute sample index.
///
/// Live mode keeps audio here until it knows whether it belongs to an episode: the pre-roll
/// before a trigger and the hangover after the last positive window. Nothing in it reaches the
/// disk unless an episode claims it. Allocated once; `append` overwrites the oldest samples.
public final class PreRollBuffer {
    public let capacity: Int
    private let storage: UnsafeMutableBufferPointer<Float>
    /// Absolute index of the next sample to be appended (= samples seen so far).
    public private(set) var endIndex = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "PreRollBuffer needs a positive capacity")
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: 0)
    }

    deinit { storage.deallocate() }

    /// Absolute index of the oldest sample still held.
    public var startIndex: Int { max(0, endIndex - capacity) }

    public func append(_ samples: UnsafeBufferPointer<Float>) {
        // Only the newest `capacity` samples of a large block can survive.
        let skip = max(0, samples.count - capacity)
        var index = endIndex + skip
        var i = skip
        while i < samples.count {
            let slot = index % capacity
            let run = min(samples.count - i, capacity - slot)
            for k in 0..<run { storage[slot + k] = samples[i + k] }
            i += run
            index += run
        }
        endIndex += samples.count
    }

    /// Calls `body` with the held samples in [from, to) (clamped to what is held), in at most two
    /// contiguous pieces, oldest first. Returns the absolute index actually started from.
    @discardableResult
    public func read(from: Int, to: Int, _ body: (UnsafeBufferPointer<Float>) throws -> Void) rethrows -> Int {
        let lower = max(from, startIndex)
        let upper = min(to, endIndex)
        var index = lower
        while index < upper {
            let slot = index % capacity
            let run = min(upper - index, capacity - slot)
            try body(UnsafeBufferPointer(rebasing: storage[slot..<slot + run]))
            index += run
        }
        return lower
    }
}
