import Foundation
import SomniAudio
import SomniCore

/// Output formats `somni synth` can write, by `--format` name.
/// Output formats `somni synth` can write, by `--format` name: each writes at a working file
/// (the second URL) and renames it into place when finished.
let synthSinkFactories: [String: @Sendable (URL, URL) throws -> any AudioSink] = [
    "wav": { try WAVWriter(url: $0, format: .pcm16, temporaryURL: $1) },
    "wav-float": { try WAVWriter(url: $0, format: .float32, temporaryURL: $1) },
    "m4a": { try EncodedAudioWriter(url: $0, format: .m4a, sampleRate: analysisSampleRate, temporaryURL: $1) },
    "flac": { try EncodedAudioWriter(url: $0, format: .flac, sampleRate: analysisSampleRate, temporaryURL: $1) },
]

struct SynthCommand: Command {
    static let name = "synth"
    static let summary = "Synthesise a test night with a reference CSV of where every event is"
    static let help = """
    Usage: somni synth --out night.wav [options]

    Writes a night of audio built from sounds generated in code (or drawn from recordings with
    --data) and a reference CSV (start,end,class) of every snore, utterance and cough in it, for
    'somni evaluate'. The night is rendered block by block: memory stays flat for any length.

      --out FILE          the audio file to write (required)
      --hours H           length of the night in hours (default 8, at most 24)
      --seed N            random seed; the same seed gives the same night (default 1)
      --scene S           quiet | fan | street (default quiet)
      --background DB     RMS level of the scene's background in dBFS (default: per scene)
      --hum HZ            mains hum (50 or 60, any 20-400) with its harmonics under the whole
                          night, as a cheap microphone or a laptop on its charger picks up
      --hum-level DB      its RMS level in dBFS (default -45)
      --noise-only        background and bedroom sounds only, no snoring, talk or coughs
      --talk-per-hour N   sleep-talk utterances per hour (default 4; 0 for none)
      --cough-bouts-per-hour N
                          bouts of 1-4 coughs per hour (default 3; 0 for none)
      --data DIR          draw snores, words, coughs, doors, traffic and noise beds from a data
                          folder laid out like ../shared/data (default: generated sounds)
      --split S           test | train | all: which part of --data to use (default test)
      --fold K            with --split test or train: the split of that fold of ../shared/data's
                          held-out rule, 0 to 4 (default 0; see 'somni train --fold')
      --no-recorded-bed   with --data, leave the noise recordings out of the background: the
                          scene's generated bed alone (in the fan scene, one steady fan; with
                          them, a cat, dishes and two noises take turns at the fan's level)
      --reference FILE    where to write the reference CSV (default: beside --out, .csv)
      --format F          \(synthSinkFactories.keys.sorted().joined(separator: " | ")) (default: as --out's
                          extension names, .wav .flac or .m4a; wav for any other)
    """

    /// The formats an extension of --out names; a night is never written under a name that
    /// says another format (any other recording's extension names none synth writes).
    static let extensionFormats: [String: [String]] = ["wav": ["wav", "wav-float"], "flac": ["flac"], "m4a": ["m4a"]]

    var out: String
    var reference: String?
    var configuration = NightConfiguration()
    var data: String?
    var split: DataSplit?
    var fold = 0
    var format: String
    /// Options given that only some nights take, to refuse where they would be ignored.
    var dataPartGiven = false
    var ratesGiven: [String] = []

