import Foundation
import SomniAudio
import SomniCapture
import SomniCore

/// Every subcommand, in the order `somni --help` lists them.
let commands: [any Command.Type] = [
    AnalyzeCommand.self,
    DemoCommand.self,
    EvaluateCommand.self,
    RecordCommand.self,
    RecoverCommand.self,
    SynthCommand.self,
    TrainCommand.self,
    ClassifyCommand.self,
    NightsCommand.self,
    ShowCommand.self,
    ReportCommand.self,
    ExportCommand.self,
    ImportCommand.self,
    DeleteCommand.self,
]

@MainActor func mainHelp() -> String {
    var s = """
    somni — private, on-device sleep-sound analysis (snoring, sleep-talk, coughs).
    Nothing leaves this machine.

    Usage: somni <command> [options]

    Commands:

    """
    for c in commands { s += "  \(c.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(c.summary)\n" }
    s += "\nRun 'somni <command> --help' for a command's options; 'somni --version' for the version.\n"
    return s
}

/// Maps errors to exit codes in one place: 64 usage, 65 bad input data, 66 missing input,
/// 74 I/O, 70 anything else.
func exitCode(for error: any Error) -> Int32 {
    if error is UsageError { return 64 }
    if let e = error as? SomniError {
        switch e.code {
        case .badInput, .badModel: return 65
        case .io: return 74
        case .unsupported: return 69
        case .internalError: return 70
        }
    }
    return 70
}

@MainActor func runMain() -> Int32 {
    var argv = Array(CommandLine.arguments.dropFirst())
    guard let name = argv.first, name != "--help", name != "-h", name != "help" else {
        print(mainHelp(), terminator: "")
        return argv.isEmpty ? 64 : 0
    }
    if name == "--version" {
        print(SomniVersion.name)
        return 0
    }
    argv.removeFirst()
    guard let type = commands.first(where: { $0.name == name }) else {
        printError("somni: unknown command '\(name)'. Run 'somni --help'.")
        return 64
    }
    // Only before '--': after it, '-h' is a file's name.
    let options = argv.prefix { $0 != "--" }
    if options.contains("--help") || options.contains("-h") {
        print(type.help)
        return 0
    }
    do {
        var args = Arguments(argv)
        let command = try type.init(&args)
        try args.finish()
        try command.validate()
        try command.run()
        return 0
    } catch let e as UsageError {
        printError("somni \(name): \(e.description). Run 'somni \(name) --help'.")
        return 64
    } catch {
        RemovedOnInterrupt.waitIfInterrupted()  // the failure is the signal's doing: its exit says so
        printError("somni \(name): error: \(error)")
        return exitCode(for: error)
    }
}

/// Standard streams a parent closed (`>&-`, `2>&-`) are opened on a device before anything
/// else: otherwise the first file Somni opens (the store's database, a clip) takes the stream's
/// number, and printed text lands in it. A closed standard output gets /dev/full, so that what
/// is printed fails to be written and `finishStandardOutput` says so.
enum StandardStreams {
    nonisolated(unsafe) static var outputWasClosed = false
    /// Why standard output could not be written, if it could not (errno).
    static var outputFailure: Int32? { StandardOutput.failure }

    /// Writes out what is printed so far.
    static func flushOutput() { StandardOutput.flush() }

    static func openClosedOnes() {
        var status = stat()
        for (fd, path, flags) in [(STDIN_FILENO, "/dev/null", O_RDONLY), (STDOUT_FILENO, "/dev/full", O_WRONLY),
                                  (STDERR_FILENO, "/dev/null", O_WRONLY)] where fstat(fd, &status) != 0 {
            if fd == STDOUT_FILENO { outputWasClosed = true }
            // open takes the lowest free number, which is this one: the lower ones are open.
            if open(path, flags) != fd, fd == STDOUT_FILENO { _ = open("/dev/null", O_WRONLY) }
        }
    }

    /// Writes out what is left of standard output. Output that could not be written (a full
    /// disk, /dev/full, a closed stream) is one error and exit 74, not a silent success.
    static func finishStandardOutput(status: Int32) -> Int32 {
        flushOutput()
        guard let failure = outputFailure else { return status }
        let why = outputWasClosed ? "it is closed" : String(cString: strerror(failure))
        let name = CommandLine.arguments.dropFirst().first.map { " \($0)" } ?? ""
        printError("somni\(name): error: could not write to standard output: \(why)")
        return status == 0 ? 74 : status
    }
}

StandardStreams.openClosedOnes()
if let warning = ProcessZone.adoptTheSystemsZone() { printError("somni: warning: \(warning)") }
// A command ended by a signal (exit from its handler) still writes out what it printed.
atexit { StandardOutput.flush() }
ProcessMemory.keepLargeBuffersInTheirOwnMappings()
// Every command meets a file-size limit as it meets a full disk, and a reader gone from its
// pipe as a closed output: a failed write, one clear error.
LocalProcess.ignoreFileSizeAndPipeSignals()
exit(StandardStreams.finishStandardOutput(status: runMain()))
