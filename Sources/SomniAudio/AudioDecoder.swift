// Any recording FFmpeg can read, streamed as 16 kHz mono Float.
import CFFmpeg
import Foundation
import SomniCore

/// Decodes the best audio stream of a file (WAV, FLAC, MP3, Ogg Vorbis/Opus, M4A/AAC and whatever
/// else FFmpeg reads) and streams it as mono Float at `sampleRate`, downmixing (two channels
/// through `StereoDownmix`) and resampling on the way. Memory stays flat: packets are decoded
/// one at a time and only one frame's worth of resampled samples waits between calls.
///
/// A file that breaks part-way (cut off, or garbage after a good start) is decoded up to the break
/// and a message goes to `warnings`; a file that yields no audio at all throws at `init`.
public final class AudioDecoder: AudioSource {
    /// Duration from the container, when it says; nil when unknown.
    public let expectedDuration: Double?
    /// The duration was guessed from the bit rate (MP3 without a Xing header): good for progress,
    /// too rough to call a file short.
    private let durationIsGuess: Bool
    private let endsUnfinished: Bool
    private let startOffset: Double
    /// Samples still to give, where the file's sound ends before its end and FFmpeg reads on
    /// (`OpenedInput.sampleLimit`).
    private var samplesLeft: Int?
    /// Problems met while reading, and how two channels were mixed (said of the whole recording
    /// read so far, so a mix that changed part-way is said once, as it was).
    public var warnings: [String] { readWarnings + downmix.warnings + (multichannelDownmix?.warnings ?? []) }
    private var readWarnings: [String] = []
    /// What the file holds, for people: "mp3, 44100 Hz, 2 ch".
    public let formatDescription: String
    /// The rate of the samples `read(into:)` delivers.
    public let sampleRate: Int
    /// The file's own sample rate, when its header gives one.
    public let recordedSampleRate: Int?
    /// When the recording was made, when the container says: MP4/M4A/MOV `creation_time` (which
    /// phones write) or a WAV's broadcast-extension origination date and time (`.creationTime`),
    /// else a recording date with a time of day (an MP3's ID3 TDRC, an Ogg or FLAC DATE comment:
    /// `.dateTag`). Nil when it says nothing plausible (a muxer that left it at 0 reads 1904 or 1970).
    public let recordingStart: RecordingStart?
    /// The file's `RecordingFingerprint`, read once when first asked (2 MiB of the file).
    public private(set) lazy var fingerprint: String? = RecordingFingerprint.of(fileAt: URL(fileURLWithPath: path))

    private enum Stage { case decoding, draining, flushingResampler, finished }

    /// Give up after this many packets in a row that the decoder rejects: past that it is garbage.
    private static let damagedPacketLimit = 64

    private let handles: DecoderHandles
    private let path: String
    private let streamIndex: Int32
    /// Set when an M4A's frames are read by Somni (`IndexedM4A`, `UnindexedM4A`), not a demuxer.
    private var frames: (any AACFrameSource)?
    /// 16-bit PCM at the analysis rate, one channel, in a WAV file: what `PCM16Samples.wavFile` reads.
    private let isPlainAnalysisWAV: Bool
    private var stage = Stage.decoding
    /// Resampled samples waiting to be read: pending[pendingStart..<pendingEnd].
    private var pending = [Float](repeating: 0, count: 16_384)
    private var pendingStart = 0
    private var pendingEnd = 0
    /// Input of two channels or more, resampled but not yet mixed: interleaved frames.
    private var interleaved: [Float] = []
    private var downmix: StereoDownmix
    /// Three channels or more, mixed (`MultichannelDownmix`); made for the count decoded.
    private var multichannelDownmix: MultichannelDownmix?
    private var samplesDecoded = 0
    /// Packets of our stream read from the file: none at all is an empty recording, not a damaged one.
    private var packetsRead = 0
    private var damagedPackets = 0
    private var damagedInARow = 0
    private var stoppedAtDamage = false
    /// Silence still to be given before `heldFrame`, in output samples: an AMR recorder's silence
    /// frames, and stretches of the recording that could not be read.
    private var silenceOwed = 0
    /// The channel count of the last frame no resampler would take.
    private var channelsNotMixed: Int?
    /// Where the next decoded frame should start on the stream's clock, in seconds. A frame that
    /// starts later follows sound that was lost (a damaged stretch the demuxer skipped), and the
    /// time between is given as silence, so everything after stays at its time: before, the
    /// night closed up over the hole and every later event moved earlier by what was lost (8 s
    /// on a Vorbis night with five damaged 4 KiB blocks, without a word).
    private var nextFrameTime: Double?
    private var gapsFilled = 0, secondsFilled = 0.0
    /// The last frame's time on the stream's clock and its samples; jumps of the clock not
    /// filled as silence, because the clock counts samples at another rate than the frames'.
    private var lastStamp: Int64?, lastSamples = 0
    private var jumpsNotFilled = 0, secondsNotFilled = 0.0
    /// An MP3 or ADTS AAC stream: its packets carry no times of their own.
    private let isUntimed: Bool
    /// A FLAC stream, whose damaged frames are refused by their checksums (`OpenedInput`).
    private let checksummedFrames: Bool

    /// Seconds of the packets the decoder refused since the last frame it gave (a frame's length
    /// each: in formats without times of their own, MP3 and AAC, nothing else tells what was lost).
    private var refusedSeconds = 0.0
    /// A gap on the stream's clock shorter than this is the clock's own rounding; one longer than
    /// `longestGapFilled` is a damaged timestamp, not a damaged stretch.
    static let shortestGapFilled = 0.1, longestGapFilled = 3_600.0
    /// Clocks that count time, not samples (Matroska's milliseconds, MPEG-TS's 90 kHz): a jump
    /// on them equal to a frame's sample count is a coincidence, not a miscounting clock.
    static let clocksOfTime: Set<Int> = [1_000, 90_000]
    /// Sample rates a recording can have; one outside is a damaged header.
    static let plausibleSampleRates = 2_000...1_536_000

    /// `like`: a complete recording made by the same app with the same settings, for one cut off
    /// before its index was written (`UnindexedM4A`), whose own settings are lost with the index.
    public convenience init(url: URL, sampleRate: Int = analysisSampleRate, like sibling: URL? = nil) throws {
        try self.init(url: url, sampleRate: sampleRate, like: sibling, readsMP4IndexItself: true)
    }

