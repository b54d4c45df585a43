import Foundation

/// A trained classifier as stored on disk: everything needed to run it, self-described.
///
/// Layout (little-endian): magic "SOMNICNN", format version (UInt32), header length (UInt32),
/// JSON header (labels, feature settings, normalisation, architecture, temperature, held-out fold), parameter
/// count (UInt32), that many Float32 parameters, then a CRC-32 of every preceding byte.
public struct CNNModel: Sendable {
    public static let magic = Array("SOMNICNN".utf8)
    public static let formatVersion: UInt32 = 1
    public static let fileExtension = "somnimodel"

    public var name: String
    public var labels: [String]
    public var features: FeatureSettings
    /// Per mel band: inputs are (log-mel − mean) / deviation.
    public var bandMean: [Float]
    public var bandDeviation: [Float]
    public let network: Network
    public var parameters: [Float]
    /// Softmax temperature fitted on validation data (1 = uncalibrated).
    public var temperature: Float
    /// The fold of ../shared/data's held-out rule (`DataSplit`) the model never trained on, for a
    /// model trained under that rule (`somni train --split shared-data --fold K`): what lets a
    /// score of that fold's held-out windows be checked as one of windows the model never heard.
    /// Nil for a model trained on any other split, and in files written before Somni 0.55.
    public var heldOutFold: Int?

    public init(name: String, labels: [String], features: FeatureSettings, bandMean: [Float], bandDeviation: [Float],
                layers: [LayerSpec], parameters: [Float]? = nil, temperature: Float = 1, heldOutFold: Int? = nil,
                seed: UInt64 = 1) throws {
        try features.validate()  // first: the input's shape divides by the hop, which a damaged file may give as 0
        let network = try Network(input: features.inputShape, layers: layers)
        self.name = name; self.labels = labels; self.features = features
        self.bandMean = bandMean; self.bandDeviation = bandDeviation
        self.network = network
        self.parameters = parameters ?? network.initialParameters(seed: seed)
        self.temperature = temperature
        self.heldOutFold = heldOutFold
        try validate()
    }

    /// Bounds no trained model comes near. They do not keep every activation finite over many
    /// layers; `Softmax` takes overflowed logits as the largest, so every score still is.
    static let largestMagnitude: Float = 1_000
    static let smallestDeviation: Float = 1e-4

    /// Everything a loaded file must satisfy before it may run.
    public func validate() throws {
        func fail(_ why: String) -> SomniError { SomniError(.badModel, "model '\(name)' does not fit together: \(why)") }
        try features.validate()
        guard !labels.isEmpty, Set(labels).count == labels.count, labels.allSatisfy({ !$0.isEmpty }) else {
            throw fail("labels must be distinct and non-empty, got \(labels)")
        }
        // As `somni train` refuses such a class folder: a newline in a label breaks every
        // one-line-per-window listing.
        if let label = labels.first(where: { $0.unicodeScalars.contains { $0.properties.generalCategory == .control } }) {
            throw fail("label \(label.debugDescription) has a control character")
        }
        guard network.inputShape == features.inputShape else {
            throw fail("network input \(network.inputShape) but features give \(features.inputShape)")
        }
        guard network.outputShape.count == labels.count else {
            throw fail("network has \(network.outputShape.count) outputs for \(labels.count) labels")
        }
        let statistics = features.channels * features.melBands
        guard bandMean.count == statistics, bandDeviation.count == statistics else {
            throw fail("normalisation has \(bandMean.count)/\(bandDeviation.count) values for \(features.channels) × \(features.melBands) mel bands")
        }
        // Finite is not enough: a deviation of 1e-38 or weights of 1e30 (a forged file with a
        // valid checksum) overflow to NaN scores. The trainer floors deviations at 1e-3, and
        // trained weights stay within a few units (the shipped models': under 2).
        guard bandMean.allSatisfy({ $0.isFinite && abs($0) <= Self.largestMagnitude }),
              bandDeviation.allSatisfy({ $0.isFinite && $0 >= Self.smallestDeviation && $0 <= Self.largestMagnitude }) else {
            throw fail("normalisation statistics are not finite, positive and within bounds "
                       + "(means within ±\(Self.largestMagnitude), deviations \(Self.smallestDeviation)…\(Self.largestMagnitude))")
        }
        guard parameters.count == network.parameterCount else {
            throw fail("\(parameters.count) parameters for an architecture that needs \(network.parameterCount)")
        }
        guard parameters.allSatisfy(\.isFinite) else { throw fail("parameters are not all finite") }
        guard parameters.allSatisfy({ abs($0) <= Self.largestMagnitude }) else {
            throw fail("parameters beyond ±\(Self.largestMagnitude), which no training gives")
        }
        guard temperature.isFinite, temperature >= 1e-3, temperature <= Self.largestMagnitude else {
            throw fail("temperature \(temperature)")
        }
        if let heldOutFold, !DataSplit.folds.contains(heldOutFold) {
            throw fail("held-out fold \(heldOutFold), where ../shared/data's rule has folds \(DataSplit.folds.lowerBound) to \(DataSplit.folds.upperBound)")
        }
    }

