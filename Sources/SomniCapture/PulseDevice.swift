import CPulse
import Foundation
import SomniCore

/// A PulseAudio record stream (float32 at `rate`) through libpulse's threaded main loop.
/// PipeWire desktops serve it too, through pipewire-pulse.
///
/// Recorded as two channels and mixed to mono here, not by the server: many laptops' built-in
/// microphones give one channel in opposite phase, and the server's mono mix of those is silence
/// (`StereoDownmix`). A mono microphone comes as the same signal twice. A source of more
/// channels gives its first two as they are: the server's own mix to front-left and front-right
/// drops channels without those positions, so a microphone array whose channels are `aux0…` would
/// record a night of silence.
///
/// Not the simple API: when the source a stream records from disappears (a USB microphone
/// unplugged), PulseAudio quietly moves the stream to another source, and the simple API cannot
/// refuse that or see it. A night would then go on recording the laptop's built-in microphone, or
/// a sink's monitor, with no gap in the night. When the user chose a source, the stream is
/// connected with PA_STREAM_DONT_MOVE instead: the server kills it, `readBlock` throws, and the
/// recorder records the gap and retries until that source is back. The default source (no
/// choice) may follow the system's default, as a desktop user expects.
public final class PulseDevice: CaptureDevice {
    public let rate: Int
    public let name: String
    private let connection: Connection
    /// The fragment peeked from the stream and not yet dropped, and how far it has been read.
    private var fragment: UnsafeRawPointer?
    private var fragmentBytes = 0
    private var fragmentRead = 0
    private var fragmentIsHole = false
    private let stereo: StereoCapture
    private let stallLimit: Double
    /// Said of a source below the analysis rate (a Bluetooth headset's 8 kHz): its sound reaches
    /// the night resampled, so the morning analysis could not tell it was narrow-band.
    private var narrowBand: String?
    public var warnings: [String] { stereo.warnings + (narrowBand.map { [$0] } ?? []) }

    /// - Parameter source: a PulseAudio source name (`pactl list short sources`); nil for the default.
    /// The rate `source` (nil: the default one) records at, asked of the sound server before a
    /// night: a Bluetooth headset's microphone gives 8 kHz, which the narrow-band model hears
    /// (the wide-band one found nothing in it). Nil when the server cannot say.
    public static func sourceRate(_ source: String?) -> Int? {
        guard let connection = try? Connection() else { return nil }
        return connection.locked { connection.sourceInfo(source)?.rate }
    }

