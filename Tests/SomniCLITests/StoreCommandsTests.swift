import Foundation
import SomniCore
@testable import SomniStore
import Testing

/// The store's commands as a person runs them one after another: nights analysed into a store,
/// listed, shown, reported, exported, deleted and imported, and what each does with bad input.
@Suite struct StoreCommandsTests {
    /// Reading a store never makes one: a mistyped --store is named as holding none, listing or
    /// exporting every night of it gives none, and nothing appears on the disk.
    @Test func aStoreThatIsNotThereIsNamedNotMade() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let typo = dir.appendingPathComponent("stroe")
        let listed = try CLI.run(["nights", "--store", typo.path])
        #expect(listed.status == 0 && listed.stdout.contains("No nights stored yet (no store at \(typo.path) yet)"), "\(listed.stdout)")
        let json = try CLI.run(["nights", "--json"], environment: ["SOMNI_STORE": typo.path])
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [Any]
        #expect(json.status == 0 && decoded?.isEmpty == true, "\(json.stdout)")
        let exported = try CLI.run(["export", "--all", "--store", typo.path])
        #expect(exported.status == 0 && exported.stdout.split(separator: "\n").count == 1
                && exported.stderr.contains("no night store at \(typo.path) yet"), "\(exported.stderr)")
        for command in [["show", "2026-11-28"], ["report"], ["export", "2026-11-28"], ["delete", "2026-11-28"]] {
            let r = try CLI.run(command + ["--store", typo.path])
            #expect(r.status == 65 && r.errorLines.count == 1 && r.stderr.contains("there is no night store at \(typo.path)"),
                    "\(command): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: typo.path))
        // A file where the store should be is named as such, not as a store not made yet.
        let file = dir.appendingPathComponent("store.txt")
        try Data("notes".utf8).write(to: file)
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        for command in [["nights"], ["export", "--all"], ["analyze", audio.path, "--no-clips", "--classifier", "heuristic"],
                        ["recover"], ["record", "--for", "1m"]] {
            let r = try CLI.run(command + ["--store", file.path])
            #expect(r.status == 65 && r.errorLines.count == 1 && r.stderr.contains("is a file, not a night store's folder"),
                    "\(command): \(r.stderr)")
        }
    }

    /// A store under `dir` holding one short night, analysed from `audio`, dated 2026-11-28 23:00.
    private static func oneNightStored(in dir: URL) throws -> (directory: URL, environment: [String: String], audio: URL, id: String) {
        let directory = dir.appendingPathComponent("store")
        let environment = ["SOMNI_STORE": directory.path]
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        #expect(try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--no-clips", "--started", "2026-11-28 23:00"],
                            environment: environment).status == 0)
        let id = try #require(CLI.nightIDs(try CLI.run(["nights", "--json"], environment: environment).stdout).first)
        return (directory, environment, audio, id)
    }

    /// An export or a report written over the store's own database, or a night's own files, is
    /// refused: the store and its nights stay as they were.
    @Test func anOutputFileOverTheStoresOwnFilesIsRefused() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (storeDirectory, store, _, id) = try Self.oneNightStored(in: dir)
        let session = storeDirectory.appendingPathComponent("nights/\(id)/session.json")
        let before = try Data(contentsOf: session)
        for command in [["export", "--all", "-o", storeDirectory.appendingPathComponent("somni.sqlite").path],
                        ["export", id, "--format", "json", "-o", session.path],
                        ["report", id, "-o", storeDirectory.appendingPathComponent("somni.sqlite-wal").path]] {
            let r = try CLI.run(command, environment: store)
            #expect(r.status == 64 && r.stderr.contains("would write over the night store's own files"), "\(command): \(r.stderr)")
        }
        #expect(try Data(contentsOf: session) == before)
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout) == [id])
        // A page of its own in the night's folder is written, its clips linked from there.
        let page = storeDirectory.appendingPathComponent("nights/\(id)/report.html")
        #expect(try CLI.run(["report", id, "-o", page.path], environment: store).status == 0)
        #expect(FileManager.default.fileExists(atPath: page.path))
    }

    /// A night folder copied into the store's nights folder by hand is kept and named by
    /// `somni nights` (before, listing the nights deleted it without a word), and a bare night
    /// folder is not written inside the store's own folders, where it would be taken for one.
    @Test func aFolderPutInTheStoreByHandIsKeptAndNamedAndNoBareNightGoesThere() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (storeDirectory, store, audio, id) = try Self.oneNightStored(in: dir)
        let copied = storeDirectory.appendingPathComponent("nights/my-copy")
        try FileManager.default.copyItem(at: storeDirectory.appendingPathComponent("nights/\(id)"), to: copied)
        let listed = try CLI.run(["nights"], environment: store)
        #expect(listed.status == 0 && listed.stdout.contains(id), "\(listed.stdout)")
        #expect(listed.errorLines.count == 1 && listed.stderr.contains("no stored night names") && listed.stderr.contains(copied.path),
                "\(listed.stderr)")
        #expect(FileManager.default.fileExists(atPath: copied.appendingPathComponent("session.json").path))

        for place in ["nights/bare", "staging/bare", "incoming"] {
            let out = storeDirectory.appendingPathComponent(place)
            let r = try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--no-clips", "--out", out.path], environment: store)
            #expect(r.status == 64 && r.stderr.contains("is inside the night store's own folders"), "\(place): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("session.json").path))
        }
        // Nor through a link to the store, nor into its recording/ folder; demo says where it goes instead.
        let link = dir.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: storeDirectory)
        for out in [link.appendingPathComponent("staging/x"), storeDirectory.appendingPathComponent("recording/x")] {
            let r = try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--no-clips", "--out", out.path], environment: store)
            #expect(r.status == 64 && r.stderr.contains("is inside the night store's own folders"), "\(out.path): \(r.stderr)")
        }
        let demo = try CLI.run(["demo", "--minutes", "1", "--out", storeDirectory.appendingPathComponent("nights/demo").path],
                               environment: store)
        #expect(demo.status == 64 && demo.stderr.contains("goes to a temporary folder"), "\(demo.stderr)")
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout) == [id])

        // An unlisted folder is imported by moving it out first, as the refusal says.
        let refused = try CLI.run(["import", copied.path, "--replace"], environment: store)
        #expect(refused.status == 65 && refused.stderr.contains("move it out of the store, then 'somni import FOLDER --move'"),
                "\(refused.stderr)")
        // With the database gone, the folders are still named, not "no nights stored yet" alone.
        for file in try FileManager.default.contentsOfDirectory(atPath: storeDirectory.path) where file.hasPrefix("somni.sqlite") {
            try FileManager.default.removeItem(at: storeDirectory.appendingPathComponent(file))
        }
        let noDatabase = try CLI.run(["nights"], environment: store)
        #expect(noDatabase.status == 0 && noDatabase.stderr.contains("2 folders") && noDatabase.stderr.contains(copied.path),
                "\(noDatabase.stderr)")
        // An empty --store (an unset variable) is refused, not taken for the default store.
        let empty = try CLI.run(["delete", "--to", "2026-12-31", "--yes", "--store", ""], environment: store)
        #expect(empty.status == 64 && empty.stderr.contains("--store needs a folder"), "\(empty.stderr)")
    }

    /// `show` rounds as the report does, half away from zero: a 1.25 s event is "1.3 s" in
    /// both (printf's %.1f had made it "1.2 s" in one and "1.3 s" in the other).
    @Test func showRoundsAsTheReportDoes() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav"), folder = dir.appendingPathComponent("night")
        try CLI.synthesiseShortNight(at: audio)
        #expect(try CLI.run(["analyze", audio.path, "--out", folder.path, "--classifier", "heuristic", "--no-clips",
                             "--started", "2026-11-28 23:00"]).status == 0)
        let file = folder.appendingPathComponent(Session.fileName)
        var session = try Session.load(from: file)
        let first = try #require(session.events.indices.first)
        session.events[first].end = session.events[first].start + 1.25
        session.events[first].peakDBFS = -20.25
        session.events[first].severity = 45.5
        // A night made elsewhere whose recording's name holds a terminal's escape sequences:
        // written out, not run (it cleared the screen and retitled the window).
        session.source = "esc\u{1B}[2J\u{1B}]2;pwned\u{07}.wav"
        session.warnings.append("two\nlines")
        try session.jsonData().write(to: file)
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        #expect(try CLI.run(["import", folder.path], environment: store).status == 0)
        let shown = try CLI.run(["show", "2026-11-28"], environment: store)
        let row = try #require(shown.stdout.split(separator: "\n").first { $0.hasPrefix(session.events[first].id) })
        let cells = row.split(separator: " ", omittingEmptySubsequences: true)
        #expect(cells.contains("1.3") && cells.contains("-20.3") && cells.contains("46"), "\(row)")
        #expect(!shown.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" }, "\(shown.stdout)")
        #expect(shown.stdout.contains("source esc\\u{1B}[2J\\u{1B}]2;pwned\\u{7}.wav") && shown.stdout.contains("warning: two\\nlines"),
                "\(shown.stdout)")
    }

    @Test func nightsShowReportExportDeleteAndImportWorkTogether() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        var folders: [URL] = []
        for seed in [5, 8] {
            let audio = dir.appendingPathComponent("night-\(seed).wav")
            try CLI.synthesiseShortNight(at: audio, seed: seed)
            let r = try CLI.run(["analyze", audio.path, "--classifier", "heuristic"], environment: store)
            #expect(r.status == 0, "\(r.stderr)")
            let folder = try #require(r.stdout.components(separatedBy: "Night folder: ").dropFirst().first?
                .split(separator: "\n").first.map(String.init))
            folders.append(URL(fileURLWithPath: folder))
        }
        let sessions = try folders.map { try Session.load(from: $0.appendingPathComponent(Session.fileName)) }
        let listed = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout)
        #expect(listed == folders.map(\.lastPathComponent))

        // show: the night's figures and one line per event.
        let shown = try CLI.run(["show", listed[0]], environment: store)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Night \(listed[0])"))
        #expect(shown.stdout.split(separator: "\n").filter { $0.hasPrefix("evt-") }.count == sessions[0].events.count)
        #expect(sessions[0].events.count > 5)
        // Its snoring episodes, one row each with their snores counted; --class narrows the events.
        let episodeRows = shown.stdout.components(separatedBy: "\n\nEpisode ").dropFirst().first?
            .components(separatedBy: "\n").dropFirst().prefix { !$0.isEmpty } ?? []
        #expect(episodeRows.count == sessions[0].episodes.count && !episodeRows.isEmpty, "\(shown.stdout)")
        #expect(episodeRows.map { Int($0.split(separator: " ")[4]) } == sessions[0].episodes.map(\.eventCount), "\(shown.stdout)")
        let coughs = try CLI.run(["show", listed[0], "--class", "cough", "--class", "sleep-talk"], environment: store)
        let coughRows = coughs.stdout.split(separator: "\n").filter { $0.hasPrefix("evt-") }
        #expect(coughRows.count == sessions[0].events.filter { $0.eventClass != .snoring }.count)
        #expect(!coughs.stdout.contains("Snoring ") && !coughs.stdout.contains("Episode"), "\(coughs.stdout)")
        let wrongClass = try CLI.run(["show", listed[0], "--class", "snore"], environment: store)
        #expect(wrongClass.status == 64 && wrongClass.errorLines.count == 1, "\(wrongClass.stderr)")
        // JSON is the whole session.json: a --class it would not apply is refused, not ignored.
        let classJSON = try CLI.run(["show", listed[0], "--class", "cough", "--json"], environment: store)
        #expect(classJSON.status == 64 && classJSON.stderr.contains("--json gives the whole session.json"), "\(classJSON.stderr)")

        // report: a page whose every clip link resolves beside it, one per event with a clip.
        let page = dir.appendingPathComponent("out/report.html")
        try FileManager.default.createDirectory(at: page.deletingLastPathComponent(), withIntermediateDirectories: true)
        let report = try CLI.run(["report", "--all", "-o", page.path], environment: store)
        #expect(report.status == 0, "\(report.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        let links = html.components(separatedBy: "src=\"").dropFirst().compactMap { $0.split(separator: "\"").first }
            .filter { $0.hasSuffix(".mp3") }
        #expect(links.count == sessions.reduce(0) { $0 + $1.events.filter { $0.clip != nil }.count })
        for link in links {
            #expect(FileManager.default.fileExists(atPath: page.deletingLastPathComponent().appendingPathComponent(String(link)).path),
                    "\(link)")
        }

        // export: one CSV row per event of every night.
        let csv = dir.appendingPathComponent("out/nights.csv")
        #expect(try CLI.run(["export", "--all", "-o", csv.path], environment: store).status == 0)
        let rows = try String(contentsOf: csv, encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(rows.count == sessions.reduce(0) { $0 + $1.events.count })
        // ... or one per night, with its counts and rates as the nights' sessions have them.
        let perNight = try CLI.run(["export", "--all", "--rows", "night"], environment: store)
        #expect(perNight.status == 0, "\(perNight.stderr)")
        let table = perNight.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let header = try #require(table.first)
        #expect(table.count == 1 + sessions.count)
        for (row, session) in zip(table.dropFirst(), sessions) {
            func field(_ name: String) -> String { header.firstIndex(of: Substring(name)).map { String(row[$0]) } ?? "?" }
            #expect(field("night") == listed[sessions.firstIndex(of: session)!])
            #expect(Int(field("cough_events")) == session.events.filter { $0.eventClass == .cough }.count)
            #expect(Int(field("snoring_episodes")) == session.episodes.count)
            let rate = try #require(Double(field("snoring_per_h")))
            #expect(abs(rate - (session.summary.eventsPerHour["snoring"] ?? -1)) < 0.01, "\(rate) \(session.summary.eventsPerHour)")
        }
        for bad in [["--rows", "nights"], ["--rows", "night", "--format", "json"]] {
            #expect(try CLI.run(["export", "--all"] + bad, environment: store).status == 64, "\(bad)")
        }
        // --details chooses among --all's nights: with one night it was taken and did nothing.
        let oneWithDetails = try CLI.run(["report", listed[0], "--details", "2", "-o", "-"], environment: store)
        #expect(oneWithDetails.status == 64 && oneWithDetails.stderr.contains("--details goes with --all"), "\(oneWithDetails.stderr)")

        // delete: the night and its folder go; the other stays.
        #expect(try CLI.run(["delete", listed[0]], environment: store).status == 0)
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout) == [listed[1]])
        #expect(!FileManager.default.fileExists(atPath: folders[0].path))

        // Asking for what is not there, or importing what is not a night: one error line each,
        // a non-zero exit, and the store as it was.
        let empty = dir.appendingPathComponent("not-a-night")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        for arguments in [["show", listed[0]], ["delete", listed[0]], ["import", empty.path]] {
            let r = try CLI.run(arguments, environment: store)
            #expect(r.status == 65, "\(arguments): \(r.stderr)")
            #expect(r.errorLines.count == 1, "\(arguments): \(r.stderr)")
        }
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout) == [listed[1]])

        // import: a bare night folder joins the store.
        let bare = dir.appendingPathComponent("bare")
        #expect(try CLI.run(["analyze", dir.appendingPathComponent("night-5.wav").path, "--out", bare.path,
                             "--classifier", "heuristic", "--started", "2026-11-20 23:00"]).status == 0)
        let imported = try CLI.run(["import", bare.path], environment: store)
        #expect(imported.status == 0, "\(imported.stderr)")
        let twoNights = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout)
        #expect(twoNights.count == 2)
        // The same night again is refused; --replace puts it in the stored one's place.
        let again = try CLI.run(["import", bare.path], environment: store)
        #expect(again.status == 65 && again.errorLines.count == 1, "\(again.stderr)")
        #expect(again.stderr.contains("already in the store as 20261120-2300"), "\(again.stderr)")
        let replaced = try CLI.run(["import", bare.path, "--replace"], environment: store)
        #expect(replaced.status == 0 && replaced.stdout.contains("Imported night 20261120-2300")
                && replaced.stdout.contains("it replaces the night stored before under that id"), "\(replaced.stdout)")
        let after = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout)
        #expect(after.count == 2 && after.contains(listed[1]) && after.contains("20261120-2300"), "\(after)")
        // An undated folder of that recording keeps the stored night's start and id, as
        // analyze --replace does; before, it was stored undated under a new id.
        let undated = dir.appendingPathComponent("undated")
        #expect(try CLI.run(["analyze", dir.appendingPathComponent("night-5.wav").path, "--out", undated.path,
                             "--classifier", "heuristic", "--sensitivity", "7"]).status == 0)
        let dated = try CLI.run(["import", undated.path, "--replace"], environment: store)
        #expect(dated.status == 0 && dated.stdout.contains("Imported night 20261120-2300")
                && dated.stdout.contains("it keeps the start stored before"), "\(dated.stdout) \(dated.stderr)")
        let replacedShown = try CLI.run(["show", "20261120-2300", "--json"], environment: store)
        #expect(replacedShown.status == 0 && replacedShown.stdout.contains("\"sensitivity\" : 7"), "\(replacedShown.stdout.prefix(600))")
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout).sorted() == after.sorted())
        #expect(try Session.load(from: undated.appendingPathComponent("session.json")).startedAt == nil, "the folder is not changed")
    }

    /// --from and --to pick nights by the evening each began, for nights, export and report --all.
    /// `report --all --details N` shows in full the nights a report of no NIGHT calls the
    /// latest: an undated night, listed last as its time is unknown, is not one of them.
    @Test func theLatestNightsInFullAreTheLatestDatedOnes() throws {
        let (dir, store) = try storeOfTwoEvenings()
        defer { try? FileManager.default.removeItem(at: dir) }
        let undated = dir.appendingPathComponent("undated.wav")
        try CLI.synthesiseShortNight(at: undated, seed: 9)
        #expect(try CLI.run(["analyze", undated.path, "--classifier", "heuristic", "--no-clips"], environment: store).status == 0)
        let ids = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout)
        let undatedID = try #require(ids.first { $0.hasSuffix("undated") }, "\(ids)")
        func inFull(_ arguments: [String]) throws -> [String] {
            let page = try CLI.run(["report"] + arguments + ["-o", "-"], environment: store)
            #expect(page.status == 0, "\(page.stderr)")
            return (ids).filter { page.stdout.contains("· id \($0)</small>") }
        }
        #expect(try inFull([]) == ["20261102-2300"])
        #expect(try inFull(["--all", "--details", "1"]) == ["20261102-2300"])
        #expect(try inFull(["--all", "--details", "2"]) == ["20261101-2300", "20261102-2300"])
        #expect(try inFull(["--all", "--details", "3"]).count == 3)
        #expect(try !inFull(["--all", "--details", "2"]).contains(undatedID))
        // In full, the nights come in the order the store lists them, as in the trends and the
        // nights table: the undated one last (it came first).
        let page = try CLI.run(["report", "--all", "--details", "3", "-o", "-"], environment: store).stdout
        let order = ids.sorted { a, b in
            (page.range(of: "· id \(a)</small>")?.lowerBound ?? page.endIndex) < (page.range(of: "· id \(b)</small>")?.lowerBound ?? page.endIndex)
        }
        #expect(order == ids && ids.last == undatedID, "\(order)")
    }

    /// A page written again no longer keeps the clips of a night deleted since: the copies the
    /// report made go with it. What the report did not make stays: the user's files, a folder
    /// that was there before, and clips another page of the same clips folder still plays.
    @Test func aReportWrittenAgainDropsTheClipsOfADeletedNight() throws {
        let (dir, store) = try storeOfTwoEvenings()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let page = dir.appendingPathComponent("r.html"), clips = dir.appendingPathComponent("r_clips")
        func report(_ arguments: [String]) throws {
            let r = try CLI.run(["report"] + arguments, environment: store)
            #expect(r.status == 0, "\(arguments): \(r.stderr)")
        }
        try report(["--all", "-o", page.path])
        #expect(try fm.contentsOfDirectory(atPath: clips.path).sorted() == ["20261101-2300", "20261102-2300"])
        func clipFiles(_ id: String) throws -> [String] {
            try fm.contentsOfDirectory(atPath: clips.appendingPathComponent("\(id)/clips").path).filter { $0.hasPrefix("evt-") }
        }
        #expect(try !clipFiles("20261101-2300").isEmpty)
        // The user's own things in the clips folder and in a night's, and a clip the night no longer has.
        let mine = clips.appendingPathComponent("mine")
        try fm.createDirectory(at: mine, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: mine.appendingPathComponent("notes.txt"))
        let note = clips.appendingPathComponent("20261102-2300/clips/my-note.txt")
        try Data("the loud one".utf8).write(to: note)
        let stale = clips.appendingPathComponent("20261102-2300/clips/evt-9999.mp3")
        try Data("old".utf8).write(to: stale)
        // Another page of the same base name plays the first night from the same clips folder.
        let other = dir.appendingPathComponent("r.htm")
        try report(["20261101-2300", "-o", other.path])
        // A folder the user made before a report copied into it is never the report's.
        let premade = dir.appendingPathComponent("s_clips/20261102-2300")
        try fm.createDirectory(at: premade, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: premade.appendingPathComponent("precious.txt"))
        try report(["20261102-2300", "-o", dir.appendingPathComponent("s.html").path])
        try report(["20261101-2300", "-o", dir.appendingPathComponent("s.html").path])
        #expect(fm.fileExists(atPath: premade.appendingPathComponent("precious.txt").path))

        #expect(try CLI.run(["delete", "20261101-2300"], environment: store).status == 0)
        try report(["--all", "-o", page.path])
        // r.htm still plays the deleted night's copies; the stale clip goes, the user's files stay.
        #expect(try !clipFiles("20261101-2300").isEmpty)
        #expect(!fm.fileExists(atPath: stale.path))
        #expect(fm.fileExists(atPath: note.path) && fm.fileExists(atPath: mine.appendingPathComponent("notes.txt").path))
        let kept = try clipFiles("20261102-2300")
        #expect(!kept.isEmpty && kept.allSatisfy { (try? String(contentsOf: page, encoding: .utf8).contains("clips/\($0)")) == true }, "\(kept)")
        // Once no page plays it, its copies go; the folder only if nothing else is in it.
        try report(["20261102-2300", "-o", other.path])
        #expect(!fm.fileExists(atPath: clips.appendingPathComponent("20261101-2300").path))
        #expect(try fm.contentsOfDirectory(atPath: clips.path).sorted() == ["20261102-2300", "mine"])
    }

    /// Links inside a clips folder lead to what is not the report's: another folder's page of
    /// the same name, or the user's own music. Nothing is removed through them.
    @Test func aReportRemovesNothingThroughALink() throws {
        let (dir, store) = try storeOfTwoEvenings()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        func report(_ arguments: [String]) throws {
            let r = try CLI.run(["report"] + arguments, environment: store)
            #expect(r.status == 0, "\(arguments): \(r.stderr)")
        }
        for name in ["r1", "r2", "r3", "u"] { try fm.createDirectory(at: dir.appendingPathComponent(name), withIntermediateDirectories: true) }
        try report(["--all", "-o", dir.appendingPathComponent("r1/x.html").path])
        let first = dir.appendingPathComponent("r1/x_clips/20261101-2300/clips")
        let copied = try fm.contentsOfDirectory(atPath: first.path).sorted()
        #expect(!copied.isEmpty)
        // A night folder linked into another folder's clips, and a whole clips folder linked.
        try fm.createDirectory(at: dir.appendingPathComponent("r2/x_clips"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("r2/x_clips/20261101-2300").path,
                                  withDestinationPath: dir.appendingPathComponent("r1/x_clips/20261101-2300").path)
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("r3/x_clips").path,
                                  withDestinationPath: dir.appendingPathComponent("r1/x_clips").path)
        try report(["20261102-2300", "-o", dir.appendingPathComponent("r2/x.html").path])
        try report(["20261102-2300", "-o", dir.appendingPathComponent("r3/x.html").path])
        #expect(try fm.contentsOfDirectory(atPath: first.path).sorted() == copied)
        // A night's clips/ that is a link to the user's own folder.
        let music = dir.appendingPathComponent("u/music")
        try fm.copyItem(at: dir.appendingPathComponent("r1/x_clips/20261102-2300/clips"), to: music)
        let theirs = try fm.contentsOfDirectory(atPath: music.path).sorted()
        try fm.removeItem(at: dir.appendingPathComponent("r1/x_clips/20261102-2300/clips"))
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("r1/x_clips/20261102-2300/clips").path, withDestinationPath: music.path)
        try report(["20261101-2300", "-o", dir.appendingPathComponent("r1/x.html").path])
        #expect(try fm.contentsOfDirectory(atPath: music.path).sorted() == theirs)
    }

    @Test func aDateRangeNarrowsTheListingTheExportAndTheReport() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        let audio = dir.appendingPathComponent("night.wav"), other = dir.appendingPathComponent("other.wav")
        try CLI.synthesiseShortNight(at: audio)
        try CLI.synthesiseShortNight(at: other, seed: 6)
        // The third began after midnight: it is the night of the 8th. The last, another
        // recording (the same one undated would be found dated), is undated.
        for started in ["2026-11-01 23:00", "2026-11-05 23:00", "2026-11-09 01:30", nil] {
            let r = try CLI.run(["analyze", (started == nil ? other : audio).path, "--classifier", "heuristic", "--no-clips"]
                                + (started.map { ["--started", $0] } ?? []), environment: store)
            try #require(r.status == 0, "\(r.stderr)")
        }
        func dates(_ arguments: [String]) throws -> [String] {
            let r = try CLI.run(["nights", "--json"] + arguments, environment: store)
            #expect(r.status == 0, "\(r.stderr)")
            let rows = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
            return rows.map { $0["date"] as? String ?? "undated" }
        }
        #expect(try dates([]) == ["2026-11-01", "2026-11-05", "2026-11-08", "undated"])
        #expect(try dates(["--from", "2026-11-05"]) == ["2026-11-05", "2026-11-08"])
        #expect(try dates(["--to", "2026-11-05"]) == ["2026-11-01", "2026-11-05"])
        #expect(try dates(["--from", "2026-11-02", "--to", "2026-11-08"]) == ["2026-11-05", "2026-11-08"])
        let emptySpan = try CLI.run(["nights", "--from", "2026-12-01"], environment: store)
        #expect(emptySpan.stdout == "No dated night from 2026-12-01 to the last.\n", "\(emptySpan.stdout)")

        let export = try CLI.run(["export", "--all", "--rows", "night", "--from", "2026-11-06"], environment: store)
        let exported = export.stdout.split(separator: "\n").dropFirst()
        #expect(exported.count == 1 && exported.first?.contains(",2026-11-08,") == true, "\(export.stdout)")

        let page = dir.appendingPathComponent("report.html")
        let report = try CLI.run(["report", "--all", "--from", "2026-11-05", "-o", page.path], environment: store)
        #expect(report.status == 0, "\(report.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("20261105-2300") && html.contains("20261109-0130") && !html.contains("20261101-2300"))
        let none = try CLI.run(["report", "--all", "--from", "2026-12-01", "-o", page.path], environment: store)
        #expect(none.status == 65 && none.stderr.contains("no dated night from 2026-12-01"), "\(none.stderr)")

        // delete: the nights the dates pick are listed, and deleted only with --yes.
        let listing = try CLI.run(["delete", "--to", "2026-11-05"], environment: store)
        #expect(listing.status == 0 && listing.stdout.contains("2 nights from the first to 2026-11-05"), "\(listing.stdout)")
        // Each night's row gives the bytes its folder takes, and the last line their sum.
        func bytes(_ id: String) throws -> Int {
            let folder = dir.appendingPathComponent("store/nights/\(id)")
            return try FileManager.default.subpathsOfDirectory(atPath: folder.path).reduce(0) { total, name in
                let item = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
                return total + (item[.type] as? FileAttributeType == .typeRegular ? item[.size] as? Int ?? 0 : 0)
            }
        }
        func spoken(_ bytes: Int) -> String { ByteCountFormatter.string(fromByteCount: Int64(bytes), countStyle: .file) }
        let rows = listing.stdout.split(separator: "\n").map(String.init)
        for id in ["20261101-2300", "20261105-2300"] {
            let size = try bytes(id)
            #expect(size > 0 && rows.contains { $0.hasPrefix(id) && $0.hasSuffix(spoken(size)) }, "\(id): \(listing.stdout)")
        }
        let total = try bytes("20261101-2300") + bytes("20261105-2300")
        #expect(rows.last?.contains(", \(spoken(total)): run again with --yes") == true, "\(listing.stdout)")
        #expect(try dates([]).count == 4)
        let deleted = try CLI.run(["delete", "--to", "2026-11-05", "--yes"], environment: store)
        #expect(deleted.status == 0 && deleted.stdout.hasPrefix("Deleted 2 nights"), "\(deleted.stdout)")
        #expect(try dates([]) == ["2026-11-08", "undated"])
        let folders = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("store/nights").path)
        #expect(folders.count == 2 && !folders.contains("20261101-2300"), "\(folders)")

        for bad in [["nights", "--from", "2026-02-30"], ["nights", "--from", "2026-11-09", "--to", "2026-11-01"],
                    ["nights", "--to", "5.11.2026"], ["export", "20261101-2300", "--from", "2026-11-01"],
                    ["delete"], ["delete", "20261109-0130", "--yes"], ["delete", "20261109-0130", "--to", "2026-11-09"]] {
            let r = try CLI.run(bad, environment: store)
            #expect(r.status == 64 && r.errorLines.count == 1, "\(bad): \(r.stderr)")
        }
        // delete reads a date as the evening, as the listing does: the night begun at 01:30 on
        // the 9th is the 8th's, and is not deleted by the 9th (show still finds it so).
        let byDay = try CLI.run(["delete", "2026-11-09"], environment: store)
        #expect(byDay.status == 65 && byDay.stderr.contains("20261109-0130 began after midnight"), "\(byDay.stderr)")
        #expect(try CLI.run(["show", "2026-11-09"], environment: store).status == 0)
        #expect(try dates([]) == ["2026-11-08", "undated"])
    }

    /// A power cut can leave a renamed folder's new files empty: the kernel keeps their data for
    /// up to half a minute, while the rename already stands. So every file of a night, and the
    /// folders naming them, are written through to the disk before the night is moved into
    /// `nights/` and its row committed; `nights/` itself right after the move, and the commit
    /// (SQLite's write-ahead log) before the save returns. A bare night
    /// folder (`--out`) likewise before its rename. Seen in the system calls (strace -y names
    /// each descriptor's file).
    @Test(.enabled(if: SystemCallTrace.available, Comment(rawValue: SystemCallTrace.missingMessage)))
    func everyFileOfANightReachesTheDiskBeforeTheStoreCountsItSaved() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav"), store = dir.appendingPathComponent("store")
        try CLI.synthesiseShortNight(at: audio)
        let trace = try SystemCallTrace.run(["analyze", audio.path, "--classifier", "heuristic", "--store", store.path],
                                            calls: "fsync,fdatasync,rename,renameat,renameat2", in: dir)
        try #require(trace.result.status == 0, "\(trace.result.stderr)")
        let id = try #require(try FileManager.default.contentsOfDirectory(atPath: store.appendingPathComponent("nights").path).first)
        let night = store.appendingPathComponent("nights/\(id)")
        let stored = try #require(FileManager.default.enumerator(atPath: night.path)?.allObjects as? [String])
        #expect(stored.contains("session.json") && stored.contains("envelope.bin") && stored.contains { $0.hasPrefix("clips/evt-") })

        let moved = try #require(trace.lines.firstIndex { $0.hasPrefix("rename") && $0.contains("\"\(night.path)\"") }, "\(trace.lines)")
        let staged = try #require(trace.lines[moved].split(separator: "\"").dropFirst().first.map(String.init))
        let flushed = trace.lines[..<moved].filter { $0.hasPrefix("fsync(") || $0.hasPrefix("fdatasync(") }
        for path in stored + [""] {
            let file = path.isEmpty ? staged : "\(staged)/\(path)"
            #expect(flushed.contains { $0.contains("<\(file)>)") }, "\(file) was not written through before the move")
        }
        #expect(trace.lines[moved...].contains { $0.hasPrefix("fsync(") && $0.contains("<\(store.path)/nights>)") },
                "the move into nights/ was not written through")

        // A bare night folder (--out) the same way, before it is renamed from its temporary name.
        let bare = dir.appendingPathComponent("bare")
        let out = try SystemCallTrace.run(["analyze", audio.path, "--classifier", "heuristic", "--out", bare.path],
                                          calls: "fsync,fdatasync,rename,renameat,renameat2", in: dir)
        try #require(out.result.status == 0, "\(out.result.stderr)")
        let named = try #require(out.lines.firstIndex { $0.hasPrefix("rename") && $0.hasSuffix("\"\(bare.path)\") = 0") }, "\(out.lines)")
        let partial = try #require(out.lines[named].split(separator: "\"").dropFirst().first.map(String.init))
        let files = try #require(FileManager.default.enumerator(atPath: bare.path)?.allObjects as? [String])
        #expect(files.contains("session.json") && files.contains { $0.hasPrefix("clips/evt-") })
        for path in files + [""] {
            let file = path.isEmpty ? partial : "\(partial)/\(path)"
            #expect(out.lines[..<named].contains { $0.hasPrefix("fsync(") && $0.contains("<\(file)>)") },
                    "\(file) was not written through before the rename")
        }
        #expect(out.lines[named...].contains { $0.hasPrefix("fsync(") && $0.contains("<\(dir.path)>)") })

        // The commit itself, before the save returns: SQLite forces its write-ahead log. Otherwise
        // a power cut later in a batch could undo the first night's row, and the next save would
        // sweep its folder as an orphan. (Closing the store forces the log too, so two nights in
        // one run tell a forced commit from a forced close.)
        let second = dir.appendingPathComponent("second.wav")
        try CLI.synthesiseShortNight(at: second, seed: 6)
        let batch = try SystemCallTrace.run(["analyze", audio.path, second.path, "--classifier", "heuristic", "--no-clips",
                                             "--store", dir.appendingPathComponent("store2").path],
                                            calls: "fsync,fdatasync,rename,renameat,renameat2", in: dir)
        try #require(batch.result.status == 0, "\(batch.result.stderr)")
        let saves = batch.lines.indices.filter { batch.lines[$0].hasPrefix("rename") && batch.lines[$0].contains("/store2/nights/") }
        try #require(saves.count == 2, "\(batch.lines)")
        #expect(batch.lines[saves[0]..<saves[1]].contains { ($0.hasPrefix("fdatasync(") || $0.hasPrefix("fsync(")) && $0.contains("/somni.sqlite-wal>)") },
                "the first night's commit was not forced before the second night")
    }

    /// A night whose folder was removed by hand: asked for by name, one error that says how to
    /// mend the store; in `--all`, left out with that word, the other nights exported and
    /// reported (before, one lost folder stopped every export and report of the whole store).
    @Test func aNightWhoseFolderWasRemovedByHandSaysHowToMendTheStore() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        for seed in [5, 6] {
            let audio = dir.appendingPathComponent("night-\(seed).wav")
            try CLI.synthesiseShortNight(at: audio, seed: seed)
            let analysed = try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--no-clips"], environment: store)
            try #require(analysed.status == 0, "\(analysed.stderr)")
        }
        let ids = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout)
        try #require(ids.count == 2)
        let (id, kept) = (ids[0], ids[1])
        try FileManager.default.removeItem(at: dir.appendingPathComponent("store/nights/\(id)"))

        for arguments in [["show", id], ["report", id, "-o", dir.appendingPathComponent("r.html").path], ["export", id]] {
            let r = try CLI.run(arguments, environment: store)
            #expect(r.status == 74, "\(arguments): \(r.stderr)")
            #expect(r.errorLines.count == 1 && r.stderr.contains("night \(id) has lost its folder")
                    && r.stderr.contains("'somni delete \(id)'"), "\(arguments): \(r.stderr)")
        }
        // The rest is written, and the status says it is not every night (before, 0).
        let all = dir.appendingPathComponent("all.html")
        let exported = try CLI.run(["export", "--all"], environment: store)
        let reported = try CLI.run(["report", "--all", "-o", all.path], environment: store)
        for r in [exported, reported] {
            #expect(r.status == 65 && r.stderr.contains("left out of the") && r.stderr.contains("the rest is written"), "\(r.stderr)")
            let warnings = r.stderr.split(separator: "\n").filter { $0.contains("warning: night \(id) is left out: night \(id) has lost its folder") }
            #expect(warnings.count == 1 && r.stderr.contains("'somni delete \(id)'"), "\(r.stderr)")
        }
        #expect(exported.stdout.contains(kept) && !exported.stdout.contains("\(id),"), "\(exported.stdout)")
        #expect(try String(contentsOf: all, encoding: .utf8).contains(kept))
        // To a file, it counts the nights it wrote (before, "Exported 2 nights" of a file with one).
        let csv = dir.appendingPathComponent("all.csv")
        let toFile = try CLI.run(["export", "--all", "-o", csv.path], environment: store)
        #expect(toFile.status == 65 && toFile.stderr.contains("Exported 1 night to \(csv.path)")
                && toFile.stderr.contains("1 of 2 nights left out of the export"), "\(toFile.stderr)")
        #expect(try String(contentsOf: csv, encoding: .utf8).contains(kept))
        // A row per night needs no folder, and keeps the night, but says its folder is lost.
        let rows = try CLI.run(["export", "--all", "--rows", "night"], environment: store)
        #expect(rows.status == 0 && rows.stdout.contains(id) && rows.errorLines.count == 1
                && rows.stderr.contains("night \(id) has lost its folder"), "\(rows.stderr)")
        // The way out it names works.
        let deleted = try CLI.run(["delete", id], environment: store)
        #expect(deleted.status == 0 && deleted.stdout.contains("its folder was already gone"), "\(deleted.stdout)")
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout) == [kept])
    }

    /// A night whose session.json was damaged is left out of `report --all` as a lost one is
    /// (before, the whole page failed, while `export --all` left it out), and both say by their
    /// status that a night is missing. A folder given to `report` that is not a night folder is
    /// named as such, not looked for as a night's id.
    @Test func aDamagedNightIsLeftOutOfEveryNightsPageAndExportWithAFailingStatus() throws {
        let (dir, store) = try storeOfTwoEvenings()
        defer { try? FileManager.default.removeItem(at: dir) }
        let damaged = dir.appendingPathComponent("store/nights/20261102-2300/session.json")
        try Data(try Data(contentsOf: damaged).prefix(50)).write(to: damaged)

        let page = dir.appendingPathComponent("all.html"), csv = dir.appendingPathComponent("all.csv")
        let reported = try CLI.run(["report", "--all", "-o", page.path], environment: store)
        let exported = try CLI.run(["export", "--all", "-o", csv.path], environment: store)
        for (r, file) in [(reported, page), (exported, csv)] {
            #expect(r.status == 65 && r.stderr.contains("warning: night 20261102-2300 is left out")
                    && r.stderr.contains("left out of the"), "\(r.stderr)")
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text.contains("20261101-2300"), "the other night is written")
        }
        #expect(try CLI.run(["export", "--all", "--to", "2026-11-01", "-o", csv.path], environment: store).status == 0)
        // Nothing written at all is that error alone: not also "the rest is written".
        let full = try CLI.run(executable: URL(fileURLWithPath: "/bin/bash"),
                               ["-c", "exec \"$0\" export --all > /dev/full", CLI.executable.path], environment: store)
        #expect(full.status == 74 && full.errorLines.filter { $0.contains("error:") }.count == 1
                && full.stderr.contains("could not write to standard output"), "\(full.stderr)")

        let notANight = dir.appendingPathComponent("not-a-night")
        try FileManager.default.createDirectory(at: notANight, withIntermediateDirectories: true)
        let folder = try CLI.run(["report", notANight.path, "-o", page.path], environment: store)
        #expect(folder.status == 65 && folder.errorLines.count == 1
                && folder.stderr.contains("\(notANight.path) is not a night folder: it has no session.json"), "\(folder.stderr)")
    }

    /// A file name ending in '/' means a folder: refused before any work, where the export, the
    /// report, the test night and the model were written as a file named like the folder.
    @Test func anOutputNameEndingInASlashIsRefused() throws {
        let (dir, store) = try storeOfTwoEvenings()
        defer { try? FileManager.default.removeItem(at: dir) }
        let folder = dir.appendingPathComponent("new").path + "/"
        for arguments in [["export", "--all", "-o", folder], ["report", "--all", "-o", folder], ["synth", "--out", folder],
                          ["train", dir.path, "--out", folder], ["train", dir.path, "--out", ""],
                          ["synth", "--out", dir.appendingPathComponent("s.wav").path, "--reference", folder]] {
            let r = try CLI.run(arguments, environment: store)
            #expect(r.status == 64 && r.errorLines.count == 1 && r.stderr.contains("needs a file name"), "\(arguments): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["night.csv", "night.wav", "store"])
        // A page into a folder that is not there, or onto a folder, is refused whatever --clips
        // says (copying the clips made the folder for a night with clips, and for one only).
        for clips in ["copy", "embed"] {
            let missing = try CLI.run(["report", "--all", "-o", dir.appendingPathComponent("new/r.html").path, "--clips", clips],
                                      environment: store)
            #expect(missing.status == 74 && missing.stderr.contains("there is no folder \(dir.path)/new"), "\(missing.stderr)")
            let onto = try CLI.run(["report", "--all", "-o", dir.path, "--clips", clips], environment: store)
            #expect(onto.status == 74 && onto.stderr.contains("it is a folder"), "\(onto.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["night.csv", "night.wav", "store"])
    }

    /// `-o /dev/stdout` is written through the stream the shell set up: appended to, where the
    /// shell appends (the log was replaced, the export renamed over it).
    @Test func anOutputToTheStandardStreamsByNameAppendsWhereTheShellDoes() throws {
        let (dir, store) = try storeOfTwoEvenings()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("log.csv")
        try "earlier line\n".write(to: log, atomically: true, encoding: .utf8)
        let r = try CLI.run(executable: URL(fileURLWithPath: "/bin/sh"),
                            ["-c", "exec \"$0\" export --all -o /dev/stdout >> \"$1\"", CLI.executable.path, log.path], environment: store)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "earlier line" && lines.count > 2 && lines[1].hasPrefix("night,"), "\(lines.prefix(3))")
        // The report too (it followed /dev/stdout to the file and replaced it).
        let page = dir.appendingPathComponent("pages.html")
        try "earlier page\n".write(to: page, atomically: true, encoding: .utf8)
        let report = try CLI.run(executable: URL(fileURLWithPath: "/bin/sh"),
                                 ["-c", "exec \"$0\" report --all --clips embed -o /dev/stdout >> \"$1\"", CLI.executable.path, page.path],
                                 environment: store)
        #expect(report.status == 0, "\(report.stderr)")
        let text = try String(contentsOf: page, encoding: .utf8)
        #expect(text.hasPrefix("earlier page\n<!doctype html>"), "\(text.prefix(40))")
    }

    /// The report's clips go in a folder beside it; a file in that folder's place is named, where
    /// the error named the store's own clip, as if it were the trouble.
    @Test func aFileWhereTheReportsClipsGoIsNamed() throws {
        let (dir, store) = try storeOfTwoEvenings()
        defer { try? FileManager.default.removeItem(at: dir) }
        let blocking = dir.appendingPathComponent("r_clips")
        try Data("x".utf8).write(to: blocking)
        let r = try CLI.run(["report", "2026-11-01", "-o", dir.appendingPathComponent("r.html").path], environment: store)
        #expect(r.status == 74 && r.errorLines.count == 1 && r.stderr.contains("\(blocking.path) is in the way"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("r.html").path))
        // A link that leads nowhere is in the way too, and is the user's: it stays (it was removed).
        let dangling = dir.appendingPathComponent("q_clips")
        try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: "nowhere")
        let q = try CLI.run(["report", "2026-11-01", "-o", dir.appendingPathComponent("q.html").path], environment: store)
        #expect(q.status == 74 && q.stderr.contains("\(dangling.path) is in the way"), "\(q.stderr)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: dangling.path)) == "nowhere")

        // Through a link (to a page not made yet), the page and its clips land together at the
        // link's target: the clips went beside the link, and every player found nothing.
        let real = dir.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = dir.appendingPathComponent("linked.html")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "real/page.html")
        let linked = try CLI.run(["report", "2026-11-01", "-o", link.path], environment: store)
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: real.path).sorted() == ["page.html", "page_clips"])
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("linked_clips").path))
        // A device has no folder beside it for clips: only --clips embed is taken.
        let device = try CLI.run(["report", "2026-11-01", "-o", "/dev/null"], environment: store)
        #expect(device.status == 64 && device.stderr.contains("-o /dev/null is not a plain file"), "\(device.stderr)")
    }

    @Test func aReportThatCannotBeWrittenLeavesNothingBehind() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        #expect(try CLI.run(["analyze", audio.path, "--classifier", "heuristic"], environment: store).status == 0)
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        // 34 KiB: the store opens and the clips (a few KB each) are copied, but the page is larger.
        let r = try CLI.run(["report", "--all", "-o", out.appendingPathComponent("r.html").path], environment: store,
                            fileSizeLimitKiB: 34)
        #expect(r.status == 74)
        #expect(r.errorLines.count == 1, "\(r.stderr)")
        #expect(r.stderr.contains("r.html: file too large"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
        // With room, the same command writes the page and its clips.
        #expect(try CLI.run(["report", "--all", "-o", out.appendingPathComponent("r.html").path], environment: store).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["r.html", "r_clips"])
    }
    /// A new folder with a 3-minute recording (night.wav, night.csv) stored in its store/ as the
    /// nights of 1 and 2 November 2026; the folder and the environment that names the store.
    private func storeOfTwoEvenings() throws -> (dir: URL, store: [String: String]) {
        let dir = try CLI.temporaryDirectory()
        let store = ["SOMNI_STORE": dir.appendingPathComponent("store").path]
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        try storeTwoEvenings(of: audio, in: store)
        return (dir, store)
    }

    /// The recording stored as the nights of 1 and 2 November 2026 (ids 20261101-2300, 20261102-2300).
    private func storeTwoEvenings(of audio: URL, in store: [String: String]) throws {
        for day in ["01", "02"] {
            let r = try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--started", "2026-11-\(day) 23:00"],
                                environment: store)
            try #require(r.status == 0, "\(r.stderr)")
        }
    }

    /// A store that cannot grow (here `ulimit -f`, as a full disk) is still read, a command that
    /// would add a night says so and changes nothing, and `delete` removes the night's folder
    /// first: when even the row cannot go, it says so, and the same command finishes it later.
    @Test func aStoreThatCannotGrowIsStillReadAndDeleteFreesItsFoldersFirst() throws {
        let (dir, store) = try storeOfTwoEvenings()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        let ids = try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout)
        try #require(ids == ["20261101-2300", "20261102-2300"])

        // 8 KiB: the database's 32 KiB shared-memory file cannot be made.
        let listed = try CLI.run(["nights", "--json"], environment: store, fileSizeLimitKiB: 8)
        let listedIDs = try CLI.nightIDs(listed.stdout)
        #expect(listed.status == 0 && listedIDs == ids, "\(listed.stderr)")
        #expect(listed.errorLines.count == 1 && listed.stderr.contains("somni nights: warning: the disk holding the night store")
                && listed.stderr.contains("'somni delete NIGHT'"), "\(listed.stderr)")
        let shown = try CLI.run(["show", ids[0]], environment: store, fileSizeLimitKiB: 8)
        #expect(shown.status == 0 && shown.stdout.contains("Night \(ids[0])"), "\(shown.stderr)")
        let added = try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--started", "2026-11-03 23:00"],
                                environment: store, fileSizeLimitKiB: 8)
        #expect(added.status == 74 && added.errorLines.count == 1, "\(added.stderr)")
        #expect(added.stderr.contains("no room to write to the night store") && added.stderr.contains("'somni delete NIGHT'"),
                "\(added.stderr)")

        let folder = dir.appendingPathComponent("store/nights/\(ids[0])")
        let stuck = try CLI.run(["delete", ids[0]], environment: store, fileSizeLimitKiB: 8)
        #expect(stuck.status == 74 && stuck.errorLines.count == 1, "\(stuck.stderr)")
        #expect(stuck.stderr.contains("folder was removed") && stuck.stderr.contains("'somni delete \(ids[0])' again"),
                "\(stuck.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path))
        let finished = try CLI.run(["delete", ids[0]], environment: store)
        #expect(finished.status == 0 && finished.stdout.contains("its folder was already gone"), "\(finished.stdout)")
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json"], environment: store).stdout) == [ids[1]])
    }

    /// A night recorded when the store cannot open for writing is kept, and the error says where.
    @Test func aRecordedNightTheStoreCannotTakeIsKeptWhereTheErrorSays() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        let store = dir.appendingPathComponent("store")
        let first = try CLI.run(["analyze", audio.path, "--classifier", "heuristic", "--no-clips", "--store", store.path])
        try #require(first.status == 0, "\(first.stderr)")
        // Live mode writes little (clips fail at 8 KiB; the envelope and journal fit), the store's 32 KiB shared memory not.
        let r = try CLI.run(["record", "--backend", "file", "--device", audio.path, "--mode", "live", "--classifier", "heuristic",
                             "--store", store.path, "--lock", dir.appendingPathComponent("record.lock").path], fileSizeLimitKiB: 8)
        #expect(r.status == 74 && r.errorLines.last?.contains("could not be saved in the store; it is in ") == true, "\(r.stderr)")
        let kept = try #require(r.stderr.components(separatedBy: "it is in ").last?.components(separatedBy: ":").first)
        #expect(FileManager.default.fileExists(atPath: URL(fileURLWithPath: kept).appendingPathComponent("session.json").path))
        #expect(try CLI.nightIDs(try CLI.run(["nights", "--json", "--store", store.path]).stdout).count == 1)
    }

    /// On a disk that is really full (a 4 MiB tmpfs in a private mount namespace, filled to the
    /// last byte), the store is listed, and deleting a night frees its clips and then removes its
    /// row in the same run. A store an older Somni wrote (schema 4), which cannot be migrated
    /// there, is read as it stands, and migrated once the delete has made room: before, every
    /// command, delete too, said the disk was full.
    /// With a few KiB left (the store opens writable, and the deletion's journal finds no room
    /// at its commit) the folder goes first too: that delete failed and freed nothing.
    @Test(.enabled(if: FullDisk.available, Comment(rawValue: FullDisk.missingMessage)),
          arguments: [(false, 0), (true, 0), (false, 64)])
    func onAFullDiskDeletingANightFreesItsSpace(storeOfAnOlderSomni: Bool, kibLeft: Int) throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("store")
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        try storeTwoEvenings(of: audio, in: ["SOMNI_STORE": source.path])
        if storeOfAnOlderSomni {
            let db = try Database(path: source.appendingPathComponent(NightStore.databaseName).path)
            try db.execute("ALTER TABLE nights DROP COLUMN seconds_not_recorded; DELETE FROM schema_version WHERE version = 5")
            #expect(try Schema.version(of: db) == 4)
        }
        let script = """
            set -u
            mount -t tmpfs -o size=4m tmpfs "$DIR/disk" || exit 99
            cp -a "$DIR/store" "$DIR/disk/store"
            dd if=/dev/zero of="$DIR/disk/fill" bs=4k 2>/dev/null
            truncate -s -\(kibLeft)K "$DIR/disk/fill"
            export SOMNI_STORE="$DIR/disk/store"
            free() { df -k --output=avail "$DIR/disk" | tail -1 | tr -d ' '; }
            echo "$(free)" > "$DIR/free-before"
            "$SOMNI" nights --json > "$DIR/listed" 2> "$DIR/listed-errors"; echo $? > "$DIR/listed-status"
            "$SOMNI" delete 20261101-2300 > "$DIR/deleted" 2>&1; echo $? > "$DIR/deleted-status"
            echo "$(free)" > "$DIR/free-after"
            "$SOMNI" nights --json > "$DIR/after" 2>&1
            ls "$DIR/disk/store/nights" > "$DIR/folders"
            mkdir -p "$DIR/disk-copy" && cp "$DIR/disk/store/somni.sqlite" "$DIR/disk-copy/"
            """
        let read = try FullDisk.run(script, in: dir)
        #expect((Int(read("free-before")) ?? -1) <= kibLeft, "the disk was filled: \(read("free-before")) KiB left")
        let listedIDs = try CLI.nightIDs(read("listed"))
        #expect(read("listed-status") == "0" && listedIDs == ["20261101-2300", "20261102-2300"], "\(read("listed"))")
        if kibLeft == 0 { #expect(read("listed-errors").contains("is full, so the store is only read"), "\(read("listed-errors"))") }
        #expect(read("deleted-status") == "0" && read("deleted").contains("Deleted night 20261101-2300"), "\(read("deleted"))")
        #expect((Int(read("free-after")) ?? 0) > (Int(read("free-before")) ?? 0), "deleting freed space")
        #expect(try CLI.nightIDs(read("after")) == ["20261102-2300"], "\(read("after"))")
        #expect(read("folders") == "20261102-2300")
        let migrated = try Database(path: dir.appendingPathComponent("disk-copy/\(NightStore.databaseName)").path)
        #expect(try Schema.version(of: migrated) == Schema.currentVersion)
    }

    /// A store on a read-only disk (a backup medium, a mount gone read-only) is read as it
    /// stands, with a note; adding or deleting a night says it cannot be written. Before, every
    /// command stopped with SQLite's "unable to open database file".
    @Test(.enabled(if: FullDisk.available, Comment(rawValue: FullDisk.missingMessage)))
    func aStoreOnAReadOnlyDiskIsRead() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("night.wav")
        try CLI.synthesiseShortNight(at: audio)
        try storeTwoEvenings(of: audio, in: ["SOMNI_STORE": dir.appendingPathComponent("store").path])
        let script = """
            set -u
            mount -t tmpfs -o size=8m tmpfs "$DIR/disk" || exit 99
            cp -a "$DIR/store" "$DIR/disk/store"
            mount -o remount,ro "$DIR/disk" || exit 98
            export SOMNI_STORE="$DIR/disk/store"
            "$SOMNI" nights --json > "$DIR/listed" 2> "$DIR/listed-errors"; echo $? > "$DIR/listed-status"
            "$SOMNI" show 2026-11-01 > "$DIR/shown" 2>&1; echo $? > "$DIR/shown-status"
            "$SOMNI" delete 20261101-2300 > "$DIR/deleted" 2>&1; echo $? > "$DIR/deleted-status"
            "$SOMNI" delete --to 2026-11-30 > "$DIR/listing" 2>&1; echo $? > "$DIR/listing-status"
            "$SOMNI" analyze "$DIR/night.wav" --classifier heuristic --no-clips --started "2026-11-03 23:00" > "$DIR/added" 2>&1
            echo $? > "$DIR/added-status"
            """
        let read = try FullDisk.run(script, in: dir)
        let listed = try CLI.nightIDs(read("listed"))
        #expect(read("listed-status") == "0" && listed == ["20261101-2300", "20261102-2300"], "\(read("listed-errors"))")
        #expect(read("listed-errors").contains("cannot be written (a read-only disk, or another user's folder), so it is only read"),
                "\(read("listed-errors"))")
        #expect(read("shown-status") == "0" && read("shown").contains("Night 20261101-2300"), "\(read("shown"))")
        #expect(read("deleted-status") == "74" && read("deleted").contains("cannot be written"), "\(read("deleted"))")
        // A span is listed, and the listing says why --yes would not help here.
        #expect(read("listing-status") == "0" && read("listing").contains("20261101-2300") && read("listing").contains("20261102-2300")
                && read("listing").contains("cannot be deleted from here") && !read("listing").contains("--yes"), "\(read("listing"))")
        // The folder is the reason, not SQLite's "no such file or directory" for its log.
        #expect(read("added-status") != "0" && read("added").contains("cannot be written (a read-only disk, or another user's folder)")
                && !read("added").contains("no such file"), "\(read("added"))")
    }
}

