import Foundation
import Testing
@testable import SomniCore

@Suite struct SessionTests {
    @Test func sessionJSONUsesClassKeyAndRoundTrips() throws {
        let e = SessionEvent(id: "evt-0001", eventClass: .sleepTalk, start: 1, end: 2.5, confidence: 0.8,
                             peakDBFS: -20, meanDBFS: -30, severity: 40)
        let summary = SessionSummary(duration: 3600, analysedSeconds: 100, activeShare: 0.1, gateBypassed: false,
                                     events: [e], episodes: [])
        let s = Session(source: "x.wav", startedAt: "2026-11-29T23:00:00+01:00", duration: 3600, analysedSeconds: 100,
                        activeShare: 0.1, settings: .init(sensitivity: 5, classifier: "heuristic"),
                        summary: summary, episodes: [], events: [e], warnings: [])
        let data = try s.jsonData()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"class\" : \"sleep_talk\""))
        #expect(try JSONDecoder().decode(Session.self, from: data) == s)
        #expect(summary.eventsPerHour["sleep_talk"] == 1)
        #expect(s.startDate == ISO8601DateFormatter().date(from: "2026-11-29T22:00:00Z"))
    }

    /// A session.json that cannot be read says what is wrong and where: the bare "is not a
    /// valid session.json" left a missing key and an unknown class alike to guess.
    @Test func anUnreadableSessionSaysWhatIsWrongWhere() throws {
        let e = SessionEvent(id: "evt-0001", eventClass: .cough, start: 1, end: 1.5, confidence: 0.8, peakDBFS: -20, meanDBFS: -30, severity: 40)
        let s = Session(source: "x.wav", startedAt: nil, duration: 60, analysedSeconds: 60, activeShare: 0.1,
                        settings: .init(sensitivity: 5, classifier: "heuristic"),
                        summary: SessionSummary(duration: 60, analysedSeconds: 60, activeShare: 0.1, gateBypassed: false, events: [e], episodes: []),
                        episodes: [], events: [e], warnings: [])
        let good = try #require(try JSONSerialization.jsonObject(with: s.jsonData()) as? [String: Any])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("somni-session-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        func message(_ change: (inout [String: Any]) -> Void) throws -> String {
            var json = good
            change(&json)
            try JSONSerialization.data(withJSONObject: json).write(to: file)
            do { _ = try Session.load(from: file); return "read" } catch let error as SomniError { return error.message }
        }
        func event(_ json: inout [String: Any], _ key: String, _ value: Any) {
            var events = json["events"] as! [[String: Any]]
            events[0][key] = value
            json["events"] = events
        }
        #expect(try message { _ in } == "read")
        #expect(try message { $0["source"] = nil }.hasSuffix("is not a valid session.json: it lacks \"source\""))
        #expect(try message { event(&$0, "start", "ten") }.hasSuffix(": \"events[0].start\" is not a number"))
        #expect(try message { event(&$0, "class", "wheeze") }.hasSuffix(": \"events[0].class\" is not one of snoring, sleep_talk, cough"))
        try Data("{".utf8).write(to: file)
        #expect(throws: SomniError.self) { try Session.load(from: file) }
        do { _ = try Session.load(from: file) } catch let error as SomniError { #expect(error.message.hasSuffix(": it is not JSON")) }
        try Data("[]".utf8).write(to: file)
        do { _ = try Session.load(from: file) } catch let error as SomniError { #expect(error.message.hasSuffix(": it is not a JSON object")) }
    }

    /// Snoring minutes are the time the snoring events cover, each moment once, however the
    /// events were made (an engine caller's, an older night folder's).
    @Test func snoringMinutesCountTimeTwoEventsShareOnce() {
        func snore(_ a: Double, _ b: Double) -> SessionEvent {
            SessionEvent(id: "evt-\(a)", eventClass: .snoring, start: a, end: b, confidence: 0.8, peakDBFS: -20, meanDBFS: -30, severity: 40)
        }
        // 10–13 and 12–15 cover 5 s; 20–30 holds 22–24; 40–46: 21 s in all, not 24.
        let summary = SessionSummary(duration: 600, analysedSeconds: 600, activeShare: 1, gateBypassed: false,
                                     events: [snore(20, 30), snore(12, 15), snore(10, 13), snore(22, 24), snore(40, 46)], episodes: [])
        #expect(abs(summary.snoringMinutes - 21.0 / 60) < 1e-12 && abs(summary.snoringPercent - 100 * 21.0 / 600) < 1e-12)
    }

    /// A night with gaps (parts joined over a pause, a microphone lost) says nothing of what
    /// happened in them: its rates and snoring share are over the time recorded. A session.json
    /// from before stop 48, whose summary spread them over the whole night, is read so too.
    @Test func ratesAndTheSnoringShareAreOverTheTimeRecorded() throws {
        func event(_ c: EventClass, _ start: Double) -> SessionEvent {
            SessionEvent(id: "evt-\(start)", eventClass: c, start: start, end: start + 30, confidence: 0.8,
                         peakDBFS: -20, meanDBFS: -30, severity: 40)
        }
        let events = [event(.snoring, 100), event(.snoring, 5000), event(.cough, 6000)]
        // Two hours, one of them a gap: 2 snores and a cough in one hour recorded.
        let summary = SessionSummary(duration: 7200, analysedSeconds: 600, activeShare: 0.1, gateBypassed: false,
                                     events: events, episodes: [], recordedSeconds: 3600)
        #expect(summary.eventsPerHour == ["snoring": 2, "sleep_talk": 0, "cough": 1] && summary.recordedSeconds == 3600)
        #expect(abs(summary.snoringPercent - 100 * 60.0 / 3600) < 1e-9 && summary.snoringMinutes == 1)
        // Nothing recorded: no rate, not a division by zero.
        let none = SessionSummary(duration: 60, analysedSeconds: 0, activeShare: 0, gateBypassed: false,
                                  events: [], episodes: [], recordedSeconds: 0)
        #expect(none.eventsPerHour.values.allSatisfy { $0 == 0 } && none.snoringPercent == 0)

        // As an older Somni wrote it: over the whole night, and no recordedSeconds.
        var old = SessionSummary(duration: 7200, analysedSeconds: 600, activeShare: 0.1, gateBypassed: false,
                                 events: events, episodes: [])
        #expect(old.eventsPerHour["snoring"] == 1)
        old.recordedSeconds = nil
        var session = Session(source: "a.wav + b.wav", startedAt: nil, duration: 7200, analysedSeconds: 600, activeShare: 0.1,
                              settings: .init(sensitivity: 5, classifier: "heuristic"), summary: old, episodes: [],
                              events: events, warnings: [])
        session.gaps = [RecordingGap(start: 1800, duration: 3600, reason: "no recording between the files")]
        #expect(session.recordedSeconds == 3600)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-rates-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = String(decoding: try session.jsonData(), as: UTF8.self)
        #expect(!text.contains("recordedSeconds"))
        try session.jsonData().write(to: folder)
        #expect(try Session.load(from: folder).summary == summary)
        // Without gaps an older summary's rates were already over the time recorded.
        session.gaps = nil
        try session.jsonData().write(to: folder)
        #expect(try Session.load(from: folder).summary == old)
    }

    /// An output file is written whole beside its place and renamed over it, leaving nothing
    /// else there (Foundation's atomic write left its temporary file when killed); a working
    /// file of its name abandoned six hours ago goes, a fresh one (another writer's) stays.
    @Test func anOutputFileLeavesNothingBesideIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("export.csv")
        let old = PartialFile.url(for: target), fresh = PartialFile.url(for: target)
        try Data("x".utf8).write(to: old)
        try Data("y".utf8).write(to: fresh)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7 * 3600)], ofItemAtPath: old.path)
        try OutputFile.write(Data("a,b\n".utf8), to: target)
        #expect(try String(contentsOf: target, encoding: .utf8) == "a,b\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["export.csv", fresh.lastPathComponent].sorted())
        try OutputFile.write(Data("c\n".utf8), to: target)
        #expect(try String(contentsOf: target, encoding: .utf8) == "c\n")

        // Through a link, existing or to nothing yet (relative, two links in a row): the link's
        // file is written, the links stay. A link to nothing was taken for a device and failed,
        // after a whole training.
        let fm = FileManager.default
        try fm.createDirectory(at: folder.appendingPathComponent("models"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: folder.appendingPathComponent("next.somnimodel").path, withDestinationPath: "models/new.somnimodel")
        try fm.createSymbolicLink(atPath: folder.appendingPathComponent("current.somnimodel").path, withDestinationPath: "next.somnimodel")
        let link = folder.appendingPathComponent("current.somnimodel")
        #expect(OutputFile.followingLinks(link).path == folder.appendingPathComponent("models/new.somnimodel").standardizedFileURL.path)
        #expect(!OutputFile.isDevice(link))
        for text in ["first", "second"] {
            try OutputFile.write(Data(text.utf8), to: link)
            #expect(try String(contentsOf: folder.appendingPathComponent("models/new.somnimodel"), encoding: .utf8) == text)
            #expect((try? fm.destinationOfSymbolicLink(atPath: link.path)) == "next.somnimodel")
        }
        // A relative link in a folder reached through a link is followed from where that folder
        // really is ("../x" there was taken beside the link); links in a loop are refused (the
        // last one was replaced with a file).
        try fm.createDirectory(at: folder.appendingPathComponent("deep/a/b"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: folder.appendingPathComponent("short").path, withDestinationPath: "deep/a/b")
        try fm.createSymbolicLink(atPath: folder.appendingPathComponent("deep/a/b/out").path, withDestinationPath: "../target.csv")
        try OutputFile.write(Data("t".utf8), to: folder.appendingPathComponent("short/out"))
        #expect(fm.fileExists(atPath: folder.appendingPathComponent("deep/a/target.csv").path))
        #expect(!fm.fileExists(atPath: folder.appendingPathComponent("target.csv").path))
        try fm.createSymbolicLink(atPath: folder.appendingPathComponent("loop-a").path, withDestinationPath: "loop-b")
        try fm.createSymbolicLink(atPath: folder.appendingPathComponent("loop-b").path, withDestinationPath: "loop-a")
        #expect(throws: SomniError.self) { try OutputFile.write(Data("x".utf8), to: folder.appendingPathComponent("loop-a")) }
        #expect((try? fm.destinationOfSymbolicLink(atPath: folder.appendingPathComponent("loop-b").path)) == "loop-a")
    }

    /// Files that belong together go into place together or not at all: a model whose figures
    /// could not be written was removed after it had replaced the one before (a user's model lost).
    @Test func filesWrittenTogetherLeaveTheOldOnesWhenOneFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("my.somnimodel"), report = folder.appendingPathComponent("my.report.json")
        try OutputFile.write([(Data("model 1".utf8), model), (Data("report 1".utf8), report)])
        #expect(try String(contentsOf: model, encoding: .utf8) == "model 1")
        #expect(try String(contentsOf: report, encoding: .utf8) == "report 1")
        // The second cannot be written (its folder is gone): the first keeps what it held.
        let lost = folder.appendingPathComponent("gone/my.report.json")
        #expect(throws: (any Error).self) { try OutputFile.write([(Data("model 2".utf8), model), (Data("report 2".utf8), lost)]) }
        #expect(try String(contentsOf: model, encoding: .utf8) == "model 1")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["my.report.json", "my.somnimodel"])
        try OutputFile.write([(Data("model 3".utf8), model), (Data("report 3".utf8), report)])
        #expect(try String(contentsOf: model, encoding: .utf8) == "model 3")
        #expect(try String(contentsOf: report, encoding: .utf8) == "report 3")
        // The second cannot be put in place (a folder took its name meanwhile) after the first
        // was: the first gets back what it held, and a place that held nothing is left empty.
        let taken = folder.appendingPathComponent("taken.report.json"), fresh = folder.appendingPathComponent("fresh.somnimodel")
        try FileManager.default.createDirectory(at: taken, withIntermediateDirectories: true)
        #expect(throws: SomniError.self) { try OutputFile.write([(Data("model 4".utf8), model), (Data("x".utf8), fresh), (Data("r".utf8), taken)]) }
        #expect(try String(contentsOf: model, encoding: .utf8) == "model 3")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["my.report.json", "my.somnimodel", "taken.report.json"])
    }

    /// Gaps are cut to the night and counted once where they overlap: summed as given, a gap past
    /// the end left a night with events 0 % snoring, and overlapping ones took time twice.
    @Test func gapsCountOnlyTheirTimeInsideTheNightAndOnce() {
        func gap(_ start: Double, _ duration: Double) -> RecordingGap { RecordingGap(start: start, duration: duration, reason: "x") }
        #expect(RecordingGap.recorded(of: 30, less: [gap(100, 50)]) == 30)
        #expect(RecordingGap.recorded(of: 30, less: [gap(-5, 10)]) == 25)
        #expect(RecordingGap.recorded(of: 30, less: [gap(5, 5), gap(7, 5)]) == 23)
        #expect(RecordingGap.recorded(of: 30, less: [gap(20, 5), gap(5, 2), gap(6, 1)]) == 23)
        #expect(RecordingGap.recorded(of: 30, less: [gap(.nan, 5), gap(3, .infinity), gap(10, -4)]) == 30)
        #expect(RecordingGap.unrecorded(in: 30, by: [gap(25, 50)]) == 5)
    }

    /// Forcing a folder to the disk opens its plain files and folders only: a pipe or a link in a
    /// folder someone imports must not block it, and a missing folder is one I/O error. The limit
    /// catches a hang on the pipe, which never ends; a minute did not cover an fsync queued behind
    /// the other tests' eight-hour nights being written (it ran out once in a full suite, and the
    /// test alone takes 5 ms).
    @Test(.timeLimit(.minutes(10))) func flushingAFolderOpensOnlyItsFilesAndFolders() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("somni-flush-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("clips"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: folder.appendingPathComponent("session.json"))
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("clips/evt-0001.mp3"))
        #expect(mkfifo(folder.appendingPathComponent("clips/pipe").path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("link").path,
                                                   withDestinationPath: folder.appendingPathComponent("clips/pipe").path)
        try NightFolder.flushToDisk(folder)
        #expect { try NightFolder.flushToDisk(folder.appendingPathComponent("gone")) } throws: { ($0 as? SomniError)?.code == .io }
    }

    /// An analysis killed half way leaves its hidden working folder beside the destination, with
    /// a spool of the night's samples (about 0.9 GB for eight hours). The next night written
    /// there removes those of the same name left unchanged for hours, and never one that is
    /// still being written or belongs to another night.
    @Test func workingFoldersOfKilledAnalysesAreRemovedByTheNextOne() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("somni-partial-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: parent) }
        let destination = parent.appendingPathComponent("night1")
        func working(_ name: String, hoursAgo: Double) throws -> URL {
            let folder = parent.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let spool = folder.appendingPathComponent(".samples.spool")
            try Data(repeating: 7, count: 4_096).write(to: spool)
            let then = Date(timeIntervalSinceNow: -hoursAgo * 3_600)
            for url in [spool, folder] { try FileManager.default.setAttributes([.modificationDate: then], ofItemAtPath: url.path) }
            return folder
        }
        let killed = try working(".night1.partial-1a2b3c4d", hoursAgo: 7)
        let running = try working(".night1.partial-5e6f7a8b", hoursAgo: 0.5)
        let otherNight = try working(".night2.partial-9c0d1e2f", hoursAgo: 7)
        let notOurs = try working(".night1.partial-notours", hoursAgo: 7)
        try NightFolder.writeAtomically(to: destination) { folder in
            try Data("{}".utf8).write(to: folder.appendingPathComponent("session.json"))
        }
        let fm = FileManager.default
        #expect(!fm.fileExists(atPath: killed.path))
        #expect(fm.fileExists(atPath: running.path) && fm.fileExists(atPath: otherNight.path) && fm.fileExists(atPath: notOurs.path))
        #expect(fm.fileExists(atPath: destination.appendingPathComponent("session.json").path))
    }

    @Test func envelopeFileRoundTripsAndIgnoresPartialTail() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("envelope.bin")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try EnvelopeFile.write(values: [0.5, 0.25, 1e-4], rate: 10, start: start, to: url)
        var data = try Data(contentsOf: url)
        data.append(contentsOf: [1, 2])  // a crash mid-value
        try data.write(to: url)
        let c = try EnvelopeFile.read(from: url)
        #expect(c.values == [0.5, 0.25, 1e-4])
        #expect(c.rate == 10)
        #expect(c.start == start)
        try Data("nope".utf8).write(to: url)
        #expect(throws: SomniError.self) { try EnvelopeFile.read(from: url) }
        // Damaged (or hand-made) files a report could not lay out are refused, saying what.
        for (values, rate, startSeconds, said) in [([Float.infinity], 10.0, 0.0, "its level 1 is inf"),
                                                   ([0.5, -1], 10, 0, "its level 2 is -1.0"),
                                                   ([0.5], .infinity, 0, "its rate is inf"),
                                                   ([0.5], 1e-30, 0, "its rate is 1e-30"),
                                                   ([0.5], 1e30, 0, "its rate is 1e+30"),
                                                   ([0.5], 10, 1e300, "its start is 1e+300")] {
            try EnvelopeFile.write(values: values, rate: rate, start: Date(timeIntervalSince1970: startSeconds), to: url)
            #expect { try EnvelopeFile.read(from: url) } throws: { "\($0)".contains("is damaged: \(said)") }
        }
    }
}

