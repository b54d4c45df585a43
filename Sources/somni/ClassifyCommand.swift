import Foundation
import SomniAudio
import SomniCore

struct ClassifyCommand: Command {
    static let name = "classify"
    static let summary = "Print ranked labels with confidences for each window of a recording"
    static let help = """
    Usage: somni classify FILE [--model MODEL] [--top N] [--like FILE] [--json]
           somni classify FILE --reference REF.csv [--threshold X] [--ignore LABEL,...] [--model MODEL] [--json]
           somni classify - [...]     (raw 16 kHz mono Float32 little-endian on standard input)
           somni classify DATA_DIR [--split shared-data [--fold K,...]] [--gaps-as LABEL|none] [--model MODEL] [--json]

    Classifies consecutive 0.975 s windows (50 % overlap) of FILE with the default model or
    MODEL and prints, for each, the top labels and their confidences. Mains hum in FILE is
    filtered out first, as 'somni analyze' does (not from standard input, read as it comes).

      --model MODEL   a model written by 'somni train' (default: the models shipped with Somni,
                      or the narrow-band model for a recording made below 16 kHz); given more
                      than once, the first decides the windows it is sure of and the others are
                      asked about the rest, their scores averaged
      --top N         labels per window (default 5)
      --like FILE     for an M4A cut off before its index was written: a complete recording
                      by the same app to read its settings from (as for 'somni analyze')
      --json          {"windows":[{"start","end","labels":[{"label","confidence"}]}],
                       "clip":{label: highest confidence over the windows}}
      --reference REF.csv
                      instead of the windows, how well the classifier hears each class before
                      any event rule, every window of FILE classified (no gate): of the
                      reference events (start,end,class, as for 'somni evaluate'), one by one,
                      how many a window holding half of the event, or half filled by it, scores
                      at least X for, binned by how far
                      each rises over the background in its class's band (as 'somni evaluate
                      --audio'); and windows more than 1 s from every reference that reach X,
                      per hour. With --json: {"hearing":[...]}
      --threshold X   the score that counts as heard (default 0.50, the confidence the default
                      sensitivity asks of a window)
      --ignore LABEL,...
                      the reference's lines of these other labels are left out (as for
                      'somni evaluate')

    DATA_DIR, a folder of class folders named after the model's labels (as for 'somni train':
    snoring, speech, cough, other for the shipped models), is scored instead, as Create ML
    evaluates a model on a test folder: each example's window (a short file whole, a long one
    window by window, a sidecar's marked events one by one) is classified, and the top label
    is checked against its folder. A file shorter than a window is taken centred in it, as the
    trainer's figures take it (classify FILE puts it at the window's start). Prints accuracy,
    each label's precision, recall, F1 and its accuracy against all the other labels together,
    each with a 95 % interval (Wilson), a confusion matrix and the accuracy per sub-folder.
    With --json: {"labels","split","metrics"}.
      --gaps-as LABEL|none
                      the label the stretches between a sidecar's marked events are scored
                      as (default: other, when the model has it, as the shipped models were
                      trained with 'somni train --gaps-as other'); none scores the marked
                      events alone, as 'somni train' without --gaps-as scores its test part
      --split shared-data
                      only the part of ../shared/data that its held-out rule keeps out of
                      training (the recipe's test split); files the rule does not know are
                      left out
      --fold K,...    with --split shared-data: the part that fold K of the rule holds out
                      (0 to 4, default 0; see 'somni train --fold'), classified by --model with
                      {fold} in its path replaced by K. Several folds, each classified by its
                      own models, are scored together: a cross-validation of a training recipe,
                      every window of the data held out once, e.g.
                        --fold 0,1,2,3,4 --model cv/fold-{fold}.somnimodel
                      A model whose file says it held out another fold (it trained on this
                      one's windows) is refused; one that does not say is warned of
    """

