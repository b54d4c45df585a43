import Foundation
import Testing
import SomniAudio
import SomniCore
@testable import SomniReport

/// The report loaded in a real headless Chromium. CI installs Chromium through
/// scripts/install-deps.sh; without it these tests are skipped with a loud message.
@Suite(.enabled(if: Chromium.executable != nil, Comment(rawValue: Chromium.missingMessage)), .serialized)
struct BrowserTests {
    /// Writes the fixture night and a report with its clips copied beside it.
    static func writeReport(in scratch: Scratch, linking: (URL) -> ClipLinking = {
        .copied(into: $0.appendingPathComponent("report-clips"), reportDirectory: $0)
    }) throws -> URL {
        let night = try ReportFixture.folder(at: scratch.path("night"))
        let reportDirectory = scratch.path("out")
        try FileManager.default.createDirectory(at: reportDirectory, withIntermediateDirectories: true)
        let n = try ReportNight.load(id: "20261128-2340", folder: night, clips: linking(reportDirectory))
        let page = reportDirectory.appendingPathComponent("report.html")
        try Data(NightReport.html(nights: [n]).utf8).write(to: page)
        return page
    }

    @Test(arguments: ["copied", "embedded"])
    func theReportRunsWithoutErrorsDrawsEveryMarkAndLoadsItsClips(linking: String) throws {
        let scratch = try Scratch()
        let page = try BrowserTests.writeReport(in: scratch, linking: {
            linking == "embedded" ? .embedded : .copied(into: $0.appendingPathComponent("report-clips"), reportDirectory: $0)
        })
        let out = try Chromium(scratch: scratch.url).run(page, ["--dump-dom", "--window-size=1280,2000"])
        let dom = withoutScripts(out.stdout)
        #expect(rootAttribute("data-rendered", in: dom) == "1", "the page's script ran to its end")
        #expect(rootAttribute("data-errors", in: dom) == "0", "errors: \(rootAttribute("data-last-error", in: dom) ?? "")")
        #expect(rootAttribute("data-blocked", in: dom) == nil)
        #expect(out.consoleLines.isEmpty, "console: \(out.consoleLines)")

        // One timeline bar per event; the ribbon holds every 10 s cell of the night, on 3 hour rows.
        #expect(occurrences(of: "<rect class=\"ev ", in: dom) == ReportFixture.events.count)
        #expect(occurrences(of: "<rect class=\"cell", in: dom) == ReportFixture.expectedCells)
        for (letter, n) in ReportFixture.expectedClassCells {
            #expect(occurrences(of: "<rect class=\"cell \(letter)\"", in: dom) == n, "cells of class \(letter)")
        }
        #expect(occurrences(of: "<div class=\"row\">", in: dom) == ReportFixture.expectedRows)
        #expect(occurrences(of: "<rect class=\"hourbar ", in: dom) == 4, "one bar per class present in each hour")
        #expect(dom.contains(">23:00<") && dom.contains(">01:00<"))

        // Every clip's audio element loaded its source.
        #expect(occurrences(of: "data-state=\"loaded\"", in: dom) == ReportFixture.events.count)
        #expect(rootAttribute("data-audio-loaded", in: dom) == String(ReportFixture.events.count))
        #expect(rootAttribute("data-audio-failed", in: dom) == nil)
    }

    @Test(arguments: [MP3ClipEncoder() as any ClipEncoder, M4AClipEncoder()])
    func theClipsSomniWritesPlayInChromium(encoder: any ClipEncoder) throws {
        let scratch = try Scratch()
        let session = ReportFixture.session(events: ReportFixture.events(clipExtension: encoder.fileExtension))
        let night = try ReportFixture.folder(at: scratch.path("night"), session: session, encoder: encoder)
        let n = try ReportNight.load(id: "n", folder: night, clips: .relative(reportDirectory: scratch.url))
        #expect(n.clipSources["evt-0001"] == "night/clips/evt-0001.\(encoder.fileExtension)")
        let page = scratch.path("report.html")
        try Data(NightReport.html(nights: [n]).utf8).write(to: page)
        let dom = withoutScripts(try Chromium(scratch: scratch.url).run(page, ["--dump-dom"]).stdout)
        #expect(rootAttribute("data-audio-loaded", in: dom) == String(session.events.count))
        #expect(rootAttribute("data-audio-failed", in: dom) == nil)
        #expect(rootAttribute("data-errors", in: dom) == "0")
    }

