import Foundation
import Testing
@testable import SomniCore
import SomniStore
@testable import SomniReport

@Suite struct ReportTests {
    static func fixtureNight(events: [SessionEvent] = ReportFixture.events) -> ReportNight {
        let s = ReportFixture.session(events: events)
        let env = EnvelopeFile.Contents(rate: 10, start: s.startDate,
                                        values: ReportFixture.envelope(duration: s.duration, events: events))
        return ReportNight(id: "n1", session: s, envelope: env,
                           clipSources: Dictionary(uniqueKeysWithValues: events.map { ($0.id, "c/\($0.id).wav") }))
    }

    @Test func theRibbonCoversTheNightOnTheClocksTenSecondGrid() {
        let data = ReportMath.night(ReportTests.fixtureNight())
        #expect(data.firstHour == 23)
        #expect(data.offset == 2400)
        #expect(data.ribbon.first == 240)
        #expect(data.ribbon.level.count == ReportFixture.expectedCells)
        for (letter, n) in ReportFixture.expectedClassCells {
            #expect(data.ribbon.cls.filter { $0 == letter }.count == n)
        }
        // Quiet cells read the floor (−54 dBFS); the cough's cell reads near its peak.
        #expect(data.ribbon.level[0] == -54)
        let coughCell = (2400 + 3600) / 10 - 240
        #expect(data.ribbon.cls[data.ribbon.cls.index(data.ribbon.cls.startIndex, offsetBy: coughCell)] == "c")
        #expect((data.ribbon.level[coughCell] ?? -100) > -16)
    }

    @Test func eventsAreCountedPerClassInEachHourOfTheNight() {
        // Rows 23:00, 00:00, 01:00; events start at 23:50, 00:10, 00:40 and 01:03.
        #expect(ReportMath.night(ReportTests.fixtureNight()).hours == [[1, 0, 0], [0, 1, 1], [1, 0, 0]])
    }

    @Test func oneBangDoesNotFlattenTheTimeline() {
        // 20 ordinary snores at −30 dBFS and one bang at −2 dBFS.
        var events = (0..<20).map { ReportFixture.event($0 + 1, .snoring, Double(200 + 300 * $0), Double(205 + 300 * $0), peak: -30) }
        events.append(ReportFixture.event(21, .cough, 6500, 6500.4, peak: -2))
        let data = ReportMath.night(ReportTests.fixtureNight(events: events))
        let ordinary = data.events.filter { $0.c == "snoring" }.map(\.h)
        #expect(ordinary.allSatisfy { $0 == 100 }, "ordinary events keep full height: \(ordinary)")
        let timeline = data.envelope
        #expect(timeline.count == ReportMath.timelineColumns)
        #expect(ReportMath.percentile([1, 2, 3, 4, 100] as [Double], 0.5) == 3)
    }

    @Test func eachClipGets96BinsThatFollowItsLoudness() {
        let data = ReportMath.night(ReportTests.fixtureNight())
        for e in data.events {
            #expect(e.bins.count == 96)
            #expect(e.bins.max() == 100)
        }
        // A 25 s snore padded by 1 s: the padding (quiet) sits at both ends, loud in the middle.
        let snore = data.events[0]
        #expect(snore.bins[0] < 20 && snore.bins[95] < 20)
        #expect(snore.bins[48] > 30)
    }

    /// An event within a second of either end of the night has a clip cut short by the recording,
    /// and its waveform spans the same time. Before, it spanned the event ± 1 s regardless, so
    /// the snore at 0.2 s was drawn at 40 % of the width while it played at 12 %.
    @Test func aWaveformSpansWhatItsClipPlaysAtTheEndsOfTheNight() {
        let events = [ReportFixture.event(1, .snoring, 0.2, 0.7, peak: -20),
                      ReportFixture.event(2, .cough, 7199.5, 7199.8, peak: -15)]
        let data = ReportMath.night(ReportTests.fixtureNight(events: events))
        // The first clip plays 0–1.7 s: the snore fills bins 11–40 of 96, then quiet.
        let first = data.events[0].bins
        #expect(first[5] < 20 && first[12] > 30 && first[25] > 30 && first[60] < 20, "\(first)")
        // The last plays 7198.5–7200 s: quiet for its first two thirds, the cough after.
        let last = data.events[1].bins
        #expect(last[30] < 20 && last[64...90].max()! > 30, "\(last)")
    }