/// Dating a recording from what it says of itself.
@Suite struct RecordingStartTests {
    /// A local time names one moment, two in the hour the clocks go back, none in the hour they skip.
    @Test func aLocalTimeOnAClockChangeNamesTwoMomentsOrNone() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let iso = ISO8601DateFormatter()
        func moments(_ text: String, _ zone: TimeZone = berlin) -> [String]? {
            RecordingStart.moments(text, timeZone: zone)?.map { iso.string(from: $0) }
        }
        #expect(moments("2026-10-25 02:30") == ["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"])
        #expect(moments("2026-03-29T02:30") == [])
        #expect(moments("2026-10-25 03:30") == ["2026-10-25T02:30:00Z"])
        #expect(moments("2026-11-28 23:14") == ["2026-11-28T22:14:00Z"])
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(moments("2026-11-01 01:30", newYork) == ["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"])
        // More than 12 h ahead of UTC (Chatham: +12:45, +13:45 in summer), the changes are
        // still found: 02:00 before the spring change is one moment, 03:00 is skipped, and
        // 03:00 on the autumn night happens twice (02:00 was refused as skipped, and no second
        // 03:00 was seen, while only ±12 h of offsets were looked at).
        let chatham = try #require(TimeZone(identifier: "Pacific/Chatham"))
        #expect(moments("2026-09-27 02:00", chatham) == ["2026-09-26T13:15:00Z"])
        #expect(moments("2026-09-27 03:00", chatham) == [])
        #expect(moments("2026-04-05 03:00", chatham) == ["2026-04-04T13:15:00Z", "2026-04-04T14:15:00Z"])
        let kiritimati = try #require(TimeZone(identifier: "Pacific/Kiritimati"))
        #expect(moments("2026-11-28 23:14", kiritimati) == ["2026-11-28T09:14:00Z"])
        #expect(moments("2026-10-25 02:30+01:00") == nil, "an offset of its own names one moment")
        #expect(moments("tonight") == nil)
    }

    static let plusOne = TimeZone(secondsFromGMT: 3600)!
    /// 2026-11-28 23:14:02 at UTC+1.
    static let bedtime = Date(timeIntervalSince1970: 1_795_904_042)

    @Test func givenTimesAreReadInTheirOwnOffsetOrTheLocalOne() {
        #expect(RecordingStart.parse("2026-11-28T23:14:02", timeZone: Self.plusOne) == Self.bedtime)
        #expect(RecordingStart.parse("2026-11-28 23:14:02+01:00", timeZone: .init(secondsFromGMT: 0)!) == Self.bedtime)
        #expect(RecordingStart.parse("2026-11-28T22:14:02.000000Z", timeZone: Self.plusOne) == Self.bedtime)
        #expect(RecordingStart.parse("2026-11-28T23:14", timeZone: Self.plusOne) == Self.bedtime.addingTimeInterval(-2))
        #expect(RecordingStart.parse("2026-11-28T17:14:02-0500") == Self.bedtime)
        for bad in ["2026-11-28", "23:14", "2026-02-30T23:00", "2026-11-28T24:10", "yesterday", "2026-11-28T23:14+25:00"] {
            #expect(RecordingStart.parse(bad) == nil, "\(bad)")
        }
        // The clock an offset names, when it is not the local zone's at that moment.
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        #expect(RecordingStart.clock(of: "2026-11-28T23:00+13:00", timeZone: berlin)?.secondsFromGMT() == 13 * 3600)
        #expect(RecordingStart.clock(of: "2026-11-28T23:00-03:30", timeZone: berlin)?.secondsFromGMT() == -12_600)
        #expect(RecordingStart.clock(of: "2026-11-28T23:00Z", timeZone: berlin) == nil, "Z names a moment, not a clock")
        #expect(RecordingStart.clock(of: "2026-11-28T23:00+00:00", timeZone: berlin)?.secondsFromGMT() == 0)
        #expect(RecordingStart.clock(of: "2026-11-28T23:00+01:00", timeZone: berlin) == nil)
        #expect(RecordingStart.clock(of: "2026-07-28T23:00+02:00", timeZone: berlin) == nil, "summer time is Berlin's own")
        #expect(RecordingStart.clock(of: "2026-11-28T23:00", timeZone: berlin) == nil)
    }

    @Test(arguments: [
        "Recording_20261128_231402.m4a", "2026-11-28 23.14.02.m4a", "20261128-231402.wav", "VID_20261128_231402.mp4",
        "night 2026-11-28 at 23-14-02.flac", "2026_11_28_23_14_02.ogg", "20261128T231402.wav",
        "Aufnahme 28.11.2026 23-14-02.m4a", "Enregistrement 28.11.2026 23.14.02.m4a", "28.11.2026, 23:14:02.wav",
    ])
    func recorderAppsNamesGiveTheStart(name: String) {
        #expect(RecordingStart.inFileName(name, timeZone: Self.plusOne) == Self.bedtime, "\(name)")
    }

    @Test func namesWithoutADateAndTimeGiveNothing() {
        for name in ["night-8h.wav", "fan-41.flac", "2026-11-28.m4a", "Recording 001.m4a", "20261128.wav",
                     "120261128_231402.wav", "20261128_2314029.wav", "20261330_231402.wav", "1_139.wav",
                     "28.11.2026.m4a", "11.28.2026 23.14.m4a", "1.28.11.2026 23.14.m4a", "28.11.26 23.14.m4a"] {
            #expect(RecordingStart.inFileName(name) == nil, "\(name)")
        }
        #expect(RecordingStart.inFileName("Recording_20261128_2314.m4a", timeZone: Self.plusOne) == Self.bedtime.addingTimeInterval(-2))
    }

    /// A name dated years ahead (a typo, a wrong phone clock) dates nothing, as `--started` refuses
    /// such a time; up to a day ahead is a clock's error and stands.
    @Test func aTimeInTheNameFarAheadIsPassedOver() {
        let name = "Recording_20261128_231402.m4a"
        #expect(RecordingStart.inFileName(name, timeZone: Self.plusOne, now: Self.bedtime.addingTimeInterval(-86_000)) == Self.bedtime)
        #expect(RecordingStart.inFileName(name, timeZone: Self.plusOne, now: Self.bedtime.addingTimeInterval(-90_000)) == nil)
        #expect(RecordingStart.inFileName("Aufnahme 28.11.2099 23-14-02.m4a") == nil)
        #expect(RecordingStart.inFileName("Recording_20991128_231402.m4a") == nil)
        // ... and is there to be said: the night was left undated with "does not say when it started".
        #expect(RecordingStart.aheadInFileName(name, timeZone: Self.plusOne, now: Self.bedtime.addingTimeInterval(-90_000)) == Self.bedtime)
        #expect(RecordingStart.aheadInFileName(name, timeZone: Self.plusOne, now: Self.bedtime.addingTimeInterval(-86_000)) == nil)
        #expect(RecordingStart.aheadInFileName("Recording_20991128_231402.m4a") != nil)
        #expect(RecordingStart.aheadInFileName("night.m4a") == nil)
    }

    /// Many phone apps write an M4A's creation time when they stop: one recording's length after
    /// the time they put in its name, which is then the start.
    @Test func aCreationTimeAtTheRecordingsEndGivesWayToTheNamesTime() {
        let eightHours = 8.0 * 3600
        func start(created offset: Double?, named: Bool = true, lasting duration: Double? = eightHours,
                   origin: RecordingStart.Origin = .creationTime) -> RecordingStart? {
            RecordingStart.reconciled(fileTime: offset.map { RecordingStart(date: Self.bedtime + $0, origin: origin) },
                                      nameTime: named ? Self.bedtime : nil, duration: duration)
        }
        let fromName = RecordingStart(date: Self.bedtime, origin: .fileName)
        // Written at the stop, a few seconds after the last sample, or up to 1 % of the night off.
        #expect(start(created: eightHours + 4) == fromName)
        #expect(start(created: eightHours - 250) == fromName)
        #expect(start(created: eightHours + 4, origin: .dateTag) == fromName)
        // At the start, or a clock's minute away from the name: the file's own time, to the second.
        #expect(start(created: 4) == RecordingStart(date: Self.bedtime + 4, origin: .creationTime))
        #expect(start(created: -60) == RecordingStart(date: Self.bedtime - 60, origin: .creationTime))
        // Neither the start nor the end (another day, a phone in another zone): the file's own.
        #expect(start(created: eightHours + 3600)?.origin == .creationTime)
        #expect(start(created: eightHours - 3600)?.origin == .creationTime)
        // Nothing to weigh: whichever there is.
        #expect(start(created: eightHours + 4, named: false) == RecordingStart(date: Self.bedtime + eightHours + 4, origin: .creationTime))
        #expect(start(created: nil) == fromName)
        #expect(start(created: nil, named: false) == nil)
        #expect(start(created: eightHours + 4, lasting: nil)?.origin == .creationTime)
        // A recording of a few minutes could have started or stopped at either: the file's own.
        #expect(start(created: 300, lasting: 300)?.origin == .creationTime)
        #expect(start(created: 400, lasting: 400) == fromName)

        // No time in the name: a creation time at the file's last change is the stop.
        func unnamed(created: Double, modified: Double?, origin: RecordingStart.Origin = .creationTime,
                     lasting duration: Double = eightHours) -> RecordingStart? {
            RecordingStart.reconciled(fileTime: RecordingStart(date: Self.bedtime + created, origin: origin), nameTime: nil,
                                      modified: modified.map { Self.bedtime + $0 }, duration: duration)
        }
        #expect(unnamed(created: eightHours + 4, modified: eightHours + 30)
                == RecordingStart(date: Self.bedtime + 4, origin: .creationTimeAtEnd))
        #expect(unnamed(created: eightHours + 4, modified: eightHours - 200)?.origin == .creationTimeAtEnd)
        // Written from its start, a file changes last one recording after its creation time.
        #expect(unnamed(created: 4, modified: eightHours + 30) == RecordingStart(date: Self.bedtime + 4, origin: .creationTime))
        // Copied since (the copy's own time), or no time of change: nothing to go by.
        #expect(unnamed(created: eightHours + 4, modified: 3 * 86_400)?.origin == .creationTime)
        #expect(unnamed(created: eightHours + 4, modified: nil)?.origin == .creationTime)
        // A date tag is a tag, written by a tagging tool as often as by a recorder; a short
        // recording could be either.
        #expect(unnamed(created: eightHours + 4, modified: eightHours + 30, origin: .dateTag)?.origin == .dateTag)
        #expect(unnamed(created: 300, modified: 330, lasting: 300)?.origin == .creationTime)
    }

    @Test func aStartIsPlausibleOnlyThisCenturyAndNotInTheFuture() {
        let now = Self.bedtime.addingTimeInterval(8 * 3600)
        #expect(RecordingStart.isPlausible(Self.bedtime, now: now))
        #expect(!RecordingStart.isPlausible(Date(timeIntervalSince1970: 0), now: now))
        #expect(!RecordingStart.isPlausible(now.addingTimeInterval(2 * 86_400), now: now))
    }
}