    @Test func aMissingClipIsReportedByTheAudioElement() throws {
        let scratch = try Scratch()
        let page = try BrowserTests.writeReport(in: scratch)
        try FileManager.default.removeItem(at: scratch.path("out/report-clips/20261128-2340/clips/evt-0002.wav"))
        let dom = withoutScripts(try Chromium(scratch: scratch.url).run(page, ["--dump-dom"]).stdout)
        #expect(rootAttribute("data-audio-loaded", in: dom) == "3")
        #expect(rootAttribute("data-audio-failed", in: dom) == "1")
        #expect(rootAttribute("data-errors", in: dom) != "0", "the failed load is counted as an error")
    }

    @Test(arguments: [false, true])
    func theScreenshotHasDrawnContentInLightAndDark(dark: Bool) throws {
        let scratch = try Scratch()
        let page = try BrowserTests.writeReport(in: scratch)
        for (width, height) in [(1280, 1400), (390, 1600)] {
            let shot = scratch.path("shot-\(width).png")
            _ = try Chromium(scratch: scratch.url).run(page, ["--screenshot=\(shot.path)", "--window-size=\(width),\(height)"],
                                                       darkMode: dark)
            let image = try PNGImage(Data(contentsOf: shot))
            #expect(image.width == width && image.height == height)
            let bg = image.background
            let luminance = (bg.0 + bg.1 + bg.2) / 3
            #expect(dark ? luminance < 60 : luminance > 200, "background \(bg) in \(dark ? "dark" : "light") mode")
            #expect(image.share(differingFrom: bg) > 0.05, "a page with text, cards and charts is not blank")
            // The snoring colour appears: the timeline bars and ribbon cells were drawn.
            let snoring = dark ? (0xff, 0xa0, 0x49) : (0xe8, 0x82, 0x1e)
            #expect(image.count(near: snoring) > 50, "snoring marks visible at \(width) px")
        }
    }

    @Test func theReportMakesNoNetworkRequest() throws {
        let scratch = try Scratch()
        let page = try BrowserTests.writeReport(in: scratch)
        let chromium = Chromium(scratch: scratch.url)

        // The detector works: a page that does reach out is caught.
        let probe = scratch.path("probe.html")
        try Data("""
            <!doctype html><img src="http://somni-probe.invalid/x.png">
            <script>fetch("https://somni-probe.invalid/y").catch(function () {})</script>
            """.utf8).write(to: probe)
        let probeLog = scratch.path("probe-net.json")
        _ = try chromium.run(probe, ["--dump-dom"], netLog: probeLog)
        let caught = try Chromium.pageRequests(netLog: probeLog)
        #expect(caught.contains("http://somni-probe.invalid/x.png"))

        let log = scratch.path("report-net.json")
        let out = try chromium.run(page, ["--dump-dom"], netLog: log)
        #expect(rootAttribute("data-rendered", in: out.stdout) == "1")
        let requests = try Chromium.pageRequests(netLog: log).filter { !$0.hasPrefix("file:") && !$0.hasPrefix("data:") }
        #expect(requests.isEmpty, "the report asked for \(requests)")
        #expect(rootAttribute("data-blocked", in: out.stdout) == nil, "the page's CSP blocked nothing")
    }
}