    @Test func aNightWithoutStartOrEnvelopeStillRenders() {
        var n = ReportTests.fixtureNight()
        n.session.startedAt = nil
        n.envelope = nil
        let data = ReportMath.night(n)
        #expect(data.firstHour == nil && data.offset == 0)
        #expect(data.ribbon.level.count == 720 && data.ribbon.level.allSatisfy { $0 == nil })
        #expect(data.events.allSatisfy { $0.bins.isEmpty })
        let html = NightReport.html(nights: [n])
        #expect(html.contains("+0:10:00"))
    }

    @Test func thePageIsSelfContainedAndNamesNoNetworkAddress() throws {
        var night = ReportTests.fixtureNight()
        night.session.source = "</script><script>alert(1)</script>"
        let html = NightReport.html(nights: [night, ReportTests.fixtureNight()])
        let lower = html.lowercased()
        for forbidden in ["http:", "https:", "ws:", "wss:", "ftp:", "//cdn", "fetch(", "xmlhttprequest", "websocket",
                          "eventsource", "sendbeacon", "import(", "@import", "@font-face", "<link", "<iframe",
                          "<object", "<embed", "<img", "serviceworker", "src=\"//"] {
            #expect(!lower.contains(forbidden), "the page contains \(forbidden)")
        }
        // Every src= and url( points at a relative path or data:.
        for marker in ["src=\"", "url("] {
            var rest = Substring(lower)
            while let r = rest.range(of: marker) {
                let value = rest[r.upperBound...].prefix { $0 != "\"" && $0 != ")" }
                #expect(!value.contains(":") || value.hasPrefix("data:"), "\(marker)\(value)")
                rest = rest[r.upperBound...]
            }
        }
        #expect(html.contains("Content-Security-Policy") && html.contains("default-src 'none'"))
        // Text from the session cannot break out of its element, nor out of the JSON block.
        #expect(!html.contains("<script>alert(1)"))
        #expect(occurrences(of: "</script>", in: html) == 3)
    }

    @Test func severalNightsGetTrendsAndALinkedList() {
        var second = ReportTests.fixtureNight()
        second.id = "n2"
        second.session.startedAt = "2026-11-29T23:00:00+01:00"
        let html = NightReport.html(nights: [ReportTests.fixtureNight(), second])
        #expect(html.contains("id=\"trends\"") && html.contains("href=\"#night-1\""))
        #expect(html.contains("\"trends\":[{"))
        #expect(!NightReport.html(nights: [second]).contains("id=\"trends\""))
    }

