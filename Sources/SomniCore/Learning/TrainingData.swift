import Foundation

/// A training data set laid out as Create ML expects: one folder per class, audio files inside
/// (any depth, symbolic links followed).
///
/// Grouping, so near-duplicate cuts of one recording never straddle splits, follows file names:
/// `SPEAKER_nohash_N` (Speech Commands) groups by speaker; `NAME_N` groups consecutive N in
/// blocks of `blockSize` (Khan's clips); anything else is its own group. A sidecar `NAME.txt` with
/// `start<TAB>end` lines (seconds) marks events: only those stretches are the folder's class, and
/// the gaps between them may be given to another class (CoughSeg's coughs). A line
/// `start<TAB>end<TAB>LABEL` marks an event of class LABEL instead, so one labelled night can
/// hold several classes and none of them is taken for a gap.
public struct TrainingFileList: Sendable {
    public struct File: Sendable {
        public var url: URL
        public var label: Int
        /// Recordings sharing a group are always in the same split.
        public var group: String
        /// Class and first sub-folder ("other/khan-no-snoring"): splits are stratified by it.
        public var stratum: String
        /// Marked events in seconds, when a sidecar file gives them.
        public var events: [MarkedEvent]?
    }

    /// A sidecar's stretch of a recording and the class it belongs to.
    public struct MarkedEvent: Sendable, Equatable {
        public var seconds: ClosedRange<Double>
        public var label: Int
    }

    public var labels: [String]
    public var files: [File]
    /// Files in the class folders left out because their names are not audio ones
    /// (`AudioFileNames`): notes, pictures, a recorder's own files. Sidecars and hidden files are
    /// not counted.
    public var notAudio: [String] = []
    /// Recordings lying in the folder of class folders itself, in no class: left out, and named.
    public var outsideClassFolders: [String] = []