/// Interaction, driven by a script appended to a copy of the page: pointer events on the ribbon and
/// on a clip's waveform, with the results written into attributes for --dump-dom.
@Suite(.enabled(if: Chromium.executable != nil, Comment(rawValue: Chromium.missingMessage)), .serialized)
struct BrowserInteractionTests {
    static let driver = """
        <script>
        (function () {
          var root = document.documentElement;
          function at(el, fx, type) {
            var r = el.getBoundingClientRect();
            var ev = new PointerEvent(type || 'pointerdown', { bubbles: true, pointerId: 7,
              clientX: r.left + fx * r.width, clientY: r.top + r.height / 2 });
            el.dispatchEvent(ev);
          }
          // The cough at 00:40:00 is cell 240 of the 00:00 row.
          var row = document.querySelector('.ribbon svg[data-row="1"]');
          at(row, 240.5 / 360);
          root.setAttribute('data-test-readout', document.querySelector('output.readout').textContent);
          // Two cells right with the keyboard, then a whole hour row down.
          var ribbon = document.querySelector('.ribbon');
          ['ArrowRight', 'ArrowRight', 'ArrowDown'].forEach(function (key) {
            ribbon.dispatchEvent(new KeyboardEvent('keydown', { key: key, bubbles: true }));
          });
          root.setAttribute('data-test-keys', document.querySelector('output.readout').textContent);
          var audio = document.querySelector('li.event audio');
          var rows = document.querySelectorAll('li.event');
          function state(li) { return li.querySelector('audio').paused + ' ' + li.querySelector('button').getAttribute('aria-label'); }
          function scrub() {
            at(document.querySelector('li.event canvas'), 0.5);
            root.setAttribute('data-test-position', (audio.currentTime / audio.duration).toFixed(2));
            root.setAttribute('data-test-paused', String(audio.paused));
            // Play the first clip, then the second (which stops the first), then pause the second;
            // each state read once the media events of the click have been handled.
            function press(row, then) { rows[row].querySelector('button').click(); setTimeout(then, 50); }
            press(0, function () {
              root.setAttribute('data-test-play-first', state(rows[0]));
              press(1, function () {
                root.setAttribute('data-test-play-second', state(rows[0]) + ' / ' + state(rows[1]));
                press(1, function () { root.setAttribute('data-test-pause-second', state(rows[1])); listTools(); });
              });
            });
          }
          // The list's class boxes hide and show a class; its order puts the most severe first and back.
          function listTools() {
            function shown(cls) {
              return Array.prototype.filter.call(document.querySelectorAll('li.event.' + cls), function (li) { return li.offsetParent !== null; }).length;
            }
            function counts() { return ['snoring', 'sleep_talk', 'cough'].map(shown).join(','); }
            function ids() { return Array.prototype.map.call(document.querySelectorAll('li.event'), function (li) { return li.getAttribute('data-event'); }).join(','); }
            var box = document.querySelector('input[data-show="snoring"]');
            box.click();
            root.setAttribute('data-test-hide-snoring', counts());
            box.click();
            root.setAttribute('data-test-show-snoring', counts());
            var order = document.querySelector('select[data-order]');
            order.value = 'severity'; order.dispatchEvent(new Event('change'));
            root.setAttribute('data-test-by-severity', ids());
            order.value = 'time'; order.dispatchEvent(new Event('change'));
            root.setAttribute('data-test-by-time', ids());
          }
          if (audio.readyState >= 1) { scrub(); } else { audio.addEventListener('loadedmetadata', scrub); }
        })();
        </script>
        """

    @Test func theRibbonReadsOutTheCellUnderThePointerAndTheScrubberPositionsAPausedClip() throws {
        let scratch = try Scratch()
        let page = try BrowserTests.writeReport(in: scratch)
        let html = try String(contentsOf: page, encoding: .utf8)
        try Data(html.replacingOccurrences(of: "</body>", with: BrowserInteractionTests.driver + "</body>").utf8).write(to: page)
        let out = try Chromium(scratch: scratch.url).run(page, ["--dump-dom", "--window-size=1280,2000",
                                                                   // The driver's click is no user's gesture.
                                                                   "--autoplay-policy=no-user-gesture-required"])
        let dom = out.stdout
        #expect(rootAttribute("data-errors", in: dom) == "0", "errors: \(rootAttribute("data-last-error", in: dom) ?? "")")
        let readout = rootAttribute("data-test-readout", in: dom) ?? ""
        #expect(readout.hasPrefix("00:40:00"), "readout: \(readout)")
        #expect(readout.contains("cough") && readout.contains("dBFS"), "readout: \(readout)")
        let keys = rootAttribute("data-test-keys", in: dom) ?? ""
        // 00:40:20 + 1 h is past the end of the night (01:40:00): the cursor stops at the last cell.
        #expect(keys.hasPrefix("01:39:50") && keys.contains("-54 dBFS") && keys.contains("no event"), "keyboard readout: \(keys)")
        #expect(rootAttribute("data-test-position", in: dom) == "0.50", "dragging before play positions the clip")
        #expect(rootAttribute("data-test-paused", in: dom) == "true", "and does not start it")
        // The play button plays its clip and stops any other; pressed again, it pauses.
        #expect(rootAttribute("data-test-play-first", in: dom) == "false Pause")
        #expect(rootAttribute("data-test-play-second", in: dom) == "true Play / false Pause")
        #expect(rootAttribute("data-test-pause-second", in: dom) == "true Play")
        // Snoring hidden and shown again (the fixture: two snores, one word, one cough).
        #expect(rootAttribute("data-test-hide-snoring", in: dom) == "0,1,1")
        #expect(rootAttribute("data-test-show-snoring", in: dom) == "2,1,1")
        let bySeverity = ReportFixture.events.sorted { $0.severity > $1.severity }.map(\.id).joined(separator: ",")
        #expect(rootAttribute("data-test-by-severity", in: dom) == bySeverity)
        #expect(rootAttribute("data-test-by-time", in: dom) == ReportFixture.events.map(\.id).joined(separator: ","))
    }