    var input: String
    var modelPaths: [String] = []
    var top = 5
    var json = false
    var referencePath: String?
    /// `--ignore` as given; checked in `validate`, once it is known whether they apply.
    var ignoreValues: [String]
    var ignoredLabels: Set<String> { EvaluateCommand.ignoredLabels(ignoreValues) }
    var like: String?
    var threshold = Sensitivity.minimumConfidence(Sensitivity.standard)
    /// For a folder of class folders: "shared-data" scores only its held-out part.
    var split: String?
    /// The folds of ../shared/data's held-out rule to score, each with its own models.
    var folds: [Int] = [0]
    var foldsGiven = false
    /// Options of the per-window modes that were given (a folder of class folders takes none of them).
    var given: [String]
    /// For a folder of class folders: the label of the stretches between marked events; nil for
    /// the default (other, when the model has it), "none" for none.
    var gapsAs: String?

    init(_ a: inout Arguments) throws {
        modelPaths = try a.repeatedOption("--model")
        let topOption = try a.option("--top", as: Int.self)
        top = topOption ?? top
        json = a.flag("--json")
        referencePath = try a.option("--reference")
        ignoreValues = try a.repeatedOption("--ignore")
        like = try a.option("--like")
        let thresholdOption = try a.option("--threshold", as: Float.self)
        threshold = thresholdOption ?? threshold
        split = try a.option("--split")
        gapsAs = try a.option("--gaps-as")
        if let text = try a.option("--fold") {
            foldsGiven = true
            let named = try text.split(separator: ",", omittingEmptySubsequences: false).map { try TrainCommand.fold(String($0)) }
            if let twice = named.first(where: { k in named.filter { $0 == k }.count > 1 }) {
                throw UsageError("--fold names fold \(twice) more than once (\(text))")
            }
            folds = named
        }
        given = [("--top", topOption != nil), ("--reference", referencePath != nil), ("--like", like != nil),
                 ("--threshold", thresholdOption != nil), ("--ignore", !ignoreValues.isEmpty)].filter(\.1).map(\.0)
        input = try a.requiredPositional("FILE")
    }