    /// Scans `directory`; labels are the sub-folder names, sorted.
    public static func scan(_ directory: URL, blockSize: Int = 25, labels fixedLabels: [String]? = nil) throws -> TrainingFileList {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: directory.path, isDirectory: &isDir), isDir.boolValue else {
            throw SomniError(.badInput, "\(directory.path) is not a folder of class folders")
        }
        let entries = try fm.contentsOfDirectory(atPath: directory.path)
        if let lost = entries.first(where: PathName.lostBytes) {
            throw SomniError(.badInput, "\(directory.path) holds '\(lost)', whose name is not valid UTF-8, which Somni cannot "
                             + "open (a class folder so named would be left out): rename it")
        }
        // A link to a class folder that is not there (a moved data set) would drop the class unseen.
        for name in entries.sorted() where !name.hasPrefix(".") {
            let path = directory.appendingPathComponent(name).path
            if let target = try? fm.destinationOfSymbolicLink(atPath: path), !fm.fileExists(atPath: path) {
                throw SomniError(.badInput, "\(path) links to \(target), which is not there")
            }
        }
        let classFolders = entries.filter { name in
            var d: ObjCBool = false
            return !name.hasPrefix(".") && fm.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &d) && d.boolValue
        }.sorted()
        // A label is a line of a table and of classify's output: a line break in a folder's name
        // broke both. And two names spelt with different Unicode forms (a composed and a
        // decomposed "café", from two file systems) are one label to Swift, so the second
        // folder's recordings went under the first and a class was said to have no examples.
        if let odd = classFolders.first(where: { $0.unicodeScalars.contains { $0.properties.generalCategory == .control } }) {
            throw SomniError(.badInput, "\(directory.path) holds a class folder whose name has a control character "
                             + "(a line break?): \(odd.debugDescription); rename it, since its name is the class's label")
        }
        for (i, name) in classFolders.enumerated() {
            if let twin = classFolders[..<i].first(where: { $0 == name }) {
                throw SomniError(.badInput, "\(directory.path) holds class folders \(twin.debugDescription) and "
                                 + "\(name.debugDescription), one name spelt in two Unicode forms (composed and "
                                 + "decomposed): merge or rename them")
            }
        }
        guard !classFolders.isEmpty else {
            throw SomniError(.badInput, "\(directory.path) holds no class folders: it should hold one folder per class, "
                             + "named after its label, with the recordings inside")
        }
        let labels = fixedLabels ?? classFolders
        guard labels.count >= 2 else {
            throw SomniError(.badInput, "\(directory.path) needs at least two class folders, found \(classFolders)")
        }
        var files: [File] = [], notAudio: [String] = []
        // Each recording once, under one class: a link in a class folder (to "..", to another
        // class's folder) must not train one file under two labels, or twice under one.
        var classOfFile: [String: String] = [:]
        for name in classFolders {
            guard let label = labels.firstIndex(of: name) else {
                throw SomniError(.badInput, "\(directory.path)/\(name) is not one of the model's classes \(labels)")
            }
            let root = directory.appendingPathComponent(name).resolvingSymlinksInPath()
            let (paths, others) = try AudioFileNames.files(under: root)
            guard !paths.isEmpty else {
                throw SomniError(.badInput, "class folder \(root.path) holds no audio files "
                                 + "(\(AudioFileNames.extensions.sorted().joined(separator: ", ")))")
            }
            notAudio += others
            for path in paths {
                let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                if let earlier = classOfFile[resolved] {
                    guard earlier == name else {
                        throw SomniError(.badInput, "\(path) is in class folders \(earlier) and \(name) (through a link): "
                                         + "a recording can teach only one class")
                    }
                    continue
                }
                classOfFile[resolved] = name
                let relative = path.dropFirst(root.path.count + 1)
                let parts = relative.split(separator: "/")
                let stratum = parts.count > 1 ? "\(name)/\(parts[0])" : name
                let url = URL(fileURLWithPath: path)
                let stem = url.deletingPathExtension().lastPathComponent
                let sidecar = url.deletingPathExtension().appendingPathExtension("txt")
                let events = fm.fileExists(atPath: sidecar.path) ? try readEvents(sidecar, label: label, labels: labels) : nil
                files.append(File(url: url, label: label, group: "\(stratum)/\(group(of: stem, blockSize: blockSize))",
                                  stratum: stratum, events: events))
            }
        }
        guard !files.isEmpty else { throw SomniError(.badInput, "no audio files under \(directory.path)") }
        var list = TrainingFileList(labels: labels, files: files, notAudio: notAudio)
        list.outsideClassFolders = entries.filter { !$0.hasPrefix(".") && !classFolders.contains($0) && AudioFileNames.isAudio($0) }
            .sorted().map { directory.appendingPathComponent($0).path }
        return list
    }

    /// The group key of a file name (without extension).
    public static func group(of stem: String, blockSize: Int) -> String {
        if let r = stem.range(of: "_nohash_") { return String(stem[..<r.lowerBound]) }
        if let underscore = stem.lastIndex(of: "_"), let n = Int(stem[stem.index(after: underscore)...]), n >= 0 {
            return "\(stem[..<underscore])_block\(n / max(blockSize, 1))"
        }
        return stem
    }

    /// The latest time a sidecar may mark, in seconds: a day, as the longest synthesised night.
    static let longestMarkedSeconds: Double = 86_400

    /// A sidecar's events: `label` (the folder's class) unless a line names one of `labels`.
    static func readEvents(_ url: URL, label: Int, labels: [String]) throws -> [MarkedEvent] {
        let text = try TextFile.read(url, what: "a file of marked events")
        return try text.split(whereSeparator: \.isNewline).compactMap { line in
            // The label is the rest of the line: a class folder may be called "sleep talk".
            let fields = line.split(maxSplits: 2, whereSeparator: { $0 == "\t" || $0 == " " || $0 == "," })
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !fields.isEmpty else { return nil }
            // At most a day: a sidecar in milliseconds, or an `inf`, is a mistake to name, not a
            // stretch to cut (beyond `Int`'s range as samples, it would trap).
            guard fields.count == 2 || fields.count == 3, let a = Double(fields[0]), let b = Double(fields[1]), a >= 0, b > a,
                  b <= Self.longestMarkedSeconds else {
                throw SomniError(.badInput, "\(url.path): '\(line)' is not 'start<TAB>end[<TAB>LABEL]' in seconds "
                                 + "(0 ≤ start < end ≤ \(Int(Self.longestMarkedSeconds)))")
            }
            guard fields.count == 3 else { return MarkedEvent(seconds: a...b, label: label) }
            guard let named = labels.firstIndex(of: String(fields[2])) else {
                throw SomniError(.badInput, "\(url.path): '\(fields[2])' is not one of the classes \(labels)")
            }
            return MarkedEvent(seconds: a...b, label: named)
        }
    }
}