    /// An episode's link goes to its loudest snore, showing snoring again if it was hidden.
    @Test func anEpisodesLinkShowsItsLoudestSnore() throws {
        let scratch = try Scratch()
        var events = ReportFixture.events
        events[0].episode = 0
        var session = ReportFixture.session(events: events)
        session.episodes = [SnoringEpisode(start: 600, end: 625, eventCount: 1)]
        let night = try ReportFixture.folder(at: scratch.path("night"), session: session)
        let n = try ReportNight.load(id: "n", folder: night, clips: .relative(reportDirectory: scratch.url))
        let driver = """
            <script>
            (function () {
              var root = document.documentElement;
              document.querySelector('input[data-show="snoring"]').click();
              var li = document.getElementById('n0-evt-0001');
              root.setAttribute('data-test-hidden', String(li.offsetParent === null));
              document.querySelector('table.episodes a').click();
              root.setAttribute('data-test-shown', String(li.offsetParent !== null) + ' ' + location.hash + ' '
                + document.querySelector('input[data-show="snoring"]').checked);
            })();
            </script>
            """
        let page = scratch.path("report.html")
        try Data(NightReport.html(nights: [n]).replacingOccurrences(of: "</body>", with: driver + "</body>").utf8).write(to: page)
        let dom = try Chromium(scratch: scratch.url).run(page, ["--dump-dom", "--window-size=1280,2000"]).stdout
        #expect(rootAttribute("data-errors", in: dom) == "0", "errors: \(rootAttribute("data-last-error", in: dom) ?? "")")
        #expect(rootAttribute("data-test-hidden", in: dom) == "true")
        #expect(rootAttribute("data-test-shown", in: dom) == "true #n0-evt-0001 true")
    }

    /// What `page` posts to its parent once laid out in a frame `width` px wide (headless
    /// Chromium's window is at least 500 px wide, so a phone's width is a frame's).
    static func onAPhone(_ page: URL, width: Int, in scratch: Scratch) throws -> String {
        let phone = page.deletingLastPathComponent().appendingPathComponent("phone.html")
        try Data("""
            <!doctype html><html><body style="margin:0">
            <iframe src="\(page.lastPathComponent)" style="width:\(width)px;height:2000px;border:0"></iframe>
            <script>window.addEventListener('message', function (e) { document.documentElement.setAttribute('data-test-posted', e.data); });</script>
            </body></html>
            """.utf8).write(to: phone)
        let dom = try Chromium(scratch: scratch.url).run(phone, ["--dump-dom", "--window-size=1280,2000"]).stdout
        return rootAttribute("data-test-posted", in: dom) ?? ""
    }