    public init(source: String?, rate: Int = 48_000, blockDuration: Double = 0.1,
                stallLimit: Double = CaptureStalled.limit) throws {
        self.rate = rate
        self.stallLimit = stallLimit
        stereo = StereoCapture(rate: rate)
        name = "pulse:\(source ?? "default")"
        let connection = try Connection()
        self.connection = connection
        let what = source ?? "(default)"
        try connection.locked {
            var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rate), channels: 2)
            let stream: OpaquePointer?
            let info = connection.sourceInfo(source)
            if let sourceRate = info?.rate, isNarrowBand(recordedAt: sourceRate) {
                narrowBand = narrowBandWarning(recordedAt: sourceRate)
            }
            if var firstTwo = info.flatMap({ PulseDevice.firstTwoPositions(of: $0.channels) }) {
                stream = pa_stream_new(connection.context, "night recording", &spec, &firstTwo)
            } else {
                stream = pa_stream_new(connection.context, "night recording", &spec, nil)
            }
            guard let stream else {
                throw connection.failure("cannot create a PulseAudio record stream for \(what)")
            }
            connection.stream = stream
            let userdata = UnsafeMutableRawPointer(connection.mainloop)
            pa_stream_set_state_callback(stream, { _, loop in pa_threaded_mainloop_signal(OpaquePointer(loop), 0) }, userdata)
            pa_stream_set_read_callback(stream, { _, _, loop in pa_threaded_mainloop_signal(OpaquePointer(loop), 0) }, userdata)
            // Ask for one block per fragment so reads return about every 100 ms.
            let blockBytes = UInt32(Double(rate) * blockDuration) * 2 * 4
            var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max,
                                      minreq: UInt32.max, fragsize: blockBytes)
            var flags = PA_STREAM_ADJUST_LATENCY.rawValue
            if source != nil { flags |= PA_STREAM_DONT_MOVE.rawValue }
            guard pa_stream_connect_record(stream, source, &attr, pa_stream_flags_t(rawValue: flags)) == 0 else {
                throw connection.failure("cannot open the PulseAudio source \(what)")
            }
            let deadline = Connection.deadline(after: Connection.answerLimit)
            while pa_stream_get_state(stream) != PA_STREAM_READY {
                guard pa_stream_get_state(stream) != PA_STREAM_FAILED, pa_stream_get_state(stream) != PA_STREAM_TERMINATED else {
                    throw connection.failure("cannot open the PulseAudio source \(what)")
                }
                guard connection.wait(before: deadline) else { throw connection.silence("opening the source \(what)") }
            }
        }
    }

    public func readBlock(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Bool {
        guard let base = buffer.baseAddress else { return true }
        let wanted = 2 * buffer.count * MemoryLayout<Float>.size
        let destination = UnsafeMutableRawPointer(stereo.buffer(frames: buffer.count))
        try connection.locked {
            guard let stream = connection.stream else { throw vanished("no stream") }
            var filled = 0
            // Set when the stream first has nothing: a read gives up at the stall limit.
            var deadline: pa_usec_t?
            while filled < wanted {
                if fragmentRead == fragmentBytes {
                    if fragmentBytes > 0 { pa_stream_drop(stream) }
                    fragment = nil; fragmentBytes = 0; fragmentRead = 0
                    // Killed (its source gone, with DONT_MOVE) or the server went away.
                    guard pa_stream_get_state(stream) == PA_STREAM_READY else { throw vanished(connection.lastError) }
                    var data: UnsafeRawPointer?
                    var bytes = 0
                    guard pa_stream_peek(stream, &data, &bytes) == 0 else { throw vanished(connection.lastError) }
                    if bytes == 0 {
                        let giveUp = deadline ?? Connection.deadline(after: stallLimit)
                        deadline = giveUp
                        guard connection.wait(before: giveUp) else { throw CaptureStalled(device: name, seconds: stallLimit) }
                        continue
                    }
                    deadline = nil
                    fragment = data
                    fragmentBytes = bytes
                    // A hole (the server lost data) reads as silence, keeping the clock.
                    fragmentIsHole = data == nil
                }
                let n = min(wanted - filled, fragmentBytes - fragmentRead)
                if fragmentIsHole {
                    (destination + filled).initializeMemory(as: UInt8.self, repeating: 0, count: n)
                } else if let fragment {
                    (destination + filled).copyMemory(from: fragment + fragmentRead, byteCount: n)
                }
                filled += n
                fragmentRead += n
            }
        }
        stereo.mix(frames: buffer.count, into: base)
        return true
    }

    /// A two-channel map of a source's first two positions, for a source of two or more channels;
    /// nil for a mono source, which the server copies to both channels.
    static func firstTwoPositions(of source: pa_channel_map) -> pa_channel_map? {
        guard source.channels >= 2 else { return nil }
        var map = pa_channel_map()
        map.channels = 2
        map.map.0 = source.map.0
        map.map.1 = source.map.1
        return map
    }

    private func vanished(_ detail: String) -> SomniError {
        SomniError(.io, "capture device vanished (\(name): \(detail))")
    }

    /// The main loop thread, the context and the stream, freed in the order libpulse wants.
    private final class Connection {
        let mainloop: OpaquePointer
        let context: OpaquePointer
        var stream: OpaquePointer?
        private var running = false
        /// Signals the loop every second, so that no wait outlasts its deadline by more.
        private var heartbeat: OpaquePointer?

        /// How long opening waits for the server's answers (a stopped server never gives them).
        static let answerLimit: Double = 10

        static func deadline(after seconds: Double) -> pa_usec_t {
            pa_rtclock_now() + pa_usec_t(seconds * 1_000_000)
        }

        /// Waits for the loop's next signal (called with the loop locked); false once `deadline`
        /// has passed. The clock is monotonic: a computer asleep does not run it.
        func wait(before deadline: pa_usec_t) -> Bool {
            guard pa_rtclock_now() < deadline else { return false }
            pa_threaded_mainloop_wait(mainloop)
            return true
        }

        /// The channel positions and rate of `source` (nil: the default one); nil when the server
        /// cannot say, and the stream's own connection then reports what is wrong. Called with
        /// the loop locked.
        func sourceInfo(_ source: String?) -> (channels: pa_channel_map, rate: Int)? {
            final class Answer {
                let loop: OpaquePointer
                var map: (channels: pa_channel_map, rate: Int)?
                init(_ loop: OpaquePointer) { self.loop = loop }
            }
            let answer = Answer(mainloop)
            let userdata = Unmanaged.passUnretained(answer).toOpaque()
            guard let operation = pa_context_get_source_info_by_name(context, source ?? "@DEFAULT_SOURCE@", { _, info, eol, userdata in
                guard let userdata else { return }
                let answer = Unmanaged<Answer>.fromOpaque(userdata).takeUnretainedValue()
                if eol == 0, let info { answer.map = (info.pointee.channel_map, Int(info.pointee.sample_spec.rate)) }
                pa_threaded_mainloop_signal(answer.loop, 0)
            }, userdata) else { return nil }
            defer { pa_operation_unref(operation) }
            let deadline = Connection.deadline(after: Connection.answerLimit)
            while pa_operation_get_state(operation) == PA_OPERATION_RUNNING {
                guard wait(before: deadline) else { pa_operation_cancel(operation); return nil }
            }
            return withExtendedLifetime(answer) { answer.map }
        }

        init() throws {
            guard let loop = pa_threaded_mainloop_new() else { throw SomniError(.io, "cannot start a PulseAudio main loop") }
            guard let context = pa_context_new(pa_threaded_mainloop_get_api(loop), "somni") else {
                pa_threaded_mainloop_free(loop)
                throw SomniError(.io, "cannot create a PulseAudio context")
            }
            mainloop = loop
            self.context = context
            pa_context_set_state_callback(context, { _, loop in pa_threaded_mainloop_signal(OpaquePointer(loop), 0) },
                                          UnsafeMutableRawPointer(loop))
            heartbeat = pa_context_rttime_new(context, Connection.deadline(after: 1), { _, event, _, userdata in
                guard let userdata else { return }
                let connection = Unmanaged<Connection>.fromOpaque(userdata).takeUnretainedValue()
                pa_context_rttime_restart(connection.context, event, Connection.deadline(after: 1))
                pa_threaded_mainloop_signal(connection.mainloop, 0)
            }, Unmanaged.passUnretained(self).toOpaque())
            guard pa_context_connect(context, nil, PA_CONTEXT_NOFLAGS, nil) == 0 else {
                throw failure("cannot connect to the sound server")
            }
            guard pa_threaded_mainloop_start(loop) == 0 else { throw SomniError(.io, "cannot start a PulseAudio main loop") }
            running = true
            try locked {
                let deadline = Connection.deadline(after: Connection.answerLimit)
                while pa_context_get_state(context) != PA_CONTEXT_READY {
                    let state = pa_context_get_state(context)
                    guard state != PA_CONTEXT_FAILED, state != PA_CONTEXT_TERMINATED else {
                        throw failure("cannot connect to the sound server")
                    }
                    guard wait(before: deadline) else { throw silence("connecting") }
                }
            }
        }

        deinit {
            if running { pa_threaded_mainloop_lock(mainloop) }
            if let heartbeat { pa_threaded_mainloop_get_api(mainloop).pointee.time_free(heartbeat) }
            if let stream {
                pa_stream_disconnect(stream)
                pa_stream_unref(stream)
            }
            pa_context_disconnect(context)
            pa_context_unref(context)
            if running {
                pa_threaded_mainloop_unlock(mainloop)
                pa_threaded_mainloop_stop(mainloop)
            }
            pa_threaded_mainloop_free(mainloop)
        }

        /// Runs `body` holding the main loop's lock (every libpulse call outside its thread must).
        func locked<T>(_ body: () throws -> T) rethrows -> T {
            guard running else { return try body() }
            pa_threaded_mainloop_lock(mainloop)
            defer { pa_threaded_mainloop_unlock(mainloop) }
            return try body()
        }

        var lastError: String {
            guard let s = pa_strerror(pa_context_errno(context)) else { return "error \(pa_context_errno(context))" }
            return String(cString: s)
        }

        /// The server took more than `answerLimit` to answer (stopped, or hung).
        func silence(_ doing: String) -> SomniError {
            SomniError(.io, "the sound server did not answer within \(Int(Connection.answerLimit)) s (\(doing))")
        }

        func failure(_ what: String) -> SomniError {
            // The server answered that it has no such source (a name mistyped, no microphone
            // plugged in): asking whether one runs sent the user to the wrong place.
            if pa_context_errno(context) == Int32(PA_ERR_NOENTITY.rawValue) {
                return SomniError(.io, "\(what): the sound server has no such source; 'pactl list short sources' lists "
                    + "those it has (--device takes a name from it, and without --device its default source is used)")
            }
            return SomniError(.io, "\(what): \(lastError). Is a sound server running (pactl info)? "
                + "Try --backend alsa on a machine without one")
        }
    }
}