/// Decoded audio plus the stretches of it that are training examples.
public struct TrainingSet: Sendable {
    public struct Example: Sendable {
        public var clip: Int
        /// The labelled stretch, in samples of `clips[clip]`.
        public var start: Int
        public var length: Int
        public var label: Int
        public var group: String
        public var stratum: String
        /// The file it came from, links resolved.
        public var path: String
    }

    public var labels: [String]
    public var clips: [[Float]]
    public var examples: [Example]
    /// Files left out because they could not be decoded or held no sound: "PATH: why".
    public var skipped: [String] = []
    /// Files whose sidecars mark events starting after the recording's end, left out: "PATH: how
    /// many". Times in milliseconds, or the sidecar of a longer recording.
    public var eventsPastEnd: [String] = []
    /// Clips whose events a sidecar marks: one recording may teach several classes so.
    public var markedClips: Set<Int> = []

    public init(labels: [String], clips: [[Float]], examples: [Example]) {
        self.labels = labels; self.clips = clips; self.examples = examples
    }

    /// Decodes every file (on `threads` threads) and cuts it into examples of about one window:
    /// short files whole, long ones in consecutive windows, marked events one by one and the
    /// gaps between them (at least a window clear of any event) as `gapLabel` when given. A file
    /// that cannot be decoded (one broken clip among hundreds) is left out and listed in
    /// `skipped`; a class left with no examples at all is an error.
    public static func load(_ list: TrainingFileList, windowLength: Int, gapLabel: Int?, threads: Int = 2,
                            decode: @Sendable (URL) throws -> [Float]) throws -> TrainingSet {
        let results = ParallelResults<Result<[Float], any Error>>(count: list.files.count)
        DispatchQueue.concurrentPerform(iterations: max(threads, 1)) { t in
            var i = t
            while i < list.files.count {
                results.set(i, Result { try decode(list.files[i].url) })
                i += max(threads, 1)
            }
        }
        var clips: [[Float]] = []
        var examples: [Example] = []
        var skipped: [String] = [], pastEnd: [String] = []
        var markedClips: Set<Int> = []
        // Why each file gave nothing, by its index: a decoder's message may already name the path.
        var reasons: [Int: String] = [:]
        let rate = Double(analysisSampleRate)
        for (i, file) in list.files.enumerated() {
            let samples: [Float]
            switch results.get(i) {
            case .success(let s): samples = s
            case .failure(let e):
                let why = (e as? SomniError)?.message ?? "\(e)"
                skipped.append(why.contains(file.url.path) ? why : "\(file.url.path): \(why)")
                reasons[i] = skipped.last
                continue
            case nil: throw SomniError(.internalError, "decoding \(file.url.path) produced nothing")
            }
            guard !samples.isEmpty else {
                skipped.append("\(file.url.path): no sound in it")
                reasons[i] = skipped.last
                continue
            }
            clips.append(samples)
            let clip = clips.count - 1
            let resolvedPath = file.url.resolvingSymlinksInPath().path
            func add(_ start: Int, _ length: Int, _ label: Int, marked: Bool = false) {
                let stratum = label == file.label ? file.stratum
                    : "\(list.labels[label])/\(marked ? "marked" : "between events") in \(file.stratum)"
                examples.append(Example(clip: clip, start: start, length: length, label: label, group: file.group, stratum: stratum,
                                        path: resolvedPath))
            }
            func addWindows(from: Int, to: Int, label: Int) {
                let length = to - from
                if length <= windowLength * 3 / 2 {
                    add(from, length, label)
                } else {
                    var s = from
                    while s + windowLength / 2 <= to { add(s, min(windowLength, to - s), label); s += windowLength }
                }
            }
            if let events = file.events {
                markedClips.insert(clip)
                let margin = Int(0.4 * rate)
                var free = 0, beyondEnd = 0
                for e in events.sorted(by: { $0.seconds.lowerBound < $1.seconds.lowerBound }) {
                    let a = max(0, Int(e.seconds.lowerBound * rate)), b = min(samples.count, Int(e.seconds.upperBound * rate))
                    guard b > a else { beyondEnd += 1; continue }
                    add(a, b - a, e.label, marked: true)
                    if let gap = gapLabel, a - margin - free >= windowLength { addWindows(from: free, to: a - margin, label: gap) }
                    free = max(free, b + margin)
                }
                if let gap = gapLabel, samples.count - free >= windowLength { addWindows(from: free, to: samples.count, label: gap) }
                if beyondEnd > 0 {
                    // Times in milliseconds, or the sidecar of a longer recording: say so rather
                    // than train on less than was marked, or blame the decoder.
                    let length = String(format: "%.1f", Double(samples.count) / rate)
                    pastEnd.append("\(file.url.path): \(beyondEnd) of its \(events.count) marked event\(events.count == 1 ? "" : "s") "
                                   + "after its end (\(length) s)")
                    reasons[i] = pastEnd.last
                }
            } else {
                addWindows(from: 0, to: samples.count, label: file.label)
            }
        }
        for label in Set(list.files.map(\.label)) where !examples.contains(where: { $0.label == label }) {
            let indices = list.files.indices.filter { list.files[$0].label == label }
            let files = indices.map { list.files[$0] }
            // An empty sidecar marks nothing, so its recording gives no example of its class.
            let unmarked = files.first { $0.events?.isEmpty == true }.map {
                "\($0.url.deletingPathExtension().appendingPathExtension("txt").path) marks no events"
            }
            let why = indices.lazy.compactMap { reasons[$0] }.first ?? unmarked
            throw SomniError(.badInput, "no \(list.labels[label]) examples could be read from its \(files.count) "
                             + "file\(files.count == 1 ? "" : "s")\(why.map { " (\($0))" } ?? "")")
        }
        var set = TrainingSet(labels: list.labels, clips: clips, examples: examples)
        set.markedClips = markedClips
        set.skipped = skipped
        set.eventsPastEnd = pastEnd
        return set
    }