    init(_ a: inout Arguments) throws {
        guard let out = try a.fileOption("--out") else { throw UsageError("--out FILE is required") }
        self.out = out
        reference = try a.fileOption("--reference")
        data = try a.option("--data")
        let ext = URL(fileURLWithPath: out).pathExtension.lowercased()
        let named = Self.extensionFormats[ext] ?? (AudioFileNames.isAudio(out) ? [] : nil)
        if let chosen = try a.option("--format") {
            if let named, !named.contains(chosen) {
                throw UsageError("--out \(out) names a .\(ext) file, but --format is \(chosen)")
            }
            format = chosen
        } else if named == [] {
            throw UsageError("synth writes .wav, .flac or .m4a, not .\(ext) (--out \(out))")
        } else {
            format = named?.first ?? "wav"
        }
        configuration.hours = try a.option("--hours", as: Double.self) ?? 8
        configuration.seed = try a.option("--seed", as: UInt64.self) ?? 1
        configuration.backgroundLevel = try a.option("--background", as: Double.self)
        configuration.humFrequency = try a.option("--hum", as: Double.self)
        if let level = try a.option("--hum-level", as: Double.self) {
            guard configuration.humFrequency != nil else { throw UsageError("--hum-level goes with --hum") }
            configuration.humLevel = level
        }
        configuration.noiseOnly = a.flag("--noise-only")
        configuration.recordedBed = !a.flag("--no-recorded-bed")
        if let rate = try a.option("--talk-per-hour", as: Double.self) { configuration.speechPerHour = rate; ratesGiven.append("--talk-per-hour") }
        if let rate = try a.option("--cough-bouts-per-hour", as: Double.self) {
            configuration.coughBoutsPerHour = rate
            ratesGiven.append("--cough-bouts-per-hour")
        }
        if let scene = try a.option("--scene") {
            guard let s = NightConfiguration.Scene(rawValue: scene) else {
                throw UsageError("--scene takes quiet, fan or street, not '\(scene)'")
            }
            configuration.scene = s
        }
        let givenSplit = try a.option("--split")
        dataPartGiven = givenSplit != nil
        switch givenSplit ?? "test" {
        case "all": split = nil
        case let s: guard let value = DataSplit(rawValue: s) else { throw UsageError("--split takes test, train or all, not '\(s)'") }
            split = value
        }
        if let fold = try a.option("--fold") {
            guard split != nil else { throw UsageError("--fold goes with --split test or train") }
            self.fold = try TrainCommand.fold(fold)
            dataPartGiven = true
        }
    }

    func validate() throws {
        // A second at least, as the synthesiser needs (0.0001 h passed here and failed there, exit 65).
        guard configuration.hours.isFinite, configuration.hours * 3600 >= 1, configuration.hours <= 24 else {
            throw UsageError("--hours must be at least a second (0.0003) and at most 24")
        }
        if let level = configuration.backgroundLevel, !(level.isFinite && level <= 0 && level >= -120) {
            throw UsageError("--background takes a level in dBFS between -120 and 0")
        }
        if let hum = configuration.humFrequency, !(hum >= 20 && hum <= 400) {
            throw UsageError("--hum takes the mains frequency in Hz, from 20 to 400 (50 or 60)")
        }
        guard configuration.humLevel.isFinite, configuration.humLevel <= 0, configuration.humLevel >= -120 else {
            throw UsageError("--hum-level takes a level in dBFS between -120 and 0")
        }
        for (flag, rate) in [("--talk-per-hour", configuration.speechPerHour), ("--cough-bouts-per-hour", configuration.coughBoutsPerHour)]
        where !(rate.isFinite && rate >= 0 && rate <= 3600) {
            throw UsageError("\(flag) takes a number of events per hour from 0 to 3600")
        }
        if dataPartGiven, data == nil {
            throw UsageError("--split and --fold only apply with --data: generated nights use no recorded clips")
        }
        if configuration.noiseOnly, let rate = ratesGiven.first {
            throw UsageError("\(rate) does not go with --noise-only, a night of background and bedroom sounds alone")
        }
        if !configuration.recordedBed, data == nil {
            throw UsageError("--no-recorded-bed only applies with --data: generated nights have no recorded bed")
        }
        try configuration.validate()
        // Both are written through links: a reference that is a link to the audio is the audio.
        func landing(_ url: URL) -> String {
            let target = OutputFile.followingLinks(url)
            return target.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(target.lastPathComponent).path
        }
        if landing(referenceURL) == landing(URL(fileURLWithPath: out)) {
            throw UsageError("the reference CSV would be written over the night's audio (\(out)): "
                             + "give --out an audio file's name, or --reference another file")
        }
        guard synthSinkFactories[format] != nil else {
            throw SomniError(.unsupported, "--format \(format) is not available (use \(synthSinkFactories.keys.sorted().joined(separator: " or ")))")
        }
    }

