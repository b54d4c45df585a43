import Foundation
import SomniCapture
import SomniCore

struct RecoverCommand: Command {
    static let name = "recover"
    static let summary = "Close nights whose recorder died (kill -9, power loss) from what is on disk"
    static let help = """
    Usage: somni recover [NIGHT_DIR ...] [--out DIR | --store DIR] [--lock FILE] [--sensitivity N]
                         [--classifier model|heuristic] [--model FILE]

    Finds nights whose recording never finished and closes them: the morning analysis runs on
    the part of the master recording that reached the disk (night mode), or the episodes saved
    so far become the night (live mode). At most the last 30 s are lost (46 s in live mode, whose
    detector hears the sound 16 s late, after checking it for mains hum). A night that a live
    recorder is still recording is left alone. 'somni record' does this by itself before it starts.

      NIGHT_DIR          night folders to close (default: every unfinished night under --out)
      --out DIR          the folder given to 'somni record --out' (bare night folders, kept there)
      --store DIR        the night store (default as for record): its unfinished recordings are
                         closed and saved in it
      --lock FILE        the recording lock to respect (default: /tmp/somni-record.lock)
      --sensitivity N    1 (strict) … 10 (permissive) for the morning analysis (default 5)
    \(ClassifierChoice.help(column: 21))
    """

    var folders: [String] = []
    var options: RecordingOptions
    var sensitivity: Int
    var classifierKind: String
    var modelPaths: [String] = []

    init(_ a: inout Arguments) throws {
        sensitivity = try a.sensitivity()
        options = try RecordingOptions(&a)
        (classifierKind, modelPaths) = try ClassifierChoice.parse(&a)
        while let f = a.positional() { folders.append(f) }
    }

    func run() throws {
        // Opened first: a night a save that died left in the store's staging is put back in
        // recording/ by the store, to be saved below.
        options.sweepStore()
        options.removeAbandonedFolders()
        // Into a store, nights analysed but never taken in are saved too.
        var targets = folders.isEmpty
            ? NightJournal.unfinishedNights(under: options.root) + (options.out == nil ? NightJournal.analysedNights(under: options.root) : [])
            : folders.map { URL(fileURLWithPath: $0, isDirectory: true) }
        // A folder named that is not there is a mistake to say, not one closed meanwhile.
        let missing = targets.filter { !folders.isEmpty && !FileManager.default.fileExists(atPath: $0.path) }
        for folder in missing { printError("somni recover: \(folder.path): no such night folder") }
        targets.removeAll { missing.contains($0) }
        if targets.isEmpty, !missing.isEmpty {
            throw SomniError(.badInput, "\(missing.count) of the night folders named \(missing.count == 1 ? "is" : "are") not there")
        }
        // Loaded before anything is looked at: a typo in a service's --model showed only on the
        // morning a night needed closing.
        let classifier = try ClassifierChoice.make(kind: classifierKind, modelPaths: modelPaths, command: "recover")
        if targets.isEmpty {
            print("No unfinished nights under \(options.root.path).")
            return
        }
        let live = RecordingLock.liveHolder(at: options.lockURL, processAlive: LocalProcess.isAlive)
        var failures = 0, badInputFailures = 0
        for folder in targets {
            if let holder = live, URL(fileURLWithPath: holder.nightFolder).standardizedFileURL.path == folder.standardizedFileURL.path {
                printError("somni recover: \(folder.lastPathComponent) is being recorded right now (pid \(holder.pid)); left alone")
                continue
            }
            do {
                // Closed and saved by another somni since the list was made: not a failure.
                guard FileManager.default.fileExists(atPath: folder.path) else {
                    print("\(folder.lastPathComponent): closed by another somni meanwhile")
                    continue
                }
                // A folder of another kind (an analysed night's, any other) is the user's mistake.
                guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(NightJournal.fileName).path) else {
                    throw SomniError(.badInput, "not a night folder of 'somni record': it has no \(NightJournal.fileName)")
                }
                var journal = try NightJournal.load(in: folder)
                if let recorder = LocalProcess.liveRecorder(of: journal, in: folder) {
                    // Under another lock file (--lock, a service's private /tmp), the lock cannot tell.
                    printError("somni recover: \(folder.lastPathComponent) is being recorded right now (pid \(recorder.pid), "
                               + "still writing it); left alone")
                    continue
                }
                guard let held = try NightFolderClaim(folder) else {
                    if FileManager.default.fileExists(atPath: folder.path) {
                        printError("somni recover: \(folder.lastPathComponent) is being closed by another somni right now; left alone")
                    } else {
                        print("\(folder.lastPathComponent): closed by another somni meanwhile")
                    }
                    continue
                }
                defer { withExtendedLifetime(held) {} }
                journal = try NightJournal.load(in: folder)  // as the last process to hold it left it
                let saving = options.keeping(folder)
                guard journal.status != .analysed else {
                    print("\(folder.lastPathComponent): already closed" + (try saving.saveAnalysed(folder).map { "; \($0)" } ?? ""))
                    continue
                }
                let session = try RecordingOptions.close(folder, classifier: classifier, sensitivity: sensitivity, recovered: true)
                let (_, savedAs) = try saving.save(folder)
                print("\(folder.lastPathComponent): recovered \(NightSummaryText.clock(session.duration)) of night, "
                    + "\(session.events.count) events" + (savedAs.map { "; saved in the night store as \($0)" } ?? ""))
            } catch {
                failures += 1
                if (error as? SomniError)?.code == .badInput { badInputFailures += 1 }
                printError("somni recover: \(folder.path): \(error)")
            }
        }
        if failures > 0 || !missing.isEmpty {
            let code: SomniError.Code = failures > badInputFailures ? .io : .badInput
            throw SomniError(code, "\(failures + missing.count) night(s) could not be recovered")
        }
    }
}
