import Foundation
import SomniAudio
import SomniCore

struct DemoCommand: Command {
    static let name = "demo"
    static let summary = "Synthesise a short night from generated sounds, analyse it, print the summary"
    static let help = """
    Usage: somni demo [--out DIR] [--minutes N] [--seed N] [--classifier heuristic|model] [--model FILE]

    Needs no recordings: builds a short night from snores, talk, coughs and bedroom noises that
    are generated in code, writes it as a WAV with a reference of where every event is, analyses
    it like any recording, and scores what was found against the reference.

    The demo analyses with the heuristic baseline unless told otherwise: its sounds are generated
    in code, and the learned model ('somni analyze''s default) was trained on real recordings and
    does not know them (it misses most generated snores). '--classifier model' shows it anyway.

      --out DIR          where to put the demo (default: a new folder under the system temp dir)
      --minutes N        length of the demo night (default 20)
      --seed N           random seed (default 7)
    \(ClassifierChoice.help(column: 21, defaultKind: "heuristic"))
    """

    var out: String?
    var minutes: Double
    var seed: UInt64
    var classifierKind: String
    var modelPaths: [String] = []

    init(_ a: inout Arguments) throws {
        out = try a.option("--out")
        minutes = try a.option("--minutes", as: Double.self) ?? 20
        seed = try a.option("--seed", as: UInt64.self) ?? 7
        (classifierKind, modelPaths) = try ClassifierChoice.parse(&a, defaultKind: "heuristic")
    }

    func validate() throws {
        guard minutes >= 1, minutes <= 600 else { throw UsageError("--minutes must be 1…600") }
        if let out { try refuseNightFolderInsideTheStore(out, instead: "without --out the demo night goes to a temporary folder") }
    }

    func run() throws {
        let fm = FileManager.default
        let directory = out.map { URL(fileURLWithPath: $0) }
            ?? fm.temporaryDirectory.appendingPathComponent("somni-demo-\(Int(Date().timeIntervalSince1970))-\(getpid())")
        do { try fm.createDirectory(at: directory, withIntermediateDirectories: true) } catch {
            throw SomniError(.io, "cannot create \(directory.path)", cause: error)
        }
        print("somni demo: this night is synthetic — snores, talk, coughs and room noise generated in code, not recorded.")

        var configuration = NightConfiguration(hours: minutes / 60, seed: seed, scene: .quiet)
        configuration.firstSnoreMinutes = 1...3
        configuration.quietMinutes = 2...5
        configuration.snoreEpisodeMinutes = 2...5
        configuration.speechPerHour = 12
        configuration.coughBoutsPerHour = 9
        let synthesizer = try NightSynthesizer(configuration: configuration, bank: GeneratedSoundBank())
        let audio = directory.appendingPathComponent("demo-night.wav")
        let referenceURL = directory.appendingPathComponent("demo-night.csv")
        try synthesizer.render(to: WAVWriter(url: audio))
        do { try ReferenceCSV.write(synthesizer.plan.events).write(to: referenceURL, atomically: true, encoding: .utf8) } catch {
            throw SomniError(.io, "cannot write \(referenceURL.path)", cause: error)
        }
        print("Synthesised \(NightSummaryText.clock(synthesizer.plan.duration)) of audio: \(audio.path)")
        print("Reference events (\(synthesizer.plan.events.count)): \(referenceURL.path)\n")

        let nightFolder = directory.appendingPathComponent("demo-night.night")
        try? fm.removeItem(at: nightFolder)
        let classifier = try ClassifierChoice.make(kind: classifierKind, modelPaths: modelPaths, command: "demo")
        if case .heuristic = classifier {
            print("""
            Classifier: the heuristic baseline. The learned model, which 'somni analyze' uses, was trained on
            real recordings and does not know these generated sounds ('--classifier model' shows it on them);
            its quality on real held-out recordings is in the README ('Quality').

            """)
        }
        let session = try classifier.analyze(source: AudioDecoder(url: audio), sourceName: audio.lastPathComponent,
                                             sensitivity: 5, destination: nightFolder, showProgress: true)
        print(NightSummaryText.render(session, folder: nightFolder))

        let found = session.events.map { ReferenceEvent(eventClass: $0.eventClass, start: $0.start, end: $0.end) }
        let report = Evaluator.evaluate(reference: synthesizer.plan.events, found: found, duration: session.duration)
        print("\nAgainst the reference (somni evaluate --reference \(referenceURL.path) \(nightFolder.path)):")
        print(report.text())
        if case .learned = classifier {
            print("""
            Note: the learned model was trained on real recordings; these generated sounds are not what it
            learned (it misses most generated snores). The figures above check the pipeline, not the model:
            its quality on real held-out recordings is in the README ('Quality').
            """)
        }
    }
}
