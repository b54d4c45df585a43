import Foundation

/// One recording in the shared data folder, with the group that must never straddle a split.
public struct RecordingFile: Sendable, Equatable {
    public enum Source: String, Sendable, CaseIterable {
        case khanSnoring, khanNoSnoring, speechCommands, coughSeg, noise
    }

    public var url: URL
    public var source: Source
    /// What keeps related files together: Khan block of consecutive indices, speaker, recording.
    public var group: String
    /// Khan file index (`1_N` / `0_N`); nil elsewhere.
    public var index: Int?
    /// Marked cough spans (seconds) for CoughSeg recordings.
    public var coughs: [ClosedRange<Double>]

    public init(url: URL, source: Source, group: String, index: Int? = nil, coughs: [ClosedRange<Double>] = []) {
        self.url = url; self.source = source; self.group = group; self.index = index; self.coughs = coughs
    }

    /// The Khan no_snoring category (blocks of 50 by index): 2 door, 7 streetcar, 8 people talking, 9 TV news…
    public var khanCategory: Int? { source == .khanNoSnoring ? index.map { ($0 / 50) % 10 } : nil }
}

/// The shared held-out rule, so synthesised test nights never reuse what a model trained on.
///
/// Khan: indices 30–39 of every block of 50 (cuts of one recording have consecutive indices, so
/// only a recording that straddles index 30 or 40 can leak; 40–49 are the part the data's
/// publisher kept back, absent here). Speech Commands: by
/// speaker, CoughSeg: by recording, each a stable hash putting one group in five in test. Noise
/// recordings are long: every one is in both splits, its first 80 % for training, the rest for test.
///
/// That rule is fold 0. Folds 1–4 hold out the other parts in turn, for cross-validating a
/// training recipe: Khan indices 0–9, 10–19 and 20–29 (fold 4 holds out no Khan clip), the
/// groups whose hash leaves 1, 2, 3 or 4, and the noise recordings' fifths from the start. Over
/// the five folds every clip, group and fifth of noise is held out exactly once.
public enum DataSplit: String, Sendable, CaseIterable {
    case train, test

    /// The folds there are; 0 is the shared rule.
    public static let folds = 0...4
    /// The block of ten Khan indices (of each 50) each fold holds out; 4 (40–49) is absent here.
    private static let khanHeldOutBlock: [Int?] = [3, 0, 1, 2, nil]

    public static func of(_ file: RecordingFile, fold: Int = 0) -> DataSplit {
        precondition(folds.contains(fold), "fold \(fold) is not one of the folds \(folds)")
        switch file.source {
        case .khanSnoring, .khanNoSnoring:
            return khanHeldOutBlock[fold] == ((file.index ?? 0) % 50) / 10 ? .test : .train
        case .speechCommands, .coughSeg:
            return stableHash(file.group) % 5 == UInt64(fold) ? .test : .train
        case .noise:
            return .train  // split in time, see `noiseShares`
        }
    }

    /// The parts of a noise recording that belong to this split in `fold`, as fractions of its
    /// length, in order: the held-out fifth, or what is left on either side of it.
    public func noiseShares(fold: Int = 0) -> [ClosedRange<Double>] {
        let heldOut = fold == 0 ? 0.8...1 : Double(fold - 1) * 0.2...Double(fold) * 0.2
        if self == .test { return [heldOut] }
        return [0...heldOut.lowerBound, heldOut.upperBound...1].filter { $0.upperBound > $0.lowerBound }
    }

    /// The samples of `recording` that belong to this split in `fold`, its parts joined.
    public func noiseSamples(of recording: [Float], fold: Int = 0) -> [Float] {
        noiseShares(fold: fold).flatMap { recording[Self.samples($0, of: recording.count)] }
    }

    /// A share of a recording of `count` samples as sample indices.
    static func samples(_ share: ClosedRange<Double>, of count: Int) -> Range<Int> {
        Int(share.lowerBound * Double(count))..<Int(share.upperBound * Double(count))
    }