    /// Splits examples into train / validation / test by group, stratified by stratum: in each
    /// stratum, groups are ordered by a seeded hash and taken for test, then validation, until
    /// each holds its share of the stratum's examples. Strata with fewer than 3 groups stay in
    /// training. The same data and seed always give the same split. Copies of one recording
    /// under other names (the same decoded sound) are one group: a copy in test of a file trained
    /// on would put training examples into the test figures.
    public func split(validationShare: Double, testShare: Double, seed: UInt64) -> (train: [Int], validation: [Int], test: [Int]) {
        split(Array(examples.indices), validationShare: validationShare, testShare: testShare, seed: seed,
              groups: groupsJoiningCopies())
    }

    /// The same, over the examples `indices` only; `groups` renames groups (`groupsJoiningCopies`).
    public func split(_ indices: [Int], validationShare: Double, testShare: Double, seed: UInt64,
                      groups: [String: String] = [:]) -> (train: [Int], validation: [Int], test: [Int]) {
        // A group's stratum is its first example's, so a recording's events and the gaps between
        // them always land in the same split.
        var members: [String: [Int]] = [:]
        var groupsOf: [String: [String]] = [:]
        for i in indices {
            let e = examples[i], group = groups[e.group] ?? e.group
            if members[group] == nil { groupsOf[e.stratum, default: []].append(group) }
            members[group, default: []].append(i)
        }
        var train: [Int] = [], validation: [Int] = [], test: [Int] = []
        for stratum in groupsOf.keys.sorted() {
            let groups = groupsOf[stratum]!
            let order = groups.sorted { (stableHash($0, seed), $0) < (stableHash($1, seed), $1) }
            let total = Double(groups.reduce(0) { $0 + members[$1]!.count })
            var taken = 0.0
            for (n, g) in order.enumerated() {
                let m = members[g]!
                let splittable = groups.count >= 3 && n < groups.count - 1
                if splittable && taken < testShare * total {
                    test += m
                } else if splittable && taken < (testShare + validationShare) * total {
                    validation += m
                } else {
                    train += m
                }
                taken += Double(m.count)
            }
        }
        return (train.sorted(), validation.sorted(), test.sorted())
    }

