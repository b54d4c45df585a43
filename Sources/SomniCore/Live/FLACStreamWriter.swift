import Foundation

/// A small FLAC encoder for the night's master and live clips: mono, 16 bits, fixed blocks of
/// 4096 samples, FLAC's fixed predictors (orders 0–4) with Rice-coded residuals, constant
/// subframes for digital silence (a device gap costs a few bytes a second).
///
/// Why not FFmpeg's encoder: its context holds buffers for 8 channels of 65,535-sample blocks and
/// zeroes them, 6.7 MB resident for as long as the night lasts; this one needs 40 kB. Every frame
/// goes to the file as soon as it is full (FLAC frames stand alone), so the file under its final
/// name is always a valid stream up to the last frame: a crash loses at most 4096 samples plus
/// what the system had not written. The total length in the header is filled in by `finish`;
/// until then it says "unknown", which decoders accept.
public final class FLACStreamWriter: AudioSink {
    public let url: URL
    public let sampleRate: Int
    public static let blockSize = 4096
    /// Fixed-predictor orders tried per block, and residual partition orders.
    private static let maxPredictorOrder = 4
    private static let maxPartitionOrder = 4

    private let handle: FileHandle
    private let block: UnsafeMutableBufferPointer<Int32>
    private let residual: UnsafeMutableBufferPointer<Int32>
    private let output: UnsafeMutableRawBufferPointer
    private var blockCount = 0
    private var frameNumber: UInt64 = 0
    private var totalSamples: UInt64 = 0
    private var finished = false

