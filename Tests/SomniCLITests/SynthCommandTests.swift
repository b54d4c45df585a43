import Foundation
import Testing

/// `somni synth`'s event rates: nights of snoring alone (for training on snores at night levels,
/// or measuring snoring without talk and coughs), or busier ones.
@Suite struct SynthCommandTests {
    private func classes(in csv: URL) throws -> [String: Int] {
        let lines = try String(contentsOf: csv, encoding: .utf8).split(whereSeparator: \.isNewline).dropFirst()
        return Dictionary(lines.map { (String($0.split(separator: ",").last ?? ""), 1) }, uniquingKeysWith: +)
    }

    @Test func talkAndCoughRatesSetHowManyArePlanted() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let quietOnes = dir.appendingPathComponent("snoring-only.wav")
        let none = try CLI.run(["synth", "--out", quietOnes.path, "--hours", "0.5", "--seed", "4",
                                "--talk-per-hour", "0", "--cough-bouts-per-hour", "0"])
        #expect(none.status == 0, "\(none.stderr)")
        let alone = try classes(in: dir.appendingPathComponent("snoring-only.csv"))
        #expect(alone["sleep_talk"] == nil && alone["cough"] == nil, "\(alone)")
        #expect((alone["snoring"] ?? 0) > 50, "\(alone)")