    @Test func trendsCanCoverMoreNightsThanAreShownInFull() throws {
        let records = (1...40).map { d in
            NightRecord(id: "n\(d)", startedAt: String(format: "2026-10-%02dT23:00:00Z", min(d, 28)), nightDate: "2026-10-\(d)",
                        source: "x", duration: 3600, analysedSeconds: 600, activeShare: 0.2, sensitivity: 5,
                        classifier: "heuristic", snoringMinutes: Double(d), snoringPercent: Double(d) / 0.6,
                        snoringEpisodes: 1, eventCounts: ["snoring": d, "sleep_talk": 0, "cough": 1], addedAt: 0)
        }
        var shown = ReportTests.fixtureNight()
        shown.id = "n40"
        let html = NightReport.html(nights: [shown], trends: records.map { TrendNight(record: $0) })
        #expect(html.contains("Across 40 nights"))
        let list = try #require(html.range(of: "<nav class=\"nightlist\">").flatMap { start in
            html[start.upperBound...].range(of: "</nav>").map { html[start.upperBound..<$0.lowerBound] } })
        #expect(occurrences(of: "<tr><td>", in: String(list)) == 40, "every night is listed")
        #expect(occurrences(of: "href=\"#night-", in: html) == 1, "only the night shown in full is linked")
        #expect(html.contains("href=\"#night-0\">2026-10-40<"))
        #expect(occurrences(of: "<section class=\"night\"", in: html) == 1)
        let rates = try #require(TrendNight(record: records[9]).rates["snoring"])
        #expect(rates == 10)
        #expect(html.contains("The latest night is shown in full below;"), "one night of 40 in full")
        // One night in the list and none in full (--details 0) is said in words, not "1 nights" or "The 0 latest".
        let alone = NightReport.html(nights: [], trends: [TrendNight(record: records[0])])
        #expect(alone.contains("Across 1 night<") && alone.contains("<title>Somni · 1 night</title>")
                && alone.contains("No night is shown in full below;"), "\(alone)")
    }

    /// A file name's direction marks stay inside it: a right-to-left override in the name turned
    /// the night's id after it around ("· id 0032-…" read backwards).
    @Test func aFileNamesDirectionStaysInsideIt() {
        var night = ReportTests.fixtureNight()
        night.session.source = "bedroom \u{202E}evan.wav"
        #expect(NightReport.html(nights: [night]).contains("<bdi>bedroom \u{202E}evan.wav</bdi> · id \(night.id)</small>"))
    }

    @Test func numbersAreFormattedLikePrintf() {
        // (Exact halves aside, where printf rounds to even.)
        for v in [0.0, 0.04, 0.07, 1.26, -3.46, -0.04, 12.0, 99.96, 1234.5678, -17.2] {
            #expect(Format.fixed(v, 1) == String(format: "%.1f", v).replacingOccurrences(of: "-0.0", with: "0.0"), "\(v)")
            #expect(Format.fixed(v, 0) == String(format: "%.0f", v).replacingOccurrences(of: "-0", with: "0"), "\(v)")
        }
        // A half that a subtraction left a hair under is rounded as the half it is, as its CSV
        // figure (1.150) says: durations of 1.15 s read "1.2" whichever times gave them.
        for (start, end) in [(10.0, 11.15), (1234.45, 1235.6), (0.3, 1.45)] {
            #expect(Format.fixed(end - start, 1) == "1.2" && Format.fixed(end - start, 3) == "1.150", "\(end - start)")
        }
        #expect(Format.fixed(-(11.15 - 10.0), 1) == "-1.2" && Format.fixed(1.1499, 1) == "1.1" && Format.fixed(0.95 - 1e-6, 1) == "0.9")
        // Only a hair: a night's times to three decimals are rounded as printf does.
        #expect(Format.fixed(28_800.12349, 3) == "28800.123" && Format.fixed(30_000.00049, 3) == "30000.000")
        #expect(Format.fixed(123_456_789.44, 1) == "123456789.4")
        #expect(Format.duration(7 * 3600 + 5 * 60) == "7 h 05 min")
        // Snoring minutes, as analyze, show, nights and the report all give them.
        #expect([0.04, 0.4, 9.94, 9.96, 12.5, 95.2].map(Format.minutes) == ["0.0 min", "0.4 min", "9.9 min", "10 min", "13 min", "95 min"])
        #expect(Format.elapsed(3725) == "1:02:05")
        #expect(padded(7) == "07" && padded(2026, 4) == "2026" && padded(-5, 3) == "-005")
    }

    @Test func summaryNumbersAreShown() {
        let html = NightReport.html(nights: [ReportTests.fixtureNight()])
        // 2 h in bed, 37 s snoring → 0.6 min, 0.5 %.
        #expect(html.contains(">2 h 00 min<") && html.contains(">0.6 min<") && html.contains(">0.5 %<"))
        #expect(html.contains("23:40 → 01:40"))
        #expect(html.contains(">23:50:00<"), "event clock time in the recording's offset")
    }

    /// The episodes table says when the night snored, each row linking to its loudest snore's row.
    @Test func snoringEpisodesAreListedWithALinkToTheirLoudestSnore() {
        var events = ReportFixture.events
        events[0].episode = 0  // −22 dBFS at 600 s
        events[3].episode = 0  // −25 dBFS at 5,000–5,012 s
        var night = ReportTests.fixtureNight(events: events)
        night.session.episodes = [SnoringEpisode(start: 600, end: 5012, eventCount: 2)]
        let html = NightReport.html(nights: [night])
        #expect(html.contains("<h3>Snoring episodes (1)</h3>"))
        #expect(html.contains("<tr><td>1</td><td>23:50:00</td><td class=\"hide-narrow\">01:03:32</td><td class=\"num\">1:13:32</td>"
                              + "<td class=\"num hide-narrow\">2</td><td class=\"num\"><a href=\"#n0-evt-0001\">-22.0 dBFS</a></td></tr>"), "\(html)")
        #expect(html.contains("<li class=\"event snoring\" id=\"n0-evt-0001\""), "the link's target is the snore's row")
        night.session.episodes = []
        #expect(!NightReport.html(nights: [night]).contains("Snoring episodes"))
    }

    @Test func clipLinksAreRelativeCopiedOrEmbedded() throws {
        let scratch = try Scratch()
        let night = try ReportFixture.folder(at: scratch.path("store/nights/n1"))
        let nextToNight = try ReportNight.load(id: "n1", folder: night, clips: .relative(reportDirectory: scratch.path("store")))
        #expect(nextToNight.clipSources["evt-0001"] == "nights/n1/clips/evt-0001.wav")
        let away = try ReportNight.load(id: "n1", folder: night, clips: .relative(reportDirectory: scratch.path("elsewhere/deep")))
        #expect(away.clipSources["evt-0001"] == "../../store/nights/n1/clips/evt-0001.wav")
        // A report folder reached through a link four folders shallower than the folder it is:
        // the URL climbs from the link, as a browser resolves it from the address opened.
        try FileManager.default.createDirectory(at: scratch.path("real/a/b/c/d"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: scratch.path("linked"), withDestinationURL: scratch.path("real/a/b/c/d"))
        let linked = try ReportNight.load(id: "n1", folder: night, clips: .relative(reportDirectory: scratch.path("linked")))
        let src = try #require(linked.clipSources["evt-0001"])
        #expect(src == "../store/nights/n1/clips/evt-0001.wav")
        let opened = try #require(URL(string: src, relativeTo: URL(fileURLWithPath: scratch.path("linked").path + "/r.html")))
        #expect(FileManager.default.fileExists(atPath: opened.absoluteURL.standardized.path), "\(opened.absoluteURL.standardized.path)")
        let copied = try ReportNight.load(id: "n1", folder: night,
                                          clips: .copied(into: scratch.path("r/my report_clips"), reportDirectory: scratch.path("r")))
        #expect(copied.clipSources["evt-0002"] == "my%20report_clips/n1/clips/evt-0002.wav")
        #expect(FileManager.default.fileExists(atPath: scratch.path("r/my report_clips/n1/clips/evt-0002.wav").path))
        // A night folder where its clips would be copied to: they are there already, and stay
        // (each was removed to make room for a copy of itself, which then found nothing).
        let inside = try ReportFixture.folder(at: scratch.path("y_clips/bn"))
        let inPlace = try ReportNight.load(id: "bn", folder: inside, clips: .copied(into: scratch.path("y_clips"), reportDirectory: scratch.url))
        #expect(inPlace.clipSources["evt-0001"] == "y_clips/bn/clips/evt-0001.wav" && inPlace.missingClips.isEmpty)
        let kept = try FileManager.default.contentsOfDirectory(atPath: inside.appendingPathComponent("clips").path).count
        #expect(kept >= 3 && kept == inPlace.clipSources.count, "\(kept) clips left")
        let embedded = try ReportNight.load(id: "n1", folder: night, clips: .embedded)
        let data = try #require(embedded.clipSources["evt-0003"])
        #expect(data.hasPrefix("data:audio/wav;base64,UklGR"))
        // Each clip once in the page, in its player: a copy in the script's data doubled the page.
        #expect(occurrences(of: data, in: NightReport.html(nights: [embedded])) == 1)
    }

    @Test func aMissingClipCostsItsPlayerNotTheReport() throws {
        let scratch = try Scratch()
        let night = try ReportFixture.folder(at: scratch.path("n"))
        try FileManager.default.removeItem(at: night.appendingPathComponent("clips/evt-0003.wav"))
        for linking in [ClipLinking.embedded, .copied(into: scratch.path("r/c"), reportDirectory: scratch.path("r"))] {
            let n = try ReportNight.load(id: "n", folder: night, clips: linking)
            #expect(n.missingClips == ["clips/evt-0003.wav"])
            #expect(n.clipSources.count == 3 && n.clipSources["evt-0003"] == nil)
            let html = NightReport.html(nights: [n])
            #expect(html.contains("1 clip is missing from the night folder"))
            #expect(occurrences(of: "<audio ", in: html) == 3)
        }
    }

    /// A missing or damaged envelope.bin costs the loudness views, and the page says so.
    @Test func aMissingOrDamagedEnvelopeIsNamedOnThePage() throws {
        let scratch = try Scratch()
        let night = try ReportFixture.folder(at: scratch.path("n"))
        let intact = try ReportNight.load(id: "n", folder: night, clips: .embedded)
        #expect(intact.envelope != nil && intact.envelopeProblem == nil)
        #expect(!NightReport.html(nights: [intact]).contains("loudness views are left out"))

        let file = night.appendingPathComponent(EnvelopeFile.fileName)
        var bytes = try Data(contentsOf: file)
        bytes.replaceSubrange(bytes.count - 4..<bytes.count, with: withUnsafeBytes(of: Float.infinity.bitPattern.littleEndian) { Data($0) })
        try bytes.write(to: file)
        let damaged = try ReportNight.load(id: "n", folder: night, clips: .embedded)
        #expect(damaged.envelope == nil)
        #expect(damaged.envelopeProblem?.contains("is damaged: its level") == true)
        #expect(NightReport.html(nights: [damaged]).contains("the loudness views are left out"))

        try FileManager.default.removeItem(at: file)
        let missing = try ReportNight.load(id: "n", folder: night, clips: .embedded)
        #expect(missing.envelopeProblem?.hasPrefix("envelope.bin is missing") == true)
        #expect(NightReport.html(nights: [missing]).contains("envelope.bin is missing from the night folder"))
    }

    /// An envelope cut short is drawn where its levels were measured, blank after, and the page
    /// says how much it holds: stretched over the night, a cough at 1:00 was drawn at 1:57.
    @Test func anEnvelopeCutShortIsDrawnAtItsTimesAndNamed() throws {
        // A level that rises with time, 10 values a second, cut at 3700 s of a 7200 s night:
        // each 10 s column peaks at its own last value, wherever the envelope ends.
        let ramp = (0..<37_000).map { Float($0) }
        let columns = ReportMath.timeline(ramp, rate: 10, duration: 7200, columns: ReportMath.timelineColumns)
        #expect(columns.count == 720)
        #expect(columns[370...].allSatisfy { $0 == nil })
        let reference = ReportMath.percentile(ramp, 0.95)
        let expected = (0..<370).map { Int((min(1, Double(100 * $0 + 99) / reference) * 100).rounded()) }
        #expect(columns[..<370].map { $0 ?? -1 } == expected)
        // The fixture's cough at 3600 s: the column for 3600 s holds its level, as in the whole night.
        var cut = ReportTests.fixtureNight()
        let firstPart = Array(cut.envelope!.values.prefix(37_000))
        cut.envelope?.values = firstPart
        #expect(ReportMath.night(cut).envelope[360] == 100 && ReportMath.night(cut).envelope[700] == nil)

        let scratch = try Scratch()
        let night = try ReportFixture.folder(at: scratch.path("n"))
        let file = night.appendingPathComponent(EnvelopeFile.fileName)
        let bytes = try Data(contentsOf: file)
        try bytes.prefix(EnvelopeFile.headerSize + 4 * 37_000).write(to: file)
        let loaded = try ReportNight.load(id: "n", folder: night, clips: .embedded)
        #expect(loaded.envelope?.values.count == 37_000)
        #expect(loaded.envelopeProblem == "envelope.bin holds the levels of only the first 1:01:40 of the night's 2:00:00; the loudness views are blank after that.")
        #expect(NightReport.html(nights: [loaded]).contains("holds the levels of only the first 1:01:40"))
        // 20 s short (a recorder's last flush lost in a crash) is no shortfall.
        try bytes.prefix(EnvelopeFile.headerSize + 4 * 71_800).write(to: file)
        #expect(try ReportNight.load(id: "n", folder: night, clips: .embedded).envelopeProblem == nil)
    }

    /// A night folder someone sent whose session.json names a "clip" beside the report: the
    /// night is refused, and the file is neither copied, embedded nor replaced.
    @Test func aClipOutsideTheNightFolderIsRefusedAndLeftAlone() throws {
        let scratch = try Scratch()
        let night = try ReportFixture.folder(at: scratch.path("in/night"))
        let sessionURL = night.appendingPathComponent(Session.fileName)
        var session = try Session.load(from: sessionURL)
        session.events[0].clip = "../../r/notes.txt"
        try session.jsonData().write(to: sessionURL)
        try FileManager.default.createDirectory(at: scratch.path("r"), withIntermediateDirectories: true)
        try Data("my notes".utf8).write(to: scratch.path("r/notes.txt"))
        #expect { _ = try ReportNight.load(id: "night", folder: night, clips: .embedded) } throws: {
            "\($0)".contains("names clip '../../r/notes.txt' outside the night folder")
        }
        #expect(throws: SomniError.self) {
            _ = try ReportNight.load(id: "night", folder: night, clips: .copied(into: scratch.path("r/x_clips"), reportDirectory: scratch.path("r")))
        }
        #expect(try String(contentsOf: scratch.path("r/notes.txt"), encoding: .utf8) == "my notes")
    }

    /// A clip that is a link (to a file anywhere on the machine), lies in a linked clips folder,
    /// or is a pipe: the night is refused, nothing is embedded or copied, and the report ends.
    /// The page embedded the linked file's bytes; a pipe held the report for good.
    @Test func aClipThatIsNotTheFoldersOwnFileIsRefused() throws {
        let scratch = try Scratch()
        let fm = FileManager.default
        try Data("my notes".utf8).write(to: scratch.path("notes.txt"))
        let linked = try ReportFixture.folder(at: scratch.path("linked"))
        try fm.removeItem(at: linked.appendingPathComponent("clips/evt-0002.wav"))
        try fm.createSymbolicLink(at: linked.appendingPathComponent("clips/evt-0002.wav"), withDestinationURL: scratch.path("notes.txt"))
        let viaFolder = try ReportFixture.folder(at: scratch.path("via"))
        try fm.moveItem(at: viaFolder.appendingPathComponent("clips"), to: scratch.path("elsewhere"))
        try fm.createSymbolicLink(at: viaFolder.appendingPathComponent("clips"), withDestinationURL: scratch.path("elsewhere"))
        let piped = try ReportFixture.folder(at: scratch.path("piped"))
        try fm.removeItem(at: piped.appendingPathComponent("clips/evt-0003.wav"))
        #expect(mkfifo(piped.appendingPathComponent("clips/evt-0003.wav").path, 0o600) == 0)
        let cases = [(linked, "clip clips/evt-0002.wav is a symbolic link"), (viaFolder, "clip clips/evt-0001.wav lies in a symbolic link"),
                     (piped, "clip clips/evt-0003.wav is not a file")]
        for (night, words) in cases {
            for linking in [ClipLinking.embedded, .copied(into: scratch.path("r/x_clips"), reportDirectory: scratch.path("r"))] {
                #expect { _ = try ReportNight.load(id: "n", folder: night, clips: linking) } throws: {
                    ($0 as? SomniError)?.code == .badInput && "\($0)".contains(words)
                }
            }
        }
        #expect(!fm.fileExists(atPath: scratch.path("r/x_clips").path))
        #expect(try String(contentsOf: scratch.path("notes.txt"), encoding: .utf8) == "my notes")
    }

    /// A clip copied again over an earlier page's copy is written beside it and renamed over
    /// it (removed first, a report stopped between the two lost a clip the earlier page plays;
    /// that moment is not tested here): the copy is the new one, nothing is left beside it, and
    /// a folder of the clip's name, which was removed whole, stays.
    @Test func aClipCopiedAgainReplacesTheOldCopyInOneStep() throws {
        let scratch = try Scratch()
        let fm = FileManager.default
        let night = try ReportFixture.folder(at: scratch.path("n"))
        let linking = ClipLinking.copied(into: scratch.path("r/p_clips"), reportDirectory: scratch.path("r"))
        _ = try ReportNight.load(id: "n", folder: night, clips: linking)
        let copy = scratch.path("r/p_clips/n/clips/evt-0001.wav")
        try Data("old".utf8).write(to: copy)
        _ = try ReportNight.load(id: "n", folder: night, clips: linking)
        #expect(try Data(contentsOf: copy) == Data(contentsOf: night.appendingPathComponent("clips/evt-0001.wav")))
        #expect(try fm.contentsOfDirectory(atPath: copy.deletingLastPathComponent().path).sorted()
                == ["evt-0001.wav", "evt-0002.wav", "evt-0003.wav", "evt-0004.wav"])
        // Something of the clip's name that is not a file (the user's folder) stays, and the
        // report says it cannot copy there.
        try fm.removeItem(at: copy)
        try fm.createDirectory(at: copy, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: copy.appendingPathComponent("keep.txt"))
        #expect { _ = try ReportNight.load(id: "n", folder: night, clips: linking) } throws: { "\($0)".contains("cannot copy clip") }
        #expect(try String(contentsOf: copy.appendingPathComponent("keep.txt"), encoding: .utf8) == "mine")
    }

    @Test func exportsHoldEveryEventAndRoundTrip() throws {
        let s = ReportFixture.session(source: "a,b \"c\".m4a")
        var record = NightRecord(id: "20261128-2340", startedAt: s.startedAt, nightDate: "2026-11-28", source: s.source,
                                 duration: s.duration, analysedSeconds: 900, activeShare: 0.12, sensitivity: 5,
                                 classifier: "heuristic", snoringMinutes: 0.6, snoringPercent: 0.5, snoringEpisodes: 1,
                                 eventCounts: ["snoring": 2, "sleep_talk": 1, "cough": 1], addedAt: 0)
        let csv = NightExport.csv([(record, s)])
        let lines = csv.split(separator: "\n")
        #expect(lines.count == 1 + s.events.count)
        #expect(lines[0] == Substring(NightExport.csvHeader))
        #expect(lines[1] == "20261128-2340,2026-11-28,evt-0001,snoring,600.000,625.000,23:50:00,25.000,0.8000,-22.00,-30.00,\(Format.fixed(s.events[0].severity, 1)),clips/evt-0001.wav,2026-11-28T23:50:00+01:00")
        #expect(NightExport.csvField("=cmd()") == "'=cmd()")
        #expect(NightExport.csvField("a,\"b\"") == "\"a,\"\"b\"\"\"")
        #expect(NightExport.csvField("-12.5") == "-12.5")
        // "\r\n" is one Character, equal to neither "\r" nor "\n": the field went out unquoted
        // and broke its row in two. A leading tab starts a formula too.
        #expect(NightExport.csvField("crlf\r\nname.wav") == "\"crlf\r\nname.wav\"")
        #expect(NightExport.csvField("\t=1+1") == "'\t=1+1")
        // Figures are rounded as nights and show round them (half away from zero), but finer: a
        // study's table keeps 2.55 s of snoring (it read "0.0") and its hours to the 1/3 s.
        var short = record
        short.snoringMinutes = 0.0425
        short.duration = 93.5
        short.source = "night.m4a"
        let row = try #require(NightExport.nightsCSV([short]).split(separator: "\n").last)
        let fields = row.split(separator: ",", omittingEmptySubsequences: false)
        let header = NightExport.nightsCSVHeader.split(separator: ",")
        func field(_ name: String) -> Substring? { header.firstIndex(of: Substring(name)).map { fields[$0] } }
        #expect(field("snoring_minutes") == "0.043" && Format.minutes(0.0425) == "0.0 min", "\(row)")
        #expect(field("duration_h") == "0.0260", "\(row)")

        record.source = s.source
        let json = try NightExport.json([(record, s)])
        struct Exported: Decodable { var nights: [Night] }
        struct Night: Decodable { var night: NightRecord; var session: Session }
        let exported = try JSONDecoder().decode(Exported.self, from: Data(json.utf8))
        #expect(exported.nights.count == 1)
        #expect(exported.nights.first?.session == s)
        #expect(exported.nights.first?.night == record)
    }
}
