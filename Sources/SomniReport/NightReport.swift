import Foundation
import SomniCore
import SomniStore

/// The morning report: one self-contained HTML page (inline style and script, system fonts, no
/// request to any network address; clips referenced relatively or embedded, see `ClipLinking`).
///
/// Per night: three summary numbers, events per hour per class, the timeline (events as bars at
/// their true positions, loudness scaled to the 95th percentile), the ribbon (one row per clock
/// hour, one cell per 10 s, brightness on a fixed dBFS scale so nights compare; hover or drag to
/// read time, level and class), and the event list with a player and a 96-bin waveform scrubber per
/// clip. With several nights, trends across them come first.
public enum NightReport {
    /// - Parameters:
    ///   - nights: the nights shown in full.
    ///   - trends: the nights the trends and the night list cover (from the store's records, so a
    ///     thousand nights cost no night folder reads); nil: the full nights, when more than one.
    public static func html(nights: [ReportNight], trends: [TrendNight]? = nil, title: String? = nil) -> String {
        let trendNights = trends ?? (nights.count > 1 ? nights.map { TrendNight($0) } : [])
        let page = PageData(nights: nights.map(ReportMath.night),
                            trends: trendNights.isEmpty ? nil : trendNights.map(\.point))
        var h = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy" content="\(ReportAssets.contentSecurityPolicy)">
        <meta name="color-scheme" content="light dark">
        <title>\(escape(title ?? defaultTitle(nights, trends: trendNights)))</title>
        <script>\(ReportAssets.errorRecorder)</script>
        <style>\(ReportAssets.style)</style>
        </head>
        <body>
        <header class="top"><h1>\(escape(title ?? defaultTitle(nights, trends: trendNights)))</h1>
        <p class="sub">Made by somni on this computer. This page loads nothing from any network.
        Not a medical device: it records and measures sound, it does not diagnose.</p></header>
        <main>

        """
        if !trendNights.isEmpty { h += trendsSection(trendNights, detailed: nights) }
        for (i, n) in nights.enumerated() { h += nightSection(n, index: i) }
        h += """
        </main>
        <footer><p class="legend"><span><i class="dot snoring"></i>snoring</span><span><i class="dot sleep_talk"></i>sleep-talk</span>\
        <span><i class="dot cough"></i>cough</span></p>
        <p>Levels are dBFS (0 is digital full scale); they depend on the microphone and where it sits, so keep it in the same place to compare nights.</p></footer>
        <script type="application/json" id="somni-data">\(json(page))</script>
        <script>\(ReportAssets.script)</script>
        </body>
        </html>

        """
        return h
    }

    static func nightCount(_ n: Int) -> String { n == 1 ? "1 night" : "\(n) nights" }

    private static func defaultTitle(_ nights: [ReportNight], trends: [TrendNight]) -> String {
        if trends.isEmpty, nights.count == 1, let n = nights.first {
            return "Somni · night of " + (NightClock(of: n.session)?.nightTitle ?? n.id)
        }
        return "Somni · " + nightCount(max(trends.count, nights.count))
    }

    /// Events per hour recorded by class, from the events themselves (not trusting a stale summary).
    public static func rates(_ s: Session) -> [String: Double] {
        var out: [String: Double] = [:]
        for c in EventClass.allCases {
            out[c.rawValue] = SessionSummary.rate(s.events.count(of: c), over: s.recordedSeconds)
        }
        return out
    }

    private static func trendsSection(_ trends: [TrendNight], detailed: [ReportNight]) -> String {
        let sectionIndex = Dictionary(detailed.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        var rows = ""
        for t in trends {
            let label = escape(t.label)
            let name = sectionIndex[t.id].map { "<a href=\"#night-\($0)\">\(label)</a>" } ?? label
            rows += "<tr><td>\(name)</td>"
                + "<td class=\"hide-narrow\">\(t.bedtime ?? "–")</td><td class=\"hide-narrow\">\(t.wake ?? "–")</td>"
                + "<td class=\"num\">\(Format.duration(t.duration))</td><td class=\"num\">\(t.episodes)</td>"
                + "<td class=\"num\">\(Format.minutes(t.snoringMinutes))</td>"
                + "<td class=\"num\">\(Format.percent(t.snoringPercent))</td>"
                + "<td class=\"num hide-narrow\">\(t.events)</td></tr>\n"
        }
        let shown = detailed.count == 0 ? "No night is shown in full below"
            : detailed.count == 1 ? "The latest night is shown in full below" : "The \(detailed.count) latest nights are shown in full below"
        let note = detailed.count < trends.count
            ? "<p class=\"hint\">\(shown); 'somni report NIGHT' writes any other.</p>"
            : ""
        return """
        <section class="trends" id="trends"><h2>Across \(nightCount(trends.count))</h2>
        <h3>Snoring minutes per night</h3><div class="trend-chart" data-chart="minutes"></div>
        <h3>Share of the night snoring (% of the time recorded)</h3><div class="trend-chart" data-chart="percent"></div>
        <h3>Events per hour</h3><div class="trend-chart" data-chart="rates"></div>
        </section>
        <nav class="nightlist"><h2>Nights</h2>\(note)<table><thead><tr><th>Night</th><th class="hide-narrow">Bedtime</th>
        <th class="hide-narrow">Wake</th><th class="num">In bed</th><th class="num">Episodes</th><th class="num">Snoring</th>
        <th class="num">%</th><th class="num hide-narrow">Events</th></tr></thead><tbody>
        \(rows)</tbody></table></nav>

        """
    }

    /// The id of an event's row in the list: unique across the page's nights.
    private static func eventAnchor(_ e: SessionEvent, _ nightIndex: Int) -> String {
        escape("n\(nightIndex)-\(e.id)")
    }

    private static func nightSection(_ n: ReportNight, index: Int) -> String {
        let s = n.session
        let clock = NightClock(of: s)
        let heading = clock.map { "Night of \($0.nightTitle)" } ?? "Night \(n.id)"
        let span = clock.map { c in
            "\(c.displayHourMinute()) → \(c.displayHourMinute(at: s.duration)) · " + c.changes(within: s.duration).map { "\($0) · " }.joined()
        } ?? ""
        let rates = rates(s)
        // A night with gaps (a joined night's pauses, a lost microphone): its rates and share are
        // over the time recorded, and the page says how much was not.
        let gapped = s.secondsNotRecorded > 0
        var rateRows = ""
        for c in EventClass.allCases {
            let count = s.events.count(of: c)
            rateRows += "<tr><td><i class=\"dot \(c.rawValue)\"></i>\(Format.className(c))</td>"
                + "<td class=\"num\">\(count)</td><td class=\"num\">\(Format.fixed(rates[c.rawValue] ?? 0, 1))</td></tr>"
        }
        var items = ""
        for e in s.events.sorted(by: { $0.start < $1.start }) {
            let time = Format.time(e.start, on: clock)
            let audio = n.clipSources[e.id].map { "<audio preload=\"none\" src=\"\(escape($0))\"></audio>" } ?? ""
            items += """
            <li class="event \(e.eventClass.rawValue)" id="\(eventAnchor(e, index))" data-event="\(escape(e.id))" data-start="\(Format.fixed(e.start, 2))" \
            data-severity="\(Format.fixed(e.severity, 2))"><span class="badge \(e.eventClass.rawValue)">\
            \(Format.className(e.eventClass))</span><span class="meta">\(time)</span>\
            <span class="meta">\(Format.fixed(e.duration, 1)) s</span>\
            <span class="meta">\(Format.fixed(e.peakDBFS, 1)) dBFS</span>\
            <span class="meta" title="severity \(Int(e.severity.rounded())) of 100">severity \(Int(e.severity.rounded())) \
            <span class="sev"><i style="width:\(Int(min(100, max(0, e.severity)).rounded()))%"></i></span></span>\
            <div class="player"><button type="button" aria-label="Play">▶</button>\
            <canvas width="384" height="40" aria-label="waveform, drag to position"></canvas><span class="pos">0:00</span>\(audio)</div></li>

            """
        }
        if items.isEmpty { items = "<li class=\"empty\">No events were found this night.</li>\n" }
        // A night's hundreds of snores would bury its few words and coughs: each class can be
        // hidden, and the list put loudest first.
        var shows = ""
        for c in EventClass.allCases {
            let count = s.events.count(of: c)
            shows += "<label><input type=\"checkbox\" data-show=\"\(c.rawValue)\" checked\(count == 0 ? " disabled" : "")>"
                + "<i class=\"dot \(c.rawValue)\"></i>\(Format.className(c)) (\(count))</label>"
        }
        let tools = s.events.isEmpty ? "" : """
            <div class="event-tools" role="group" aria-label="which events to list, and in what order">\(shows)\
            <label>Order <select data-order><option value="time">by time</option>\
            <option value="severity">by severity, highest first</option></select></label></div>
            """
        // When the night snored, in a few rows; each links to its loudest snore in the list below.
        var episodes = ""
        if !s.episodes.isEmpty {
            let loudestOf = s.loudestEventOfEachEpisode
            func at(_ seconds: Double) -> String { Format.time(seconds, on: clock) }
            var rows = ""
            for (i, episode) in s.episodes.enumerated() {
                let loudest = loudestOf[i].map { "<a href=\"#\(eventAnchor($0, index))\">\(Format.fixed($0.peakDBFS, 1)) dBFS</a>" } ?? "–"
                // On a phone, From, Length and the loudest snore: six columns ran past the screen.
                rows += "<tr><td>\(i + 1)</td><td>\(at(episode.start))</td><td class=\"hide-narrow\">\(at(episode.end))</td>"
                    + "<td class=\"num\">\(Format.elapsed(episode.end - episode.start))</td>"
                    + "<td class=\"num hide-narrow\">\(episode.eventCount)</td>"
                    + "<td class=\"num\">\(loudest)</td></tr>"
            }
            episodes = """
                <h3>Snoring episodes (\(s.episodes.count))</h3>
                <table class="episodes"><thead><tr><th>Episode</th><th>From</th><th class="hide-narrow">To</th><th class="num">Length</th>\
                <th class="num hide-narrow">Snores</th><th class="num">Loudest snore</th></tr></thead><tbody>\(rows)</tbody></table>

                """
        }
        var notes = s.warnings
        if !n.missingClips.isEmpty {
            notes.append("\(n.missingClips.count) clip\(n.missingClips.count == 1 ? " is" : "s are") missing from the night folder; "
                         + "those events have no player.")
        }
        if let problem = n.envelopeProblem { notes.append(problem) }
        let warnings = notes.map { "<p class=\"hint\">⚠ \(escape($0))</p>" }.joined()
        return """
        <section class="night" id="night-\(index)" data-night="\(escape(n.id))">
        <h2>\(escape(heading))<small>\(span)<bdi>\(escape(s.source))</bdi> · id \(escape(n.id))</small></h2>
        \(warnings)<div class="stats">
        <div class="stat"><span class="value">\(Format.duration(s.duration))</span><span class="label">time in bed</span></div>
        \(gapped ? "<div class=\"stat\"><span class=\"value\">\(Format.duration(s.secondsNotRecorded))</span><span class=\"label\">not recorded</span></div>\n" : "")        <div class="stat"><span class="value">\(Format.minutes(s.summary.snoringMinutes))</span><span class="label">snoring</span></div>
        <div class="stat"><span class="value">\(Format.percent(s.summary.snoringPercent))</span><span class="label">of the \(gapped ? "time recorded" : "night") snoring</span></div>
        </div>
        <h3>Events per hour\(gapped ? " recorded" : "")</h3>
        <table class="rates"><thead><tr><th>Class</th><th class="num">Events</th><th class="num">Per hour</th></tr></thead>
        <tbody>\(rateRows)</tbody></table>
        <div class="hours" aria-label="events in each hour of the night"></div>
        <h3>Timeline</h3>
        <div class="timeline"></div><div class="axis"></div>
        <h3>Ribbon</h3>
        <p class="hint">One row per hour, one cell per 10 s. Brighter is louder on a fixed scale (−70 to −10 dBFS), so nights can be compared. Hover, drag or use the arrow keys to read.</p>
        <div class="ribbon" tabindex="0" aria-label="ribbon: use the arrow keys to read each 10-second cell"></div><output class="readout" aria-live="polite">Hover or drag over the ribbon to read time, level and class.</output>
        \(episodes)<h3>Events (\(s.events.count))</h3>
        \(tools)
        <ol class="events">
        \(items)</ol>
        </section>

        """
    }

    /// JSON for a <script type="application/json"> block: "<" is escaped so no "</script>" can end it.
    static func json(_ page: PageData) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(page)) ?? Data("{\"nights\":[]}".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }

    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}

/// Numbers as a person reads them; shared by the report, `nights` and `show`.
public enum Format {
    public static func duration(_ seconds: Double) -> String {
        let m = Int((seconds / 60).rounded())
        return m >= 60 ? "\(m / 60) h \(padded(m % 60)) min" : "\(m) min"
    }

    /// Snoring minutes: tenths under 10 min (a light night's "0.4 min", not "0 min"), whole above.
    /// Every command that shows the figure to a person shows it so.
    public static func minutes(_ m: Double) -> String { fixed(m, abs(m) < 9.95 ? 1 : 0) + " min" }
    public static func percent(_ p: Double) -> String { fixed(p, 1) + " %" }

    /// A moment of the night on its clock ("02:10:08 (2nd)"), or "+1:02:03" into an undated one.
    public static func time(_ seconds: Double, on clock: NightClock?) -> String {
        clock?.displayTime(at: seconds) ?? "+" + elapsed(seconds)
    }

    /// "1:02:03" from seconds.
    public static func elapsed(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.down))
        return "\(s / 3600):\(padded((s / 60) % 60)):\(padded(s % 60))"
    }

    /// A number with a fixed count of decimals, rounded half away from zero ("-3.5", "12").
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "–" }
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        // Past what an Int holds exactly (no figure of a night is), printf's rounding will do.
        guard abs(value) * Double(scale) < 1e15 else { return String(format: "%.\(decimals)f", value) }
        // A value a hair under a half is that half (a duration, end − start, of 1.15 s comes out
        // 1.1499999999999986, and read "1.1" beside another 1.15 read "1.2"). A hair is a
        // millionth of the last decimal: a subtraction's error in a night's times is under 1e-8
        // of it, and a tolerance that grew with the value rounded 28800.12349 up.
        let shifted = abs(value) * Double(scale)
        let half = shifted.rounded(.down) + 0.5
        let scaled = Int((abs(shifted - half) < 1e-6 ? half : shifted).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(scaled) }
        return sign + String(scaled / scale) + "." + padded(scaled % scale, decimals)
    }

    /// Text from a night's files (a recording's name, a warning) made safe to print on a line of
    /// a terminal: control characters written out (`\n`, `\u{1B}`), so that a name holding an
    /// escape sequence cannot clear the screen or retitle the window, nor a line break split a line.
    /// `keepingLineBreaks`: for a message of several lines, whose line breaks and tabs are its own.
    public static func printable(_ text: String, keepingLineBreaks: Bool = false) -> String {
        func isWrittenOut(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.generalCategory == .control && !(keepingLineBreaks && (scalar == "\n" || scalar == "\t"))
        }
        guard text.unicodeScalars.contains(where: isWrittenOut) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            guard isWrittenOut(scalar) else { out.unicodeScalars.append(scalar); continue }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return out
    }

    public static func className(_ c: EventClass) -> String {
        switch c {
        case .snoring: return "Snoring"
        case .sleepTalk: return "Sleep-talk"
        case .cough: return "Cough"
        }
    }
}
