import CALSA
import Foundation
import SomniCore

/// An ALSA capture PCM (float32 at `rate`), for machines without a sound server. Use a
/// `plughw:CARD,DEV` or `default` name so ALSA converts format, channels and rate as needed.
///
/// Two channels are captured when the device gives them, and mixed to mono here: many laptops'
/// built-in microphones give one channel in opposite phase, which a plain mono mix cancels
/// (`StereoDownmix`). A device that only captures mono is read as it is.
public final class ALSADevice: CaptureDevice {
    public let rate: Int
    public let name: String
    private let pcm: OpaquePointer
    private let channels: Int
    private let stereo: StereoCapture
    private let stallLimit: Double
    public var warnings: [String] { stereo.warnings }

    public init(device: String?, rate: Int = 48_000, stallLimit: Double = CaptureStalled.limit) throws {
        self.rate = rate
        self.stallLimit = stallLimit
        stereo = StereoCapture(rate: rate)
        let pcmName = device ?? "default"
        name = "alsa:\(pcmName)"
        var failure: Int32 = 0
        // alsa-lib is not let print its own lines, from the open on: on a machine without a card
        // its configuration search printed eight before Somni's one line, which says why, and a
        // source gone mid-night printed its plugin's and recovery's ahead of Somni's note.
        somni_alsa_quiet_errors(1)
        for channels in [2, 1] {
            var handle: OpaquePointer?
            let rc = snd_pcm_open(&handle, pcmName, SND_PCM_STREAM_CAPTURE, 0)
            guard rc >= 0, let pcm = handle else {
                throw SomniError(.io, "cannot open the ALSA capture device \(pcmName): \(ALSADevice.message(rc)). "
                    + "List devices with 'arecord -L'")
            }
            // Resampling allowed, 0.5 s of latency: plenty of room for a slow Raspberry Pi. A
            // refused second channel is expected of a mono microphone.
            failure = snd_pcm_set_params(pcm, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channels),
                                         UInt32(rate), 1, 500_000)
            if failure >= 0 {
                // Started here, not by the first read, so that every read can give up on a
                // device that gives nothing (a read that starts it waits without a limit).
                _ = snd_pcm_start(pcm)
                self.pcm = pcm
                self.channels = channels
                return
            }
            snd_pcm_close(pcm)
        }
        throw SomniError(.io, "the ALSA device \(pcmName) cannot capture float at \(rate) Hz: \(ALSADevice.message(failure)). "
            + "Try a plughw: device")
    }

    deinit { snd_pcm_close(pcm) }

    public func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        guard let base = buffer.baseAddress else { return true }
        guard channels == 2 else {
            try read(frames: buffer.count, into: base)
            return true
        }
        try read(frames: buffer.count, into: stereo.buffer(frames: buffer.count))
        stereo.mix(frames: buffer.count, into: base)
        return true
    }

    /// Reads exactly `count` frames of `channels` interleaved samples.
    private func read(frames count: Int, into destination: UnsafeMutablePointer<Float>) throws {
        var done = 0
        while done < count {
            // A running device that has nothing for the stall limit has stalled (a read would
            // wait for ever). An error is left to the read to report and recover from.
            if snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING, snd_pcm_wait(pcm, Int32(stallLimit * 1000)) == 0 {
                throw CaptureStalled(device: name, seconds: stallLimit)
            }
            let n = snd_pcm_readi(pcm, destination + done * channels, snd_pcm_uframes_t(count - done))
            if n >= 0 { done += Int(n); continue }
            // Overruns and suspends are recoverable in place; anything else means the device is gone.
            let rc = snd_pcm_recover(pcm, Int32(n), 1)
            guard rc >= 0 else {
                throw SomniError(.io, "capture device vanished (\(name): \(ALSADevice.message(Int32(n))))")
            }
            // Recovering leaves it prepared, not running, and the next read would start it and
            // wait without a limit; started here, that read waits under the stall limit again.
            _ = snd_pcm_start(pcm)
        }
    }

    static func message(_ rc: Int32) -> String {
        guard let s = snd_strerror(rc) else { return "error \(rc)" }
        return String(cString: s)
    }
}
