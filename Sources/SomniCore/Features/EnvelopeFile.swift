import Foundation

/// envelope.bin: a 24-byte header then little-endian Float32 values.
///
/// Header: magic "SMNE" (4 bytes), version UInt32 LE (1), rate Float64 LE (values per second),
/// start Float64 LE (Unix seconds, NaN when unknown). Appending values keeps the file valid, so
/// it can be flushed every 30 s overnight and read after a crash.
public enum EnvelopeFile {
    public static let magic: [UInt8] = Array("SMNE".utf8)
    public static let version: UInt32 = 1
    public static let headerSize = 24
    public static let fileName = "envelope.bin"

    public static func header(rate: Double, start: Date?) -> Data {
        var d = Data(magic)
        withUnsafeBytes(of: version.littleEndian) { d.append(contentsOf: $0) }
        withUnsafeBytes(of: rate.bitPattern.littleEndian) { d.append(contentsOf: $0) }
        let s = start?.timeIntervalSince1970 ?? .nan
        withUnsafeBytes(of: s.bitPattern.littleEndian) { d.append(contentsOf: $0) }
        return d
    }

    public static func encode(values: [Float]) -> Data {
        var d = Data(capacity: values.count * 4)
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { d.append(contentsOf: $0) } }
        return d
    }

    public static func write(values: [Float], rate: Double, start: Date?, to url: URL) throws {
        var d = header(rate: rate, start: start)
        d.append(encode(values: values))
        do { try d.write(to: url, options: .atomic) } catch {
            throw SomniError(.io, "cannot write \(url.path)", cause: error)
        }
    }

    public struct Contents: Sendable, Equatable {
        public var rate: Double
        public var start: Date?
        public var values: [Float]
    }

    /// The rates a file may give, values per second: Somni writes 10; beyond these, a night's
    /// cells and bins are not numbers a report can lay out.
    public static let plausibleRates = 0.01...1000.0

    /// Reads a file; a trailing partial value (a crash mid-write) is ignored. A damaged one (a
    /// rate out of `plausibleRates`, a level that is not a finite RMS, a start no clock can show)
    /// is refused: an infinite level stopped the report with a trap.
    public static func read(from url: URL) throws -> Contents {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SomniError(.io, "cannot read \(url.path)", cause: error)
        }
        let bytes = [UInt8](data)
        guard bytes.count >= headerSize, Array(bytes[0..<4]) == magic else {
            throw SomniError(.badInput, "\(url.path) is not an envelope file")
        }
        func u32(_ o: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[o + $1]) << (8 * $1) } }
        func u64(_ o: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[o + $1]) << (8 * $1) } }
        guard u32(4) == version else {
            throw SomniError(.badInput, "\(url.path) has envelope version \(u32(4)), expected \(version)")
        }
        let rate = Double(bitPattern: u64(8))
        let start = Double(bitPattern: u64(16))
        let count = (bytes.count - headerSize) / 4
        guard plausibleRates.contains(rate) else {
            throw SomniError(.badInput, "\(url.path) is damaged: its rate is \(rate) values a second")
        }
        guard start.isNaN || abs(start) < 1e11 else {
            throw SomniError(.badInput, "\(url.path) is damaged: its start is \(start) s from 1970")
        }
        var values = [Float](repeating: 0, count: count)
        for i in 0..<count {
            let value = Float(bitPattern: u32(headerSize + 4 * i))
            guard value.isFinite, value >= 0 else {
                throw SomniError(.badInput, "\(url.path) is damaged: its level \(i + 1) is \(value)")
            }
            values[i] = value
        }
        return Contents(rate: rate, start: start.isNaN ? nil : Date(timeIntervalSince1970: start), values: values)
    }
}