    /// `readsMP4IndexItself: false` leaves a plain M4A to FFmpeg's demuxer, for tests that
    /// compare the two.
    init(url: URL, sampleRate: Int, like sibling: URL?, readsMP4IndexItself: Bool) throws {
        _ = ffmpegLogSilenced
        let path = url.path
        try Self.checkIsReadableFile(path)
        guard sampleRate > 0 else { throw SomniError(.badInput, "sample rate must be positive, not \(sampleRate)") }
        self.path = path
        self.sampleRate = sampleRate
        downmix = StereoDownmix(sampleRate: sampleRate)
        handles = try DecoderHandles()

        let input = try (readsMP4IndexItself && Self.isRegularFile(path) ? Self.openIndexed(path, handles: handles) : nil)
            ?? Self.openDemuxed(path, sampleRate: sampleRate, handles: handles)
            ?? Self.openUnindexed(path, like: sibling, handles: handles)
        streamIndex = input.streamIndex
        frames = input.frames
        formatDescription = input.formatDescription
        recordedSampleRate = input.recordedSampleRate
        isPlainAnalysisWAV = input.isPlainAnalysisWAV
        isUntimed = input.isUntimed
        checksummedFrames = input.checksummedFrames
        // A FLAC frame's header numbers it from the start of the recording: a first frame found
        // later than 0 follows frames whose headers were lost, whose time is kept as silence
        // (the night had moved earlier by it).
        if input.numberedFromZero { nextFrameTime = 0 }
        recordingStart = input.recordingStart
        expectedDuration = input.expectedDuration
        durationIsGuess = input.durationIsGuess
        endsUnfinished = input.endsUnfinished
        startOffset = input.startOffset
        samplesLeft = input.sampleLimit
        readWarnings += input.warnings
        if let unindexed = frames as? UnindexedM4A {
            readWarnings.append("the recording was cut off before its index was written: its audio was read from its "
                + "frames, with \(unindexed.settingsSource)")
        }

        // Decode up to the first samples now, so a file with nothing decodable fails here.
        guard try refill() else {
            if packetsRead == 0, !stoppedAtDamage {
                throw SomniError(.badInput, "\(path) holds no audio: its \(input.codecName) stream is empty (0 seconds)")
            }
            // FFmpeg reads more channels than its resampler mixes (32 and more): not damage.
            if let channels = channelsNotMixed, channels > 2 {
                throw SomniError(.unsupported, "\(path) has \(channels) channels, more than FFmpeg's resampler takes")
            }
            // A moment of sound (1 ms) decodes cleanly to nothing once resampled: short, not damaged.
            if damagedPackets == 0, !stoppedAtDamage, let seconds = expectedDuration, seconds > 0, seconds < 0.1 {
                throw SomniError(.badInput, String(format: "%@ holds only %.0f ms of audio, too short to analyse", path, seconds * 1000))
            }
            throw SomniError(.badInput, "no audio could be decoded from \(path): it is not an audio file, or too damaged"
                             + (Self.isRegularFile(path) ? "" : " (read from a pipe, a recording that keeps its index at its end, "
                                + "as most M4A files do, cannot be read: give the file itself)"))
        }
    }

    /// What opening a file found out, whichever way it was read.
    private struct OpenedInput {
        var streamIndex: Int32 = 0
        var frames: (any AACFrameSource)?
        var codecName: String
        var formatDescription: String
        var recordedSampleRate: Int?
        var isPlainAnalysisWAV = false
        var recordingStart: RecordingStart?
        var expectedDuration: Double?
        var durationIsGuess = false
        var warnings: [String] = []
        /// The stream's packets carry no time of their own (MP3, ADTS AAC).
        var isUntimed = false
        /// Every packet was found as a frame of this stream by its checked header and is refused
        /// by its checksum only when damaged (FLAC): a run of them is damage, not garbage.
        var checksummedFrames = false
        /// The first frame's time is its place in the recording (a FLAC file's frame numbers).
        var numberedFromZero = false
        /// The file stops before its stream's end says it is over (an Ogg whose last page lacks
        /// the end-of-stream mark): it was cut off, however whole what is there reads.
        var endsUnfinished = false
        /// How far the stream starts from 0, as far as 30 s: lengths FFmpeg gives may count it or
        /// not (an edit list that trims a video's start, as a cut without re-encoding leaves; an
        /// Ogg's or a Matroska's start offset), so a whole file read that much short of its
        /// length is not cut.
        var startOffset = 0.0
        /// The samples a WAV holds, where FFmpeg is told to read past its header's size (stale,
        /// never filled in) and would take what follows the sound for sound (an ID3v1 tag).
        var sampleLimit: Int?
    }

    /// Opens the file through FFmpeg's demuxers and its stream's decoder; nil when FFmpeg cannot
    /// open it and it may be an M4A without its index.
    private static func openDemuxed(_ path: String, sampleRate: Int, handles: DecoderHandles) throws -> OpenedInput? {
        // MP4/M4A: FFmpeg's default edit-list handling rebuilds the index of every frame into a
        // second copy, doubling the demuxer's largest allocation (32 MB more at the peak for 8
        // hours of 48 kHz AAC). Phone recordings carry one edit, the encoder's priming, which
        // the plain handling trims the same way (the decoded samples are identical).
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "advanced_editlist", "0", 0)
        // A WAV with sound past its header's size (a size wrapped past 4 GiB, or left stale) is
        // read to its end; FFmpeg's WAV demuxer would stop where the header says.
        // (Not a pipe's: see `isRegularFile`.)
        let plainFile = isRegularFile(path)
        let wavLengths = plainFile ? WAVLayout.lengths(of: URL(fileURLWithPath: path)) : nil
        if let damage = wavLengths?.damage { throw SomniError(.badInput, "\(path) is damaged: \(damage)") }
        let pastHeader = wavLengths?.pastDeclared
        // From a pipe the header cannot be checked against what follows: read to the pipe's end.
        // So is one whose header's size was never filled in: FFmpeg takes an RF64's ds64 size of
        // 0 at its word (a RIFF's 0 it reads past).
        if pastHeader != nil || !plainFile || wavLengths?.unfinished == true { av_dict_set(&options, "ignore_length", "1", 0) }
        // An MP4 without its whole index is read from its frames: cut inside the index, FFmpeg
        // failed to open it, or found no stream, or a stream of no samples ("empty"), by where
        // the cut fell.
        if plainFile, mp4Layout(path)?.surelyLacksWholeIndex == true { return nil }
        let opened = avformat_open_input(&handles.format, path, nil, &options)
        guard opened >= 0, let format = handles.format else {
            if plainFile, mayBeUnindexedMP4(path) { return nil }
            throw unopenableError(path: path, code: opened)
        }
        let probed = avformat_find_stream_info(format, nil)
        guard probed >= 0 else {
            if plainFile, mayBeUnindexedMP4(path) {
                avformat_close_input(&handles.format)
                return nil
            }
            throw unopenableError(path: path, code: probed)
        }