        let busy = dir.appendingPathComponent("busy.wav")
        let many = try CLI.run(["synth", "--out", busy.path, "--hours", "0.5", "--seed", "4",
                                "--talk-per-hour", "40", "--cough-bouts-per-hour", "20"])
        #expect(many.status == 0, "\(many.stderr)")
        let counted = try classes(in: dir.appendingPathComponent("busy.csv"))
        // Half an hour at 40 utterances and 20 bouts (of 1–4 coughs) an hour.
        #expect((counted["sleep_talk"] ?? 0) >= 15, "\(counted)")
        #expect((counted["cough"] ?? 0) >= 10, "\(counted)")
    }

    @Test func theNightIsWrittenInTheFormatItsNameSays() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Each container's own magic bytes: RIFF…WAVE, fLaC, and an MP4 'ftyp' box.
        for (name, magic, at) in [("n.wav", "WAVE", 8), ("n.flac", "fLaC", 0), ("n.m4a", "ftyp", 4), ("n.FLAC", "fLaC", 0)] {
            let url = dir.appendingPathComponent(name)
            let r = try CLI.run(["synth", "--out", url.path, "--hours", "0.01"])
            #expect(r.status == 0, "\(r.stderr)")
            let head = try Data(contentsOf: url).prefix(at + 4).suffix(4)
            #expect(String(decoding: head, as: UTF8.self) == magic, "\(name)")
        }
        // A name that says one format and a --format that says another, or a format synth
        // cannot write: a usage error, and no file.
        for (name, extra) in [("x.wav", ["--format", "flac"]), ("x.m4a", ["--format", "wav"]), ("x.mp3", []),
                              ("x.mp3", ["--format", "flac"]), ("x.caf", []), ("x.ogg", ["--format", "wav"])] {
            let url = dir.appendingPathComponent(name)
            let r = try CLI.run(["synth", "--out", url.path, "--hours", "0.01"] + extra)
            #expect(r.status == 64, "\(name): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
        // Audio and reference under one name: refused before either is written, so an older
        // file of that name is left as it was.
        let kept = dir.appendingPathComponent("kept.wav")
        try Data("older".utf8).write(to: kept)
        // A reference that is a link to the audio (dangling or not) is the audio too.
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("to-kept.csv").path, withDestinationPath: "kept.wav")
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("to-new.csv").path, withDestinationPath: "new.wav")
        for (name, extra) in [("x.csv", [String]()), ("kept.wav", ["--reference", kept.path]),
                              ("kept.wav", ["--reference", dir.appendingPathComponent("to-kept.csv").path]),
                              ("new.wav", ["--reference", dir.appendingPathComponent("to-new.csv").path])] {
            let r = try CLI.run(["synth", "--out", dir.appendingPathComponent(name).path, "--hours", "0.01"] + extra)
            #expect(r.status == 64 && r.stderr.contains("reference CSV would be written over"), "\(name): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.csv").path))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("new.wav").path))
        #expect(try Data(contentsOf: kept) == Data("older".utf8))
        let float = dir.appendingPathComponent("f.wav")
        #expect(try CLI.run(["synth", "--out", float.path, "--hours", "0.01", "--format", "wav-float"]).status == 0)
        // Under a second is a usage error like any length out of range (it passed the check and
        // failed in the synthesiser, exit 65).
        for hours in ["0.0001", "0", "25"] {
            let r = try CLI.run(["synth", "--out", dir.appendingPathComponent("short.wav").path, "--hours", hours])
            #expect(r.status == 64 && r.stderr.contains("--hours must be at least a second"), "\(hours): \(r.stderr)")
        }
    }

    /// A synth killed part-way (kill -9) leaves its unfinished file under a hidden name: up to
    /// 0.9 GB of WAV for eight hours. The next synth into that name removes those untouched for
    /// six hours, and neither one still being written nor another name's.
    @Test func aKilledSynthsUnfinishedFileIsRemovedByTheNext() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        func partial(_ name: String, hoursAgo: Double) throws -> URL {
            let url = dir.appendingPathComponent(name)
            try Data(repeating: 1, count: 4_096).write(to: url)
            try fm.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -hoursAgo * 3_600)], ofItemAtPath: url.path)
            return url
        }
        let killed = try partial(".n.wav.partial-0badcafe", hoursAgo: 7)
        let writing = try partial(".n.wav.partial-12345678", hoursAgo: 0.1)
        let other = try partial(".m.wav.partial-0badcafe", hoursAgo: 7)
        let r = try CLI.run(["synth", "--out", dir.appendingPathComponent("n.wav").path, "--hours", "0.01"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!fm.fileExists(atPath: killed.path))
        #expect(fm.fileExists(atPath: writing.path) && fm.fileExists(atPath: other.path))
    }

    @Test func aNegativeRateIsAUsageError() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["synth", "--out", dir.appendingPathComponent("n.wav").path, "--talk-per-hour", "-1"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--talk-per-hour"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("n.wav").path))
    }

    /// A reference or an audio file that cannot be written is said before the night is rendered,
    /// and nothing is written: before, a whole night's audio was left (or an earlier one
    /// replaced) with no reference beside it.
    @Test func anUnwritablePlaceIsSaidBeforeAnythingIsWritten() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("n.wav")
        let folder = dir.appendingPathComponent("a folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (arguments, said) in [
            (["--reference", folder.path], "cannot write the reference CSV to \(folder.path): it is a folder"),
            (["--reference", dir.appendingPathComponent("none/ref.csv").path], "there is no folder \(dir.appendingPathComponent("none").path)"),
        ] {
            let r = try CLI.run(["synth", "--out", audio.path, "--hours", "0.01"] + arguments)
            #expect(r.status == 74 && r.errorLines.count == 1 && r.stderr.contains(said), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: audio.path))
        }
        let intoFolder = try CLI.run(["synth", "--out", folder.path, "--hours", "0.01", "--format", "wav"])
        #expect(intoFolder.status == 74 && intoFolder.stderr.contains("cannot write the night's audio to \(folder.path): it is a folder"),
                "\(intoFolder.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)

        // Not a plain file (a pipe here; as root, /dev/null was replaced by a WAV): refused.
        let pipe = dir.appendingPathComponent("pipe.wav")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        let intoPipe = try CLI.run(["synth", "--out", pipe.path, "--hours", "0.01"])
        #expect(intoPipe.status == 74 && intoPipe.stderr.contains("it is not a plain file"), "\(intoPipe.stderr)")
        #expect((try FileManager.default.attributesOfItem(atPath: pipe.path)[.type] as? FileAttributeType) != .typeRegular)
        // A link is written through: the night goes where it points, and the link stays.
        let target = dir.appendingPathComponent("target.wav"), link = dir.appendingPathComponent("link.wav")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        let throughLink = try CLI.run(["synth", "--out", link.path, "--hours", "0.01", "--reference", dir.appendingPathComponent("l.csv").path])
        #expect(throughLink.status == 0, "\(throughLink.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
        #expect(((try FileManager.default.attributesOfItem(atPath: target.path))[.size] as? Int ?? 0) > 10_000)
        // The reference is written beside its place first: none of its working files is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial-") }.isEmpty)
    }

    @Test func noRecordedBedWithoutDataIsAUsageError() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["synth", "--out", dir.appendingPathComponent("n.wav").path, "--no-recorded-bed"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--no-recorded-bed only applies with --data"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("n.wav").path))
        // Nor is any other option that the night asked for would quietly ignore.
        for (arguments, said) in [(["--split", "train"], "--split and --fold only apply with --data"),
                                  (["--fold", "2"], "--split and --fold only apply with --data"),
                                  (["--split", "all", "--fold", "2"], "--fold goes with --split test or train"),
                                  (["--noise-only", "--talk-per-hour", "5"], "--talk-per-hour does not go with --noise-only"),
                                  (["--noise-only", "--cough-bouts-per-hour", "0"], "--cough-bouts-per-hour does not go with --noise-only")] {
            let ignored = try CLI.run(["synth", "--out", dir.appendingPathComponent("n.wav").path] + arguments)
            #expect(ignored.status == 64 && ignored.stderr.contains(said), "\(arguments): \(ignored.stderr)")
        }
    }
}
