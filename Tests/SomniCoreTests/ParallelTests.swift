import Foundation
import Testing
@testable import SomniCore

@Suite struct ParallelTests {
    @Test(arguments: [1, 7, 1_000, 4_096])
    func readAheadHandsOverEveryBlockInOrder(blockLength: Int) throws {
        let samples = (0..<10_000).map { Float($0) }
        let reader = ReadAhead(BufferAudioSource(samples), blockLength: blockLength, depth: 3)
        defer { reader.stop() }
        var got: [Float] = []
        while true {
            let block = try reader.next()
            if block.isEmpty { break }
            #expect(block.count <= blockLength)
            got.append(contentsOf: block)
        }
        #expect(got == samples)
        #expect(try reader.next().isEmpty, "the end stays the end")
    }

    @Test func pollingHandsOverTheSameBlocksAsWaiting() throws {
        let samples = (0..<50_000).map { Float($0) }
        let reader = ReadAhead(SlowSource(samples), blockLength: 1_000, depth: 4)
        defer { reader.stop() }
        var got: [Float] = []
        var notReady = 0
        while true {
            // What the analyser does: poll, and do other work while the block is not ready.
            guard let block = try reader.nextIfReady() else { notReady += 1; continue }
            if block.isEmpty { break }
            got.append(contentsOf: block)
        }
        #expect(got == samples)
        #expect(notReady > 0, "a slow source is sometimes not ready")
        #expect(try reader.nextIfReady()?.isEmpty == true, "the end stays the end")
    }

    @Test func stoppingEarlyEndsTheReaderThread() throws {
        let source = CountingSource()
        let reader = ReadAhead(source, blockLength: 100, depth: 2)
        _ = try reader.next()
        reader.stop()
        let reads = source.reads
        Thread.sleep(forTimeInterval: 0.05)
        #expect(source.reads == reads, "no reads after stop")
        #expect(reads <= 3, "the ring holds at most two blocks ahead")
    }

    @Test func workersEachRunOnceAndTheLowestWorkersErrorIsRethrown() throws {
        let ran = Ran()
        try forEachWorker(4) { ran.mark($0) }
        #expect(ran.workers == [0, 1, 2, 3])
        #expect {
            try forEachWorker(3) { worker in
                if worker > 0 { throw SomniError(.io, "worker \(worker)") }
            }
        } throws: { ($0 as? SomniError)?.message == "worker 1" }
    }
}

/// A buffer source that takes a while over each read, as a decoder does.
private final class SlowSource: AudioSource, @unchecked Sendable {
    private let inner: BufferAudioSource
    init(_ samples: [Float]) { inner = BufferAudioSource(samples) }
    var expectedDuration: Double? { nil }
    var warnings: [String] { [] }
    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        Thread.sleep(forTimeInterval: 0.0005)
        return try inner.read(into: buffer)
    }
}

/// An endless source that counts its reads.
private final class CountingSource: AudioSource, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var reads: Int { lock.withLock { count } }
    var expectedDuration: Double? { nil }
    var warnings: [String] { [] }
    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        lock.withLock { count += 1 }
        for i in buffer.indices { buffer[i] = 0 }
        return buffer.count
    }
}

private final class Ran: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Int] = []
    func mark(_ worker: Int) { lock.withLock { seen.append(worker) } }
    var workers: [Int] { lock.withLock { seen.sorted() } }
}