    /// Splits by the held-out rule of ../shared/data that synthesised test nights use
    /// (`DataSplit`): its test part becomes the test split, so a night built from held-out clips
    /// holds nothing the model trained on; the rest is split into training and validation by
    /// group. Examples from files outside that data set are split by group as in `split`, and
    /// windows straddling a noise recording's train/test boundary are left out. Another `fold`
    /// holds out another part of the data, for cross-validation.
    public func sharedDataSplit(validationShare: Double, testShare: Double, seed: UInt64,
                                fold: Int = 0) -> (train: [Int], validation: [Int], test: [Int]) {
        var test: [Int] = [], rest: [Int] = [], foreign: [Int] = []
        for (i, e) in examples.enumerated() {
            switch Self.sharedDataSplit(of: e, clipLength: clips[e.clip].count, fold: fold) {
            case .test?: test.append(i)
            case .train?: rest.append(i)
            case nil where Self.recordingFile(e.path) == nil: foreign.append(i)
            case nil: break
            }
        }
        let inner = split(rest, validationShare: validationShare / max(1 - testShare, 0.01), testShare: 0, seed: seed)
        let outer = split(foreign, validationShare: validationShare, testShare: testShare, seed: seed)
        return ((inner.train + outer.train).sorted(), (inner.validation + outer.validation).sorted(), (test + outer.test).sorted())
    }

    /// The examples the shared rule holds out in `fold` (its test part, which the recipe never
    /// trains on), and how many come from files the rule does not know, which are in neither.
    public func sharedDataHeldOut(fold: Int = 0) -> (heldOut: [Int], outsideTheData: Int) {
        var heldOut: [Int] = [], outside = 0
        for (i, e) in examples.enumerated() {
            if Self.sharedDataSplit(of: e, clipLength: clips[e.clip].count, fold: fold) == .test { heldOut.append(i) }
            if Self.recordingFile(e.path) == nil { outside += 1 }
        }
        return (heldOut, outside)
    }

    /// The shared rule's verdict on one example: nil outside the data set or across a noise boundary.
    static func sharedDataSplit(of e: Example, clipLength: Int, fold: Int = 0) -> DataSplit? {
        guard let file = recordingFile(e.path) else { return nil }
        guard file.source == .noise else { return DataSplit.of(file, fold: fold) }
        let heldOut = DataSplit.samples(DataSplit.test.noiseShares(fold: fold)[0], of: clipLength)
        if e.start >= heldOut.lowerBound && e.start + e.length <= heldOut.upperBound { return .test }
        return e.start + e.length <= heldOut.lowerBound || e.start >= heldOut.upperBound ? .train : nil
    }

