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
    if argv.contains("--help") || argv.contains("-h") {
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
        printError("somni \(name): error: \(error)")
        return exitCode(for: error)
    }
}

ProcessMemory.keepLargeBuffersInTheirOwnMappings()
// Every command meets a file-size limit as it meets a full disk: a failed write, one clear error.
LocalProcess.ignoreFileSizeSignal()
exit(runMain())