    public init(url: URL, sampleRate: Int) throws {
        guard (1...655_350).contains(sampleRate) else {
            throw SomniError(.badInput, "FLAC sample rate must be 1…655350 Hz, not \(sampleRate)")
        }
        self.url = url
        self.sampleRate = sampleRate
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: url) else {
            throw SomniError(.io, "cannot write \(url.path)")
        }
        self.handle = handle
        block = .allocate(capacity: Self.blockSize)
        block.initialize(repeating: 0)
        residual = .allocate(capacity: Self.blockSize)
        residual.initialize(repeating: 0)
        // Header, a verbatim subframe (the worst case is never written: it is chosen instead), CRC.
        output = .allocate(byteCount: Self.blockSize * 2 + 64, alignment: 8)
        do {
            try handle.write(contentsOf: Self.streamHeader(sampleRate: sampleRate, totalSamples: 0))
        } catch {
            throw SomniError(.io, "cannot write \(url.path)", cause: error)
        }
    }

    deinit {
        block.deallocate()
        residual.deallocate()
        output.deallocate()
        try? handle.close()
    }

    /// Appends samples (−1…1; clipped), writing each full block as a frame.
    public func write(_ samples: UnsafeBufferPointer<Float>) throws {
        guard !finished else { throw SomniError(.internalError, "write after finish on \(url.path)") }
        for x in samples {
            let scaled = (x.isFinite ? x : 0) * 32_768
            block[blockCount] = Int32(min(max(scaled.rounded(), -32_768), 32_767))
            blockCount += 1
            if blockCount == Self.blockSize { try writeFrame() }
        }
    }

    /// Writes the last, shorter frame and the stream's length into its header.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        if blockCount > 0 { try writeFrame() }
        do {
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: Self.streamHeader(sampleRate: sampleRate, totalSamples: totalSamples))
            try handle.synchronize()
            try handle.close()
        } catch {
            throw SomniError(.io, "cannot finish \(url.path)", cause: error)
        }
    }

    /// Forces what was written to the disk (the recorder's 30 s flush).
    public func synchronize() throws {
        try handle.synchronize()
    }

    // MARK: - Stream

    /// "fLaC" and the STREAMINFO block (the last metadata block).
    static func streamHeader(sampleRate: Int, totalSamples: UInt64) -> Data {
        var bits = BitPacker(capacity: 42)
        for byte in Array("fLaC".utf8) { bits.put(UInt64(byte), 8) }
        bits.put(1, 1); bits.put(0, 7); bits.put(34, 24)
        bits.put(UInt64(blockSize), 16); bits.put(UInt64(blockSize), 16)
        bits.put(0, 24); bits.put(0, 24)                      // frame sizes: unknown
        bits.put(UInt64(sampleRate), 20); bits.put(0, 3); bits.put(15, 5)   // mono, 16 bits
        bits.put(min(totalSamples, (1 << 36) - 1), 36)
        for _ in 0..<16 { bits.put(0, 8) }                    // MD5: not computed
        return Data(bits.bytes)
    }

    // MARK: - Frames

    private func writeFrame() throws {
        let n = blockCount
        var bits = BitWriter(output)
        // Header: sync, fixed blocking; block size 4096 (code 12) or 16-bit size at the end (7);
        // sample rate from STREAMINFO (0) or 16 kHz (5); mono; 16 bits.
        bits.put(0b11111111111110, 14); bits.put(0, 1); bits.put(0, 1)
        bits.put(n == Self.blockSize ? 12 : 7, 4)
        bits.put(sampleRate == 16_000 ? 5 : 0, 4)
        bits.put(0, 4); bits.put(4, 3); bits.put(0, 1)
        bits.putUTF8(frameNumber)
        if n != Self.blockSize { bits.put(UInt64(n - 1), 16) }
        bits.put(UInt64(Self.crc8(bits.written)), 8)

        writeSubframe(count: n, into: &bits)
        bits.alignToByte()
        bits.put(UInt64(Self.crc16(bits.written)), 16)
        do {
            try handle.write(contentsOf: UnsafeRawBufferPointer(rebasing: output[0..<bits.byteCount]))
        } catch {
            throw SomniError(.io, "cannot write \(url.path)", cause: error)
        }
        frameNumber += 1
        totalSamples += UInt64(n)
        blockCount = 0
    }

    /// The cheapest of constant, fixed predictor (orders 0–4, Rice-coded) and verbatim.
    private func writeSubframe(count n: Int, into bits: inout BitWriter) {
        let first = block[0]
        var constant = true
        for i in 1..<n where block[i] != first { constant = false; break }
        if constant {
            bits.put(0, 8)                 // zero pad, type CONSTANT, no wasted bits
            bits.putSigned(first, 16)
            return
        }
        // The predictor order with the smallest total residual (libFLAC's heuristic).
        var bestOrder = 0
        var bestSum = UInt64.max
        for order in 0...min(Self.maxPredictorOrder, n - 1) {
            var sum: UInt64 = 0
            for i in Self.maxPredictorOrder..<max(n, Self.maxPredictorOrder) { sum += UInt64(abs(Int64(predictionError(order, at: i)))) }
            if sum < bestSum { bestSum = sum; bestOrder = order }
        }
        for i in bestOrder..<n { residual[i] = predictionError(bestOrder, at: i) }
        let (partitionOrder, riceBits) = bestPartitioning(count: n, order: bestOrder)
        let verbatimBits = 8 + 16 * n
        let fixedBits = 8 + 16 * bestOrder + 6 + riceBits
        guard fixedBits < verbatimBits else {
            bits.put(0b00000010, 8)        // VERBATIM
            for i in 0..<n { bits.putSigned(block[i], 16) }
            return
        }
        bits.put(UInt64(0b00010000 | (bestOrder << 1)), 8)   // FIXED, order
        for i in 0..<bestOrder { bits.putSigned(block[i], 16) }
        bits.put(0, 2)                     // Rice, 4-bit parameters
        bits.put(UInt64(partitionOrder), 4)
        let partitions = 1 << partitionOrder
        let size = n >> partitionOrder
        for p in 0..<partitions {
            let start = p == 0 ? bestOrder : p * size
            let end = (p + 1) * size
            let k = riceParameter(start, end)
            bits.put(UInt64(k.parameter), 4)
            for i in start..<end { bits.putRice(Self.fold(residual[i]), k.parameter) }
        }
    }

    /// The fixed predictor's error at sample i (i ≥ order).
    @inline(__always)
    private func predictionError(_ order: Int, at i: Int) -> Int32 {
        switch order {
        case 0: return block[i]
        case 1: return block[i] &- block[i - 1]
        case 2: return block[i] &- 2 &* block[i - 1] &+ block[i - 2]
        case 3: return block[i] &- 3 &* block[i - 1] &+ 3 &* block[i - 2] &- block[i - 3]
        default: return block[i] &- 4 &* block[i - 1] &+ 6 &* block[i - 2] &- 4 &* block[i - 3] &+ block[i - 4]
        }
    }

    /// The partition order (a block divides evenly, the first partition holds more than the
    /// warm-up) whose Rice coding is smallest, and its size in bits.
    private func bestPartitioning(count n: Int, order: Int) -> (order: Int, bits: Int) {
        var best = (order: 0, bits: Int.max)
        for partitionOrder in 0...Self.maxPartitionOrder {
            let partitions = 1 << partitionOrder
            guard n % partitions == 0, n / partitions > order else { break }
            let size = n / partitions
            var total = 0
            for p in 0..<partitions {
                total += 4 + riceParameter(p == 0 ? order : p * size, (p + 1) * size).bits
            }
            if total < best.bits { best = (partitionOrder, total) }
        }
        return best
    }

    /// The Rice parameter (0–14) that codes residual[start..<end] in the fewest bits: estimated
    /// from the mean and checked one either side.
    private func riceParameter(_ start: Int, _ end: Int) -> (parameter: Int, bits: Int) {
        let count = end - start
        guard count > 0 else { return (0, 0) }
        var sum: UInt64 = 0
        for i in start..<end { sum += UInt64(Self.fold(residual[i])) }
        let mean = sum / UInt64(count)
        let guess = mean > 0 ? min(14, 63 - mean.leadingZeroBitCount) : 0
        var best = (parameter: 0, bits: Int.max)
        for k in max(0, guess - 1)...min(14, guess + 1) {
            var bits = count * (k + 1)
            for i in start..<end { bits += Int(Self.fold(residual[i]) >> UInt32(k)) }
            if bits < best.bits { best = (k, bits) }
        }
        return best
    }

    /// Signed to unsigned: 0, −1, 1, −2 … → 0, 1, 2, 3 …
    @inline(__always)
    static func fold(_ r: Int32) -> UInt32 { UInt32(bitPattern: (r << 1) ^ (r >> 31)) }

    static func crc8(_ bytes: UnsafeRawBufferPointer) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }

    static func crc16(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        }
        return crc
    }
}