    /// Where the reference goes: --reference, else beside --out with .csv for its extension.
    var referenceURL: URL {
        reference.map { URL(fileURLWithPath: $0) } ?? URL(fileURLWithPath: out).deletingPathExtension().appendingPathExtension("csv")
    }

    func run() throws {
        // A link is written through (the audio is renamed into place when whole: over a link it
        // replaced the link, over a device the device).
        let outURL = OutputFile.followingLinks(URL(fileURLWithPath: out))
        // Both places are checked before the clips load and the night is rendered (an 8-hour
        // night takes half a minute and 0.9 GB): audio without its reference is of no use.
        try OutputPlace.check(outURL, what: "the night's audio", devices: false)
        try OutputPlace.check(referenceURL, what: "the reference CSV")
        let bank: any SoundBank = try data.map {
            try RecordingSoundBank(dataDirectory: URL(fileURLWithPath: $0), split: split, fold: fold, loader: AudioDecoder.decodeWhole)
        } ?? GeneratedSoundBank()
        let night = try NightSynthesizer(configuration: configuration, bank: bank)
        guard let makeSink = synthSinkFactories[format] else { return }
        // What an earlier synth into this file left when it was killed: up to 0.9 GB of WAV.
        PartialFile.removeAbandoned(of: outURL)
        // The reference is written first beside its place and put there after the audio: a disk
        // too full for it fails before the night is rendered, and neither file of an earlier
        // night of these names is lost.
        let reference = Data(ReferenceCSV.write(night.plan.events).utf8)
        let fm = FileManager.default
        let referenceTarget = OutputFile.followingLinks(referenceURL)
        let stagedReference = OutputFile.isDevice(referenceTarget) ? nil : PartialFile.url(for: referenceTarget)
        // Ctrl-C (or a TERM or HUP) removes the working files: an 8-hour night's is 0.9 GB,
        // which otherwise waited six hours for a later synth of this name to sweep it.
        let partial = PartialFile.url(for: outURL)
        RemovedOnInterrupt.shared.watch(files: [partial] + (stagedReference.map { [$0] } ?? []))
        defer { RemovedOnInterrupt.shared.end() }
        if let stagedReference {
            do { try reference.write(to: stagedReference) } catch {
                try? fm.removeItem(at: stagedReference)
                throw SomniError(.io, "cannot write \(referenceURL.path)", cause: error)
            }
        }
        let sink = try makeSink(outURL, partial)
        do { try night.render(to: sink, finishing: false) } catch {
            if let stagedReference { try? fm.removeItem(at: stagedReference) }
            throw error
        }
        // The audio and its reference go into place together: a signal between the two renames
        // left the new night's audio with the old night's reference.
        try RemovedOnInterrupt.shared.uninterruptible {
            do { try sink.finish() } catch {
                if let stagedReference { try? fm.removeItem(at: stagedReference) }
                throw error
            }
            do {
                if let stagedReference {
                    guard rename(stagedReference.path, referenceTarget.path) == 0 else {
                        throw SomniError(.io, String(cString: strerror(errno)))
                    }
                } else {
                    try OutputFile.write(reference, to: referenceTarget)
                }
            } catch {
                if let stagedReference { try? fm.removeItem(at: stagedReference) }
                throw SomniError(.io, "the night's audio is in \(outURL.path), but its reference could not be written to \(referenceURL.path)",
                                 cause: error)
            }
            RemovedOnInterrupt.shared.end()
        }
        var counts: [String] = []
        for c in EventClass.allCases {
            counts.append("\(night.plan.events.filter { $0.eventClass == c }.count) \(c.rawValue)")
        }
        print(String(format: "%.2f h", night.plan.duration / 3600) + " \(configuration.scene.rawValue) night → \(URL(fileURLWithPath: out).path)")
        print("reference: \(counts.joined(separator: ", ")) → \(referenceURL.path)")
        for w in night.warnings { printError("warning: \(w)") }
    }
}