    /// On a phone the page scrolls only up and down: at 360 and 390 px wide nothing reaches past the
    /// screen's right edge (the six-column episode table did, by 30–90 px, so every page scrolled
    /// sideways). Headless Chromium's window is at least 500 px wide, so the page is laid out in a
    /// frame of the phone's width, and tells the page around it what it measured.
    @Test(arguments: [360, 390])
    func nothingIsWiderThanAPhonesScreen(width: Int) throws {
        let scratch = try Scratch()
        let page = try BrowserTests.writeReport(in: scratch)
        let measure = """
            <script>
            window.addEventListener('load', function () {
              var root = document.documentElement, widest = '';
              document.querySelectorAll('body *').forEach(function (el) {
                var r = el.getBoundingClientRect();
                if (r.width > 0 && r.right > root.clientWidth + 0.5 && !widest) { widest = el.tagName + '.' + el.className + ' ' + Math.round(r.right); }
              });
              parent.postMessage(document.querySelectorAll('table.episodes tr').length + ' ' + root.scrollWidth + ' '
                + root.clientWidth + ' ' + widest, '*');
            });
            </script>
            """
        let html = try String(contentsOf: page, encoding: .utf8)
        try Data(html.replacingOccurrences(of: "</body>", with: measure + "</body>").utf8).write(to: page)
        let measured = try Self.onAPhone(page, width: width, in: scratch).split(separator: " ", maxSplits: 3).map(String.init)
        #expect(measured.count >= 3 && Int(measured[0]) ?? 0 > 1, "the fixture's night has episodes to lay out: \(measured)")
        #expect(measured.count >= 3 && measured[2] == "\(width)", "laid out \(width) px wide: \(measured)")
        #expect(measured.count >= 3 && measured[1] == measured[2], "page \(measured.dropFirst().first ?? "?") px wide on a \(width) px screen: \(measured.dropFirst(3).first ?? "")")
    }

    /// The ribbon's readout after a press on each (row, cell), from a page of `night` written
    /// into `scratch`, and the page's DOM after its scripts ran.
    static func ribbonReadouts(of night: ReportNight, at cells: [(row: Int, cell: Int)], in scratch: Scratch) throws -> (String, [String]) {
        let presses = cells.enumerated().map { i, c in """
              var row\(i) = document.querySelector('.ribbon svg[data-row="\(c.row)"]'), r\(i) = row\(i).getBoundingClientRect();
              row\(i).dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, pointerId: \(7 + i),
                clientX: r\(i).left + \(Double(c.cell) + 0.5) / 360 * r\(i).width, clientY: r\(i).top + r\(i).height / 2 }));
              document.documentElement.setAttribute('data-test-readout-\(i)', document.querySelector('output.readout').textContent);
            """ }.joined(separator: "\n")
        let page = scratch.path("report.html")
        let driver = "<script>\n(function () {\n" + presses + "\n})();\n</script>"
        try Data(NightReport.html(nights: [night]).replacingOccurrences(of: "</body>", with: driver + "</body>").utf8).write(to: page)
        let dom = try Chromium(scratch: scratch.url).run(page, ["--dump-dom", "--window-size=1280,2000"]).stdout
        return (dom, cells.indices.map { rootAttribute("data-test-readout-\($0)", in: dom) ?? "" })
    }

    /// Time not recorded (a pause between joined parts) is drawn and read as such: its ribbon
    /// cells are outlines that read "not recorded", and the timeline shades it. The pause's
    /// filling of digital silence read "-100 dBFS · no event", a measured, silent room.
    @Test func aPauseIsDrawnAndReadAsNotRecorded() throws {
        let scratch = try Scratch()
        var session = ReportFixture.session()
        session.gaps = [RecordingGap(start: 3_000, duration: 600, reason: "a pause between the recording's parts")]
        session.summary.recordedSeconds = session.duration - 600
        let night = try ReportFixture.folder(at: scratch.path("night"), session: session)
        let n = try ReportNight.load(id: "n", folder: night, clips: .relative(reportDirectory: scratch.url))
        let data = ReportMath.night(n)
        #expect(data.gaps == [[3_000, 3_600]])
        #expect(data.ribbon.cls.filter { $0 == "g" }.count == 60, "the pause's 60 ten-second cells")
        // 23:40 + 3,300 s is 00:35:00: row 1 (00:00), cell 210.
        let (dom, readouts) = try BrowserInteractionTests.ribbonReadouts(of: n, at: [(row: 1, cell: 210)], in: scratch)
        #expect(rootAttribute("data-errors", in: dom) == "0", "errors: \(rootAttribute("data-last-error", in: dom) ?? "")")
        #expect(readouts == ["00:35:00 · not recorded"])
        #expect(occurrences(of: "<rect class=\"cell g\"", in: withoutScripts(dom)) == 60)
        #expect(occurrences(of: "<rect class=\"gap\"", in: withoutScripts(dom)) == 1)
    }