        var decoder: UnsafePointer<AVCodec>?
        let found = av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0)
        guard found >= 0, var decoder, let stream = format.pointee.streams[Int(found)] else {
            throw noUsableStreamError(format, path: path, reason: found)
        }
        var otherAudio = 0
        for index in 0..<Int(format.pointee.nb_streams) where index != Int(found) {
            format.pointee.streams[index]?.pointee.discard = AVDISCARD_ALL
            if format.pointee.streams[index]?.pointee.codecpar?.pointee.codec_type == AVMEDIA_TYPE_AUDIO { otherAudio += 1 }
        }

        guard let parameters = stream.pointee.codecpar else { throw SomniError(.badInput, "not an audio file: \(path)") }
        // A damaged header's rate is not believed: at 1 Hz a 10 s WAV became a 48-hour night of
        // 0.8 GB, and a 48 kHz one ran for minutes. No recorder samples below 2 kHz.
        let declaredRate = Int(parameters.pointee.sample_rate)
        guard declaredRate == 0 || Self.plausibleSampleRates.contains(declaredRate) else {
            throw SomniError(.badInput, "\(path) is damaged: its header says its sound was sampled \(declaredRate) times a second, "
                             + "which no recording is (\(Self.plausibleSampleRates.lowerBound)–\(Self.plausibleSampleRates.upperBound) Hz)")
        }
        let formatName = String(cString: format.pointee.iformat.pointee.name)
        // What the header says, for a file FFmpeg reads as a WAV too.
        let wav = formatName == "wav" ? wavLengths : nil
        // The decoder for integer samples' containers, whatever their bits (24 in 4 bytes: FFmpeg
        // took them for 24-bit floats), from the header as FFmpeg read it: a file's, a pipe's, an
        // RF64's. The codec tag is the header's format tag, 1 for integer PCM.
        let integerPCM = [AV_CODEC_ID_PCM_U8, AV_CODEC_ID_PCM_S16LE, AV_CODEC_ID_PCM_S24LE, AV_CODEC_ID_PCM_S32LE]
        if formatName == "wav", parameters.pointee.codec_tag == 1 {
            let p = parameters.pointee, channels = Int(p.ch_layout.nb_channels)
            let bytes = WAVLayout.sampleBytes(bits: Int(p.bits_per_coded_sample), channels: channels, blockAlign: Int(p.block_align),
                                              byteRate: Int(p.bit_rate / 8), sampleRate: Int(p.sample_rate))
            if (1...4).contains(bytes), case let byContainer = integerPCM[bytes - 1], p.codec_id != byContainer,
               let pcm = avcodec_find_decoder(byContainer) {
                parameters.pointee.codec_id = byContainer
                parameters.pointee.bits_per_coded_sample = Int32(8 * bytes)
                decoder = pcm
            }
        }
        let codecName = String(cString: avcodec_get_name(parameters.pointee.codec_id))
        var input = OpenedInput(
            streamIndex: found, codecName: codecName,
            formatDescription: "\(codecName), \(parameters.pointee.sample_rate) Hz, \(parameters.pointee.ch_layout.nb_channels) ch",
            recordedSampleRate: recordedRate(of: parameters.pointee))
        input.isPlainAnalysisWAV = plainFile && formatName == "wav"
            && parameters.pointee.codec_id == AV_CODEC_ID_PCM_S16LE && parameters.pointee.sample_rate == Int32(sampleRate)
            && sampleRate == analysisSampleRate && parameters.pointee.ch_layout.nb_channels == 1
        if otherAudio > 0 {
            // A screen recorder's desktop sound in one track and the microphone in another: one
            // is analysed, and a silent one must not pass for the whole file.
            input.warnings.append("the file holds \(otherAudio + 1) audio streams and only one was analysed, stream \(found) "
                + "(\(input.formatDescription)); to analyse another, extract it to a file of its own first")
        }
        input.recordingStart = recordingStart(format.pointee.metadata) ?? recordingStart(stream.pointee.metadata)
        input.isUntimed = ["mp3", "aac"].contains(formatName)
        var (duration, isWholeFiles) = duration(of: stream, in: format)
        // A WAV's demuxer trims its length to what the file holds (and calls it an estimate from
        // the bit rate, of bits / 8 bytes a sample: 24-bit samples in 4 bytes came out a third
        // long); the samples' own size gives it, and a finished header says what it should hold.
        var promisedByHeader = false
        if let held = wav?.held {
            (duration, isWholeFiles, promisedByHeader) = (held, false, true)
        }
        if let promised = wav?.promised, promised > (duration ?? 0) {
            (duration, isWholeFiles, promisedByHeader) = (promised, false, true)
        }
        if let held = wav?.held, pastHeader != nil || wav?.unfinished == true {
            input.sampleLimit = Int((held * Double(sampleRate)).rounded())
        }
        if let pastHeader {
            (duration, isWholeFiles, promisedByHeader) = (pastHeader.held, false, true)
            input.warnings.append("the file's header says it holds \(spokenDuration(pastHeader.declared)) of sound, but "
                + "\(spokenDuration(pastHeader.held)) follow: all of it is read (a header not brought up to date "
                + "when recording stopped, or a WAV over 4 GB)")
        }
        input.expectedDuration = duration
        let unknown = somni_nopts_value()
        let streamStart = stream.pointee.start_time == unknown ? 0 : Double(stream.pointee.start_time) * av_q2d(stream.pointee.time_base)
        let formatStart = format.pointee.start_time == unknown ? 0 : Double(format.pointee.start_time) / Double(somni_time_base())
        input.startOffset = min([streamStart, formatStart].filter(\.isFinite).map(abs).max() ?? 0, 30)
        if plainFile, formatName == "ogg" {
            input.endsUnfinished = OggEnd.lacksEndOfStream(path)
        }
        // The whole file's length speaks for this stream only when it is the file's one stream:
        // a video's picture may run on past its sound.
        input.durationIsGuess = (format.pointee.duration_estimation_method == AVFMT_DURATION_FROM_BITRATE && !promisedByHeader)
            || (isWholeFiles && format.pointee.nb_streams > 1)

        guard let codec = avcodec_alloc_context3(decoder) else { throw SomniError(.internalError, "out of memory") }
        handles.codec = codec
        try check(avcodec_parameters_to_context(codec, parameters), "cannot read the \(codecName) settings of \(path)", code: .badInput)
        codec.pointee.pkt_timebase = stream.pointee.time_base
        if parameters.pointee.codec_id == AV_CODEC_ID_FLAC {
            // Each FLAC frame carries a checksum of its samples. Unchecked, a frame with one bit
            // flipped decodes as noise at full scale (a bad sector in a night read as a string
            // of loud coughs); checked, it is refused and kept as silence at its time.
            codec.pointee.err_recognition |= AV_EF_CRCCHECK | AV_EF_EXPLODE
            input.checksummedFrames = true
            // In a FLAC file (not Ogg or Matroska, whose clocks may start away from 0) the
            // frames are numbered from the recording's start.
            input.numberedFromZero = formatName == "flac"
        }
        try check(avcodec_open2(codec, decoder, nil), "cannot open the \(codecName) decoder for \(path)", code: .badInput)
        return input
    }

    /// Opens a plain AAC M4A through its own index (`IndexedM4A`); nil for anything else.
    private static func openIndexed(_ path: String, handles: DecoderHandles) throws -> OpenedInput? {
        guard let indexed = IndexedM4A.open(path: path) else { return nil }
        let codec = try aacDecoder(config: indexed.config, for: path, handles: handles)
        codec.pointee.pkt_timebase = AVRational(num: 1, den: Int32(indexed.sampleRate))
        var input = OpenedInput(frames: indexed, codecName: "aac",
                                formatDescription: "aac, \(indexed.sampleRate) Hz, \(indexed.channels) ch",
                                recordedSampleRate: indexed.sampleRate)
        input.expectedDuration = indexed.duration > 0 ? indexed.duration : nil
        input.recordingStart = indexed.recordingStart
        return input
    }

    /// FFmpeg's AAC decoder, opened with `config` (an AudioSpecificConfig) for `handles`.
    private static func aacDecoder(config: [UInt8], for path: String, handles: DecoderHandles) throws -> UnsafeMutablePointer<AVCodecContext> {
        guard let decoder = avcodec_find_decoder(AV_CODEC_ID_AAC), let codec = avcodec_alloc_context3(decoder) else {
            throw SomniError(.internalError, "cannot open FFmpeg's AAC decoder")
        }
        handles.codec = codec
        try AACConfig.apply(config, to: codec)
        try check(avcodec_open2(codec, decoder, nil), "cannot open the AAC decoder for \(path)", code: .badInput)
        return codec
    }

    /// Opens an M4A cut off before its index was written, from its raw AAC frames.
    private static func openUnindexed(_ path: String, like sibling: URL?, handles: DecoderHandles) throws -> OpenedInput {
        guard let unindexed = try UnindexedM4A.open(path: path, like: sibling) else {
            throw unopenableError(path: path, code: somni_averror_invalid_data())
        }
        _ = try aacDecoder(config: unindexed.config, for: path, handles: handles)
        var input = OpenedInput(frames: unindexed, codecName: "aac",
                                formatDescription: "aac, \(unindexed.configuredRate) Hz, without its index",
                                recordedSampleRate: unindexed.configuredRate)
        input.expectedDuration = unindexed.estimatedDuration
        input.durationIsGuess = true
        return input
    }

    /// A file that starts as an MP4 does (`ftyp`) but has no whole index (`moov`, the index that
    /// says where each frame of audio lies): a phone app killed mid-recording leaves `ftyp` and
    /// `mdat` without it.
    private static func mayBeUnindexedMP4(_ path: String) -> Bool { mp4Layout(path).map { !$0.indexIsWhole } ?? false }

    /// The boxes of the file at `path`; nil unless it starts as an MP4 does.
    private static func mp4Layout(_ path: String) -> MP4Layout? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        return MP4Layout(file)
    }

    /// A 16-bit, 16 kHz, mono WAV file is read back from the file itself rather than spooled.
    public func rereadableSamples() -> PCM16Samples? {
        isPlainAnalysisWAV ? PCM16Samples.wavFile(URL(fileURLWithPath: path)) : nil
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        guard let destination = buffer.baseAddress else { return 0 }
        var filled = 0
        let wanted = min(buffer.count, samplesLeft ?? buffer.count)
        defer { samplesLeft = samplesLeft.map { $0 - filled } }
        while filled < wanted {
            if pendingStart == pendingEnd, try !refill() { break }
            let count = min(wanted - filled, pendingEnd - pendingStart)
            pending.withUnsafeBufferPointer { source in
                if let source = source.baseAddress {
                    (destination + filled).update(from: source + pendingStart, count: count)
                }
            }
            filled += count
            pendingStart += count
        }
        return filled
    }

    // MARK: - Opening

    /// FFmpeg's `creation_time` is UTC (ISO 8601, usually with a Z); a broadcast WAV's
    /// origination date and time ("2026-11-28", "23:14:02") are local time, and so is a `date`
    /// tag; most hold a year or a day only, which is no bedtime and is passed over. FFmpeg's WAV
    /// demuxer gives the origination date as `date` and its time, a time of day alone, as
    /// `creation_time`, which read as a creation time was no date, so a broadcast WAV (what field
    /// recorders write) was never dated; `origination_*` are the names its muxer takes.
    private static func recordingStart(_ metadata: OpaquePointer?) -> RecordingStart? {
        func tag(_ key: String) -> String? { av_dict_get(metadata, key, nil, 0).map { String(cString: $0.pointee.value) } }
        // Its separators may be any of - _ : . / or a space (EBU Tech 3285).
        func originated(_ date: String?, _ time: String?) -> Date? {
            func digits(_ s: String, _ separator: Character) -> String? {
                let parts = s.split(whereSeparator: { "-_:./ ".contains($0) })
                guard parts.count == 3, parts.allSatisfy({ $0.allSatisfy(\.isNumber) }) else { return nil }
                return parts.joined(separator: String(separator))
            }
            guard let date, let time, date.count == 10, time.count == 8, let day = digits(date, "-"), let clock = digits(time, ":") else {
                return nil
            }
            return RecordingStart.parse("\(day) \(clock)")
        }
        let utc = TimeZone(secondsFromGMT: 0)!
        let created = originated(tag("date"), tag("creation_time"))
            ?? tag("creation_time").flatMap { RecordingStart.parse($0, timeZone: utc) }
            ?? originated(tag("origination_date"), tag("origination_time"))
        let found = created.map { RecordingStart(date: $0, origin: .creationTime) }
            ?? tag("date").flatMap { RecordingStart.parse($0) }.map { RecordingStart(date: $0, origin: .dateTag) }
        return found.flatMap { RecordingStart.isPlausible($0.date) ? $0 : nil }
    }

    private static func checkIsReadableFile(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SomniError(.badInput, "no such file: \(path)\(PathName.notUTF8Note(path))")
        }
        guard !isDirectory.boolValue else { throw SomniError(.badInput, "\(path) is a folder, not an audio file") }
        guard FileManager.default.isReadableFile(atPath: path) else { throw SomniError(.io, "cannot read \(path): permission denied") }
        // A pipe (a FIFO, /dev/stdin) has no size to tell, and is read as it comes.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        guard size != 0 || !isRegularFile(path) else { throw SomniError(.badInput, "\(path) is empty (0 bytes)") }
    }

    /// A plain file, links followed: not a pipe or a device, which can be read only once, as it
    /// comes. A named pipe is opened once, by FFmpeg: a look at it first (for an M4A's index, a
    /// WAV's true length), opened and closed, left it a moment without a reader, and a writer
    /// then was stopped (EPIPE) before FFmpeg came to read.
    static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// The rate the recording was made at. Opus always decodes at 48 kHz, so for Opus it is the
    /// input rate its header (OpusHead, in Ogg and Matroska alike) keeps: a voice memo made at
    /// 8 kHz and saved as Opus is still narrow-band.
    private static func recordedRate(of parameters: AVCodecParameters) -> Int? {
        if parameters.codec_id == AV_CODEC_ID_OPUS, parameters.extradata_size >= 16, let header = parameters.extradata,
           Array(UnsafeBufferPointer(start: header, count: 8)) == Array("OpusHead".utf8) {
            let inputRate = (12..<16).reduce(0) { $0 | Int(header[$1]) << (8 * ($1 - 12)) }  // little-endian
            if inputRate > 0 { return inputRate }  // 0: the encoder did not say
        }
        return parameters.sample_rate > 0 ? Int(parameters.sample_rate) : nil
    }

    /// Why FFmpeg could not open a file, or find its streams, said for the user. A file that ends
    /// while its headers are read is empty or cut off. An ID3 tag with nothing readable after
    /// it (left by an MP3 recorder stopped as it began: a tag and a header frame) is an empty or
    /// broken recording, not something other than audio; FFmpeg's probe cannot tell it from noise.
    private static func unopenableError(path: String, code: Int32) -> SomniError {
        if code == somni_averror_eof() {
            return SomniError(.badInput, "\(path) holds no audio that can be read: it ends before its first sound "
                + "(an empty recording, or one cut off)")
        }
        // A pipe read once is gone: opened again to look at, it waited for a writer for ever.
        guard isRegularFile(path) else { return SomniError(.badInput, "not an audio file: \(path) (\(ffmpegErrorText(code)))") }
        guard let file = FileHandle(forReadingAtPath: path) else { return SomniError(.io, "cannot read \(path)") }
        defer { try? file.close() }
        let head = (try? file.read(upToCount: 12)) ?? Data()
        if head.prefix(3) == Data("ID3".utf8) {
            return SomniError(.badInput, "\(path) holds no audio that can be read: it is an MP3 recording with a tag "
                + "but no sound after it, empty or damaged (\(ffmpegErrorText(code)))")
        }
        if mayBeUnindexedMP4(path) {
            return SomniError(.badInput, "\(path) holds no audio that can be read: it is an MP4/M4A recording without "
                + "its index (the 'moov' box), which recorders write last, and without audio Somni can find in it")
        }
        // A recording cut off (or damaged) inside its own header is one, not "not an audio file".
        if let kind = headerKind(head) {
            let size = (try? file.seekToEnd()).map { " (\($0) bytes)" } ?? ""
            let article = ["MP4/M4A", "Ogg", "AIFF"].contains(kind) ? "an" : "a"
            return SomniError(.badInput, "\(path) holds no audio that can be read: it is \(article) \(kind) recording whose header "
                + "is cut off or damaged\(size): \(ffmpegErrorText(code))")
        }
        return SomniError(.badInput, "not an audio file: \(path) (\(ffmpegErrorText(code)))")
    }

    /// The first 12 bytes of the file at `path`, as many as there are (none when it cannot be read).
    private static func head(of path: String) -> Data {
        guard let file = FileHandle(forReadingAtPath: path) else { return Data() }
        defer { try? file.close() }
        return (try? file.read(upToCount: 12)) ?? Data()
    }

    /// The kind of recording a file's first bytes name; nil for none Somni knows by them.
    private static func headerKind(_ head: Data) -> String? {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            head.count >= offset + text.utf8.count && head.dropFirst(offset).prefix(text.utf8.count).elementsEqual(text.utf8)
        }
        if starts("fLaC") { return "FLAC" }
        if starts("OggS") { return "Ogg" }
        if starts("RIFF") || starts("RF64"), head.count < 12 || starts("WAVE", at: 8) { return "WAV" }
        if starts("FORM") { return "AIFF" }
        if starts("caff") { return "CAF" }
        if starts("ftyp", at: 4) { return "MP4/M4A" }
        return nil
    }

    /// Why av_find_best_stream found nothing to decode, said for the user.
    private static func noUsableStreamError(_ format: UnsafeMutablePointer<AVFormatContext>, path: String, reason: Int32) -> SomniError {
        let streams = (0..<Int(format.pointee.nb_streams)).compactMap { format.pointee.streams[$0]?.pointee.codecpar?.pointee }
        if reason == somni_averror_decoder_not_found(),
           let audio = streams.first(where: { $0.codec_type == AVMEDIA_TYPE_AUDIO }) {
            let name = String(cString: avcodec_get_name(audio.codec_id))
            return SomniError(.unsupported, "cannot decode \(path): this FFmpeg build has no decoder for its audio (codec \(name))")
        }
        let kinds = Set(streams.compactMap { av_get_media_type_string($0.codec_type).map { String(cString: $0) } })
        if kinds.isEmpty {
            return SomniError(.badInput, "\(path) holds no audio: the file has no streams at all (an empty recording?)")
        }
        // An audio stream its header cannot describe (no channels, no rate), in a file that
        // starts as such a recording does: FFmpeg takes a text file named .flac for a FLAC one.
        if let audio = streams.first(where: { $0.codec_type == AVMEDIA_TYPE_AUDIO }), headerKind(head(of: path)) != nil {
            return SomniError(.badInput, "\(path) holds audio that cannot be read: its header is damaged (\(String(cString: avcodec_get_name(audio.codec_id))), "
                + "\(audio.sample_rate) Hz, \(audio.ch_layout.nb_channels) channels)")
        }
        if kinds == ["audio"] { return SomniError(.badInput, "not an audio file: \(path)") }
        return SomniError(.badInput, "not an audio file: \(path) has no audio stream (it holds \(kinds.sorted().joined(separator: ", ")))")
    }

    /// The stream's length: its own, else the DURATION tag Matroska and WebM muxers write for
    /// each stream, else the whole file's (`isWholeFiles`).
    private static func duration(of stream: UnsafeMutablePointer<AVStream>,
                                 in format: UnsafeMutablePointer<AVFormatContext>) -> (seconds: Double?, isWholeFiles: Bool) {
        let unknown = somni_nopts_value()
        if stream.pointee.duration != unknown, stream.pointee.duration > 0 {
            return (Double(stream.pointee.duration) * av_q2d(stream.pointee.time_base), false)
        }
        if let tag = av_dict_get(stream.pointee.metadata, "DURATION", nil, 0), let seconds = clockSeconds(String(cString: tag.pointee.value)) {
            return (seconds, false)
        }
        if format.pointee.duration != unknown, format.pointee.duration > 0 {
            return (Double(format.pointee.duration) / Double(somni_time_base()), true)
        }
        return (nil, false)
    }

    /// "HH:MM:SS.fraction" in seconds; nil for anything else, or nothing.
    static func clockSeconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":")
        guard parts.count == 3, let h = Double(parts[0]), let m = Double(parts[1]), let s = Double(parts[2]) else { return nil }
        let seconds = h * 3600 + m * 60 + s
        return seconds.isFinite && seconds > 0 ? seconds : nil
    }

    // MARK: - Decoding

    /// Decodes until some samples wait in `pending`; false once the stream is over.
    private func refill() throws -> Bool {
        pendingStart = 0
        pendingEnd = 0
        guard let codec = handles.codec, let frame = handles.frame else { return false }
        while pendingEnd == 0 {
            if silenceOwed > 0 {
                giveSilence()
                continue
            }
            if let held = handles.heldFrame, held.pointee.nb_samples > 0 {
                defer { av_frame_unref(held) }
                try resample(held)
                continue
            }
            switch stage {
            case .finished:
                return false
            case .flushingResampler:
                try flushResampler()
                stage = .finished
                noteHowItEnded()
                handles.close()  // what the flush produced is in `pending` already
            case .decoding, .draining:
                let received = avcodec_receive_frame(codec, frame)
                if received >= 0 {
                    damagedInARow = 0
                    defer { av_frame_unref(frame) }
                    if owesSilence(before: frame), let held = handles.heldFrame {
                        av_frame_move_ref(held, frame)  // given once the silence before it is
                    } else {
                        try resample(frame)
                    }
                } else if received == somni_averror_eagain() {
                    if stage == .draining { stage = .flushingResampler } else { try feedDecoder(codec) }
                } else if received == somni_averror_eof() {
                    stage = .flushingResampler
                } else {
                    noteDamagedPacket(codec)
                }
            }
        }
        return true
    }

    /// Whether silence is owed before `frame`: for packets refused before it, and for time its
    /// clock passed since the frame before (each told once: the refused packets' time moves the
    /// clock's expectation on).
    private func owesSilence(before frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        let refused = refusedSeconds
        if refused > 0 {
            oweStretch(seconds: refused)
            nextFrameTime = nextFrameTime.map { $0 + refused }
            refusedSeconds = 0
        }
        return startsAfterAGap(frame) || refused > 0
    }

    /// A stretch that could not be read, owed as silence and told in the warning.
    private func oweStretch(seconds: Double) {
        silenceOwed += Int((seconds * Double(sampleRate)).rounded())
        gapsFilled += 1
        secondsFilled += seconds
    }

    /// Whether `frame` starts later on the stream's clock than the frame before it ended; if so,
    /// the silence between is owed. A frame without a time follows the one before; an earlier
    /// one (a chained stream starting its clock again) starts the count afresh.
    private func startsAfterAGap(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        let stamp = frame.pointee.best_effort_timestamp, rate = frame.pointee.sample_rate
        guard rate > 0 else { return false }
        let length = Double(frame.pointee.nb_samples) / Double(rate)
        guard stamp != somni_nopts_value(), let base = handles.codec?.pointee.pkt_timebase, base.num > 0, base.den > 0 else {
            nextFrameTime = nextFrameTime.map { $0 + length }
            return false
        }
        let start = Double(stamp) * Double(base.num) / Double(base.den)
        let previous = lastStamp.map { (stamp: $0, samples: lastSamples) }
        defer {
            nextFrameTime = start + length
            (lastStamp, lastSamples) = (stamp, Int(frame.pointee.nb_samples))
        }
        // A FLAC stream's clock counts its samples exactly: a frame lost where its header was
        // damaged (read with the frame before, which passed its checksum) is a gap of its own
        // length, often under the rounding other clocks need.
        let shortest = checksummedFrames ? 0.001 : Self.shortestGapFilled
        guard let expected = nextFrameTime, start - expected >= shortest, start - expected <= Self.longestGapFilled
        else { return false }
        // A clock that moved on by exactly the last frame's samples counts samples, at a rate
        // that is not the frames' (an M4A's timescale damaged to 1, a FLAC header's 8000 Hz over
        // 48 kHz frames): it jumps after every frame, and filled, a 10 s file became a 48-hour
        // night and a 5 GB working file. Its audio is read as it comes.
        let ticksPerSecond = Double(base.den) / Double(base.num)
        // (Subtracted with overflow reported: a damaged stamp may be near Int64's ends.)
        if let previous, case let step = stamp.subtractingReportingOverflow(previous.stamp), !step.overflow,
           step.partialValue == Int64(previous.samples), ticksPerSecond != Double(rate),
           !Self.clocksOfTime.contains(Int(ticksPerSecond)) {
            jumpsNotFilled += 1
            secondsNotFilled += start - expected
            return false
        }
        oweStretch(seconds: start - expected)
        return true
    }

    /// Gives owed silence into `pending`, as much as it holds.
    private func giveSilence() {
        let count = min(silenceOwed, pending.count - pendingEnd)
        pending.withUnsafeMutableBufferPointer { $0.baseAddress.map { ($0 + pendingEnd).update(repeating: 0, count: count) } }
        pendingEnd += count
        samplesDecoded += count
        silenceOwed -= count
    }

    /// An AMR recorder's silence frames (SID, and NO_DATA where nothing was sent): 20 ms each,
    /// which FFmpeg's decoders do not take (they have no comfort noise). Counted as damage, 64 in
    /// a row ended the night: a 15-minute recording read as 0.1 s. Given as silence instead.
    private func isAMRSilenceFrame(_ packet: UnsafeMutablePointer<AVPacket>) -> Bool {
        guard let codec = handles.codec, packet.pointee.size >= 1, let data = packet.pointee.data else { return false }
        let type = (data[0] >> 3) & 0x0F
        switch codec.pointee.codec_id {
        case AV_CODEC_ID_AMR_NB: return type == 8 || type == 15
        case AV_CODEC_ID_AMR_WB: return type == 9 || type == 14 || type == 15
        default: return false
        }
    }

    /// Sends the next packet of our stream; at the end of the file (or where reading breaks)
    /// starts draining the decoder.
    private func feedDecoder(_ codec: UnsafeMutablePointer<AVCodecContext>) throws {
        guard let packet = handles.packet else { return }
        if let frames {
            guard try frames.nextFrame(into: packet) else {
                if frames.stoppedAtDamage { stoppedAtDamage = true }
                self.frames = nil  // its file and tables are not needed any more
                startDraining(codec)
                return
            }
            defer { av_packet_unref(packet) }
            packetsRead += 1
            if avcodec_send_packet(codec, packet) < 0 { noteDamagedPacket(codec) }
            return
        }
        guard let format = handles.format else { return }
        while true {
            let read = av_read_frame(format, packet)
            if read < 0 {
                if read != somni_averror_eof() { stoppedAtDamage = true }
                startDraining(codec)
                return
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            packetsRead += 1
            if isAMRSilenceFrame(packet) {
                // The decoder holds nothing back (a frame a packet): the silence comes in its place,
                // and the next frame's time already counts it.
                silenceOwed += sampleRate / 50
                nextFrameTime = nextFrameTime.map { $0 + 0.02 }
                return
            }
            if avcodec_send_packet(codec, packet) < 0 { noteDamagedPacket(codec) }
            return
        }
    }

    private func startDraining(_ codec: UnsafeMutablePointer<AVCodecContext>) {
        avcodec_send_packet(codec, nil)
        stage = .draining
    }

    /// A packet the decoder rejected: skipped, unless rejections keep coming (garbage, not a glitch).
    /// While draining, a decoder that keeps failing is left with what it has given: asking it
    /// again and again must not be a loop with no end.
    private func noteDamagedPacket(_ codec: UnsafeMutablePointer<AVCodecContext>) {
        damagedPackets += 1
        damagedInARow += 1
        // Owed only once a good frame follows: damage that runs to the end is not sound.
        // (FLAC has no frame size: its frames' numbers in their headers show what was lost.)
        if codec.pointee.frame_size > 0, codec.pointee.sample_rate > 0 {
            refusedSeconds += Double(codec.pointee.frame_size) / Double(codec.pointee.sample_rate)
        }
        // Frames refused by their checksums are read on to the end of the file (the demuxer
        // moves on through it): a damaged stretch of a FLAC night is not the end of it. Not so
        // while draining, where nothing moves on.
        guard damagedInARow >= Self.damagedPacketLimit, !(checksummedFrames && stage == .decoding) else { return }
        stoppedAtDamage = true
        switch stage {
        case .decoding: startDraining(codec)
        case .draining: stage = .flushingResampler
        case .flushingResampler, .finished: break
        }
    }

    /// Says how reading ended: cut short (a read error, garbage, a broken last packet, or less audio
    /// than the container promised) or merely with a few damaged packets skipped.
    private func noteHowItEnded() {
        let seconds = Double(samplesDecoded) / Double(sampleRate)
        // A length on a clock found damaged (`jumpsNotFilled`) says nothing of what is missing.
        let short = !durationIsGuess && jumpsNotFilled == 0 && expectedDuration.map { seconds < $0 - 0.5 - 0.01 * $0 - startOffset } ?? false
        // All the container promised was read, to within a frame: what would not read came after it.
        let readWhole = !durationIsGuess && !endsUnfinished && expectedDuration.map { seconds >= $0 - 0.05 - startOffset } ?? false
        if endsUnfinished, !short {
            // A cut Ogg's length is read from its last page, so it never looks short.
            readWarnings.append("the file ends early (its stream was never closed: cut off while it was recorded?): "
                            + "read \(spokenDuration(seconds))")
        } else if stoppedAtDamage || damagedInARow > 0, !short, readWhole {
            readWarnings.append("the file holds unreadable data after the end of its audio, which was skipped; "
                            + "all \(spokenDuration(seconds)) of the recording were read")
        } else if stoppedAtDamage || short || damagedInARow > 0 {
            // Some demuxers trim the duration to what the file holds (WAV's, whose header is read
            // for what it promised instead): then it says nothing.
            let of = short ? expectedDuration.map { " of \(spokenDuration($0))" } ?? "" : ""
            readWarnings.append("\(endsEarlyWarningPrefix): read \(spokenDuration(seconds))\(of)")
        } else if damagedPackets > 0, gapsFilled == 0 {
            readWarnings.append("skipped \(damagedPackets) damaged packet(s); the audio has short gaps there")
        }
        if gapsFilled > 0 {
            let stretches = "\(gapsFilled) stretch\(gapsFilled == 1 ? "" : "es") of the recording (\(spokenDuration(secondsFilled)) in all) "
                + "could not be read and \(gapsFilled == 1 ? "is" : "are") kept as silence"
            // An MP3 or ADTS stream's damaged bytes may hold more than the frames the decoder
            // refused, and nothing in the file says how much.
            readWarnings.append(stretches + (isUntimed ? "; more may have been lost there, so what follows may be early by as much"
                                                   : ", so what follows stays at its time"))
        }
        if jumpsNotFilled > 0 {
            readWarnings.append("the file's timestamps jumped \(jumpsNotFilled) time\(jumpsNotFilled == 1 ? "" : "s") "
                + "(\(spokenDuration(secondsNotFilled)) in all) where its audio ran on: they look damaged, so its audio "
                + "was read as it comes, without those pauses")
        }
    }

    // MARK: - Resampling

    /// Converts one decoded frame to mono Float at `sampleRate`, appending to `pending`.
    private func resample(_ frame: UnsafeMutablePointer<AVFrame>) throws {
        var layout = frame.pointee.ch_layout
        // An unspecified order gets the usual one; a custom order's map lives in the frame, which
        // is about to be reused, so it is kept as the usual order for its count too.
        if layout.order == AV_CHANNEL_ORDER_UNSPEC || layout.order == AV_CHANNEL_ORDER_CUSTOM {
            layout = .standard(channels: Int(layout.nb_channels))
        }
        let input = ResamplerInput(format: frame.pointee.format, rate: frame.pointee.sample_rate, layout: layout)
        do {
            if handles.resamplerInput != input {
                try flushResampler()
                try handles.makeResampler(from: input, toRate: sampleRate)
            }
            guard let resampler = handles.resampler, let planes = frame.pointee.extended_data else { return }
            let inputPlanes = UnsafeMutableRawPointer(planes).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
            try convert(resampler, input: inputPlanes, count: frame.pointee.nb_samples)
        } catch {
            // A frame no resampler takes (a damaged header claiming 19 channels, say) is damage;
            // the next frame gets a resampler of its own.
            handles.dropResampler()
            channelsNotMixed = Int(layout.nb_channels)
            if let codec = handles.codec { noteDamagedPacket(codec) }
        }
    }

    /// Empties what the resampler still holds (its filter delay) into `pending`.
    private func flushResampler() throws {
        guard let resampler = handles.resampler else { return }
        try convert(resampler, input: nil, count: 0)
    }

    private func convert(_ resampler: OpaquePointer, input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32) throws {
        let capacity = Int(try check(swr_get_out_samples(resampler, count), "resampling \(path)"))
        if pendingEnd + capacity > pending.count {
            pending.append(contentsOf: repeatElement(0, count: pendingEnd + capacity - pending.count))
        }
        let converted: Int
        let channels = handles.keptChannels
        if channels > 1 {
            // Two channels or more come out interleaved and are mixed here: two minding their
            // phase (`StereoDownmix`), more as the mean of those that hold sound.
            if channels * capacity > interleaved.count { interleaved = [Float](repeating: 0, count: channels * capacity) }
            converted = try interleaved.withUnsafeMutableBufferPointer { buffer in
                try Int(resample(resampler, into: buffer.baseAddress, capacity: capacity, input: input, count: count))
            }
            interleaved.withUnsafeBufferPointer { frames in
                pending.withUnsafeMutableBufferPointer { out in
                    guard let frames = frames.baseAddress, let out = out.baseAddress else { return }
                    if channels == 2 {
                        downmix.mix(frames, frames: converted, into: out + pendingEnd)
                    } else {
                        if multichannelDownmix?.channels != min(channels, 64) {
                            multichannelDownmix = MultichannelDownmix(channels: channels, sampleRate: sampleRate)
                        }
                        multichannelDownmix?.mix(frames, stride: channels, frames: converted, into: out + pendingEnd)
                    }
                }
            }
        } else {
            converted = try pending.withUnsafeMutableBufferPointer { buffer in
                try Int(resample(resampler, into: buffer.baseAddress.map { $0 + pendingEnd }, capacity: capacity, input: input, count: count))
            }
        }
        pendingEnd += converted
        samplesDecoded += converted
    }

    private func resample(_ resampler: OpaquePointer, into base: UnsafeMutablePointer<Float>?, capacity: Int,
                          input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32) throws -> Int32 {
        guard let base else { return 0 }
        var output: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(base).assumingMemoryBound(to: UInt8.self)
        return try check(swr_convert(resampler, &output, Int32(capacity), input, count), "resampling \(path)")
    }
}

