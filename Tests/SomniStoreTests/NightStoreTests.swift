import Foundation
import Testing
import SomniCore
@testable import SomniStore

@Suite struct NightStoreTests {
    @Test func addedNightsAreListedInTimeOrderAndFoundByIdOrDate() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let late = NightFixture.session(startedAt: "2026-11-28T23:40:00+01:00", duration: 7 * 3600)
        let early = NightFixture.session(startedAt: "2026-11-27T22:10:00+01:00", duration: 8 * 3600, events: 4)
        let a = try store.add(nightFolder: NightFixture.folder(at: scratch.path("a"), session: late), moving: false)
        let b = try store.add(nightFolder: NightFixture.folder(at: scratch.path("b"), session: early), moving: true)

        #expect(try store.nights().map(\.id) == ["20261127-2210", "20261128-2340"])
        #expect(a.bedtime == "23:40" && a.wake == "06:40")
        #expect(b.count(.snoring) == 2 && b.count(.sleepTalk) == 1 && b.count(.cough) == 1)
        #expect(try store.nights().last == a)
        // Copying keeps the source; moving takes it.
        #expect(FileManager.default.fileExists(atPath: scratch.path("a/session.json").path))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("b").path))

        #expect(try store.night(matching: "20261128-2340") == a)
        #expect(try store.night(matching: "2026-11-27") == b)
        #expect(throws: SomniError.self) { try store.night(matching: "2026-11-20") }
        #expect(throws: SomniError.self) { try store.night(matching: "nonsense") }