/// Bits, most significant first, into a caller's buffer (one frame).
struct BitWriter {
    private let buffer: UnsafeMutableRawBufferPointer
    private var accumulator: UInt64 = 0
    private var pending = 0
    private(set) var byteCount = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    /// The whole bytes written so far.
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[0..<byteCount]) }

    @inline(__always)
    mutating func put(_ value: UInt64, _ count: Int) {
        var remaining = count
        while remaining > 0 {
            let take = min(remaining, 56 - pending)
            let part = (value >> UInt64(remaining - take)) & ((1 << UInt64(take)) - 1)
            accumulator = (accumulator << UInt64(take)) | part
            pending += take
            remaining -= take
            while pending >= 8 {
                pending -= 8
                buffer[byteCount] = UInt8(truncatingIfNeeded: accumulator >> UInt64(pending))
                byteCount += 1
            }
        }
    }

    mutating func putSigned(_ value: Int32, _ count: Int) {
        put(UInt64(UInt32(bitPattern: value)) & ((1 << UInt64(count)) - 1), count)
    }

    /// q zeros, a one, then the low k bits.
    @inline(__always)
    mutating func putRice(_ u: UInt32, _ k: Int) {
        var q = Int(u >> UInt32(k))
        while q >= 32 { put(0, 32); q -= 32 }
        put(1, q + 1)
        if k > 0 { put(UInt64(u) & ((1 << UInt64(k)) - 1), k) }
    }

    /// FLAC's frame number: UTF-8-style variable length, up to 36 bits.
    mutating func putUTF8(_ value: UInt64) {
        if value < 0x80 { put(value, 8); return }
        var continuation = 1
        while value >= (1 << UInt64(5 * continuation + 6)) { continuation += 1 }
        let lead = (0xFF << UInt64(7 - continuation)) & 0xFF
        put(UInt64(lead) | (value >> UInt64(6 * continuation)), 8)
        for i in stride(from: continuation - 1, through: 0, by: -1) { put(0x80 | ((value >> UInt64(6 * i)) & 0x3F), 8) }
    }

    mutating func alignToByte() {
        if pending > 0 { put(0, 8 - pending) }
    }
}

