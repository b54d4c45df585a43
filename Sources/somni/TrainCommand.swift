import Foundation
import SomniAudio
import SomniCore

struct TrainCommand: Command {
    static let name = "train"
    static let summary = "Train a sound classifier from folders of examples (one folder per class)"
    static let help = """
    Usage: somni train DATA_DIR --out MODEL [options]

    Trains Somni's CNN classifier, as Create ML's Sound Classifier does: DATA_DIR holds one folder
    per class (the folder name is the label) with audio files at any depth; links are followed.
    Audio files go by their names (.wav, .flac, .mp3, .m4a, .mp4, .ogg, .opus, .webm, .3gp, .amr,
    .wma, .aiff, .caf and more); other files are listed and left out, as are files that do not
    decode. Files longer than a window are cut into windows, shorter ones padded. Without
    --validation and --test the examples are split 70/15/15, stratified by class sub-folder and
    grouped by source recording, so cuts of one recording never straddle splits:
      SPEAKER_nohash_N files group by speaker; NAME_N files in blocks of --group-block consecutive
      N; other files each alone. A sidecar NAME.txt of 'start<TAB>end' lines (seconds) marks the
      events in NAME: only they belong to the folder's class (see --gaps-as); a line
      'start<TAB>end<TAB>LABEL' marks an event of class LABEL (a labelled night of several classes).
    Prints progress per epoch and, at the end, precision, recall, F1, a confusion matrix and
    accuracy for training, validation and test; writes the model and MODEL-without-extension
    .report.json with the same figures.

      --out MODEL              model file to write (.somnimodel)
      --validation DIR         validation examples (same class folders) instead of a split
      --test DIR               held-out test examples instead of a split
      --training-only DIR      more examples (same class folders), split between training and
                               validation by group and never tested: material made from the
                               training part of a data set, as nights from 'somni synth --split train'
      --background DIR         recordings mixed under training examples at random SNR (repeatable)
      --gaps-as LABEL          class for the stretches between marked events (default: none)
      --synthetic-noise LABEL  add 10 minutes of generated white, pink, brown, fan-like and rumbling
                               noise as examples of LABEL and as extra background beds
      --group-block N          consecutive numbered files per group (default 25)
      --split grouped|shared-data
                               grouped (default): the 70/15/15 split above. shared-data: files of
                               ../shared/data follow its held-out rule (the one 'somni synth' builds
                               test nights from: Khan indices 30–39 of each 50, one speaker or
                               recording in five, the last 20 % of each noise recording) for test,
                               the rest is split into training and validation by group; the
                               --background beds keep only their first 80 %
      --fold K                 with --split shared-data: which fifth of ../shared/data is held out
                               for test, 0 to 4 (default 0, the rule above). Folds 1–4 hold out
                               Khan indices 0–9, 10–19, 20–29 of each 50 (fold 4: none), the other
                               speakers and recordings in five, and each noise recording's fifths
                               from its start (the --background beds lose the same fifth): five
                               models, one per fold, cross-validate a recipe, each part of the
                               data tested once ('somni classify DATA_DIR --split shared-data
                               --fold 0,1,2,3,4' pools them). The model file records the fold,
                               and 'somni classify' refuses to score it on another fold's part
      --seed N                 seeds the split, initial weights and augmentation (default 1)
      --epochs N               most epochs (default 50); training stops early on validation loss
      --patience N             epochs without a better validation loss before stopping (default 10)
      --examples-per-class N   examples of each class per epoch, class-balanced (default 600)
      --learning-rate X        Adam's initial step (default 0.003, cosine decay)
      --gain-db LOW:HIGH       random gain applied to every training example (default -20:6)
      --snr-db LOW:HIGH        signal-to-noise ratio of the mixed-in background (default -3:25)
      --same-class-mix P       share of examples mixed with a second one of their class (default 0.3)
      --band-limit P           share of examples cut off above a random 3.4–7 kHz, as recordings
                               made at 8–16 kHz are (default 0)
      --window-floor Q         a second input channel: each mel band less its value at quantile Q
                               (0–1) over the window's frames, so the network also reads how far a
                               sound rises above a steady background (the default model uses 0.2)
      --mel-bands N            mel bands of the log-mel (default 40)
      --frame-ms MS            Hann frame length in milliseconds (default 25; the FFT is the next
                               power of two); longer frames resolve a snore's harmonics
      --min-hz F               lowest frequency of the mel bands (default 50)
      --channels A,B,C,D       widths of the first convolution and the three depthwise-separable
                               blocks (default 16,32,64,128); wider can learn more and classifies
                               more slowly (24,48,96,128: about twice the work per window)
      --threads N              training threads (default: all cores, at most 64). A run is
                               reproducible for a given --seed and --threads; another thread count
                               sums the gradients in another order and trains a slightly different
                               model (the shipped models: --threads 2)
      --name NAME              model name written into the file (default "somni-cnn v1")
      --no-augment             no noise mixing, gain, shift or masks
    """

