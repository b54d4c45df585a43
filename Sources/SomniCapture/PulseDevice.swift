import CPulse
import Foundation
import SomniCore

/// A PulseAudio record stream (mono float32 at `rate`) through libpulse-simple. PipeWire
/// desktops serve it too, through pipewire-pulse.
public final class PulseDevice: CaptureDevice {
    public let rate: Int
    public let name: String
    private let handle: OpaquePointer

    /// - Parameter source: a PulseAudio source name (`pactl list short sources`); nil for the default.
    public init(source: String?, rate: Int = 48_000, blockDuration: Double = 0.1) throws {
        self.rate = rate
        name = "pulse:\(source ?? "default")"
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rate), channels: 1)
        // Ask for one block per fragment so reads return about every 100 ms.
        let blockBytes = UInt32(Double(rate) * blockDuration) * 4
        var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max,
                                  minreq: UInt32.max, fragsize: blockBytes)
        var error: Int32 = 0
        guard let h = pa_simple_new(nil, "somni", PA_STREAM_RECORD, source, "night recording",
                                    &spec, nil, &attr, &error) else {
            throw SomniError(.io, "cannot open the PulseAudio source \(source ?? "(default)"): \(PulseDevice.message(error)). "
                + "Is a sound server running (pactl info)? Try --backend alsa on a machine without one")
        }
        handle = h
    }

    deinit { pa_simple_free(handle) }

    public func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        var error: Int32 = 0
        guard pa_simple_read(handle, buffer.baseAddress, buffer.count * 4, &error) >= 0 else {
            throw SomniError(.io, "capture device vanished (\(name): \(PulseDevice.message(error)))")
        }
        return true
    }

    static func message(_ error: Int32) -> String {
        guard let s = pa_strerror(error) else { return "error \(error)" }
        return String(cString: s)
    }
}