/// The decoded format a resampler was built for; a change mid-stream means a new resampler.
struct ResamplerInput: Equatable {
    var format: Int32
    var rate: Int32
    var layout: AVChannelLayout

    static func == (a: ResamplerInput, b: ResamplerInput) -> Bool {
        var left = a.layout, right = b.layout
        return a.format == b.format && a.rate == b.rate && av_channel_layout_compare(&left, &right) == 0
    }
}

/// The FFmpeg handles of one open input, freed together.
final class DecoderHandles {
    var format: UnsafeMutablePointer<AVFormatContext>?
    var codec: UnsafeMutablePointer<AVCodecContext>?
    var resampler: OpaquePointer?
    private(set) var resamplerInput: ResamplerInput?
    var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
    var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
    /// A decoded frame waiting for the silence owed before it.
    var heldFrame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()

    init() throws {
        guard packet != nil, frame != nil, heldFrame != nil else { throw SomniError(.internalError, "out of memory") }
    }

    /// Channels the resampler keeps: 1 (FFmpeg mixed one to mono), 2 (for `StereoDownmix`), or
    /// more, averaged by `AudioDecoder` itself.
    private(set) var keptChannels = 1

    /// A resampler to Float at `rate`: two channels stay two (interleaved), for `StereoDownmix`,
    /// since their plain average cancels when one is in opposite phase; any other count is mixed
    /// to mono here, averaged rather than summed (rematrix_maxval 1), so levels stay in [-1, 1]
    /// and dBFS keep their meaning.
    func makeResampler(from input: ResamplerInput, toRate rate: Int) throws {
        dropResampler()
        keptChannels = Int(max(input.layout.nb_channels, 1))
        // More than one channel keeps its own layout, so nothing is rematrixed. FFmpeg's mono mix
        // left channels out: the low-frequency one, those past the eighth of 16 or 24, and it had
        // no mix at all for 9–15 or 17–23 channels (refused as too many).
        var outLayout = keptChannels > 1 ? input.layout : AVChannelLayout.standard(channels: 1)
        var inLayout = input.layout
        try check(swr_alloc_set_opts2(&resampler, &outLayout, AV_SAMPLE_FMT_FLT, Int32(rate),
                                      &inLayout, AVSampleFormat(rawValue: input.format), input.rate, 0, nil),
                  "cannot set up resampling from \(input.rate) Hz")
        try check(av_opt_set_double(UnsafeMutableRawPointer(resampler), "rematrix_maxval", 1.0, 0), "cannot set up resampling")
        try check(swr_init(resampler), "cannot set up resampling from \(input.rate) Hz, \(input.layout.nb_channels) ch")
        resamplerInput = input
    }