    var dataDirectory: String
    var out: String
    var validationDirectory: String?
    var testDirectory: String?
    var trainingOnlyDirectory: String?
    var backgrounds: [String] = []
    var gapsAs: String?
    var syntheticNoise: String?
    var groupBlock = 25
    var sharedDataSplit = false
    var fold = 0
    var options = TrainingOptions()
    var channels: [Int]?

    init(_ a: inout Arguments) throws {
        guard let out = try a.fileOption("--out") else { throw UsageError("--out MODEL is required") }
        self.out = out
        validationDirectory = try a.option("--validation")
        testDirectory = try a.option("--test")
        trainingOnlyDirectory = try a.option("--training-only")
        while let b = try a.option("--background") { backgrounds.append(b) }
        gapsAs = try a.option("--gaps-as")
        syntheticNoise = try a.option("--synthetic-noise")
        groupBlock = try a.option("--group-block", as: Int.self) ?? 25
        switch try a.option("--split") ?? "grouped" {
        case "grouped": sharedDataSplit = false
        case "shared-data": sharedDataSplit = true
        case let other: throw UsageError("--split takes 'grouped' or 'shared-data', not '\(other)'")
        }
        if let fold = try a.option("--fold") {
            guard sharedDataSplit else { throw UsageError("--fold goes with --split shared-data") }
            self.fold = try Self.fold(fold)
        }
        options.seed = try a.option("--seed", as: UInt64.self) ?? 1
        options.maxEpochs = try a.option("--epochs", as: Int.self) ?? options.maxEpochs
        options.patience = try a.option("--patience", as: Int.self) ?? options.patience
        options.examplesPerClass = try a.option("--examples-per-class", as: Int.self) ?? options.examplesPerClass
        options.learningRate = try a.option("--learning-rate", as: Float.self) ?? options.learningRate
        options.gainDecibels = try Self.decibelRange(a.option("--gain-db"), name: "--gain-db") ?? options.gainDecibels
        options.sameClassMixProbability = try a.option("--same-class-mix", as: Float.self) ?? options.sameClassMixProbability
        options.bandLimitProbability = try a.option("--band-limit", as: Float.self) ?? options.bandLimitProbability
        options.signalToNoise = try Self.decibelRange(a.option("--snr-db"), name: "--snr-db") ?? options.signalToNoise
        options.features.windowFloorQuantile = try a.option("--window-floor", as: Float.self)
        options.features.melBands = try a.option("--mel-bands", as: Int.self) ?? options.features.melBands
        if let ms = try a.option("--frame-ms", as: Double.self) {
            guard ms >= 5, ms <= 200 else { throw UsageError("--frame-ms takes 5 to 200 milliseconds, not \(ms)") }
            let samples = Int((ms * Double(analysisSampleRate) / 1000).rounded())
            options.features.frameLength = samples
            options.features.fftSize = max(4, 1 << Int(ceil(log2(Double(samples)))))
        }
        options.features.minFrequency = try a.option("--min-hz", as: Double.self) ?? options.features.minFrequency
        if let text = try a.option("--channels") {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            let c = parts.compactMap { Int($0) }
            guard parts.count == 4, c.count == 4, c.allSatisfy({ (1...512).contains($0) }) else {
                throw UsageError("--channels takes four counts from 1 to 512, as 16,32,64,128, not '\(text)'")
            }
            channels = c
        }
        options.threads = try a.option("--threads", as: Int.self) ?? min(ProcessInfo.processInfo.activeProcessorCount, Self.mostThreads)
        options.name = try a.option("--name") ?? options.name
        options.augment = !a.flag("--no-augment")
        dataDirectory = try a.requiredPositional("DATA_DIR")
    }