/// A growing byte array behind the same bit order, for the stream header.
struct BitPacker {
    private(set) var bytes: [UInt8] = []
    private var accumulator: UInt64 = 0
    private var pending = 0

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func put(_ value: UInt64, _ count: Int) {
        for i in stride(from: count - 1, through: 0, by: -1) {
            accumulator = (accumulator << 1) | ((value >> UInt64(i)) & 1)
            pending += 1
            if pending == 8 { bytes.append(UInt8(accumulator & 0xFF)); accumulator = 0; pending = 0 }
        }
    }
}

/// Reads back what `FLACStreamWriter` wrote (mono, 16 bits, constant, verbatim and fixed
/// subframes, Rice residuals), block by block, so a live clip can be levelled without loading a
/// general decoder (FFmpeg's added 7 MB resident). The file is memory-mapped, not read into
/// memory. Not a general FLAC decoder: anything else is a `.badInput` error; a last frame cut
/// short by a crash ends the stream.
public final class FLACStreamReader: AudioSource {
    public let warnings: [String] = []
    public var expectedDuration: Double? { nil }
    private let data: Data
    private var position = 0   // in bits
    private let block: UnsafeMutableBufferPointer<Int32>
    private var blockCount = 0
    private var blockRead = 0

    public init(url: URL) throws {
        do { data = try Data(contentsOf: url, options: .alwaysMapped) } catch {
            throw SomniError(.io, "cannot read \(url.path)", cause: error)
        }
        guard data.count >= 42, data.prefix(4) == Data("fLaC".utf8) else {
            throw SomniError(.badInput, "\(url.lastPathComponent) is not a FLAC stream Somni wrote")
        }
        position = 42 * 8
        block = .allocate(capacity: FLACStreamWriter.blockSize)
        block.initialize(repeating: 0)
    }