    /// Whether FILE is a folder, to be scored as class folders.
    var isClassFolders: Bool {
        var isFolder: ObjCBool = false
        return input != "-" && FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) && isFolder.boolValue
    }

    func validate() throws {
        guard top > 0 else { throw UsageError("--top must be positive") }
        guard threshold > 0, threshold <= 1 else { throw UsageError("--threshold takes a score above 0 and at most 1") }
        if referencePath != nil, input == "-" { throw UsageError("--reference needs a recording, not standard input") }
        if like != nil, input == "-" { throw UsageError("--like goes with a recording, not standard input") }
        try AnalyzeCommand.checkLikeFile(like)
        // Options the other way of classifying takes would be quietly ignored.
        if referencePath == nil, let option = given.first(where: { $0 == "--threshold" || $0 == "--ignore" }), !isClassFolders {
            throw UsageError("\(option) goes with --reference")
        }
        if referencePath != nil, given.contains("--top") { throw UsageError("--top lists labels per window; with --reference no window is listed") }
        if let split, split != "shared-data" { throw UsageError("--split takes 'shared-data', not '\(split)'") }
        if foldsGiven {
            guard split != nil else { throw UsageError("--fold goes with --split shared-data") }
            if folds.count > 1, let shared = modelPaths.first(where: { !$0.contains("{fold}") }) {
                throw UsageError("--model \(shared) would classify every fold, and trained on all but one of them: "
                                 + "with several folds, put {fold} in each --model's path")
            }
        }
        if isClassFolders {
            if let option = given.first { throw UsageError("\(option) goes with a recording, not a folder of class folders") }
        } else if split != nil || gapsAs != nil {
            guard input == "-" || FileManager.default.fileExists(atPath: input) else {
                throw SomniError(.badInput, "no such folder: \(input)")
            }
            throw UsageError("\(split != nil ? "--split" : "--gaps-as") goes with a folder of class folders, not a recording")
        }
        try EvaluateCommand.checkIgnored(ignoredLabels)
    }

    struct WindowResult: Encodable {
        var start: Double, end: Double
        var labels: [LabelConfidence]
    }

    func run() throws {
        if isClassFolders { return try scoreClassFolders() }
        let reference = try referencePath.map { try EvaluateCommand.readCSV($0, what: "the reference", ignoring: ignoredLabels,
                                                                            recording: URL(fileURLWithPath: input).lastPathComponent,
                                                                            command: "classify") }
        // A recording is heard without its mains hum, as `analyze` hears it; a stream as it
        // comes (taking hum out holds samples back 16 s).
        let source: any AudioSource = input == "-" ? StandardInputSource()
            : HumFilteredSource(try AudioDecoder(url: URL(fileURLWithPath: input), like: like.map { URL(fileURLWithPath: $0) }))
        var classifier = try ClassifierChoice.learned(modelPaths: modelPaths, recordedSampleRate: source.recordedSampleRate)
        if let reference {
            // A class the model has no label for has no row: its lines are said, not dropped unseen.
            let unheard = Set(ClassSets.classesUnheard(byLabels: classifier.labels))
            let referenced = Set(reference.map(\.eventClass))
            let dropped = EventClass.allCases.filter { unheard.contains($0) && referenced.contains($0) }
            if !dropped.isEmpty {
                let names = dropped.map { $0.rawValue }.joined(separator: " and ")
                printError("somni classify: warning: the reference's \(names) lines are not scored: the model's labels "
                           + "(\(classifier.labels.joined(separator: ", "))) include none for \(names)")
            }
        }
        let length = classifier.windowLength, hop = length / 2
        var window = [Float](repeating: 0, count: length)
        var scores = [Float](repeating: 0, count: classifier.labels.count)
        var filled = 0, windowStart = 0, classified = 0, notNumbers = 0
        var results: [WindowResult] = []
        // With a reference: every window's scores, and the recording's band levels.
        var scored: [ScoredWindow] = []
        let levels = reference == nil ? nil : FeatureExtractor(keepsZeroCrossingRate: false)
        if let levels, let seconds = source.expectedDuration { levels.reserveCapacity(seconds: seconds) }
        var clipMax = [String: Float]()
        var outputGone = false
        let rate = Double(analysisSampleRate)

        func classifyWindow(valid: Int) {
            // A short tail goes in as it is: the classifier pads it for the network, and reads
            // how steady it is (`SteadySound`) from the samples there are, not from the padding.
            window.withUnsafeBufferPointer { w in
                scores.withUnsafeMutableBufferPointer { classifier.classify(UnsafeBufferPointer(rebasing: w[0..<valid]), scores: $0) }
            }
            classified += 1
            let start = Double(windowStart) / rate, end = Double(windowStart + valid) / rate
            if reference != nil {
                scored.append(ScoredWindow(start: start, end: end, scores: scores))
                return
            }
            let ranked = scores.withUnsafeBufferPointer { classifier.ranked($0, top: top) }
            let r = WindowResult(start: start, end: end, labels: ranked)
            for (label, s) in zip(classifier.labels, scores) { clipMax[label] = max(clipMax[label] ?? 0, s) }
            if json {
                results.append(r)
            } else {
                print(String(format: "%8.3f–%8.3f s  ", r.start, r.end)
                      + ranked.map { "\($0.label) \(String(format: "%.3f", $0.confidence))" }.joined(separator: "  "))
                // A stream is read as it comes: each window's line goes out at once, also into a
                // pipe, where output otherwise waits for a full buffer or the end of the stream.
                if input == "-" {
                    StandardStreams.flushOutput()
                    // A live stream has no end to wait for: output gone (a full disk, a reader
                    // that left) ends the command, or it would read and classify forever.
                    outputGone = StandardStreams.outputFailure != nil
                }
            }
        }

        while true {
            let n = try window.withUnsafeMutableBufferPointer { w in
                try source.read(into: UnsafeMutableBufferPointer(rebasing: w[filled..<length]))
            }
            if let levels { window.withUnsafeBufferPointer { levels.process(UnsafeBufferPointer(rebasing: $0[filled..<(filled + n)])) } }
            // Standard input counts its own; a damaged float file's are said as `analyze` says them.
            if input != "-" { notNumbers += window[filled..<(filled + n)].count { !$0.isFinite } }
            filled += n
            if filled == length {
                classifyWindow(valid: length)
                window.replaceSubrange(0..<(length - hop), with: window[hop..<length])
                filled = length - hop
                windowStart += hop
            }
            if n == 0 || outputGone { break }
        }
        if outputGone { return }  // said once, with exit 74, by the end of main
        // A recording shorter than one window, or a tail past the last full window.
        if (classified == 0 && filled > 0) || (classified > 0 && filled > length - hop) { classifyWindow(valid: filled) }
        if classified == 0, input == "-" {
            // As an empty file is: nothing to classify is an error, not an empty answer.
            throw SomniError(.badInput, "standard input ended before a single sample (somni classify - reads raw 32-bit float, 16 kHz mono)")
        }
        for w in source.warnings { printError("somni classify: warning: \(w)") }
        if notNumbers > 0 { printError("somni classify: warning: \(FeatureExtractor.notNumbersWarning(notNumbers))") }
        if let reference, let levels {
            levels.finish()
            let hearing = Evaluator.hearingByLevel(reference: reference, windows: scored, labels: classifier.labels,
                                                   frames: levels.frames, threshold: threshold)
            if json {
                struct Output: Encodable { var hearing: [ClassifierHearing] }
                try printJSON(Output(hearing: hearing))
            } else {
                print(hearing.text(), terminator: "")
            }
            return
        }
        guard json else { return }
        struct Output: Encodable { var windows: [WindowResult]; var clip: [String: Float] }
        try printJSON(Output(windows: results, clip: clipMax))
    }
}