    /// A fold of ../shared/data's held-out rule, 0 to 4.
    static func fold(_ text: String) throws -> Int {
        guard let k = Int(text), DataSplit.folds.contains(k) else {
            throw UsageError("--fold takes a fold of ../shared/data from \(DataSplit.folds.lowerBound) to \(DataSplit.folds.upperBound), not '\(text)'")
        }
        return k
    }

    /// "LOW:HIGH" in dB, LOW ≤ HIGH, both within ±80.
    static func decibelRange(_ text: String?, name: String) throws -> ClosedRange<Float>? {
        guard let text else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Arguments.decimal(String($0)).map(Float.init) }
        guard parts.count == 2, let low = parts[0], let high = parts[1], low <= high, low >= -80, high <= 80 else {
            throw UsageError("\(name) takes LOW:HIGH in dB (LOW ≤ HIGH, within ±80), not '\(text)'")
        }
        return low...high
    }

    func validate() throws {
        guard groupBlock > 0 else { throw UsageError("--group-block must be positive") }
        guard options.maxEpochs > 0, options.patience > 0, options.examplesPerClass > 0 else {
            throw UsageError("--epochs, --patience and --examples-per-class must be positive")
        }
        guard options.threads > 0, options.threads <= Self.mostThreads else { throw UsageError("--threads must be 1…\(Self.mostThreads)") }
        // Beyond these a run asks for gigabytes per epoch, or prints a count `%d` cannot hold.
        guard options.examplesPerClass <= 100_000 else { throw UsageError("--examples-per-class takes at most 100000") }
        guard options.maxEpochs <= 10_000, options.patience <= 10_000 else { throw UsageError("--epochs and --patience take at most 10000") }
        guard options.learningRate > 0, options.learningRate < 1 else { throw UsageError("--learning-rate must be in (0, 1)") }
        guard (0...1).contains(options.sameClassMixProbability) else { throw UsageError("--same-class-mix must be in [0, 1]") }
        guard (0...1).contains(options.bandLimitProbability) else { throw UsageError("--band-limit must be in [0, 1]") }
        if let q = options.features.windowFloorQuantile, !(0...1).contains(q) {
            throw UsageError("--window-floor takes a quantile from 0 to 1, not \(q)")
        }
        guard (1...256).contains(options.features.melBands) else { throw UsageError("--mel-bands takes 1 to 256 bands") }
        guard options.features.minFrequency >= 0, options.features.minFrequency < 4000 else {
            throw UsageError("--min-hz takes 0 Hz or more, under 4000 Hz")
        }
        // Checked before any decoding, not found after it: the spectrogram must be big enough
        // for the network's pooling (too few mel bands are not), and the model must have a
        // folder to go to.
        do {
            _ = try Network(input: options.features.inputShape,
                            layers: channels.map { CNNArchitecture.standard(classes: 2, channels: $0) } ?? CNNArchitecture.standard(classes: 2))
        } catch let error as SomniError {
            // Too small for the pooling, or a network too big for a night's time and memory.
            let advice = error.message.contains("max-pool") ? "give more --mel-bands or a shorter --frame-ms"
                : "give narrower --channels or fewer --mel-bands"
            throw UsageError("the spectrogram these options make does not fit the network (\(error.message)); \(advice)")
        }
        // The folder the model lands in: a link's target's (made there if the link leads to nothing yet).
        if OutputFile.linksLoop(URL(fileURLWithPath: out)) {
            throw SomniError(.io, "cannot write the model to \(out): its links go round in a loop")
        }
        let folder = OutputFile.followingLinks(URL(fileURLWithPath: out)).deletingLastPathComponent()
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue,
              FileManager.default.isWritableFile(atPath: folder.path) else {
            throw SomniError(.io, "cannot write the model into \(folder.path): no such folder, or not writable (--out \(out))")
        }
        for path in [out, reportURL.path] where FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue {
            throw UsageError("--out \(out): \(path) is a folder; the model and its report are files")
        }
    }

    /// Where the figures go: beside the model, MODEL-without-extension.report.json.
    var reportURL: URL { URL(fileURLWithPath: out).deletingPathExtension().appendingPathExtension("report.json") }

    /// One more thread than this is refused: a machine with more cores trains on this many.
    static let mostThreads = 64

    /// Refuses an --out whose model or report would replace one of the files training reads
    /// (a recording in a class folder given as --out was replaced by the model, exit 0).
    func refuseToWriteOver(_ inputs: [String]) throws {
        let targets = Set([URL(fileURLWithPath: out), reportURL].map { $0.resolvingSymlinksInPath().path })
        for path in inputs where targets.contains(URL(fileURLWithPath: path).resolvingSymlinksInPath().path) {
            throw UsageError("--out \(out) would write over \(path), which this training reads; write the model elsewhere")
        }
    }

    func run() throws {
        let started = Date()
        // Held-out folders that are the training folder would measure the model on what it learnt.
        let dataPath = URL(fileURLWithPath: dataDirectory).resolvingSymlinksInPath().path
        func resolved(_ dir: String?) -> String? { dir.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path } }
        for (flag, dir) in [("--validation", validationDirectory), ("--test", testDirectory), ("--training-only", trainingOnlyDirectory)] {
            if let dir, resolved(dir) == dataPath {
                throw UsageError(flag == "--training-only"
                    ? "--training-only \(dir) is DATA_DIR itself: every example would be trained on twice"
                    : "\(flag) \(dir) is DATA_DIR itself: its figures would be of the examples trained on")
            }
        }
        // The test figures are of examples nothing chose the model by: not early stopping's.
        if let test = resolved(testDirectory), test == resolved(validationDirectory) || test == resolved(trainingOnlyDirectory) {
            throw UsageError("--test \(testDirectory ?? "") is also the \(test == resolved(validationDirectory) ? "--validation" : "--training-only") "
                             + "folder: its figures would not be of examples held out")
        }
        let list = try TrainingFileList.scan(URL(fileURLWithPath: dataDirectory), blockSize: groupBlock)
        let gapLabel = try gapsAs.map { name -> Int in
            guard let i = list.labels.firstIndex(of: name) else { throw UsageError("--gaps-as \(name) is not a class folder (\(list.labels))") }
            return i
        }
        let window = options.features.windowLength
        /// Every file a class folder holds, recordings, their sidecars and the rest.
        func inputs(of list: TrainingFileList) -> [String] {
            list.files.flatMap { [$0.url.path, $0.url.deletingPathExtension().appendingPathExtension("txt").path] } + list.notAudio
        }
        try refuseToWriteOver(inputs(of: list))
        printError("somni train: decoding \(list.files.count) files in \(list.labels.count) classes (\(list.labels.joined(separator: ", ")))…")
        var data = try TrainingSet.load(list, windowLength: window, gapLabel: gapLabel, threads: options.threads, decode: AudioDecoder.decodeWhole)
        var notAudio = list.notAudio, outsideClassFolders = list.outsideClassFolders
        var beds: [[Float]] = []
        if let name = syntheticNoise {
            guard let label = list.labels.firstIndex(of: name) else {
                throw UsageError("--synthetic-noise \(name) is not a class folder (\(list.labels))")
            }
            let generated = SyntheticNoise.beds(count: 10, seconds: 60, seed: options.seed)
            _ = data.append(SyntheticNoise.trainingSet(labels: list.labels, label: label, beds: generated, windowLength: window))
            beds += generated
        }
        let validationShare = validationDirectory == nil ? 0.15 : 0, testShare = testDirectory == nil ? 0.15 : 0
        let (splitTrain, splitValidation, splitTest) = sharedDataSplit
            ? data.sharedDataSplit(validationShare: validationShare, testShare: testShare, seed: options.seed, fold: fold)
            : data.split(validationShare: validationShare, testShare: testShare, seed: options.seed)
        var train = splitTrain, validation = splitValidation, test = splitTest
        /// Loads more class folders (the same labels) into `data`; their examples' indices.
        func examples(in dir: String) throws -> [Int] {
            let extra = try TrainingFileList.scan(URL(fileURLWithPath: dir), blockSize: groupBlock, labels: list.labels)
            try refuseToWriteOver(inputs(of: extra))
            notAudio += extra.notAudio
            outsideClassFolders += extra.outsideClassFolders
            return data.append(try TrainingSet.load(extra, windowLength: window, gapLabel: gapLabel, threads: self.options.threads,
                                                    decode: AudioDecoder.decodeWhole))
        }
        if let dir = validationDirectory { validation = try examples(in: dir) }
        if let dir = testDirectory { test = try examples(in: dir) }
        var trainingOnly: (train: [Int], all: [Int]) = ([], [])
        if let dir = trainingOnlyDirectory {
            let added = try examples(in: dir)  // before `data.split`, which must see them
            let parts = data.split(added, validationShare: validationShare, testShare: 0, seed: options.seed)
            train = (train + parts.train).sorted(); validation = (validation + parts.validation).sorted()
            trainingOnly = (parts.train, added)
        }
        for dir in backgrounds {
            let (paths, others) = try AudioFileNames.files(under: URL(fileURLWithPath: dir).resolvingSymlinksInPath())
            if paths.isEmpty { printError("somni train: warning: --background \(dir) holds no recordings: nothing from it is mixed in") }
            try refuseToWriteOver(paths)
            notAudio += others
            for path in paths {
                let bed = try AudioDecoder.decodeWhole(URL(fileURLWithPath: path))
                // Under the shared rule only the training part of a recording may be heard in training.
                beds.append(sharedDataSplit ? DataSplit.train.noiseSamples(of: bed, fold: fold) : bed)
            }
        }
        ClassFolderWarnings.list(command: "train", data: data, notAudio: notAudio, outsideClassFolders: outsideClassFolders)
        if let (first, second) = data.recordingInTwoClassFolders() {
            throw SomniError(.badInput, "\(second) is the same recording as \(first), in another class folder (a copy): "
                             + "taught whole, a recording can teach only one class (a sidecar marking its events can teach several)")
        }
        // A held-out folder holding training recordings (linked or copied in) measures the model
        // on what it learnt, as DATA_DIR itself given there would, which is refused above.
        let heldOut = [("--validation", validationDirectory, validation), ("--test", testDirectory, test)]
        for (flag, dir, indices) in heldOut {
            if let dir {
                let shared = data.filesAlsoTrainedOn(train, among: indices)
                guard let first = shared.first else { continue }
                throw SomniError(.badInput, "\(flag) \(dir) holds \(shared.count) recording\(shared.count == 1 ? "" : "s") that "
                                 + "\(shared.count == 1 ? "is" : "are") also trained on (the same file or a copy of one), e.g. \(first): "
                                 + "its figures would be of examples trained on")
            }
            // The automatic split keeps DATA_DIR's copies together; a --training-only folder's
            // copies of what it held out were trained on unseen (test accuracy 0.52 read 0.81).
            // Only those are looked for here: validation's against the ones trained on, test's
            // against all (validation chose the model).
            let shared = data.filesAlsoTrainedOn(flag == "--test" ? trainingOnly.all : trainingOnly.train, among: indices)
            guard let first = shared.first else { continue }
            throw SomniError(.badInput, "--training-only \(trainingOnlyDirectory ?? "") holds the same file as, or a copy of, "
                             + "\(shared.count) recording\(shared.count == 1 ? "" : "s") the split put in \(flag.dropFirst(2)), e.g. \(first): "
                             + "its figures would be of examples trained on; take \(shared.count == 1 ? "it" : "them") out of --training-only")
        }
        // Test figures are of examples nothing chose the model by: early stopping watched validation's.
        if let dir = testDirectory, let first = data.filesAlsoTrainedOn(validation, among: test).first {
            throw SomniError(.badInput, "--test \(dir) holds the same file as, or a copy of, one in validation, e.g. \(first): "
                             + "its figures would not be of examples held out")
        }
        for (flag, dir, indices) in heldOut where !indices.isEmpty || dir != nil {
            let held = Set(indices.map { data.examples[$0].label })
            let missing = data.labels.indices.filter { !held.contains($0) }.map { data.labels[$0] }
            guard !missing.isEmpty else { continue }
            let these = missing.count == 1 ? "that class" : "those classes"
            if let dir {
                printError("somni train: warning: \(flag) \(dir) holds no \(missing.joined(separator: ", ")) examples, "
                           + "so its figures say nothing of \(these)")
            } else {
                // The automatic split moves whole recordings: one long one can fill a class's share.
                let part = flag.dropFirst(2)
                printError("somni train: warning: the split put no \(missing.joined(separator: ", ")) examples in \(part) "
                           + "(whole recordings go to each part, and \(these) \(missing.count == 1 ? "has" : "have") too few, or one long one), so its \(part) "
                           + "figures say nothing of \(these)\(part == "validation" ? " and early stopping does not watch it" : ""); "
                           + "give \(flag) DIR, or more recordings")
            }
        }
        // Whole recordings go to each part, in an order the seed decides: one long recording
        // can take most of a class into a held-out part, and training learns it from the rest.
        // Only the parts the split made are counted: a folder given is the user's to size.
        // Under --split shared-data the test part is the data set's rule, which no seed moves.
        let splitParts = [("validation", validationDirectory == nil ? validation : []),
                          ("test", testDirectory == nil && !sharedDataSplit ? test : [])]
        if splitParts.contains(where: { !$0.1.isEmpty }) {
            for (label, name) in data.labels.enumerated() {
                func count(_ part: [Int]) -> Int { part.filter { data.examples[$0].label == label }.count }
                let trained = count(train), held = splitParts.map { ($0.0, count($0.1)) }
                let total = trained + held.reduce(0) { $0 + $1.1 }
                guard total > 0, 2 * trained < total, let (part, most) = held.max(by: { $0.1 < $1.1 }) else { continue }
                printError("somni train: warning: the split put \(Int((100 * Double(most) / Double(total)).rounded())) % of \(name)'s "
                           + "\(total) windows in \(part) and \(Int((100 * Double(trained) / Double(total)).rounded())) % in training "
                           + "(whole recordings go to each part, and one long one can hold most of a class); "
                           + "give --\(part) DIR, another --seed, or more recordings of \(name)")
            }
        }
        let loadSeconds = Date().timeIntervalSince(started)
        printError(String(format: "somni train: %d windows (train %d, validation %d, test %d), %d background beds, decoded in %.1f s",
                          data.examples.count, train.count, validation.count, test.count, beds.count, loadSeconds))
        if validation.isEmpty || test.isEmpty {
            // Whole groups go to each split, so a class of one recording (or one group) has none to spare.
            let missing = [validation.isEmpty ? "validation" : nil, test.isEmpty ? "test" : nil].compactMap { $0 }
            let costs = [validation.isEmpty ? "training runs every epoch, nothing to stop it early" : nil,
                         test.isEmpty ? "no test figures" : nil].compactMap { $0 }
            printError("somni train: warning: no \(missing.joined(separator: " or ")) examples: the recordings fall in too few groups "
                       + "to split (\(costs.joined(separator: "; "))); give --validation DIR and --test DIR, or more recordings")
        }
        var options = options
        if let channels { options.layers = CNNArchitecture.standard(classes: data.labels.count, channels: channels) }
        let trainer = try Trainer(data: data, train: train, validation: validation, test: test, backgrounds: beds, options: options)
        let epochs = options.maxEpochs
        let (trained, report) = try trainer.train { e in
            // `%d` holds the epoch counts `validate` allows (at most 10,000).
            var line = String(format: "epoch %2d/%d  lr %.5f  train loss %.4f acc %.4f", e.epoch, epochs, e.learningRate, e.trainLoss, e.trainAccuracy)
            if let l = e.validationLoss, let a = e.validationAccuracy { line += String(format: "  validation loss %.4f acc %.4f", l, a) }
            printError(line + String(format: "  (%.1f s)", e.seconds))
        }
        var model = trained
        // The file says what it never heard, so a score of that part can be checked as held out.
        if sharedDataSplit { model.heldOutFold = fold }
        let outURL = URL(fileURLWithPath: out)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let reportData = try encoder.encode(report)
        // The model and its figures go into place together or not at all (a model without its
        // figures would pass for a finished run): a signal between them left the model alone,
        // and its working file when it came during the model's write.
        let modelData = try model.encoded()
        try RemovedOnInterrupt.shared.uninterruptible {
            do { try OutputFile.write([(modelData, outURL), (reportData, reportURL)]) } catch {
                throw SomniError(.io, "could not write \(outURL.path) and \(reportURL.path); what was there is left as it was", cause: error)
            }
        }
        print("Model \(model.name): \(list.labels.joined(separator: ", ")); \(report.parameterCount) parameters, "
              + "\(report.multiplyAccumulates) multiply-accumulates per window; best epoch \(report.bestEpoch) of \(report.epochs.count); "
              + String(format: "temperature %.3f; trained in %.0f s (+%.0f s decoding)", report.temperature, report.seconds, loadSeconds))
        for (name, m) in [("Training", report.train), ("Validation", report.validation), ("Test", report.test)] {
            guard let m else { continue }
            print("\n\(name):\n" + m.formatted(labels: list.labels), terminator: "")
        }
        print("\nWrote \(outURL.path) and \(reportURL.path)")
    }
}