    deinit { block.deallocate() }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        var written = 0
        while written < buffer.count {
            if blockRead == blockCount {
                guard try data.withUnsafeBytes({ try readFrame(BitReader($0, position: position)) }) else { break }
            }
            let n = min(buffer.count - written, blockCount - blockRead)
            for i in 0..<n { buffer[written + i] = Float(block[blockRead + i]) / 32_768 }
            written += n
            blockRead += n
        }
        return written
    }

    /// Decodes the next frame into `block`; false at the end (or at a frame cut short by a crash).
    private func readFrame(_ start: BitReader) throws -> Bool {
        var bits = start
        blockCount = 0; blockRead = 0
        guard bits.remaining >= 48 else { return false }
        guard bits.take(14) == 0b11111111111110, bits.take(2) == 0 else { throw bad("frame sync") }
        let sizeCode = bits.take(4)
        _ = bits.take(4)                                   // sample rate: the stream's
        guard bits.take(4) == 0, bits.take(3) == 4, bits.take(1) == 0 else { throw bad("channel layout or sample size") }
        let lead = bits.take(8)
        var length = 0
        while length < 7 && lead & (0x80 >> UInt64(length)) != 0 { length += 1 }
        if length > 1 { _ = bits.take(8 * (length - 1)) }  // the rest of the frame number
        let count = sizeCode == 12 ? FLACStreamWriter.blockSize : (sizeCode == 7 ? Int(bits.take(16)) + 1 : -1)
        guard count > 0, count <= FLACStreamWriter.blockSize else { throw bad("block size") }
        _ = bits.take(8)                                   // header CRC
        guard bits.take(1) == 0 else { throw bad("subframe padding") }
        let type = Int(bits.take(6))
        guard bits.take(1) == 0 else { throw bad("wasted bits") }
        switch type {
        case 0:
            let value = Self.signed(bits.take(16))
            for i in 0..<count { block[i] = value }
        case 1:
            for i in 0..<count { block[i] = Self.signed(bits.take(16)) }
        case 8...12:
            let order = type - 8
            guard order < count else { throw bad("predictor order") }
            for i in 0..<order { block[i] = Self.signed(bits.take(16)) }
            guard bits.take(2) == 0 else { throw bad("residual coding") }
            let partitionOrder = Int(bits.take(4))
            let size = count >> partitionOrder
            guard size << partitionOrder == count, size > order else { throw bad("partitions") }
            for p in 0..<(1 << partitionOrder) {
                let k = Int(bits.take(4))
                for i in (p == 0 ? order : p * size)..<((p + 1) * size) {
                    var q = 0
                    while bits.take(1) == 0 {
                        guard !bits.ranOut else { return false }
                        q += 1
                    }
                    let u = (UInt32(truncatingIfNeeded: q) << UInt32(k)) | UInt32(bits.take(k))
                    block[i] = Int32(bitPattern: u >> 1) ^ (0 &- Int32(bitPattern: u & 1))
                }
            }
            for i in order..<count { block[i] = block[i] &+ prediction(order, at: i) }
        default:
            throw bad("subframe type \(type)")
        }
        bits.alignToByte()
        _ = bits.take(16)                                  // frame CRC
        guard !bits.ranOut else { return false }
        position = bits.position
        blockCount = count
        return true
    }

    /// What the fixed predictor of `order` expects at i from the decoded samples before it.
    private func prediction(_ order: Int, at i: Int) -> Int32 {
        switch order {
        case 0: return 0
        case 1: return block[i - 1]
        case 2: return 2 &* block[i - 1] &- block[i - 2]
        case 3: return 3 &* block[i - 1] &- 3 &* block[i - 2] &+ block[i - 3]
        default: return 4 &* block[i - 1] &- 6 &* block[i - 2] &+ 4 &* block[i - 3] &- block[i - 4]
        }
    }

    private static func signed(_ value: UInt64) -> Int32 { Int32(Int16(truncatingIfNeeded: value)) }

    private func bad(_ what: String) -> SomniError {
        SomniError(.badInput, "not a FLAC stream Somni wrote (\(what))")
    }
}

/// Bits, most significant first, from a byte buffer; past its end it reads zeros and says so.
struct BitReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var position: Int
    private(set) var ranOut = false

    init(_ bytes: UnsafeRawBufferPointer, position: Int) { self.bytes = bytes; self.position = position }

    var remaining: Int { bytes.count * 8 - position }

    @inline(__always)
    mutating func take(_ count: Int) -> UInt64 {
        var value: UInt64 = 0
        var left = count
        while left > 0 {
            let byte = position >> 3
            guard byte < bytes.count else {
                ranOut = true
                position += left
                return value << UInt64(left)
            }
            let available = 8 - (position & 7)
            let n = min(available, left)
            let chunk = (UInt64(bytes[byte]) >> UInt64(available - n)) & ((1 << UInt64(n)) - 1)
            value = (value << UInt64(n)) | chunk
            position += n
            left -= n
        }
        return value
    }

    mutating func alignToByte() { position = (position + 7) / 8 * 8 }
}