extension ClassifyCommand {
    /// Scores the classifier on a folder of class folders named after its labels: with
    /// --split shared-data, each fold's held-out windows by that fold's models.
    func scoreClassFolders() throws {
        func classifier(of fold: Int) throws -> CNNClassifier {
            let paths = foldsGiven ? modelPaths.map { $0.replacingOccurrences(of: "{fold}", with: String(fold)) } : modelPaths
            return try ClassifierChoice.learned(modelPaths: paths, recordedSampleRate: nil)
        }
        // Every fold's models before any audio: one that heard a fold's windows is refused at once.
        let classifiers = try (split == nil ? [folds[0]] : folds).map { fold in
            let scored = try classifier(of: fold)
            if split != nil { try Self.checkHeldOut(scored, fold: fold) }
            return scored
        }
        let first = classifiers[0]
        let list = try TrainingFileList.scan(URL(fileURLWithPath: input), labels: first.labels)
        let threads = min(ProcessInfo.processInfo.activeProcessorCount, TrainCommand.mostThreads)
        let gapLabel: Int?
        switch gapsAs {
        case nil: gapLabel = first.labels.firstIndex(of: "other")
        case "none"?: gapLabel = nil
        case let name?:
            guard let i = first.labels.firstIndex(of: name) else {
                throw UsageError("--gaps-as \(name) is not one of the model's labels (\(first.labels.joined(separator: ", "))) nor 'none'")
            }
            gapLabel = i
        }
        let data = try TrainingSet.load(list, windowLength: first.windowLength, gapLabel: gapLabel,
                                        threads: threads, decode: AudioDecoder.decodeWhole)
        ClassFolderWarnings.list(command: "classify", data: data, notAudio: list.notAudio, outsideClassFolders: list.outsideClassFolders)
        guard split != nil else {
            var scored = first
            return try report(scored.verdicts(data, examples: Array(data.examples.indices)).metrics, name: first.name)
        }
        var pooled = WindowVerdicts(labels: first.labels)
        var outside = 0
        for (fold, classifier) in zip(folds, classifiers) {
            var scored = classifier
            guard scored.labels == first.labels, scored.windowLength == first.windowLength else {
                throw SomniError(.badInput, "fold \(fold)'s models have labels \(scored.labels.joined(separator: ", ")) and "
                                 + "\(scored.windowLength)-sample windows, fold \(folds[0])'s \(first.labels.joined(separator: ", ")) and "
                                 + "\(first.windowLength): the folds of one cross-validation are models of one recipe")
            }
            let heldOut = data.sharedDataHeldOut(fold: fold)
            outside = heldOut.outsideTheData
            pooled.append(try scored.verdicts(data, examples: heldOut.heldOut))
        }
        if pooled.truth.isEmpty, outside < data.examples.count {
            // The data set's own files, none of them held out in these folds: fold 4 holds out no Khan clip.
            throw SomniError(.badInput, "none of \(input) is in what fold\(folds.count == 1 ? "" : "s") \(foldList) of ../shared/data's "
                             + "rule hold\(folds.count == 1 ? "s" : "") out (fold 4 holds out none of Khan's clips)")
        }
        if pooled.truth.isEmpty {
            throw SomniError(.badInput, "none of \(input) is in the held-out part of ../shared/data: --split shared-data scores "
                             + "only the data set's own files (snoring-khan, speech-commands, cough-coughseg, noise)")
        }
        if outside > 0 {
            printError("somni classify: \(outside) window\(outside == 1 ? "" : "s") from files outside ../shared/data left out "
                       + "(--split shared-data)")
        }
        try report(pooled.metrics, name: folds.count == 1 ? first.name : "\(first.name) and its other folds' models")
    }