/// A private mount namespace where a small tmpfs can be mounted and filled, without root.
extension CLI {
    /// True when `program` is there and `arguments` run to a zero exit (a tool the test needs,
    /// and what it needs of the machine, present).
    static func succeeds(_ program: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: program) else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }
}

/// The system calls a `somni` command makes, through strace.
enum SystemCallTrace {
    static let strace = "/usr/bin/strace"
    static let available = CLI.succeeds(strace, ["-qq", "-o", "/dev/null", "/bin/true"])
    static let missingMessage = "SKIPPED: watching system calls needs strace (scripts/install-deps.sh installs it) and ptrace allowed"

    /// `somni ARGUMENTS` under strace: its result and one line per traced call (`calls`, strace's
    /// -e trace= list), every descriptor followed by its file's path in angle brackets.
    static func run(_ arguments: [String], calls: String, in dir: URL) throws -> (result: CLIResult, lines: [String]) {
        let log = dir.appendingPathComponent("strace-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: log) }
        let result = try CLI.run(executable: URL(fileURLWithPath: strace),
                                 ["-f", "-qq", "-y", "-o", log.path, "-e", "trace=\(calls)", CLI.executable.path] + arguments)
        // With -f each line starts with the thread's id.
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map { line in
            String(line.drop { $0.isNumber }.drop { $0 == " " })
        }
        return (result, lines)
    }
}

enum FullDisk {
    static let unshare = "/usr/bin/unshare"
    static let available = CLI.succeeds(unshare, ["--user", "--map-root-user", "--mount", "/bin/sh", "-c",
                                                  "mount -t tmpfs -o size=1m tmpfs /mnt"])
    static let missingMessage = "SKIPPED: a really full disk needs unshare (util-linux) and unprivileged user and mount namespaces"

    /// Runs a bash `script` in a private user and mount namespace, with $DIR (`dir`, holding an
    /// empty `disk` folder to mount on) and $SOMNI set; returns a reader of the files it left in
    /// $DIR, each trimmed. The scenario must end with status 0.
    static func run(_ script: String, in dir: URL) throws -> (String) -> String {
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("disk"), withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: unshare)
        p.arguments = ["--user", "--map-root-user", "--mount", "/bin/bash", "-c", script]
        p.environment = ["DIR": dir.path, "SOMNI": CLI.executable.path, "PATH": "/usr/bin:/bin"]
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0, "the scenario stopped with \(p.terminationStatus)")
        return { name in
            ((try? String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