    /// FNV-1a: the same on every platform and run, unlike `Hasher`.
    static func stableHash(_ text: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}

/// Clips drawn from recordings laid out as in `../shared/data`: Khan snoring for snores, Speech
/// Commands words strung into utterances for sleep-talk, CoughSeg coughs cut at their marked
/// onsets and offsets, Khan door and streetcar clips as distractors, noise recordings as beds.
/// Kinds without recordings (footsteps, fan, and target kinds left out of `requiredKinds`) come
/// from `GeneratedSoundBank`.
///
/// The core cannot decode FLAC: `loader` turns a file into 16 kHz mono samples (SomniAudio's
/// decoder in the CLI, a WAV reader in tests). Decoded files are kept in a small cache.
public final class RecordingSoundBank: SoundBank {
    public let files: [RecordingFile]
    public let split: DataSplit?
    /// Which fold of the data `split` is taken from (`DataSplit`); 0 is the shared rule.
    public let fold: Int
    private let loader: (URL) throws -> [Float]
    private let generated = GeneratedSoundBank()
    private var byKind: [SoundKind: [Int]] = [:]
    private var speakerFiles: [String: [Int]] = [:]
    private var cache: [URL: [Float]] = [:]
    private var cacheOrder: [URL] = []
    private let cacheLimit: Int

    /// Scans `dataDirectory`, keeps the files of `split` (nil = all) in `fold` that `filter`
    /// accepts, and refuses a selection without recordings for every kind in `requiredKinds`.
    public init(dataDirectory: URL, split: DataSplit? = .test, fold: Int = 0, filter: (RecordingFile) -> Bool = { _ in true },
                requiredKinds: Set<SoundKind> = [.snore, .speech, .cough],
                cacheSamples: Int = 16 * analysisSampleRate * 60, loader: @escaping (URL) throws -> [Float]) throws {
        precondition(DataSplit.folds.contains(fold), "fold \(fold) is not one of \(DataSplit.folds)")
        self.split = split
        self.fold = fold
        self.loader = loader
        cacheLimit = cacheSamples
        let all = try Self.scan(dataDirectory)
        files = all.filter { file in
            (split == nil || file.source == .noise || DataSplit.of(file, fold: fold) == split) && filter(file)
        }
        guard !files.isEmpty else {
            throw SomniError(.badInput, "no usable recordings under \(dataDirectory.path) for this selection")
        }
        for (i, file) in files.enumerated() {
            if let kind = Self.kind(of: file) { byKind[kind, default: []].append(i) }
            if file.source == .speechCommands { speakerFiles[file.group, default: []].append(i) }
        }
        let missing = requiredKinds.subtracting(byKind.keys).map(\.rawValue).sorted()
        guard missing.isEmpty else {
            let foldNote = split == nil || fold == 0 ? "" : " of fold \(fold)\(fold == 4 && split == .test ? ", which holds out none of Khan's clips" : "")"
            throw SomniError(.badInput, "no \(missing.joined(separator: ", ")) recordings under \(dataDirectory.path) "
                             + "in the \(split?.rawValue ?? "whole") selection\(foldNote)")
        }
    }

    public var providesBeds: Bool { byKind[.roomNoise] != nil }

    /// The kinds that come from recordings (the rest are generated).
    public var recordedKinds: Set<SoundKind> { Set(byKind.keys) }

    public func clip(_ kind: SoundKind, rng: inout SeededRandom) throws -> [Float] {
        guard let choices = byKind[kind] else { return generated.clip(kind, rng: &rng) }
        let file = files[choices[rng.int(0...(choices.count - 1))]]
        switch file.source {
        case .coughSeg:
            let samples = try load(file.url)
            let span = file.coughs[rng.int(0...(file.coughs.count - 1))]
            return Self.cut(samples, from: span.lowerBound, to: span.upperBound)
        case .speechCommands:
            return try utterance(startingWith: file, rng: &rng)
        case .noise:
            let samples = try load(file.url)
            let count = Double(samples.count), rate = Double(analysisSampleRate)
            return (split?.noiseShares(fold: fold) ?? [0...1]).flatMap { share in
                Self.cut(samples, from: share.lowerBound * count / rate, to: share.upperBound * count / rate)
            }
        case .khanSnoring, .khanNoSnoring:
            return trimmedToSound(try load(file.url))
        }
    }

