import CALSA
import Foundation
import SomniCore

/// An ALSA capture PCM (mono float32 at `rate`), for machines without a sound server. Use a
/// `plughw:CARD,DEV` or `default` name so ALSA converts format, channels and rate as needed.
public final class ALSADevice: CaptureDevice {
    public let rate: Int
    public let name: String
    private let pcm: OpaquePointer

    public init(device: String?, rate: Int = 48_000) throws {
        self.rate = rate
        let pcmName = device ?? "default"
        name = "alsa:\(pcmName)"
        var handle: OpaquePointer?
        var rc = snd_pcm_open(&handle, pcmName, SND_PCM_STREAM_CAPTURE, 0)
        guard rc >= 0, let pcm = handle else {
            throw SomniError(.io, "cannot open the ALSA capture device \(pcmName): \(ALSADevice.message(rc)). "
                + "List devices with 'arecord -L'")
        }
        // Resampling allowed, 0.5 s of latency: plenty of room for a slow Raspberry Pi.
        rc = snd_pcm_set_params(pcm, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1, UInt32(rate), 1, 500_000)
        guard rc >= 0 else {
            snd_pcm_close(pcm)
            throw SomniError(.io, "the ALSA device \(pcmName) cannot capture mono float at \(rate) Hz: \(ALSADevice.message(rc)). "
                + "Try a plughw: device")
        }
        self.pcm = pcm
    }

    deinit { snd_pcm_close(pcm) }

    public func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        var done = 0
        while done < buffer.count {
            let n = snd_pcm_readi(pcm, buffer.baseAddress.map { $0 + done }, snd_pcm_uframes_t(buffer.count - done))
            if n >= 0 { done += Int(n); continue }
            // Overruns and suspends are recoverable in place; anything else means the device is gone.
            let rc = snd_pcm_recover(pcm, Int32(n), 1)
            guard rc >= 0 else {
                throw SomniError(.io, "capture device vanished (\(name): \(ALSADevice.message(Int32(n))))")
            }
        }
        return true
    }

    static func message(_ rc: Int32) -> String {
        guard let s = snd_strerror(rc) else { return "error \(rc)" }
        return String(cString: s)
    }
}
