import SomniCore

/// What a scan of class folders left out, on standard error, for `train` and `classify DATA_DIR`:
/// figures over fewer files than the folders hold should say which and why.
enum ClassFolderWarnings {
    static func list(command: String, data: TrainingSet, notAudio: [String], outsideClassFolders outside: [String] = []) {
        let one = data.skipped.count == 1, oneNot = notAudio.count == 1, onePast = data.eventsPastEnd.count == 1
        listLeftOut("somni \(command): warning: \(data.skipped.count) file\(one ? "" : "s") could not be read and "
                    + "\(one ? "was" : "were") left out:", data.skipped)
        listLeftOut("somni \(command): warning: \(data.eventsPastEnd.count) file\(onePast ? "'s sidecar marks" : "s' sidecars mark") events "
                    + "starting after the recording's end, left out (are the times in seconds?):", data.eventsPastEnd)
        listLeftOut("somni \(command): \(notAudio.count) file\(oneNot ? " is not a recording" : "s are not recordings") "
                    + "(by name, or not a plain file) and \(oneNot ? "was" : "were") left out:", notAudio)
        listLeftOut("somni \(command): warning: \(outside.count) recording\(outside.count == 1 ? " lies" : "s lie") beside the "
                    + "class folders, in none of them, and \(outside.count == 1 ? "was" : "were") left out:", outside)
    }

    /// A heading, then the first ten of `lines` and how many more there are.
    private static func listLeftOut(_ heading: String, _ lines: [String]) {
        guard !lines.isEmpty else { return }
        printError(heading)
        for line in lines.prefix(10) { printError("  \(line)") }
        if lines.count > 10 { printError("  … and \(lines.count - 10) more") }
    }
}