    func dropResampler() {
        swr_free(&resampler)
        resamplerInput = nil
    }

    /// Frees everything (idempotent). Called at the end of the stream, not only in deinit: a
    /// night's analysis keeps its source until the night is written, and the MP4 demuxer's frame
    /// index alone is 32 MB for 8 hours of 48 kHz AAC.
    func close() {
        dropResampler()
        avcodec_free_context(&codec)
        avformat_close_input(&format)
        av_packet_free(&packet)
        av_frame_free(&frame)
        av_frame_free(&heldFrame)
    }

    deinit { close() }
}

extension AudioDecoder {
    /// Decodes a whole file to 16 kHz mono: for short clips (training data, sound banks); nights
    /// are streamed through `read(into:)` instead.
    public static func decodeWhole(_ url: URL) throws -> [Float] {
        let decoder = try AudioDecoder(url: url)
        var samples: [Float] = []
        // The header's length, as far as ten minutes: a damaged one may claim years.
        if let expected = decoder.expectedDuration, expected.isFinite, expected > 0 {
            samples.reserveCapacity(Int(min(expected, 600) * 16_000) + 16_000)
        }
        var block = [Float](repeating: 0, count: 16_384)
        while true {
            let n = try block.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }
            if n == 0 { break }
            samples += block[0..<n]
        }
        return samples
    }
}