    /// Two to four words of the same speaker with short pauses: sleep-talk is rarely one word,
    /// and a lone Speech Commands word trimmed to its sound is often under 0.5 s, shorter than
    /// any event Somni reports.
    private func utterance(startingWith first: RecordingFile, rng: inout SeededRandom) throws -> [Float] {
        let sameSpeaker = speakerFiles[first.group] ?? []
        var out = trimmedToSound(try load(first.url))
        for _ in 0..<rng.int(1...3) where !sameSpeaker.isEmpty {
            let word = trimmedToSound(try load(files[sameSpeaker[rng.int(0...(sameSpeaker.count - 1))]].url))
            guard !word.isEmpty else { continue }
            out += [Float](repeating: 0, count: Int(rng.uniform(0.15...0.4) * Double(analysisSampleRate)))
            out += word
        }
        return out
    }

    private func load(_ url: URL) throws -> [Float] {
        if let hit = cache[url] { return hit }
        let samples = try loader(url)
        cache[url] = samples
        cacheOrder.append(url)
        var total = cache.values.reduce(0) { $0 + $1.count }
        while total > cacheLimit, cacheOrder.count > 1 {
            let oldest = cacheOrder.removeFirst()
            total -= cache.removeValue(forKey: oldest)?.count ?? 0
        }
        return samples
    }

    private static func cut(_ samples: [Float], from start: Double, to end: Double) -> [Float] {
        let rate = Double(analysisSampleRate)
        let a = max(0, min(samples.count, Int((start * rate).rounded())))
        let b = max(a, min(samples.count, Int((end * rate).rounded())))
        return Array(samples[a..<b])
    }

    private static func kind(of file: RecordingFile) -> SoundKind? {
        switch file.source {
        case .khanSnoring: return .snore
        case .speechCommands: return .speech
        case .coughSeg: return file.coughs.isEmpty ? nil : .cough
        case .noise: return .roomNoise
        case .khanNoSnoring:
            switch file.khanCategory {
            case 2: return .door
            case 7: return .traffic
            default: return nil  // talking and TV would be unmarked speech; the rest is not a bedroom sound
            }
        }
    }

    /// Lists the recordings of every known folder under `root`, sorted so draws are reproducible.
    public static func scan(_ root: URL) throws -> [RecordingFile] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw SomniError(.io, "no data folder at \(root.path)")
        }
        func audio(in folder: String) -> [URL] {
            let dir = root.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            return names.sorted()
                .filter(AudioFileNames.isAudio)
                .map { dir.appendingPathComponent($0) }
        }
        func khanIndex(_ url: URL) -> Int? {
            let stem = url.deletingPathExtension().lastPathComponent
            return stem.split(separator: "_").last.flatMap { Int($0) }
        }
        var files: [RecordingFile] = []
        for (folder, source) in [("snoring-khan/snoring", RecordingFile.Source.khanSnoring),
                                 ("snoring-khan/no_snoring", .khanNoSnoring)] {
            for url in audio(in: folder) {
                guard let index = khanIndex(url) else { continue }
                files.append(RecordingFile(url: url, source: source, group: "\(source.rawValue)-\(index / 50)", index: index))
            }
        }
        let speechRoot = root.appendingPathComponent("speech-commands")
        let words = ((try? FileManager.default.contentsOfDirectory(atPath: speechRoot.path)) ?? []).sorted()
        for word in words {
            for url in audio(in: "speech-commands/\(word)") {
                let speaker = url.lastPathComponent.components(separatedBy: "_nohash_").first ?? url.lastPathComponent
                files.append(RecordingFile(url: url, source: .speechCommands, group: speaker))
            }
        }
        for url in audio(in: "cough-coughseg/cough") {
            let marks = url.deletingPathExtension().appendingPathExtension("txt")
            guard let text = try? String(contentsOf: marks, encoding: .utf8) else { continue }
            let id = url.deletingPathExtension().lastPathComponent
            files.append(RecordingFile(url: url, source: .coughSeg, group: id, coughs: parseCoughMarks(text)))
        }
        for url in audio(in: "noise") {
            files.append(RecordingFile(url: url, source: .noise, group: url.lastPathComponent))
        }
        return files
    }

    /// CoughSeg's marks: `start<TAB>end` seconds per line; malformed lines are skipped.
    static func parseCoughMarks(_ text: String) -> [ClosedRange<Double>] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " || $0 == "," })
            guard fields.count >= 2, let a = Double(fields[0]), let b = Double(fields[1]),
                  a.isFinite, b.isFinite, a >= 0, b > a else { return nil }
            return a...b
        }
    }
}