    /// Refuses models that say they held out another fold of ../shared/data's rule than the one
    /// scored (they trained on its windows), and warns of models that do not say.
    static func checkHeldOut(_ classifier: CNNClassifier, fold: Int) throws {
        for model in classifier.models {
            guard let heldOut = model.heldOutFold else {
                printError("somni classify: warning: model '\(model.name)' does not say which part of ../shared/data it held out "
                           + "(trained on another split, or by Somni before 0.55): if it trained on ../shared/data, "
                           + "some of fold \(fold)'s windows may be ones it learnt")
                continue
            }
            guard heldOut == fold else {
                throw UsageError("model '\(model.name)' held out fold \(heldOut) of ../shared/data and trained on what fold \(fold) "
                                 + "holds out: its figures there would be of windows it learnt (give each fold its own --model, "
                                 + "with {fold} in the path)")
            }
        }
    }

    private var foldList: String { folds.map(String.init).joined(separator: ",") }

    private func report(_ metrics: ClassificationMetrics, name: String) throws {
        let splitName = split == nil ? "all" : foldsGiven ? "shared-data fold\(folds.count == 1 ? "" : "s") \(foldList)" : "shared-data"
        if json {
            struct Output: Encodable { var labels: [String]; var split: String; var metrics: ClassificationMetrics }
            try printJSON(Output(labels: metrics.classes.map(\.label), split: splitName, metrics: metrics))
            return
        }
        let part = split == nil ? "every example in \(input)"
            : "the examples in \(input) that ../shared/data's rule holds out\(foldsGiven ? " in fold\(folds.count == 1 ? "" : "s") \(foldList)" : "")"
        print("\(name), \(part):\n" + metrics.formatted(labels: metrics.classes.map(\.label)), terminator: "")
    }
}

/// Raw 16 kHz mono Float32 (little-endian) from standard input, for streaming into `classify`.
/// Input in another format (16-bit integers, say) reads as numbers far outside [-1, 1] or as not
/// numbers at all: those are counted, the latter read as silence, and a warning names the format.
final class StandardInputSource: AudioSource {
    let expectedDuration: Double? = nil
    private var carry = Data()
    private var samplesRead = 0, implausible = 0, leftoverBytes = 0

    var warnings: [String] {
        var said: [String] = []
        if implausible > 0 {
            said.append("\(implausible) of \(samplesRead) samples were not numbers or far outside [-1, 1]: is the input 16 kHz mono 32-bit float, little-endian?")
        }
        if leftoverBytes > 0 {
            said.append("the input ended with \(leftoverBytes) stray byte\(leftoverBytes == 1 ? "" : "s"), less than a whole "
                        + "32-bit sample, left out")
        }
        return said
    }

    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        var bytes = carry
        while bytes.count < 4 {
            // Read here, not by FileHandle.readData, which traps on a read error (standard input
            // a folder, or opened for writing only).
            var more = Data(count: max(4, buffer.count * 4 - bytes.count))
            let got = more.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw SomniError(.badInput, "cannot read standard input: \(String(cString: strerror(errno)))")
            }
            more.count = got
            if more.isEmpty {
                leftoverBytes = bytes.count
                carry = Data()
                return 0
            }
            bytes.append(more)
        }
        let n = min(bytes.count / 4, buffer.count)
        bytes.withUnsafeBytes { raw in
            for i in 0..<n {
                let x = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)))
                // Far outside: louder than any recording clipped at full scale could be.
                if !x.isFinite || abs(x) > 4 { implausible += 1 }
                buffer[i] = x.isFinite ? x : 0
            }
        }
        samplesRead += n
        carry = bytes.subdata(in: (4 * n)..<bytes.count)
        return n
    }
}