    /// On a phone, a night of eleven hours labels its hour axes every few hours, not every hour
    /// with the labels run together ("22:0023:0000:00…").
    @Test func hourLabelsDoNotRunTogetherOnAPhone() throws {
        let scratch = try Scratch()
        let night = try ReportFixture.folder(at: scratch.path("night"), session: ReportFixture.session(duration: 11 * 3_600))
        let n = try ReportNight.load(id: "n", folder: night, clips: .relative(reportDirectory: scratch.url))
        let page = scratch.path("report.html")
        let measure = """
            <script>
            window.addEventListener('load', function () {
              var found = [];
              document.querySelectorAll('.axis').forEach(function (axis) {
                var spans = Array.prototype.slice.call(axis.querySelectorAll('span')), overlaps = 0;
                for (var i = 1; i < spans.length; i++) {
                  if (spans[i].getBoundingClientRect().left < spans[i - 1].getBoundingClientRect().right) { overlaps++; }
                }
                found.push(spans.length + ':' + overlaps);
              });
              parent.postMessage(found.join(' '), '*');
            });
            </script>
            """
        try Data(NightReport.html(nights: [n]).replacingOccurrences(of: "</body>", with: measure + "</body>").utf8).write(to: page)
        let axes = try Self.onAPhone(page, width: 390, in: scratch).split(separator: " ").map { $0.split(separator: ":").compactMap { Int($0) } }
        #expect(axes.count == 2, "the timeline's axis and the hour chart's: \(axes)")
        for axis in axes {
            #expect(axis.count == 2 && axis[0] >= 3 && axis[1] == 0, "labels, and how many overlap the one before: \(axes)")
        }
    }

    /// A night across the autumn change (Berlin, clocks back at 03:00) reads the bedroom's clock:
    /// its rows are 01:00, 02:00 and 02:00 again, and the ribbon and the list agree on times after it.
    @Test func aNightAcrossADaylightSavingChangeReadsTheBedroomsClock() throws {
        let scratch = try Scratch()
        var session = ReportFixture.session(startedAt: "2026-10-25T01:40:00+02:00")
        session.timeZone = "Europe/Berlin"
        let night = try ReportFixture.folder(at: scratch.path("night"), session: session)
        let n = try ReportNight.load(id: "20261025-0140", folder: night, clips: .relative(reportDirectory: scratch.url))
        #expect(ReportMath.night(n).shifts == [ClockShift(at: 4800, by: -3600)])
        // The snore at 5,000 s (02:03:20 on the clock, 200 s after the change) is cell 20 of the
        // third row; the same cell of the second is the same clock time, before the change.
        let (dom, readouts) = try BrowserInteractionTests.ribbonReadouts(of: n, at: [(row: 2, cell: 20), (row: 1, cell: 20)], in: scratch)
        #expect(rootAttribute("data-errors", in: dom) == "0", "errors: \(rootAttribute("data-last-error", in: dom) ?? "")")
        let rows = withoutScripts(dom).components(separatedBy: "<span class=\"hour\">").dropFirst().map { $0.prefix(5) }
        #expect(rows == ["01:00", "02:00", "02:00"], "ribbon rows: \(rows)")
        #expect(readouts.count == 2 && readouts[0].hasPrefix("02:03:20 (2nd) ·") && readouts[0].contains("snoring"), "\(readouts)")
        #expect(readouts.count == 2 && readouts[1].hasPrefix("02:03:20 ·"), "the first 02:03:20: \(readouts)")
        #expect(dom.contains("<title>02:00 (2nd): 1 snoring</title>"), "the hour chart's bar in the repeated hour")
        #expect(dom.contains("<span class=\"meta\">02:03:20 (2nd)</span>"), "the list's time of the snore in the repeated hour")
        #expect(dom.contains("01:40 → 02:40 (2nd) · at 03:00 the clocks went back to 02:00"), "the wake, in the repeated hour, marked")
    }