        // A start after midnight belongs to the evening before; the calendar day is the fallback.
        let afterMidnight = NightFixture.session(startedAt: "2026-11-30T00:30:00+01:00")
        let c = try store.add(nightFolder: NightFixture.folder(at: scratch.path("c"), session: afterMidnight), moving: false)
        #expect(c.nightDate == "2026-11-29")
        #expect(try store.night(matching: "2026-11-29") == c)
        #expect(try store.night(matching: "2026-11-30") == c)
    }

    @Test func aDateWithTwoNightsIsAnErrorThatListsBoth() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let s = NightFixture.session(startedAt: "2026-11-28T23:40:00Z")
        let first = try store.add(nightFolder: NightFixture.folder(at: scratch.path("a"), session: s), moving: false)
        let second = try store.add(nightFolder: scratch.path("a"), moving: false)
        #expect(first.id == "20261128-2340" && second.id == "20261128-2340-2")
        do {
            _ = try store.night(matching: "2026-11-28")
            Issue.record("an ambiguous date must not pick a night")
        } catch let e as SomniError {
            #expect(e.code == .badInput)
            #expect(e.message.contains(first.id) && e.message.contains(second.id))
        }
    }

    /// Asked to save a night unless its recording is stored, the store looks under the write
    /// lock: a night another process saved meanwhile is found, and nothing is added or lost.
    @Test func aNightAlreadyStoredIsFoundUnderTheLockAndNotAddedTwice() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let s = NightFixture.session(startedAt: "2026-11-28T23:40:00Z")
        let first = try store.add(nightFolder: NightFixture.folder(at: scratch.path("a"), session: s), moving: false)
        _ = try NightFixture.folder(at: scratch.path("b"), session: s)
        do {
            try store.add(nightFolder: scratch.path("b"), moving: true, unlessStored: true)
            Issue.record("the same recording must not be saved twice")
        } catch let stored as NightStore.AlreadyStored {
            #expect(stored.night.id == first.id)
        }
        #expect(try store.nights().map(\.id) == [first.id])
        #expect(NightFixture.tree(scratch.path("b")) == NightFixture.tree(scratch.path("a")))  // put back, not lost
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("store/staging").path).isEmpty)
        // A night it replaces is no rival, and another recording is none either.
        let again = try store.add(nightFolder: scratch.path("b"), moving: false, replacing: [first], unlessStored: true)
        #expect(try store.nights().map(\.id) == [again.id])
        let other = NightFixture.session(startedAt: "2026-11-29T23:40:00Z")
        try store.add(nightFolder: NightFixture.folder(at: scratch.path("c"), session: other), moving: false, unlessStored: true)
        #expect(try store.nights().count == 2)
    }

    @Test func theNightFolderAndEventRowsMatchTheSession() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let s = NightFixture.session(startedAt: "2026-11-28T23:00:00-05:00", events: 5)
        let r = try store.add(nightFolder: NightFixture.folder(at: scratch.path("n"), session: s), moving: false)
        #expect(try store.session(of: r) == s)
        #expect(try store.events(of: r) == s.events)
        let folder = store.folder(of: r)
        #expect(folder.path.hasPrefix(scratch.path("store/nights").path))
        #expect(NightFixture.tree(folder) == NightFixture.tree(scratch.path("n")))
        #expect(r.nightDate == "2026-11-28" && r.snoringMinutes == s.summary.snoringMinutes)
    }

    @Test func deletingCascadesToEventsAndStagesAndRemovesTheFolder() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let keep = try store.add(nightFolder: NightFixture.folder(
            at: scratch.path("k"), session: NightFixture.session(startedAt: "2026-11-01T23:00:00Z")), moving: false)
        let gone = try store.add(nightFolder: NightFixture.folder(
            at: scratch.path("g"), session: NightFixture.session(startedAt: "2026-11-02T23:00:00Z")), moving: false)
        try store.db.prepare("INSERT INTO stages (night_id, start, \"end\", stage) VALUES (?, 0, 60, 'deep')")
            .run([.text(gone.id)])
        try store.delete(gone)
        #expect(try store.nights() == [keep])
        #expect(try store.db.integer("SELECT count(*) FROM events WHERE night_id = '\(gone.id)'") == 0)
        #expect(try store.db.integer("SELECT count(*) FROM stages") == 0)
        #expect(try store.db.integer("SELECT count(*) FROM events") == 3)
        #expect(!FileManager.default.fileExists(atPath: store.folder(of: gone).path))
        #expect(FileManager.default.fileExists(atPath: store.folder(of: keep).path))
    }

    @Test(arguments: [NightStore.SaveStep.staged, .inserted, .renamed], [false, true])
    func aFailureBetweenSaveStepsLeavesTheStoreAsBefore(step: NightStore.SaveStep, moving: Bool) throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        try store.add(nightFolder: NightFixture.folder(
            at: scratch.path("first"), session: NightFixture.session(startedAt: "2026-11-01T23:00:00Z")), moving: false)
        let nightsBefore = try store.nights()
        let treeBefore = NightFixture.tree(scratch.path("store/nights"))
        let source = try NightFixture.folder(
            at: scratch.path("second"), session: NightFixture.session(startedAt: "2026-11-02T23:00:00Z"))
        let sourceTree = NightFixture.tree(source)

        struct Injected: Error {}
        store.saveStepHook = { if $0 == step { throw Injected() } }
        #expect(throws: Injected.self) { try store.add(nightFolder: source, moving: moving) }

        #expect(try store.nights() == nightsBefore)
        #expect(try store.db.integer("SELECT count(*) FROM events") == 3)
        #expect(NightFixture.tree(scratch.path("store/nights")) == treeBefore)
        #expect(NightFixture.tree(scratch.path("store/staging")).isEmpty)
        #expect(NightFixture.tree(source) == sourceTree, "the user's folder is back where it was")
        // The store still works afterwards.
        store.saveStepHook = nil
        try store.add(nightFolder: source, moving: moving)
        #expect(try store.nights().count == 2)
    }

    /// A folder moved in (a recorded night, whose master is gone once it is analysed) goes back
    /// where it came from: the sweep removed it with the save, and the night was lost.
    @Test(arguments: [NightStore.SaveStep.staged, .inserted, .renamed], [false, true])
    func aCrashPartWayThroughSavingLeavesTheStoreAsBeforeOnReopen(step: NightStore.SaveStep, moving: Bool) throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        var nightsBefore: [NightRecord] = []
        var treeBefore: [String] = [], sourceTree: [String] = []
        do {
            let store = try NightStore(directory: dir)
            try store.add(nightFolder: NightFixture.folder(
                at: scratch.path("first"), session: NightFixture.session(startedAt: "2026-11-01T23:00:00Z")), moving: false)
            nightsBefore = try store.nights()
            treeBefore = NightFixture.tree(dir.appendingPathComponent("nights"))
            store.saveStepHook = { if $0 == step { throw SimulatedCrash() } }
            let source = try NightFixture.folder(
                at: scratch.path("second"), session: NightFixture.session(startedAt: "2026-11-02T23:00:00Z"))
            sourceTree = NightFixture.tree(source)
            #expect(throws: SimulatedCrash.self) { try store.add(nightFolder: source, moving: moving) }
            // The connection is dropped with its transaction open, as when a process dies.
        }
        let reopened = try NightStore(directory: dir)
        #expect(try reopened.nights() == nightsBefore)
        #expect(try reopened.db.integer("SELECT count(*) FROM events") == 3)
        #expect(NightFixture.tree(dir.appendingPathComponent("nights")) == treeBefore)
        #expect(NightFixture.tree(dir.appendingPathComponent("staging")).isEmpty)
        #expect(NightFixture.tree(scratch.path("second")) == sourceTree, "the folder given is where it was, whole")
        // ... and is saved by the next try.
        try reopened.add(nightFolder: scratch.path("second"), moving: moving)
        #expect(try reopened.nights().count == nightsBefore.count + 1)
    }

    /// A recording analysed again replaces its night in one transaction, under the same id: a
    /// crash at any step leaves the old night whole (its folder, set aside for the new one,
    /// put back by the next store opened); a finished save leaves only the new one, folder and all.
    @Test(arguments: [NightStore.SaveStep.staged, .inserted, .setAside, .renamed, nil])
    func aNightAnalysedAgainReplacesTheOldOneOrLeavesIt(crashAt step: NightStore.SaveStep?) throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let session = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        let start = try #require(NightClock(iso: session.startedAt)).start
        var old: NightRecord?
        do {
            let store = try NightStore(directory: dir)
            old = try store.add(nightFolder: NightFixture.folder(at: scratch.path("first"), session: session), moving: false)
            let found = try store.nights(recordedFrom: session.source, startedAt: start, fingerprint: nil)
            #expect(found == [try #require(old)])
            #expect(try store.nights(recordedFrom: session.source, startedAt: start + 60, fingerprint: nil).isEmpty)
            #expect(try store.nights(recordedFrom: "other.m4a", startedAt: start, fingerprint: nil).isEmpty)
            var again = session
            again.settings.sensitivity = 8
            let source = try NightFixture.folder(at: scratch.path("again"), session: again)
            if let step {
                store.saveStepHook = { if $0 == step { throw SimulatedCrash() } }
                #expect(throws: SimulatedCrash.self) { try store.add(nightFolder: source, moving: false, replacing: found) }
            } else {
                try store.add(nightFolder: source, moving: false, replacing: found)
            }
        }
        let reopened = try NightStore(directory: dir)
        let nights = try reopened.nights()
        #expect(nights.count == 1)
        let night = try #require(nights.first)
        #expect(try reopened.session(of: night).settings.sensitivity == (step == nil ? 8 : session.settings.sensitivity))
        #expect((night == old) == (step != nil))
        #expect(night.id == old?.id, "the night keeps its id")
        #expect(try reopened.db.integer("SELECT count(*) FROM events") == session.events.count)
        #expect(NightFixture.tree(dir.appendingPathComponent("nights")).allSatisfy { $0.hasPrefix(night.id + "/") || $0 == night.id },
                "\(NightFixture.tree(dir.appendingPathComponent("nights")))")
        #expect(NightFixture.tree(dir.appendingPathComponent("staging")).isEmpty)
    }

    /// Read while a replace of it commits (its folder set aside, the new one not yet in place),
    /// a night is the old one whole, not one that "has lost its folder".
    @Test func aNightReadWhileItIsBeingReplacedIsTheOldOne() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let store = try NightStore(directory: dir), reader = try NightStore(directory: dir)
        let session = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        let old = try store.add(nightFolder: NightFixture.folder(at: scratch.path("first"), session: session), moving: false)
        var again = session
        again.settings.sensitivity = 8
        var read: Session?
        store.saveStepHook = { if $0 == .setAside { read = try reader.session(of: old) } }
        _ = try store.add(nightFolder: NightFixture.folder(at: scratch.path("again"), session: again), moving: false, replacing: [old])
        #expect(read == session)
    }

    /// A night being saved (its folder renamed into nights/, its commit to come) is no stray
    /// folder to another process listing the store; a night deleted by another process since it
    /// was listed is gone, not "lost its folder".
    @Test func aNightArrivingOrDeletedMeanwhileIsNamedForWhatItIs() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let store = try NightStore(directory: dir), other = try NightStore(directory: dir)
        var unlisted: [URL]?
        store.saveStepHook = { if $0 == .renamed { unlisted = try other.unlistedFolders() } }
        let saved = try store.add(nightFolder: NightFixture.folder(at: scratch.path("first"),
                                                                   session: NightFixture.session(startedAt: "2026-11-05T23:00:00Z")),
                                  moving: true)
        #expect(unlisted == [], "\(unlisted ?? [])")
        store.saveStepHook = nil
        try other.delete(saved)
        #expect(throws: NightStore.NightGone.self) { try store.existingFolder(of: saved) }
        #expect(try !store.isStored(saved))
    }

    /// A delete killed after its commit, before its folder went: the folder is removed by the
    /// next store opened, by the note the delete left (it stayed for good, named by `nights` as
    /// one put there by hand, to be imported back). A folder with no row and no note stays.
    @Test func aDeleteKilledAfterItsCommitLeavesNoFolder() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let ids: [String]
        do {
            let store = try NightStore(directory: dir)
            ids = try ["2026-11-05T23:00:00Z", "2026-11-06T23:00:00Z"].enumerated().map { n, start in
                try store.add(nightFolder: NightFixture.folder(at: scratch.path("n\(n)"), session: NightFixture.session(startedAt: start)),
                              moving: true).id
            }
            // As a delete killed between its commit and its folder's removal leaves them (the pid is no process's).
            try Data().write(to: dir.appendingPathComponent("staging/\(Int32.max)-deleting-\(ids[0])"))
            for id in ids { try store.db.prepare("DELETE FROM nights WHERE id = ?").run([.text(id)]) }
        }
        let reopened = try NightStore(directory: dir)
        #expect(try reopened.unlistedFolders().map(\.lastPathComponent) == [ids[1]])
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("nights/\(ids[0])").path))
        #expect(NightFixture.tree(dir.appendingPathComponent("staging")).isEmpty)
    }

    /// Saves go on while other processes open the store (each open sweeps staging): a note
    /// written through a temporary file of no owner's name was swept away under a save, which
    /// failed with "cannot write in …/staging".
    @Test func savesGoOnWhileTheStoreIsOpenedBesideThem() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let store = try NightStore(directory: dir)
        final class Flag: @unchecked Sendable {
            private let lock = NSLock()
            private var raised = false
            var isRaised: Bool { lock.withLock { raised } }
            func raise() { lock.withLock { raised = true } }
        }
        let done = Flag()
        let opener = Thread {
            while !done.isRaised { _ = try? NightStore(directory: dir) }
        }
        opener.start()
        defer { done.raise() }
        for n in 0..<25 {
            let session = NightFixture.session(startedAt: String(format: "2026-10-%02dT23:00:00Z", n + 1))
            _ = try store.add(nightFolder: NightFixture.folder(at: scratch.path("n\(n)"), session: session), moving: true)
        }
        #expect(try store.nights().count == 25)
    }

    /// Two replaces of one night at once: the first saves under the night's id; the second finds
    /// that night (the same id, added since) as the recording's, and saves nothing. Before, it
    /// took the id for the night it was asked to replace, and the store held two.
    @Test func twoReplacesOfOneNightAtOnceLeaveOneNight() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let session = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        let old = try store.add(nightFolder: NightFixture.folder(at: scratch.path("first"), session: session), moving: false)
        var (a, b) = (session, session)
        a.settings.sensitivity = 3
        b.settings.sensitivity = 8
        let first = try store.add(nightFolder: NightFixture.folder(at: scratch.path("a"), session: a), moving: false,
                                  replacing: [old], unlessStored: true)
        #expect(first.id == old.id)
        #expect { try store.add(nightFolder: NightFixture.folder(at: scratch.path("b"), session: b), moving: false,
                                replacing: [old], unlessStored: true) } throws: { ($0 as? NightStore.AlreadyStored)?.night == first }
        #expect(try store.nights() == [first])
        #expect(try store.session(of: first).settings.sensitivity == 3)
    }

    /// A replace tells which nights it replaced: the night asked for, unless another process
    /// deleted it meanwhile. Before, analyze and import said "it replaces" the night they had been
    /// asked to replace whether or not it was still there.
    @Test func aReplaceTellsOnlyTheNightsItReplaced() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let store = try NightStore(directory: dir)
        let session = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        let old = try store.add(nightFolder: NightFixture.folder(at: scratch.path("first"), session: session), moving: false)
        var again = session
        again.settings.sensitivity = 8
        let replaced = try store.save(nightFolder: NightFixture.folder(at: scratch.path("again"), session: again), moving: false,
                                      replacing: [old], unlessStored: true)
        #expect(replaced.record.id == old.id && replaced.replaced == [old])

        // Another process deletes the night between this one finding it and saving in its place.
        try NightStore(directory: dir).delete(replaced.record)
        again.settings.sensitivity = 3
        let afterDelete = try store.save(nightFolder: NightFixture.folder(at: scratch.path("third"), session: again), moving: false,
                                         replacing: [replaced.record], unlessStored: true)
        #expect(afterDelete.replaced.isEmpty)
        #expect(try store.nights() == [afterDelete.record])
    }

    /// A stored night's own folder is not a folder to import: replacing that night with it, and
    /// --move, removed it (found by a fresh-eyes pass: "Imported", then "has lost its folder").
    @Test func aStoredNightsOwnFolderIsRefusedAndKept() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let night = try store.add(nightFolder: NightFixture.folder(at: scratch.path("first"), session: NightFixture.session(
            startedAt: "2026-11-01T23:00:00Z")), moving: false)
        for folder in [store.folder(of: night), store.folder(of: night).appendingPathComponent("clips/..")] {
            #expect { try store.add(nightFolder: folder, moving: true, replacing: [night]) } throws: {
                "\($0)".contains("is inside the night store itself")
            }
        }
        #expect(try store.nights() == [night])
        #expect(try store.session(of: night).events.count == 3)
        #expect(FileManager.default.fileExists(atPath: store.folder(of: night).appendingPathComponent("clips/evt-0001.m4a").path))
    }

    /// A night begun after midnight is found by that calendar day's date for reading, but
    /// `delete` (which asks nothing first) takes a date as the evening only, as `nights --from`
    /// lists it, and names the id instead.
    @Test func aDateIsTheEveningForDeletingAndAlsoTheDayForReading() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let night = try store.add(nightFolder: NightFixture.folder(at: scratch.path("late"), session: NightFixture.session(
            startedAt: "2026-03-29T00:55:00Z")), moving: false)
        #expect(night.nightDate == "2026-03-28")
        #expect(try store.night(matching: "2026-03-29") == night)
        #expect(try store.night(matching: "2026-03-28", byEveningOnly: true) == night)
        #expect { try store.night(matching: "2026-03-29", byEveningOnly: true) } throws: {
            "\($0)".contains("no night began on the evening of 2026-03-29") && "\($0)".contains(night.id)
        }
        #expect(try store.night(matching: night.id, byEveningOnly: true) == night)
    }

    /// A folder in nights/ that no row names (copied in by hand, or kept from before an older
    /// database was put back) is left where it is and named; a night saved since takes another
    /// id rather than its place. Before, every store opened, `somni nights` too, removed it.
    @Test func aFolderTheStoreDoesNotListIsKeptAndNamed() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let fm = FileManager.default
        let first = try NightFixture.folder(at: scratch.path("first"), session: NightFixture.session(startedAt: "2026-11-01T23:00:00Z"))
        let second = try NightFixture.folder(at: scratch.path("second"), session: NightFixture.session(startedAt: "2026-11-02T23:00:00Z"))
        var kept: URL?
        do { try NightStore(directory: dir).add(nightFolder: first, moving: false) }  // closed: its log is in the file
        let database = dir.appendingPathComponent(NightStore.databaseName)
        try fm.copyItem(at: database, to: scratch.path("backup.sqlite"))
        do {
            let store = try NightStore(directory: dir)
            kept = store.folder(of: try store.add(nightFolder: second, moving: false))
        }
        // The older database put back: the second night's folder has no row now.
        try fm.removeItem(at: database)
        try fm.copyItem(at: scratch.path("backup.sqlite"), to: database)
        let byHand = dir.appendingPathComponent("nights/my-notes")
        try fm.createDirectory(at: byHand, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: byHand.appendingPathComponent("notes.txt"))
        let keptFolder = try #require(kept)
        let keptTree = NightFixture.tree(keptFolder)

        let reader = try NightStore(directory: dir, access: .readOnlyIfDiskFull)
        #expect(try reader.nights().count == 1)
        #expect(try reader.unlistedFolders().map(\.lastPathComponent) == [keptFolder.lastPathComponent, "my-notes"])
        let store = try NightStore(directory: dir)
        let again = try store.add(nightFolder: second, moving: false)
        #expect(again.id == keptFolder.lastPathComponent + "-2", "\(again.id)")
        #expect(NightFixture.tree(keptFolder) == keptTree, "the unlisted night is as it was")
        #expect(fm.fileExists(atPath: byHand.appendingPathComponent("notes.txt").path))
        #expect(try store.unlistedFolders().count == 2)
    }

    /// A link in a folder to import (a clip, session.json) is refused: copied as a link, it
    /// dangled once --move removed what it pointed into, or reached outside the night.
    @Test func aFolderWithASymbolicLinkIsRefused() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let fm = FileManager.default
        for linked in ["clips/evt-0002.m4a", Session.fileName] {
            let folder = try NightFixture.folder(at: scratch.path("night-\(linked.count)"),
                                                 session: NightFixture.session(startedAt: "2026-11-01T23:00:00Z"))
            let real = scratch.path("elsewhere-\(linked.count)")
            try fm.moveItem(at: folder.appendingPathComponent(linked), to: real)
            try fm.createSymbolicLink(at: folder.appendingPathComponent(linked), withDestinationURL: real)
            #expect { try store.add(nightFolder: folder, moving: true) } throws: {
                "\($0)".contains("\(linked) is a symbolic link")
            }
            #expect(fm.fileExists(atPath: folder.appendingPathComponent(linked).path))
        }
        // A pipe in place of a clip, or beside them, is refused at once: the copy read it for ever.
        for piped in ["clips/evt-0002.m4a", "clips/extra.m4a"] {
            let folder = try NightFixture.folder(at: scratch.path("piped-\(piped.count)"),
                                                 session: NightFixture.session(startedAt: "2026-11-01T23:00:00Z"))
            try? fm.removeItem(at: folder.appendingPathComponent(piped))
            #expect(mkfifo(folder.appendingPathComponent(piped).path, 0o600) == 0)
            #expect { try store.add(nightFolder: folder, moving: false) } throws: {
                "\($0)".contains("\(piped) is not a file (a pipe or a device)")
            }
        }
        #expect(try store.nights().isEmpty)
        // A link to the folder itself is the folder: imported, not "cannot list" its copy.
        let whole = try NightFixture.folder(at: scratch.path("whole"), session: NightFixture.session(startedAt: "2026-11-02T23:00:00Z"))
        let link = scratch.path("link-to-whole")
        try fm.createSymbolicLink(at: link, withDestinationURL: whole)
        let added = try store.add(nightFolder: link, moving: false)
        #expect(try store.session(of: added).events.count == 3 && !NightFixture.tree(store.folder(of: added)).isEmpty)
    }

    /// A night replaced from the same start keeps its id whatever it is: a second night of one
    /// start ("-2"), an undated night's. Dated only now, it takes its start's.
    @Test func aReplacedNightKeepsAnyIdItHadFromTheSameStart() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let first = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        var second = first
        second.source = "other.m4a"
        var undated = first
        undated.startedAt = nil
        undated.source = "undated.m4a"
        _ = try store.add(nightFolder: NightFixture.folder(at: scratch.path("1"), session: first), moving: false)
        let two = try store.add(nightFolder: NightFixture.folder(at: scratch.path("2"), session: second), moving: false)
        let three = try store.add(nightFolder: NightFixture.folder(at: scratch.path("3"), session: undated), moving: false)
        #expect(two.id == "20261101-2300-2" && three.id.hasSuffix("-undated"))
        second.settings.sensitivity = 8
        #expect(try store.add(nightFolder: NightFixture.folder(at: scratch.path("2b"), session: second), moving: false,
                              replacing: [two]).id == two.id)
        let undatedAgain = try store.add(nightFolder: NightFixture.folder(at: scratch.path("3b"), session: undated), moving: false,
                                         replacing: [three])
        #expect(undatedAgain.id == three.id)
        var dated = undated
        dated.startedAt = "2026-11-02T23:30:00Z"
        #expect(try store.add(nightFolder: NightFixture.folder(at: scratch.path("3c"), session: dated), moving: false,
                              replacing: [undatedAgain]).id == "20261102-2330")
        #expect(try store.nights().count == 3)
    }

    /// A replace that fails (not a crash: an error the save catches) after the old folder was
    /// set aside puts it back at once, and the old night stands as it was.
    @Test(arguments: [NightStore.SaveStep.setAside, .renamed])
    func aReplaceThatFailsPutsTheOldFolderBack(at step: NightStore.SaveStep) throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let session = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        let old = try store.add(nightFolder: NightFixture.folder(at: scratch.path("first"), session: session), moving: false)
        let treeBefore = NightFixture.tree(scratch.path("store/nights"))
        var again = session
        again.settings.sensitivity = 8
        let source = try NightFixture.folder(at: scratch.path("again"), session: again)
        store.saveStepHook = { if $0 == step { throw SomniError(.io, "the disk went away") } }
        #expect(throws: SomniError.self) { try store.add(nightFolder: source, moving: true, replacing: [old]) }
        #expect(try store.nights() == [old])
        #expect(try store.session(of: old).settings.sensitivity == session.settings.sensitivity)
        #expect(NightFixture.tree(scratch.path("store/nights")) == treeBefore)
        #expect(NightFixture.tree(scratch.path("store/staging")).isEmpty)
        #expect(FileManager.default.fileExists(atPath: source.appendingPathComponent(Session.fileName).path), "the moved folder is put back")
    }

    /// Another process deletes the night being replaced while the new one is staged: its id,
    /// free again, goes to the new night, whose row and folder must then stay (the replace had
    /// deleted the row it had just inserted and the folder it had just placed, and said "Saved").
    /// A delete of a night whose folder someone else removed meanwhile is done, not an error.
    @Test func aNightDeletedWhileItsReplacementIsSavedLeavesTheReplacement() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let session = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        let store = try NightStore(directory: dir), other = try NightStore(directory: dir)
        let old = try store.add(nightFolder: NightFixture.folder(at: scratch.path("first"), session: session), moving: false)
        var again = session
        again.settings.sensitivity = 8
        let source = try NightFixture.folder(at: scratch.path("again"), session: again)
        store.saveStepHook = { if $0 == .staged { try other.delete(old) } }
        let saved = try store.add(nightFolder: source, moving: false, replacing: [old])
        #expect(saved.id == old.id, "the id the deleted night left free")
        let reopened = try NightStore(directory: dir)
        #expect(try reopened.nights() == [saved])
        #expect(try reopened.session(of: saved).settings.sensitivity == 8)
        #expect(FileManager.default.fileExists(atPath: reopened.folder(of: saved).appendingPathComponent(Session.fileName).path))

        // A delete that read the night before a replacement committed, and deletes after it:
        // the replacement stays, with its folder, and the delete says it deleted nothing.
        var third = session
        third.settings.sensitivity = 3
        let replacement = try other.add(nightFolder: NightFixture.folder(at: scratch.path("third"), session: third), moving: false,
                                        replacing: [saved])
        #expect(try reopened.delete(saved) == false)
        #expect(try reopened.nights() == [replacement])
        #expect(try reopened.session(of: replacement).settings.sensitivity == 3)
        #expect(try other.delete(saved) == false, "deleted by id alone, it went")

        // Deleted while its folder was already gone (another process's sweep took it).
        try FileManager.default.removeItem(at: reopened.folder(of: replacement))
        #expect(try reopened.delete(replacement))
        #expect(try reopened.nights().isEmpty)
        #expect(NightFixture.tree(dir.appendingPathComponent("staging")).isEmpty)
    }

    /// A recording is known by its content: under another name, or undated; "night.wav" twice,
    /// undated, with different content is two nights; a night dated since is another unless replacing.
    @Test func aRecordingIsKnownAgainByItsFingerprint() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        var dated = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        dated.sourceFingerprint = "fnv1a64:0000000000000001"
        var undated = NightFixture.session(startedAt: nil)
        undated.source = "night.wav"
        undated.sourceFingerprint = "fnv1a64:0000000000000002"
        let a = try store.add(nightFolder: NightFixture.folder(at: scratch.path("a"), session: dated), moving: false)
        let b = try store.add(nightFolder: NightFixture.folder(at: scratch.path("b"), session: undated), moving: false)
        #expect(try a.sourceFingerprint == dated.sourceFingerprint && store.nights().contains(a))
        let start = try #require(NightClock(iso: dated.startedAt)).start

        #expect(try store.nights(recordedFrom: "renamed.m4a", startedAt: start, fingerprint: dated.sourceFingerprint) == [a])
        #expect(try store.nights(recordedFrom: dated.source, startedAt: start, fingerprint: "fnv1a64:00000000000000ff").isEmpty,
                "the same name and start with other content is another recording")
        #expect(try store.nights(recordedFrom: "night.wav", startedAt: nil, fingerprint: undated.sourceFingerprint) == [b])
        #expect(try store.nights(recordedFrom: "night.wav", startedAt: nil, fingerprint: "fnv1a64:0000000000000003").isEmpty)
        #expect(try store.nights(recordedFrom: "night.wav", startedAt: nil, fingerprint: nil).isEmpty)
        // Dated on one side only (by --started): the content decides, both ways, so a batch run
        // without --started finds the night dated by hand; a name alone never does.
        #expect(try store.nights(recordedFrom: "night.wav", startedAt: start, fingerprint: undated.sourceFingerprint) == [b])
        #expect(try store.nights(recordedFrom: dated.source, startedAt: nil, fingerprint: dated.sourceFingerprint) == [a])
        #expect(try store.nights(recordedFrom: dated.source, startedAt: nil, fingerprint: nil).isEmpty)
        #expect(try store.nights(recordedFrom: "other.wav", startedAt: start, fingerprint: "fnv1a64:0000000000000004").isEmpty)
    }

    /// Copies stored before Somni knew a recording again are each named with the first of them.
    @Test func copiesOfARecordingStoredBeforeAreNamed() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        let old = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")  // no fingerprint: by name and start
        var other = NightFixture.session(startedAt: "2026-11-02T23:00:00Z")
        other.sourceFingerprint = "fnv1a64:0000000000000009"
        var undated = NightFixture.session(startedAt: nil)  // no fingerprint, undated: never a copy
        undated.source = "old.wav"
        var ids: [String] = []
        for (i, s) in [old, old, other, undated, undated, old, other].enumerated() {
            ids.append(try store.add(nightFolder: NightFixture.folder(at: scratch.path("n\(i)"), session: s), moving: true).id)
        }
        let copies = NightStore.copies(among: try store.nights())
        #expect(copies.map(\.copy.id) == [ids[1], ids[5], ids[6]])
        #expect(copies.map(\.of) == [ids[0], ids[0], ids[2]])
        #expect(NightStore.copies(among: try store.nights().filter { $0.id != ids[0] }).map(\.of) == [ids[1], ids[2]])
    }

    @Test func aSecondConnectionReadsWhileANightIsBeingWritten() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let writer = try NightStore(directory: dir)
        let first = try writer.add(nightFolder: NightFixture.folder(
            at: scratch.path("first"), session: NightFixture.session(startedAt: "2026-11-01T23:00:00Z")), moving: false)
        var seenDuringWrite: [String] = []
        var folderSurvivedReaderOpen = false
        writer.saveStepHook = { step in
            guard step == .renamed else { return }
            // The writer holds the write lock and its rows are not committed yet.
            let reader = try NightStore(directory: dir)
            seenDuringWrite = try reader.nights().map(\.id)
            _ = try reader.session(of: reader.night(matching: first.id))
            folderSurvivedReaderOpen = FileManager.default.fileExists(
                atPath: dir.appendingPathComponent("nights/20261102-2300/session.json").path)
        }
        let second = try writer.add(nightFolder: NightFixture.folder(
            at: scratch.path("second"), session: NightFixture.session(startedAt: "2026-11-02T23:00:00Z")), moving: false)
        #expect(seenDuringWrite == [first.id])
        #expect(folderSurvivedReaderOpen, "a reader opening mid-save must not sweep the writer's folder")
        #expect(try NightStore(directory: dir).nights().map(\.id) == [first.id, second.id])
    }

    @Test func anAnalysisBuiltInIncomingIsTakenInAndLeftoversOfDeadProcessesAreSwept() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        let store = try NightStore(directory: dir)
        let incoming = store.newIncomingFolder(name: "my night.m4a")
        #expect(incoming.deletingLastPathComponent().lastPathComponent == "incoming")
        #expect(incoming.lastPathComponent.hasPrefix("\(ProcessInfo.processInfo.processIdentifier)-"))
        try NightFixture.folder(at: incoming, session: NightFixture.session(startedAt: "2026-11-03T23:00:00Z"))
        let r = try store.add(nightFolder: incoming, moving: true)
        #expect(!FileManager.default.fileExists(atPath: incoming.path))
        #expect(try store.session(of: r).events.count == 3)

        // A process that has exited: its pid names the leftovers it could not clean.
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = finished.processIdentifier
        let mine = store.newIncomingFolder(name: "in progress")
        let leftovers = ["\(dead)-abcd1234-night", ".\(dead)-abcd1234-night.partial-1234"]
        for name in leftovers + ["someone-elses"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("incoming/\(name)"), withIntermediateDirectories: true)
        }
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: true)
        _ = try NightStore(directory: dir)
        #expect(NightFixture.tree(dir.appendingPathComponent("incoming")) == [mine.lastPathComponent, "someone-elses"].sorted())
    }

    @Test func aBrokenNightFolderIsRefusedAndChangesNothing() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        var s = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        let folder = try NightFixture.folder(at: scratch.path("n"), session: s)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("clips/evt-0002.m4a"))
        #expect(throws: SomniError.self) { try store.add(nightFolder: folder, moving: true) }
        s.events[0].clip = "../../etc/passwd"
        try s.jsonData().write(to: folder.appendingPathComponent(Session.fileName))
        #expect(throws: SomniError.self) { try store.add(nightFolder: folder, moving: true) }
        #expect(throws: SomniError.self) { try store.add(nightFolder: scratch.path("missing"), moving: false) }
        let other = try NightFixture.folder(at: scratch.path("other"), session: NightFixture.session(startedAt: nil))
        try Data("not an envelope".utf8).write(to: other.appendingPathComponent(EnvelopeFile.fileName))
        #expect(throws: SomniError.self) { try store.add(nightFolder: other, moving: false) }
        #expect(try store.nights().isEmpty)
        #expect(NightFixture.tree(scratch.path("store/nights")).isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("session.json").path))
    }

    /// Numbers no analysis writes are refused with what is wrong, before they become rows.
    @Test(arguments: [
        ("duration", "its duration is -1.0 s"),
        ("backwards", "event evt-0002 runs 200.0–100.0 s"),
        ("past the end", "event evt-0001 runs 60.0–5000.0 s, outside the 3600.0 s night"),
        ("twice", "event evt-0001 is listed twice"),
        ("confidence", "event evt-0003 has confidence 1.5"),
        ("severity", "event evt-0003 has severity -3.0"),
        ("share", "its active share 2.0 is not between 0 and 1"),
        ("episode", "a snoring episode runs -5.0–10.0 s"),
        ("snoring minutes", "its summary says 100.0 min"),
        ("episodes counted", "its summary says 7 snoring episodes and it lists 0"),
        ("version", "version 2; this Somni reads version 1"),
        ("a trillion seconds", "its duration is 1000000000000.0 s"),
        ("levels", "event evt-0002 has levels 1e+300"),
        ("start", "its start 'yesterday' is not an ISO 8601 time"),
        ("zone", "its time zone 'Mars/Olympus' is not one this system knows"),
        ("recorded", "its summary says 7200.0 s were recorded of a 3600.0 s night"),
        ("gaps overlap", "its recording gaps at 100.0 s and 500.0 s overlap"),
        ("event in a gap", "event evt-0002 lies in the recording gap at 100.0 s"),
        ("clip outside", "event evt-0001 names clip '../notes.txt' outside the night folder"),
        ("30 February", "its start '2026-02-30T23:00:00Z' is not a day of the calendar"),
        ("snoring unlike its events", "its summary says 5.90 min of snoring and its snoring events cover"),
        ("snoring share", "% of the night was snoring and its"),
        ("id with a return", "event id \"evt-0001\\r\" holds a control character"),
        ("id with a NUL", "event id \"evt\\0-0002\" holds a control character"),
        ("from the future", "its start 2099-11-28T23:00:00Z is in the future"),
    ])
    func aNightWithImpossibleNumbersIsRefusedSayingWhich(fault: String, message: String) throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        var s = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        let folder = try NightFixture.folder(at: scratch.path("n"), session: s)
        #expect(s.inconsistency == nil)
        switch fault {
        case "duration": s.duration = -1
        case "backwards": s.events[1].start = 200; s.events[1].end = 100
        case "past the end": s.events[0].end = 5000
        case "twice": s.events[1].id = "evt-0001"
        case "confidence": s.events[2].confidence = 1.5
        case "severity": s.events[2].severity = -3
        case "share": s.activeShare = 2
        case "episode": s.episodes = [SnoringEpisode(start: -5, end: 10, eventCount: 2)]; s.summary.snoringEpisodes = 1
        case "episodes counted": s.summary.snoringEpisodes = 7
        case "snoring minutes": s.summary.snoringMinutes = 100
        case "a trillion seconds": s.duration = 1e12; s.analysedSeconds = 1e12
        case "levels": s.events[1].peakDBFS = 1e300
        case "start": s.startedAt = "yesterday"
        case "zone": s.timeZone = "Mars/Olympus"
        case "recorded": s.summary.recordedSeconds = 7200
        case "gaps overlap":
            s.gaps = [RecordingGap(start: 500, duration: 100, reason: "b"), RecordingGap(start: 100, duration: 1000, reason: "a")]
            s.summary.recordedSeconds = nil
        case "event in a gap":  // evt-0002 runs 120–124 s
            s.gaps = [RecordingGap(start: 100, duration: 60, reason: "a")]
            s.summary.recordedSeconds = 3540
        case "clip outside": s.events[0].clip = "../notes.txt"
        case "30 February": s.startedAt = "2026-02-30T23:00:00Z"
        case "snoring unlike its events": s.summary.snoringMinutes = 5.9
        case "snoring share": s.summary.snoringPercent = 98.3
        case "id with a return": s.events[0].id = "evt-0001\r"
        case "id with a NUL": s.events[1].id = "evt\0-0002"
        case "from the future": s.startedAt = "2099-11-28T23:00:00Z"
        default: s.version = 2
        }
        try s.jsonData().write(to: folder.appendingPathComponent(Session.fileName))
        do {
            _ = try store.add(nightFolder: folder, moving: true)
            Issue.record("\(fault): the night was taken")
        } catch let e as SomniError {
            #expect(e.code == (fault == "version" ? .unsupported : .badInput))
            #expect(e.message.contains(message), "\(e.message)")
        }
        #expect(try store.nights().isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(Session.fileName).path))
    }

    /// Text goes into the store and comes out whole: bound up to its first NUL, a source name
    /// holding one was stored cut short, and two ids differing after one were one id.
    @Test func textHoldingANulIsStoredWhole() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        var s = NightFixture.session(startedAt: "2026-11-01T23:00:00Z")
        s.source = "bed\0room.m4a"
        let folder = try NightFixture.folder(at: scratch.path("n"), session: s)
        let record = try store.add(nightFolder: folder, moving: false)
        #expect(try store.nights().map(\.source) == ["bed\0room.m4a"])
        #expect(try store.night(matching: record.id).source.utf8.count == 12)
    }

    @Test func anOlderSchemaIsMigratedAndANewerOneRefused() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        do {
            let v1 = try Database(path: dir.appendingPathComponent(NightStore.databaseName).path)
            try Schema.migrate(v1, to: 1)
            #expect(try Schema.version(of: v1) == 1)
            try v1.execute("""
                INSERT INTO nights VALUES ('old', NULL, NULL, NULL, NULL, 'x.wav', 60, 60, 1, 5, 'heuristic',
                  0, 0, 0, 0, 0, 0, 0)
                """)
            #expect(throws: SomniError.self) { try v1.execute("SELECT * FROM stages") }
        }
        let store = try NightStore(directory: dir)
        #expect(try Schema.version(of: store.db) == Schema.currentVersion)
        #expect(try store.nights().map(\.id) == ["old"])
        try store.db.execute("INSERT INTO stages (night_id, start, \"end\", stage) VALUES ('old', 0, 60, 'rem')")
        #expect(try store.db.integer("SELECT count(*) FROM stages") == 1)

        try store.db.execute("INSERT INTO schema_version VALUES (\(Schema.currentVersion + 1), 0)")
        do {
            _ = try NightStore(directory: dir)
            Issue.record("a newer schema must be refused")
        } catch let e as SomniError {
            #expect(e.code == .unsupported)
            #expect(e.message.contains("schema version \(Schema.currentVersion + 1)"))
        }
    }

    /// Schema 5 keeps each night's time not recorded. A store from before it learns that from
    /// the nights' session.json, and a night with gaps gets its snoring share over the time
    /// recorded; one whose folder is lost keeps its numbers.
    @Test func aStoreFromBeforeSchema5LearnsEachNightsTimeNotRecorded() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("nights"), withIntermediateDirectories: true)
        // Two hours with a one-hour gap, three events (one each), summarised over the whole night.
        var gapped = NightFixture.session(startedAt: "2026-11-28T23:00:00Z", duration: 7200)
        gapped.gaps = [RecordingGap(start: 3000, duration: 3600, reason: "no recording between the files")]
        gapped.summary.recordedSeconds = nil
        #expect(gapped.summary.eventsPerHour["cough"] == 0.5)
        try NightFixture.folder(at: dir.appendingPathComponent("nights/gapped"), session: gapped)
        do {
            let v4 = try Database(path: dir.appendingPathComponent(NightStore.databaseName).path)
            try Schema.migrate(v4, to: 4)
            for (id, percent) in [("gapped", gapped.summary.snoringPercent), ("lost", 1.5)] {
                try v4.execute("""
                    INSERT INTO nights VALUES ('\(id)', NULL, NULL, NULL, NULL, 'x.wav', 7200, 1800, 0.25, 5, 'heuristic',
                      \(gapped.summary.snoringMinutes), \(percent), 1, 1, 1, 1, 0, NULL, NULL)
                    """)
            }
        }
        let store = try NightStore(directory: dir)
        #expect(try Schema.version(of: store.db) == Schema.currentVersion)
        let nights = Dictionary(uniqueKeysWithValues: try store.nights().map { ($0.id, $0) })
        let night = try #require(nights["gapped"])
        #expect(night.secondsNotRecorded == 3600 && night.recordedSeconds == 3600)
        #expect(night.rate(.cough) == 1 && night.rate(.snoring) == 1)
        #expect(abs(night.snoringPercent - 100 * gapped.summary.snoringMinutes * 60 / 3600) < 1e-9)
        #expect(abs(night.snoringPercent - 2 * gapped.summary.snoringPercent) < 1e-9)
        let lost = try #require(nights["lost"])
        #expect(lost.secondsNotRecorded == 0 && lost.snoringPercent == 1.5 && lost.rate(.cough) == 0.5)
        // Its folder put back (as the store's error advises), the next store opened learns it.
        try NightFixture.folder(at: dir.appendingPathComponent("nights/lost"), session: gapped)
        let found = try #require(try NightStore(directory: dir).nights().first { $0.id == "lost" })
        #expect(found.secondsNotRecorded == 3600 && found.rate(.cough) == 1)
        #expect(abs(found.snoringPercent - night.snoringPercent) < 1e-9)

        // A night saved now carries its time not recorded into its row.
        var joined = NightFixture.session(startedAt: "2026-11-29T23:00:00Z", duration: 7200)
        joined.setGaps(gapped.gaps ?? [])
        let saved = try store.add(nightFolder: try NightFixture.folder(at: scratch.path("joined"), session: joined), moving: false)
        #expect(saved.secondsNotRecorded == 3600)
        #expect(try store.nights().first { $0.id == saved.id }?.secondsNotRecorded == 3600)
    }

    @Test func aDatabaseThatIsNotOneIsAClearError() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 4096).write(to: dir.appendingPathComponent(NightStore.databaseName))
        do {
            _ = try NightStore(directory: dir)
            Issue.record("a file that is not a database must be refused")
        } catch let e as SomniError {
            #expect(e.code == .badInput)
            #expect(e.message.contains(NightStore.databaseName))
        }
    }

    @Test func theStoreIsInWALModeWithForeignKeysOn() throws {
        let scratch = try Scratch()
        let store = try NightStore(directory: scratch.path("store"))
        #expect(try store.db.string("PRAGMA journal_mode") == "wal")
        #expect(try store.db.integer("PRAGMA foreign_keys") == 1)
        #expect(throws: SomniError.self) {
            try store.db.execute("INSERT INTO stages (night_id, start, \"end\", stage) VALUES ('nobody', 0, 1, 'rem')")
        }
    }

    @Test func theStoreDirectoryComesFromTheFlagThenTheEnvironmentThenXDG() {
        let env = ["SOMNI_STORE": "/env", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"]
        #expect(NightStore.defaultDirectory(explicit: "/flag", environment: env).path == "/flag")
        #expect(NightStore.defaultDirectory(explicit: nil, environment: env).path == "/env")
        #expect(NightStore.defaultDirectory(explicit: "/flag", environment: ["XDG_DATA_HOME": "/xdg"]).path == "/flag")
        #expect(NightStore.defaultDirectory(explicit: nil, environment: ["XDG_DATA_HOME": "/xdg"]).path == "/xdg/somni")
        #expect(NightStore.defaultDirectory(explicit: nil, environment: ["HOME": "/home/u"]).path
            == "/home/u/.local/share/somni")
        // A relative XDG_DATA_HOME is ignored, as the XDG spec says; an empty HOME is no home
        // (both had put the store under whichever folder the command ran in).
        #expect(NightStore.defaultDirectory(explicit: nil, environment: ["XDG_DATA_HOME": "data", "HOME": "/home/u"]).path
            == "/home/u/.local/share/somni")
        let empty = NightStore.defaultDirectory(explicit: nil, environment: ["HOME": ""]).path
        #expect(empty.hasPrefix("/") && empty == FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/somni").path)
    }

    @Test func nightClockReadsTheRecordingsOwnOffset() throws {
        let c = try #require(NightClock(iso: "2026-11-28T23:40:00.500+08:00"))
        #expect(c.time() == "23:40" && c.date() == "2026-11-28")
        #expect(c.time(at: 3600) == "00:40" && c.date(at: 3600) == "2026-11-29")
        #expect(NightClock(iso: "2026-11-29T01:00:00-0300")?.nightDate == "2026-11-28")
        #expect(NightClock(iso: "2026-11-28T23:40:00") == nil)
        #expect(NightClock(iso: "garbage") == nil)
        #expect(NightClock(iso: "2026-13-28T23:40:00Z") == nil)
        #expect(NightClock(iso: "2026-11-28T23:40:00+01:00x") == nil)
        #expect(c.start.timeIntervalSince1970 == 1_795_880_400.5)
        #expect(c.nightTitle == "Sat 28 Nov 2026")
        #expect(NightClock(iso: "2026-11-29T01:00:00+01:00")?.nightTitle == "Sat 28 Nov 2026")
    }

    @Test func nightClockAgreesWithFoundationsCalendar() throws {
        var rng = SeededRandom(seed: 42)
        for _ in 0..<300 {
            let unix = Double(rng.next() % 3_000_000_000) - 600_000_000  // 1950…2065
            let offset = (Int(rng.next() % 57) - 28) * 1800  // −14 h … +14 h in half hours
            let zone = try #require(TimeZone(secondsFromGMT: offset))
            let f = ISO8601DateFormatter()
            f.timeZone = zone
            let iso = f.string(from: Date(timeIntervalSince1970: unix))
            let clock = try #require(NightClock(iso: iso), "\(iso)")
            #expect(clock.start.timeIntervalSince1970 == unix, "\(iso)")
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let later = Date(timeIntervalSince1970: unix + 5000)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: later)
            #expect(clock.date(at: 5000) == String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!), "\(iso)")
            #expect(clock.timeWithSeconds(at: 5000) == String(format: "%02d:%02d:%02d", parts.hour!, parts.minute!, parts.second!))
        }
    }
    /// The store keeps the zone a night's start was written in, so its listing reads the wake time
    /// off the bedroom's clock after a daylight-saving change.
    @Test func theStoreKeepsANightsZone() throws {
        let scratch = try Scratch()
        let dir = scratch.path("store")
        var zoned = NightFixture.session(startedAt: "2026-10-25T01:30:00+02:00", duration: 7200)
        zoned.timeZone = "Europe/Berlin"
        var fixed = NightFixture.session(startedAt: "2026-10-25T01:30:00+02:00", duration: 7200)
        fixed.source = "other.wav"
        do {
            let store = try NightStore(directory: dir)
            try store.add(nightFolder: NightFixture.folder(at: scratch.path("zoned"), session: zoned), moving: false)
            try store.add(nightFolder: NightFixture.folder(at: scratch.path("fixed"), session: fixed), moving: false)
        }
        let nights = try NightStore(directory: dir).nights()
        #expect(nights.map(\.timeZone) == ["Europe/Berlin", nil])
        #expect(nights.map(\.bedtime) == ["01:30", "01:30"])
        #expect(nights.map(\.wake) == ["02:30", "03:30"], "the zone's night wakes after the clocks went back")
    }

    /// Across a daylight-saving change a night reads as the bedroom's clock did, from the zone
    /// session.json names; without a zone, or with one whose offset at the start is not the
    /// start's own, the start's offset holds all night (as before stop 39).
    @Test func nightClockFollowsTheZonesDaylightSavingChanges() throws {
        let autumn = try #require(NightClock(iso: "2026-10-25T01:30:00+02:00", timeZone: "Europe/Berlin"))
        #expect(autumn.offsetChanges.first == NightClock.OffsetChange(after: 5400, offsetSeconds: 3600))
        #expect(autumn.time() == "01:30" && autumn.timeWithSeconds(at: 5399) == "02:59:59")
        #expect(autumn.timeWithSeconds(at: 5400) == "02:00:00" && autumn.time(at: 7200) == "02:30")
        #expect(autumn.changes(within: 7200) == ["at 03:00 the clocks went back to 02:00"])
        #expect(autumn.changes(within: 5400).isEmpty, "a night that ends at the change does not cross it")
        #expect([1800, 5399, 5400, 8999, 9000].map { autumn.displayTime(at: $0) }
                == ["02:00:00", "02:59:59", "02:00:00 (2nd)", "02:59:59 (2nd)", "03:00:00"], "the repeated hour is marked")
        #expect([0, 5399, 5400, 9000].map { autumn.displayHourMinute(at: $0) } == ["01:30", "02:59", "02:00 (2nd)", "03:00"])
        #expect(autumn.iso(at: 1800) == "2026-10-25T02:00:00+02:00" && autumn.iso(at: 5400) == "2026-10-25T02:00:00+01:00")
        #expect(NightClock(iso: "2026-11-28T23:40:00-03:30")?.iso(at: 3600) == "2026-11-29T00:40:00-03:30")
        #expect(autumn.nightDate == "2026-10-24" && autumn.compactDateTime() == "20261025-0130")
        // Begun in the repeated hour, after the change: its times until 03:00 are their 2nd
        // showing, and the change is said though it came before the night (neither was).
        let repeated = try #require(NightClock(iso: "2026-10-25T02:30:00+01:00", timeZone: "Europe/Berlin"))
        #expect([0, 1799, 1800, 7200].map { repeated.displayTime(at: $0) }
                == ["02:30:00 (2nd)", "02:59:59 (2nd)", "03:00:00", "04:30:00"])
        #expect(repeated.changes(within: 3600)
                == ["at 03:00 the clocks went back to 02:00, just before the night began: its first times are their 2nd showing"])
        for first in ["2026-10-25T02:30:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-24T23:30:00+02:00"] {
            let clock = try #require(NightClock(iso: first, timeZone: "Europe/Berlin"))
            #expect(clock.changeBeforeStart == nil && !clock.displayTime(at: 0).hasSuffix("(2nd)"), "\(first)")
        }

        let spring = try #require(NightClock(iso: "2026-03-28T23:00:00+01:00", timeZone: "Europe/Berlin"))
        #expect(spring.time(at: 3 * 3600 - 1) == "01:59" && spring.time(at: 3 * 3600) == "03:00")
        #expect(spring.changes(within: 8 * 3600) == ["at 02:00 the clocks went forward to 03:00"])
        #expect(spring.displayTime(at: 3 * 3600) == "03:00:00", "a skipped hour repeats nothing")

        for (iso, zone) in [("2026-10-25T01:30:00+02:00", nil), ("2026-10-25T01:30:00+02:00", "Nowhere/Atlantis"),
                            ("2026-10-25T01:30:00+08:00", "Europe/Berlin")] {
            let fixed = try #require(NightClock(iso: iso, timeZone: zone))
            #expect(fixed.offsetChanges.isEmpty && fixed.time(at: 7200) == "03:30", "\(iso) in \(zone ?? "no zone")")
        }
    }

    /// The clock against Foundation's own formatter in zones whose offsets change: by an hour
    /// (Berlin, New York), by half an hour (Lord Howe Island) and south of the equator (Santiago).
    @Test func nightClockAgreesWithFoundationAcrossDaylightSavingChanges() throws {
        var rng = SeededRandom(seed: 7)
        for name in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago"] {
            let zone = try #require(TimeZone(identifier: name))
            let iso = ISO8601DateFormatter()
            iso.timeZone = zone
            let clockFormat = DateFormatter()
            clockFormat.locale = Locale(identifier: "en_US_POSIX")
            clockFormat.timeZone = zone
            clockFormat.dateFormat = "yyyy-MM-dd HH:mm:ss"
            var crossed = 0
            for _ in 0..<200 {
                // Starts within 12 h before one of the zone's changes in 2020…2030, so about half cross it.
                let year = Date(timeIntervalSince1970: 1_577_836_800 + Double(rng.next() % 11) * 31_556_952)
                let change = try #require(zone.nextDaylightSavingTimeTransition(after: year))
                let unix = (change.timeIntervalSince1970 - Double(rng.next() % 43_200)).rounded()
                let clock = try #require(NightClock(iso: iso.string(from: Date(timeIntervalSince1970: unix)), timeZone: name))
                let into = Double(rng.next() % (12 * 3600))
                let expected = clockFormat.string(from: Date(timeIntervalSince1970: unix + into))
                #expect("\(clock.date(at: into)) \(clock.timeWithSeconds(at: into))" == expected, "\(name) \(unix) + \(into)")
                #expect(clock.iso(at: into) == iso.string(from: Date(timeIntervalSince1970: unix + into)), "\(name) \(unix) + \(into)")
                if !clock.changes(within: into).isEmpty { crossed += 1 }
            }
            #expect(crossed > 60, "\(name): \(crossed) of 200 nights crossed a change")
        }
    }
}

/// A staging entry from before this boot is no save's that runs: its pid may belong to another
/// process since a reboot, and a night left there when the power went stayed for good.
@Suite struct StagingBootTests {
    @Test func anEntryFromBeforeThisBootIsNotRunning() throws {
        let scratch = try Scratch()
        let entry = scratch.path("entry")
        try FileManager.default.createDirectory(at: entry, withIntermediateDirectories: true)
        let now = Int(Date().timeIntervalSince1970)
        #expect(StagingNames.predatesThisBoot(entry.path, boot: now + 100))
        #expect(!StagingNames.predatesThisBoot(entry.path, boot: now - 100))
        #expect(!StagingNames.predatesThisBoot(entry.path, boot: nil))
        #expect(!StagingNames.predatesThisBoot(scratch.path("gone").path, boot: now + 100))
        if let boot = StagingNames.bootTime { #expect(boot <= now && boot > now - 10 * 365 * 86_400, "\(boot)") }
    }
}
