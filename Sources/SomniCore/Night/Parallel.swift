import Foundation

/// A value handed to worker threads on the caller's word that they use it safely: each worker
/// touches only its own part of it (its own indices of a buffer, its own copy of a value).
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
}

/// Runs `work(worker)` for every worker in 0..<count at once and returns when all are done;
/// the error of the lowest-numbered worker that threw is rethrown.
func forEachWorker(_ count: Int, _ work: (Int) throws -> Void) throws {
    guard count > 1 else { return try work(0) }
    try withoutActuallyEscaping(work) { work in
        let shared = Unchecked(value: work)
        let errors = WorkerErrors(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { worker in
            do { try shared.value(worker) } catch { errors.record(error, worker: worker) }
        }
        if let first = errors.first { throw first }
    }
}

private final class WorkerErrors: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [(any Error)?]
    init(count: Int) { errors = Array(repeating: nil, count: count) }
    func record(_ error: any Error, worker: Int) { lock.withLock { errors[worker] = error } }
    var first: (any Error)? { lock.withLock { errors.lazy.compactMap { $0 }.first } }
}

/// Reads a source on a thread of its own, a few blocks ahead of the caller: decoding a
/// compressed night is the floor of its analysis, and the frame features and the spool then
/// take no extra wall time. The blocks go round a small ring; the reader waits while it is full.
final class ReadAhead: @unchecked Sendable {
    private let source: any AudioSource
    private let blockLength: Int
    private let depth: Int
    private let ring: UnsafeMutableBufferPointer<Float>
    /// Samples in each slot's block; 0 at the end, −1 when the source threw.
    private let counts: UnsafeMutableBufferPointer<Int>
    private var failure: (any Error)?
    /// Starts at 0 and is signalled up to `depth`: libdispatch traps when a semaphore is freed
    /// below the value it was made with, which a reader stopped early would leave.
    private let free = DispatchSemaphore(value: 0)
    private let filled = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stopRequested = false
    private var finished = false
    private var slot = -1
    /// The caller still reads the block in `slot`.
    private var holding = false

    init(_ source: any AudioSource, blockLength: Int, depth: Int = 4) {
        self.source = source
        self.blockLength = blockLength
        self.depth = depth
        ring = .allocate(capacity: blockLength * depth)
        ring.initialize(repeating: 0)
        counts = .allocate(capacity: depth)
        counts.initialize(repeating: 0)
        for _ in 0..<depth { free.signal() }
        let thread = Thread { [self] in self.readUntilTheEnd() }
        thread.name = "somni-read-ahead"
        thread.start()
    }

    deinit {
        ring.deallocate()
        counts.deallocate()
    }

    /// The next block, valid until the following call; empty at the end of the source, and
    /// the source's error again on every call after it threw.
    func next() throws -> UnsafeBufferPointer<Float> {
        try take(waiting: true) ?? UnsafeBufferPointer(start: nil, count: 0)
    }

    /// As `next()`, but nil at once when the reader has not finished the next block yet.
    func nextIfReady() throws -> UnsafeBufferPointer<Float>? {
        try take(waiting: false)
    }

    private func take(waiting: Bool) throws -> UnsafeBufferPointer<Float>? {
        if !finished {
            if holding { free.signal(); holding = false }  // the caller is done with the previous block
            if waiting { filled.wait() } else if filled.wait(timeout: .now()) == .timedOut { return nil }
            slot = (slot + 1) % depth
            if counts[slot] > 0 {
                holding = true
                return UnsafeBufferPointer(rebasing: ring[slot * blockLength..<slot * blockLength + counts[slot]])
            }
            stop()
        }
        if let failure = lock.withLock({ failure }) { throw failure }
        return UnsafeBufferPointer(start: nil, count: 0)
    }

    /// Stops the reader thread (at once if it waits for room) and waits until it has.
    func stop() {
        guard !finished else { return }
        finished = true
        lock.withLock { stopRequested = true }
        free.signal()
        done.wait()
    }

    private func readUntilTheEnd() {
        var slot = 0
        while true {
            free.wait()
            if lock.withLock({ stopRequested }) { break }
            let block = UnsafeMutableBufferPointer(rebasing: ring[slot * blockLength..<(slot + 1) * blockLength])
            do {
                counts[slot] = try source.checkedRead(into: block)
            } catch {
                lock.withLock { failure = error }
                counts[slot] = -1
            }
            let last = counts[slot] <= 0
            filled.signal()
            if last { break }
            slot = (slot + 1) % depth
        }
        done.signal()
    }
}