    /// A night begun in the hour the clocks repeat (02:20 just after 03:00 went back to 02:00):
    /// its first hour is the second showing in the hour chart as in the event list.
    @Test func aNightBegunInTheRepeatedHourMarksItsFirstTimesAsTheSecond() throws {
        let scratch = try Scratch()
        var session = ReportFixture.session(startedAt: "2026-10-25T02:20:00+01:00")
        session.timeZone = "Europe/Berlin"
        let night = try ReportFixture.folder(at: scratch.path("night"), session: session)
        let n = try ReportNight.load(id: "20261025-0220", folder: night, clips: .relative(reportDirectory: scratch.url))
        #expect(ReportMath.night(n).shifts == [ClockShift(at: -1200, by: 3600), ClockShift(at: -1200, by: 0)])
        let page = scratch.path("r.html")
        try Data(NightReport.html(nights: [n]).utf8).write(to: page)
        let dom = withoutScripts(try Chromium(scratch: scratch.url).run(page, ["--dump-dom", "--window-size=1280,3000"]).stdout)
        #expect(rootAttribute("data-errors", in: dom) == "0", "errors: \(rootAttribute("data-last-error", in: dom) ?? "")")
        #expect(dom.contains("<span class=\"meta\">02:30:00 (2nd)</span>"), "the list's time of the first snore")
        #expect(dom.contains("<title>02:00 (2nd): 1 snoring"), "the hour chart's first bar")
        #expect(!dom.contains("<title>03:00 (2nd)"), "the hour after is shown once")
    }

    @Test func aReportOfSeveralNightsDrawsTrendsAndCopesWithAnUndatedNight() throws {
        let scratch = try Scratch()
        let first = try ReportFixture.folder(at: scratch.path("a"))
        var undated = ReportFixture.session(startedAt: nil, duration: 3000, events: Array(ReportFixture.events.prefix(2)))
        undated.source = "phone.m4a"
        let second = try ReportFixture.folder(at: scratch.path("b"), session: undated)
        try FileManager.default.removeItem(at: second.appendingPathComponent(EnvelopeFile.fileName))
        let dir = scratch.path("out")
        let linking = ClipLinking.relative(reportDirectory: dir)
        var nights = try [ReportNight.load(id: "a", folder: first, clips: linking),
                          ReportNight.load(id: "b", folder: second, clips: linking)]
        // 0.15 is a hair under in binary: JavaScript's toFixed read it "0.1", the table "0.2".
        nights[1].session.summary.snoringMinutes = 0.15
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let page = dir.appendingPathComponent("all.html")
        try Data(NightReport.html(nights: nights).utf8).write(to: page)

        let out = try Chromium(scratch: scratch.url).run(page, ["--dump-dom", "--window-size=1280,6000"])
        let dom = withoutScripts(out.stdout)
        #expect(rootAttribute("data-rendered", in: dom) == "1")
        #expect(rootAttribute("data-errors", in: dom) == "0", "errors: \(rootAttribute("data-last-error", in: dom) ?? "")")
        #expect(rootAttribute("data-audio-loaded", in: dom) == "6", "clips linked relatively from another folder load")
        #expect(occurrences(of: "<rect class=\"trend min\"", in: dom) == 2)
        #expect(occurrences(of: "<rect class=\"trend pct\"", in: dom) == 2)
        #expect(occurrences(of: "<rect class=\"trend snoring\"", in: dom) == 2)
        // The scale's top as the bars are labelled: tenths under 10 min (it said "max 1 min" over 0.6).
        let most = max(nights[0].session.summary.snoringMinutes, nights[1].session.summary.snoringMinutes)
        #expect(most < 9.95 && dom.contains("<span>max \(Format.minutes(most))</span>"), "\(most)")
        // Shares under 1 % are drawn on a 1 % scale but labelled with the largest there is (it
        // said "max 1.0 %" over nights that snored 0.5 % at the most).
        let largestShare = nights.map(\.session.summary.snoringPercent).max()!
        #expect(largestShare < 0.95 && dom.contains(String(format: "<span>max %.1f %%</span>", largestShare))
                && !dom.contains("<span>max 1.0 %</span>"), "\(largestShare)")
        // Each bar's figure is rounded as the tables round it.
        #expect(dom.contains(": 0.2 min</title>") && !dom.contains(": 0.1 min</title>"), "\(dom)")
        #expect(occurrences(of: "<rect class=\"ev ", in: dom) == 6)
        // 3000 s from an unknown start: 300 cells on rows labelled by hours since the start.
        #expect(occurrences(of: "<rect class=\"cell", in: dom) == 720 + 300)
        #expect(dom.contains(">+0 h<"))
        #expect(!dom.contains("NaN") && !dom.contains("undefined"))
    }
}
