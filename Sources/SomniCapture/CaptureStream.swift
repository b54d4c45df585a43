import Foundation
import SomniAudio
import SomniCore

/// Something that delivers mono Float blocks at its own rate: a sound server, a sound card, or a
/// file played as if it were one.
public protocol CaptureDevice: AnyObject {
    /// Samples per second the device delivers.
    var rate: Int { get }
    /// A short description for logs and session.json ("pulse:default").
    var name: String { get }
    /// Fills the whole buffer, blocking until the audio is there. Throws `.io` when the device is
    /// gone or failed (unplugged, sound server restarted), `CaptureStalled` when it gave nothing
    /// for its stall limit while the computer was awake; returns false at the end of a finite
    /// device (a file).
    func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool
    /// What the recording should say about how the device was read (its channels found in
    /// opposite phase, say); grows, never shrinks.
    var warnings: [String] { get }
}

extension CaptureDevice {
    public var warnings: [String] { [] }
}

/// A device that gave no sound for `limit` seconds while the computer was awake (a stalled sound
/// server, a suspended source, a wedged USB microphone): the recorder treats it as lost, records
/// the gap and reopens it. A read that waited for ever kept `--until` and Ctrl-C from ending
/// the night.
public struct CaptureStalled: Error, CustomStringConvertible {
    public static let limit: Double = 5
    public let device: String
    public let seconds: Double
    public var description: String { "\(device) gave no sound for \(Int(seconds.rounded())) s" }
}

/// How to open the microphone.
public enum CaptureBackend: String, Sendable, CaseIterable {
    /// PulseAudio, or PipeWire through its PulseAudio server.
    case pulse
    /// ALSA directly (a Raspberry Pi without a sound server).
    case alsa
    /// An audio file played as the microphone, as fast as it can be read (tests, benchmarks).
    case file
}

/// A capture device converted to the 16 kHz analysis rate, as an AudioSource.
///
/// Reads 100 ms blocks (MoyiSnore's 4800 frames at 48 kHz). Buffers are allocated in `init`.
public final class CaptureStream<Device: CaptureDevice>: AudioSource {
    public let device: Device
    public let blockFrames: Int
    private let raw: UnsafeMutableBufferPointer<Float>
    private let converted: UnsafeMutableBufferPointer<Float>
    private let converter: RateConverter
    private var pendingStart = 0
    private var pendingCount = 0
    public var warnings: [String] { device.warnings }
    public var expectedDuration: Double? { nil }

    public init(device: Device, blockDuration: Double = 0.1) throws {
        self.device = device
        blockFrames = max(1, Int(Double(device.rate) * blockDuration))
        converter = try RateConverter(inputRate: device.rate, maxInputCount: blockFrames)
        raw = .allocate(capacity: blockFrames)
        raw.initialize(repeating: 0)
        converted = .allocate(capacity: converter.maxOutputCount(forInput: blockFrames))
        converted.initialize(repeating: 0)
    }

    deinit {
        raw.deallocate()
        converted.deallocate()
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        var written = 0
        while written < buffer.count {
            if pendingCount == 0 {
                // Hand back what we have rather than block again for a partly filled request.
                if written > 0 { break }
                guard try device.readBlock(into: raw) else { break }
                pendingCount = converter.process(UnsafeBufferPointer(raw), into: converted)
                pendingStart = 0
            }
            let n = min(pendingCount, buffer.count - written)
            for i in 0..<n { buffer[written + i] = converted[pendingStart + i] }
            written += n
            pendingStart += n
            pendingCount -= n
        }
        return written
    }
}

/// Plays a 16 kHz AudioSource as a device at 3 × 16 kHz = 48 kHz (each sample held three
/// times), as fast as it is read: a whole night through the real capture path, faster than real
/// time, for tests and benchmarks.
public final class SourceAsDevice<Source: AudioSource>: CaptureDevice {
    public let source: Source
    public let rate = 3 * analysisSampleRate
    public let name: String
    private let scratch: UnsafeMutableBufferPointer<Float>
    private var scratchCount = 0
    private var scratchUsed = 0

    public init(_ source: Source, name: String = "file") {
        self.source = source
        self.name = name
        scratch = .allocate(capacity: 4_096)
    }

    /// What the file's decoder noticed (cut short, channels in opposite phase) is the device's to say.
    public var warnings: [String] { source.warnings }

    deinit { scratch.deallocate() }

    public func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        var i = 0
        while i < buffer.count {
            if scratchUsed == scratchCount {
                scratchCount = try source.read(into: scratch)
                scratchUsed = 0
                if scratchCount == 0 {
                    guard i > 0 else { return false }
                    for k in i..<buffer.count { buffer[k] = 0 }
                    return true
                }
            }
            let s = scratch[scratchUsed]
            var r = 0
            while r < 3 && i < buffer.count { buffer[i] = s; i += 1; r += 1 }
            // A block boundary inside a triple drops the rest of it; the clock slips < 1 sample.
            scratchUsed += 1
        }
        return true
    }
}

extension CaptureBackend {
    /// Opens the device as a 16 kHz stream. `device` is a PulseAudio source name, an ALSA PCM
    /// name, or (file backend) an audio file played as a 48 kHz microphone as fast as it decodes.
    public func open(device: String?, rate: Int) throws -> any AudioSource {
        switch self {
        case .pulse: return try CaptureStream(device: PulseDevice(source: device, rate: rate))
        case .alsa: return try CaptureStream(device: ALSADevice(device: device, rate: rate))
        case .file:
            guard let path = device else { throw SomniError(.badInput, "the file backend needs --device FILE") }
            let url = URL(fileURLWithPath: path)
            return try CaptureStream(device: SourceAsDevice(AudioDecoder(url: url), name: "file:\(url.lastPathComponent)"))
        }
    }
}