/// The last page of an Ogg file: a stream recorded to its end closes with a page marked
/// end-of-stream (header type bit 0x04); one cut off while it was written stops at a page without
/// it, or part-way through one. Its length is read from that last page, so it never looked short.
enum OggEnd {
    static func lacksEndOfStream(_ path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        guard let size = try? file.seekToEnd(), size > 27 else { return false }
        let tailStart = size > 65_536 ? size - 65_536 : 0
        guard (try? file.seek(toOffset: tailStart)) != nil, let tail = try? file.readToEnd() else { return false }
        let bytes = [UInt8](tail), capture: [UInt8] = Array("OggS".utf8)
        // The last page that begins in the tail, read from its header: version 0, then its type.
        guard bytes.count >= 27, let last = stride(from: bytes.count - 27, through: 0, by: -1).first(where: { at in
            bytes[at] == capture[0] && bytes[at + 1] == capture[1] && bytes[at + 2] == capture[2] && bytes[at + 3] == capture[3]
                && bytes[at + 4] == 0
        }) else { return false }
        let segments = Int(bytes[last + 26])
        guard last + 27 + segments <= bytes.count else { return true }  // cut inside the page's header
        let body = bytes[(last + 27)..<(last + 27 + segments)].reduce(0) { $0 + Int($1) }
        return bytes[last + 5] & 0x04 == 0 || last + 27 + segments + body > bytes.count
    }
}