    /// What the shared rule needs to know about a file of ../shared/data, from its path.
    static func recordingFile(_ path: String) -> RecordingFile? {
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().lastPathComponent
        let index = stem.split(separator: "_").last.flatMap { Int($0) }
        if inSharedData(path, "/snoring-khan/snoring/") { return RecordingFile(url: url, source: .khanSnoring, group: "", index: index) }
        if inSharedData(path, "/snoring-khan/no_snoring/") { return RecordingFile(url: url, source: .khanNoSnoring, group: "", index: index) }
        if inSharedData(path, "/speech-commands/") {
            return RecordingFile(url: url, source: .speechCommands, group: stem.components(separatedBy: "_nohash_")[0])
        }
        if inSharedData(path, "/cough-coughseg/") { return RecordingFile(url: url, source: .coughSeg, group: stem) }
        if inSharedData(path, "/noise/") { return RecordingFile(url: url, source: .noise, group: url.lastPathComponent) }
        return nil
    }

    /// The folders ../shared/data holds side by side.
    static let sharedDataSets = ["snoring-khan", "speech-commands", "cough-coughseg", "noise"]

    /// Whether `path` lies at `marker` below a folder holding two or more of `sharedDataSets`
    /// (a copy of part of the data set still counts): a path merely naming one was taken for it
    /// (a user's own class folder "noise" was read as the shared noise recordings, its short
    /// clips dropped, its long ones cut across the split).
    static func inSharedData(_ path: String, _ marker: String) -> Bool {
        guard let found = path.range(of: marker, options: .backwards) else { return false }
        return sharedDataRoots.isRoot(String(path[..<found.lowerBound]))
    }

    private static let sharedDataRoots = SharedDataRoots()

    /// Folders already looked at: a training set asks for each of its examples.
    private final class SharedDataRoots: @unchecked Sendable {
        private let lock = NSLock()
        private var known: [String: Bool] = [:]
        func isRoot(_ folder: String) -> Bool {
            if let answer = lock.withLock({ known[folder] }) { return answer }
            let answer = TrainingSet.sharedDataSets.filter { set in
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(atPath: folder + "/" + set, isDirectory: &isFolder) && isFolder.boolValue
            }.count >= 2
            lock.withLock { known[folder] = answer }
            return answer
        }
    }

    /// Copies a window of `window.count` samples placed on example `index` into `window`:
    /// `position` 0…1 runs over its placements (0.5 centred; the example inside the window when
    /// shorter, the window inside the example when longer), with the clip's own audio around it
    /// and zeros past the clip's ends.
    ///
    /// `overhang` > 0 (training) lets a window at least as long as the window slide up to that
    /// share of a window past the example's ends, silent there: windows of a night see the start
    /// or the end of a snore as often as its middle.
    public func window(of index: Int, position: Float, overhang: Float = 0, into window: UnsafeMutableBufferPointer<Float>) {
        let e = examples[index], n = window.count
        let reach = e.length >= n ? Int(overhang * Float(n)) : 0
        let start = e.length >= n ? e.start - reach + Int(position * Float(e.length - n + 2 * reach))
            : e.start - Int(position * Float(n - e.length))
        let (low, high) = reach > 0 ? (e.start, e.start + e.length) : (Int.min, Int.max)
        clips[e.clip].withUnsafeBufferPointer { clip in
            for i in 0..<n {
                let j = start + i
                window[i] = j >= 0 && j < clip.count && j >= low && j < high ? clip[j] : 0
            }
        }
    }