    private struct Header: Codable {
        var name: String
        var labels: [String]
        var features: FeatureSettings
        var bandMean: [Float]
        var bandDeviation: [Float]
        var layers: [LayerSpec]
        var temperature: Float
        /// Absent (not null) when nil, so a model of no fold is written as before 0.55.
        var heldOutFold: Int?
    }

    // MARK: Writing

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let header = try encoder.encode(Header(name: name, labels: labels, features: features, bandMean: bandMean,
                                               bandDeviation: bandDeviation, layers: network.layers.map(\.spec),
                                               temperature: temperature, heldOutFold: heldOutFold))
        var data = Data(Self.magic)
        data.appendLittleEndian(Self.formatVersion)
        data.appendLittleEndian(UInt32(header.count))
        data.append(header)
        data.appendLittleEndian(UInt32(parameters.count))
        data.reserveCapacity(data.count + parameters.count * 4 + 4)
        for p in parameters { data.appendLittleEndian(p.bitPattern) }
        data.appendLittleEndian(CRC32.checksum(data))
        return data
    }

    public func write(to url: URL) throws {
        do { try OutputFile.write(encoded(), to: url) } catch let e as SomniError { throw e } catch {
            throw SomniError(.io, "could not write the model to \(url.path)", cause: error)
        }
    }

    // MARK: Reading

    /// A model of the widest network `somni train` makes is a few MB; 256 MiB is surely not one.
    static let largestFileSize: Int64 = 256 << 20

    public init(contentsOf url: URL) throws {
        // A device or a pipe is no model (reading /dev/zero would never end), nor is a file
        // thousands of times the size of one.
        // Through links (a packager's, `cp -s`): what they lead to must be a file.
        if let attributes = try? FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path) {
            if let type = attributes[.type] as? FileAttributeType, type != .typeRegular {
                throw SomniError(.badModel, "\(url.path) is not a model file: not a regular file")
            }
            if let size = (attributes[.size] as? NSNumber)?.int64Value, size > Self.largestFileSize {
                throw SomniError(.badModel, "\(url.path) is not a model file: \(size / 1_048_576) MiB, far larger than any model")
            }
        }
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SomniError(.io, "could not read the model file \(url.path)", cause: error)
        }
        try self.init(data: data, source: url.lastPathComponent)
    }

    /// Parses and validates a model file's bytes; every defect is a `.badModel` error.
    public init(data: Data, source: String = "model") throws {
        func fail(_ why: String) -> SomniError { SomniError(.badModel, "\(source) is not a usable Somni model: \(why)") }
        let bytes = [UInt8](data)
        guard bytes.count >= 8, Array(bytes[0..<8]) == Self.magic else { throw fail("it does not start with the Somni model magic (foreign file?)") }
        guard bytes.count >= 8 + 4 + 4 + 4 + 4 else { throw fail("it is truncated (\(bytes.count) bytes)") }
        let version = bytes.littleEndianUInt32(at: 8)
        guard version == Self.formatVersion else {
            throw fail("format version \(version); this build reads version \(Self.formatVersion)")
        }
        let stored = bytes.littleEndianUInt32(at: bytes.count - 4)
        guard CRC32.checksum(bytes[0..<(bytes.count - 4)]) == stored else {
            throw fail("its checksum does not match (truncated or corrupt)")
        }
        let headerLength = Int(bytes.littleEndianUInt32(at: 12))
        guard headerLength <= bytes.count - 24 else { throw fail("header length \(headerLength) runs past the end") }
        let header: Header
        do { header = try JSONDecoder().decode(Header.self, from: Data(bytes[16..<(16 + headerLength)])) } catch {
            throw fail("its header is unreadable (\(error))")
        }
        let countAt = 16 + headerLength
        let count = Int(bytes.littleEndianUInt32(at: countAt))
        guard countAt + 4 + count * 4 + 4 == bytes.count else {
            // Bytes that are not whole parameters are said as bytes: "13538 but holds 13538" for one stray byte.
            let held = bytes.count - countAt - 8
            throw fail("it declares \(count) parameters (\(count * 4) bytes) but holds "
                       + (held % 4 == 0 ? "\(held / 4)" : "\(held) bytes of them"))
        }
        var parameters = [Float](repeating: 0, count: count)
        for i in 0..<count { parameters[i] = Float(bitPattern: bytes.littleEndianUInt32(at: countAt + 4 + 4 * i)) }
        do {
            try self.init(name: header.name, labels: header.labels, features: header.features, bandMean: header.bandMean,
                          bandDeviation: header.bandDeviation, layers: header.layers, parameters: parameters,
                          temperature: header.temperature, heldOutFold: header.heldOutFold)
        } catch let e as SomniError {
            throw fail(e.message)
        }
    }
}

/// CRC-32 (IEEE 802.3, the zlib polynomial).
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes { crc = table[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

extension Data {
    mutating func appendLittleEndian(_ v: UInt32) {
        Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) }
    }
}

extension [UInt8] {
    func littleEndianUInt32(at i: Int) -> UInt32 {
        UInt32(self[i]) | UInt32(self[i + 1]) << 8 | UInt32(self[i + 2]) << 16 | UInt32(self[i + 3]) << 24
    }
}