    /// This set with `other`'s clips and examples appended; returns the new examples' indices.
    public mutating func append(_ other: TrainingSet) -> [Int] {
        let clipOffset = clips.count, first = examples.count
        clips += other.clips
        skipped += other.skipped
        eventsPastEnd += other.eventsPastEnd
        markedClips.formUnion(other.markedClips.map { $0 + clipOffset })
        examples += other.examples.map { e in
            var e = e
            e.clip += clipOffset
            return e
        }
        return Array(first..<examples.count)
    }

    /// The files of `heldOut`'s examples that are also trained on (`training`'s): the same file
    /// by another path, or a copy of it (the same decoded sound). Each path once, in order.
    public func filesAlsoTrainedOn(_ training: [Int], among heldOut: [Int]) -> [String] {
        let trainedPaths = Set(training.map { examples[$0].path })
        var trainedClips: [Int: [Int]] = [:]  // digest of the sound → clips with it
        for clip in Set(training.map { examples[$0].clip }) { trainedClips[digest(clip), default: []].append(clip) }
        var found: [String] = [], seen: Set<Int> = []
        for example in heldOut.map({ examples[$0] }) where seen.insert(example.clip).inserted {
            let copied = trainedClips[digest(example.clip)]?.contains { clips[$0] == clips[example.clip] } ?? false
            if trainedPaths.contains(example.path) || copied { found.append(example.path) }
        }
        return found
    }

    /// Two recordings of one sound in different class folders (a file copied, where a link is
    /// refused as the folders are read), neither with a sidecar marking its events: taught whole,
    /// a recording can teach only one class. Nil when none.
    public func recordingInTwoClassFolders() -> (first: String, second: String)? {
        var seen: [Int: [(clip: Int, folder: Substring, path: String)]] = [:]  // digest of the sound → clips with it
        var looked: Set<Int> = []
        for example in examples where !markedClips.contains(example.clip) && looked.insert(example.clip).inserted {
            let folder = example.stratum.split(separator: "/").first ?? ""
            let key = digest(example.clip)
            if let other = seen[key]?.first(where: { $0.folder != folder && clips[$0.clip] == clips[example.clip] }) {
                return (other.path, example.path)
            }
            seen[key, default: []].append((example.clip, folder, example.path))
        }
        return nil
    }

    /// The group each group of a copied recording joins: the first group (in example order)
    /// holding the same sound. Groups without copies are not listed.
    func groupsJoiningCopies() -> [String: String] {
        var joined: [String: String] = [:]
        func root(_ g: String) -> String {
            var g = g
            while let next = joined[g] { g = next }
            return g
        }
        var seen: [Int: [(clip: Int, group: String)]] = [:]  // digest of the sound → clips with it
        var looked: Set<Int> = []
        for example in examples where looked.insert(example.clip).inserted {
            let key = digest(example.clip)
            if let first = seen[key]?.first(where: { clips[$0.clip] == clips[example.clip] }) {
                let (a, b) = (root(first.group), root(example.group))
                if a != b { joined[b] = a }
            } else {
                seen[key, default: []].append((example.clip, example.group))
            }
        }
        return Dictionary(uniqueKeysWithValues: joined.keys.map { ($0, root($0)) })
    }

    /// A hash of a clip's sound, to find copies without comparing every pair.
    private func digest(_ clip: Int) -> Int {
        var hasher = Hasher()
        hasher.combine(clips[clip].count)
        clips[clip].withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }
}

/// FNV-1a over the seed and the text: stable across runs and platforms (unlike `hashValue`).
func stableHash(_ text: String, _ seed: UInt64) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
    for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
    return h
}

/// Slots written by concurrent workers (each index by one worker), read after they finish.
final class ParallelResults<T>: @unchecked Sendable {
    private var slots: [T?]
    private let lock = NSLock()
    init(count: Int) { slots = [T?](repeating: nil, count: count) }
    func set(_ i: Int, _ value: T) { lock.lock(); slots[i] = value; lock.unlock() }
    func get(_ i: Int) -> T? { lock.lock(); defer { lock.unlock() }; return slots[i] }
}
