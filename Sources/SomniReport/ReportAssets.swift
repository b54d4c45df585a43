/// The report's inline style and scripts. Everything the page needs is here: no fonts, images,
/// styles or scripts are fetched (the page's Content-Security-Policy forbids it as well).
enum ReportAssets {
    /// Content-Security-Policy: inline script and style only; media from the page's own files or data: URIs.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; media-src 'self' data:"

    /// Runs first: counts script errors, failed loads and console.error calls into attributes on
    /// <html>, so a test (or a curious person) can read them after the page ran.
    static let errorRecorder = #"""
    (function () {
      var root = document.documentElement, count = 0;
      root.setAttribute('data-errors', '0');
      function record(what) {
        count += 1;
        root.setAttribute('data-errors', String(count));
        root.setAttribute('data-last-error', String(what).slice(0, 300));
      }
      window.addEventListener('error', function (e) {
        var t = e.target;
        record(e.message || (t && (t.currentSrc || t.src)) || 'load error');
      }, true);
      window.addEventListener('unhandledrejection', function (e) { record('unhandled: ' + e.reason); });
      var original = console.error;
      console.error = function () { record(Array.prototype.join.call(arguments, ' ')); original.apply(console, arguments); };
      document.addEventListener('securitypolicyviolation', function (e) {
        record('blocked ' + e.blockedURI);
        root.setAttribute('data-blocked', (root.getAttribute('data-blocked') || '') + e.blockedURI + ' ');
      });
    })();
    """#

    static let style = #"""
    :root {
      color-scheme: light dark;
      --bg: #f7f5f2; --card: #ffffff; --fg: #1d1f23; --muted: #6a6f78; --line: #e2ded8; --ink: #2a2f3a;
      --snoring: #e8821e; --sleep_talk: #3b7fd4; --cough: #d23c3c; --accent: #e8821e;
      font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
      background: var(--bg); color: var(--fg);
    }
    @media (prefers-color-scheme: dark) {
      :root { --bg: #101318; --card: #181c23; --fg: #e7e9ee; --muted: #9aa1ad; --line: #2a303a; --ink: #dfe6f2;
              --snoring: #ffa049; --sleep_talk: #6aa8ff; --cough: #ff6b6b; --accent: #ffa049; }
    }
    * { box-sizing: border-box; }
    body { margin: 0; line-height: 1.45; }
    main, header.top, footer { max-width: 1000px; margin: 0 auto; padding: 0 16px; }
    header.top { padding-top: 20px; }
    h1 { font-size: 1.5rem; margin: 0 0 4px; }
    h2 { font-size: 1.25rem; margin: 0 0 12px; }
    h2 small { display: block; font-weight: normal; color: var(--muted); font-size: .9rem; }
    h3 { font-size: 1rem; margin: 20px 0 8px; }
    .sub, .hint, footer { color: var(--muted); font-size: .85rem; }
    section.night, section.trends, nav.nightlist { background: var(--card); border: 1px solid var(--line);
      border-radius: 12px; padding: 16px; margin: 16px 0; }
    .stats { display: grid; grid-template-columns: repeat(3, 1fr); gap: 8px; }
    .stat { border: 1px solid var(--line); border-radius: 10px; padding: 10px; text-align: center; }
    .stat .value { display: block; font-size: 1.6rem; font-weight: 600; font-variant-numeric: tabular-nums; }
    .stat .label { color: var(--muted); font-size: .8rem; }
    table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
    th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); }
    td.num, th.num { text-align: right; }
    table.episodes a { color: var(--accent); }
    li.event:target { outline: 2px solid var(--accent); outline-offset: 2px; }
    .dot { display: inline-block; width: .7em; height: .7em; border-radius: 50%; margin-right: 6px; }
    .dot.snoring, .badge.snoring { background: var(--snoring); }
    .dot.sleep_talk, .badge.sleep_talk { background: var(--sleep_talk); }
    .dot.cough, .badge.cough { background: var(--cough); }
    .timeline { position: relative; }
    .timeline svg { display: block; width: 100%; height: 120px; background: var(--bg); border-radius: 8px; }
    .timeline .env { fill: var(--ink); opacity: .18; }
    .timeline .tick { stroke: var(--line); stroke-width: 1; vector-effect: non-scaling-stroke; }
    .hours svg { display: block; width: 100%; height: 60px; margin-top: 10px; }
    .ev.snoring, .hourbar.snoring, .cell.s, .trend.snoring, .trend.min, .trend.pct { fill: var(--snoring); }
    .ev.sleep_talk, .hourbar.sleep_talk, .cell.t, .trend.sleep_talk { fill: var(--sleep_talk); }
    .ev.cough, .hourbar.cough, .cell.c, .trend.cough { fill: var(--cough); }
    .ev { opacity: .9; }
    .axis { position: relative; height: 1.2em; font-size: .75rem; color: var(--muted); }
    .axis span { position: absolute; transform: translateX(-50%); white-space: nowrap; }
    .ribbon { touch-action: pan-y; user-select: none; -webkit-user-select: none; border-radius: 6px; }
    .ribbon:focus-visible { outline: 2px solid var(--accent); outline-offset: 3px; }
    .ribbon .row { display: grid; grid-template-columns: 3.2em 1fr; align-items: center; gap: 6px; }
    .ribbon .hour { font-size: .75rem; color: var(--muted); font-variant-numeric: tabular-nums; }
    .ribbon svg { display: block; width: 100%; height: 18px; cursor: crosshair; }
    .cell { fill: var(--ink); }
    .cell.g { fill: none; stroke: var(--line); stroke-width: 1; vector-effect: non-scaling-stroke; }
    .timeline .gap { fill: var(--line); opacity: .5; }
    .ribbon .cursor { fill: none; stroke: var(--fg); stroke-width: 2; vector-effect: non-scaling-stroke; }
    output.readout { display: block; min-height: 1.5em; margin-top: 6px; font-variant-numeric: tabular-nums; font-size: .9rem; }
    ol.events { list-style: none; padding: 0; margin: 0; }
    ol.events.hide-snoring li.snoring, ol.events.hide-sleep_talk li.sleep_talk, ol.events.hide-cough li.cough { display: none; }
    .event-tools { display: flex; flex-wrap: wrap; gap: 6px 18px; align-items: center; margin: 0 0 8px; font-size: .9rem; }
    .event-tools label { display: inline-flex; align-items: center; gap: 4px; }
    .event-tools input:disabled + .dot { opacity: .4; }
    li.event { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; padding: 8px 0; border-bottom: 1px solid var(--line);
      font-variant-numeric: tabular-nums; font-size: .9rem; }
    .badge { color: #fff; border-radius: 999px; padding: 1px 10px; font-size: .8rem; }
    .meta { min-width: 4.5em; }
    .sev { display: inline-block; width: 60px; height: 6px; background: var(--line); border-radius: 3px; overflow: hidden; vertical-align: middle; }
    .sev i { display: block; height: 100%; background: var(--accent); }
    .player { display: flex; align-items: center; gap: 8px; flex: 1 1 260px; min-width: 0; max-width: 100%; }
    .player button { width: 34px; height: 34px; border-radius: 50%; border: 1px solid var(--line); background: var(--bg); color: var(--fg);
      font-size: 14px; cursor: pointer; flex: none; }
    .player button:disabled { opacity: .4; cursor: default; }
    .player canvas { flex: 1 1 0; min-width: 0; width: 100%; max-width: 420px; height: 40px; touch-action: none; cursor: pointer; }
    .player .pos { width: 3.2em; color: var(--muted); font-size: .8rem; }
    .trend-chart svg { display: block; width: 100%; height: 120px; background: var(--bg); border-radius: 8px; }
    .legend span { margin-right: 14px; font-size: .85rem; }
    .scale { display: flex; justify-content: space-between; font-size: .75rem; color: var(--muted); }
    nav.nightlist a { color: inherit; }
    @media (max-width: 600px) {
      .stat .value { font-size: 1.15rem; }
      h2 { font-size: 1.1rem; }
      th, td { padding: 3px 4px; font-size: .85rem; }
      .hide-narrow { display: none; }
      .player { flex-basis: 100%; }
    }
    """#

    /// Draws the timeline, ribbon, waveforms and trends from the embedded JSON, and runs the players.
    static let script = #"""
    (function () {
      'use strict';
      var root = document.documentElement;
      var data = JSON.parse(document.getElementById('somni-data').textContent);
      var CELL = 10, PER_ROW = 360, DB_LOW = -70, DB_HIGH = -10;
      var NAMES = { snoring: 'snoring', sleep_talk: 'sleep-talk', cough: 'cough', s: 'snoring', t: 'sleep-talk', c: 'cough' };

      function pad(n) { return (n < 10 ? '0' : '') + n; }
      function clock(secondsOfDay) {
        var s = Math.floor(((secondsOfDay % 86400) + 86400) % 86400);
        return pad(Math.floor(s / 3600)) + ':' + pad(Math.floor(s / 60) % 60) + ':' + pad(s % 60);
      }
      function css(name) { return getComputedStyle(root).getPropertyValue(name).trim(); }
      // Waveform colours, read once (reading styles per canvas is slow) and again when the theme flips.
      var colours = null, redraws = [];
      function palette() {
        if (!colours) { colours = { played: css('--accent'), rest: css('--muted') }; }
        return colours;
      }
      if (window.matchMedia) {
        var scheme = window.matchMedia('(prefers-color-scheme: dark)');
        if (scheme.addEventListener) {
          scheme.addEventListener('change', function () { colours = null; redraws.forEach(function (f) { f(); }); });
        }
      }
      function brightness(db) {
        if (db == null) { return 0.08; }
        var t = (db - DB_LOW) / (DB_HIGH - DB_LOW);
        return 0.06 + 0.94 * Math.max(0, Math.min(1, t));
      }

      function drawTimeline(night, el) {
        var W = 1000, H = 100, parts = [], D = night.duration > 0 ? night.duration : 1;
        var hoursFromRow = (night.offset + night.duration) / 3600;
        if (night.envelope.length) {
          var n = night.envelope.length, d = 'M0,' + H;
          for (var i = 0; i < n; i++) {
            var x0 = (i / n * W).toFixed(1), x1 = ((i + 1) / n * W).toFixed(1), y = (H - (night.envelope[i] || 0) * 0.9).toFixed(1);
            d += 'L' + x0 + ',' + y + 'L' + x1 + ',' + y;
          }
          parts.push('<path class="env" d="' + d + 'L' + W + ',' + H + 'Z"/>');
        }
        for (var h = Math.ceil(night.offset / 3600 + 1e-9); h < hoursFromRow; h++) {
          var x = ((h * 3600 - night.offset) / D * W).toFixed(1);
          parts.push('<line class="tick" x1="' + x + '" x2="' + x + '" y1="0" y2="' + H + '"/>');
        }
        night.gaps.forEach(function (g) {
          parts.push('<rect class="gap" x="' + (g[0] / D * W).toFixed(2) + '" width="' + ((g[1] - g[0]) / D * W).toFixed(2) +
            '" y="0" height="' + H + '"><title>not recorded</title></rect>');
        });
        night.events.forEach(function (e) {
          var x = e.s / D * W, w = Math.max(1.5, (e.e - e.s) / D * W);
          parts.push('<rect class="ev ' + e.c + '" x="' + x.toFixed(2) + '" width="' + w.toFixed(2) + '" y="' + (H - e.h) +
            '" height="' + e.h + '"><title>' + NAMES[e.c] + ' ' + fixed(e.pk, 1) + ' dBFS</title></rect>');
        });
        el.querySelector('.timeline').innerHTML =
          '<svg viewBox="0 0 ' + W + ' ' + H + '" preserveAspectRatio="none" role="img" aria-label="night timeline">' + parts.join('') + '</svg>';
        var axis = el.querySelector('.timeline + .axis'), labels = [];
        var firstTick = Math.ceil(night.offset / 3600 + 1e-9);
        var step = labelStep(Math.ceil(hoursFromRow) - firstTick, axis.getBoundingClientRect().width);
        for (var k = firstTick; k < hoursFromRow; k++) {
          if (k % step !== 0) { continue; }
          var left = (k * 3600 - night.offset) / D * 100;
          var text = rowLabel(night, k);
          labels.push('<span style="left:' + left.toFixed(2) + '%">' + text + '</span>');
        }
        axis.innerHTML = labels.join('');
      }

      // Seconds the clock has moved since the start (daylight saving) at `t` seconds into the night.
      function shiftAt(night, t) {
        var by = 0;
        night.shifts.forEach(function (s) { if (t >= s.at - 0.001) { by = s.by; } });  // row starts land on the change
        return by;
      }
      // Whether `t` seconds into the night is a clock time shown for the second time: in the hour
      // after the clocks went back ("02:10:08 (2nd)", as the event list says it).
      function repeated(night, t) {
        var before = 0, again = false;
        night.shifts.forEach(function (s) {
          if (s.by < before && t >= s.at - 0.001 && t < s.at + (before - s.by)) { again = true; }
          before = s.by;
        });
        return again;
      }
      // A row's clock hour; after a daylight-saving change the clock's own (02:00 twice in autumn).
      function rowLabel(night, row) {
        if (night.firstHour == null) { return '+' + row + ' h'; }
        return clock((night.firstHour + row) * 3600 + shiftAt(night, row * 3600 - night.offset)).slice(0, 5);
      }

      // Every how many hours an axis is labelled: every hour where the labels fit side by side
      // (about 44 px each), else every 2nd, 3rd… (a night of ten hours ran its labels together
      // on a phone). A width of 0 (not laid out) labels every hour.
      function labelStep(count, width) {
        var steps = [1, 2, 3, 4, 6, 12];
        for (var i = 0; i < steps.length; i++) {
          if (!(width > 0) || Math.ceil(count / steps[i]) * 44 <= width) { return steps[i]; }
        }
        return 12;
      }

      // Events starting in each hour of the night, stacked by class.
      function drawHours(night, el) {
        var classes = ['snoring', 'sleep_talk', 'cough'], max = 1, parts = [], labels = [];
        var step = labelStep(night.hours.length, el.querySelector('.hours').getBoundingClientRect().width);
        night.hours.forEach(function (counts) { max = Math.max(max, counts[0] + counts[1] + counts[2]); });
        var n = night.hours.length, W = Math.max(n, 8) * 10;
        night.hours.forEach(function (counts, row) {
          var y = 60;
          classes.forEach(function (c, k) {
            if (!counts[k]) { return; }
            var h = counts[k] / max * 56;
            y -= h;
            parts.push('<rect class="hourbar ' + c + '" x="' + (row * 10 + 1) + '" width="8" y="' + y.toFixed(2) + '" height="' + h.toFixed(2) +
              '"><title>' + rowLabel(night, row) + (repeated(night, row * 3600 - night.offset) ? ' (2nd)' : '') + ': ' +
              counts[k] + ' ' + NAMES[c] + '</title></rect>');
          });
          if (row % step !== 0) { return; }
          labels.push('<span style="left:' + ((row * 10 + 5) / W * 100).toFixed(2) + '%">' + rowLabel(night, row) + '</span>');
        });
        el.querySelector('.hours').innerHTML = '<svg viewBox="0 0 ' + W + ' 60" preserveAspectRatio="none">' + parts.join('') +
          '</svg><div class="axis">' + labels.join('') + '</div>';
      }

      function drawRibbon(night, el) {
        var r = night.ribbon, box = el.querySelector('.ribbon'), out = el.querySelector('output.readout');
        var lastCell = r.first + r.level.length - 1;
        var rows = Math.floor(lastCell / PER_ROW) + 1, html = [];
        for (var row = 0; row < rows; row++) {
          var cells = [];
          for (var c = Math.max(0, r.first - row * PER_ROW); c < PER_ROW; c++) {
            var k = row * PER_ROW + c - r.first;
            if (k >= r.level.length) { break; }
            var cls = r.cls.charAt(k);
            cells.push('<rect class="cell' + (cls === '.' ? '' : ' ' + cls) + '" x="' + c + '" y="0.07" width="1" height="0.86" fill-opacity="' +
              brightness(r.level[k]).toFixed(2) + '"/>');
          }
          var label = rowLabel(night, row);
          html.push('<div class="row"><span class="hour">' + label + '</span><svg viewBox="0 0 ' + PER_ROW +
            ' 1" preserveAspectRatio="none" data-row="' + row + '">' + cells.join('') +
            '<rect class="cursor" x="0" y="0" width="1" height="1" visibility="hidden"/></svg></div>');
        }
        box.innerHTML = html.join('');
        var current = { row: Math.floor(r.first / PER_ROW), c: r.first % PER_ROW };
        // Shows the cell's time, level and class, and moves the cursor there.
        function show(row, c) {
          current = { row: row, c: c };
          var k = row * PER_ROW + c - r.first;
          box.querySelectorAll('.cursor').forEach(function (cur) { cur.setAttribute('visibility', 'hidden'); });
          var svg = box.querySelector('svg[data-row="' + row + '"]');
          if (svg) {
            var cursor = svg.querySelector('.cursor');
            cursor.setAttribute('x', String(c));
            cursor.setAttribute('visibility', 'visible');
          }
          var secondsIntoRow = c * CELL, text;
          if (night.firstHour == null) {
            text = '+' + clock(row * 3600 + secondsIntoRow);
          } else {
            var into = row * 3600 + secondsIntoRow - night.offset;
            text = clock((night.firstHour + row) * 3600 + secondsIntoRow + shiftAt(night, into)) + (repeated(night, into) ? ' (2nd)' : '');
          }
          if (k < 0 || k >= r.level.length) { out.textContent = text + ' · outside the night'; return; }
          var cls = r.cls.charAt(k);
          if (cls === 'g') { out.textContent = text + ' · not recorded'; return; }
          var level = r.level[k] == null ? 'level unknown' : r.level[k] + ' dBFS';
          out.textContent = text + ' · ' + level + ' · ' + (cls === '.' ? 'no event' : NAMES[cls]);
        }
        function read(ev, svg) {
          var rect = svg.getBoundingClientRect();
          show(Number(svg.getAttribute('data-row')),
               Math.max(0, Math.min(PER_ROW - 1, Math.floor((ev.clientX - rect.left) / rect.width * PER_ROW))));
        }
        // Keyboard: arrows move a cell (shift: a minute) or an hour row; Home and End jump to the ends.
        box.addEventListener('keydown', function (ev) {
          var cell = current.row * PER_ROW + current.c, step = ev.shiftKey ? 6 : 1;
          var moves = { ArrowLeft: -step, ArrowRight: step, ArrowUp: -PER_ROW, ArrowDown: PER_ROW };
          if (ev.key in moves) { cell += moves[ev.key]; }
          else if (ev.key === 'Home') { cell = r.first; }
          else if (ev.key === 'End') { cell = lastCell; }
          else { return; }
          ev.preventDefault();
          cell = Math.max(r.first, Math.min(lastCell, cell));
          show(Math.floor(cell / PER_ROW), cell % PER_ROW);
        });
        var dragging = null;
        box.addEventListener('pointerdown', function (ev) {
          var svg = ev.target.closest('svg'); if (!svg) { return; }
          dragging = svg; read(ev, svg);
        });
        box.addEventListener('pointermove', function (ev) {
          var svg = dragging ? document.elementFromPoint(ev.clientX, ev.clientY) : ev.target;
          svg = svg && svg.closest ? svg.closest('svg') : null;
          if (svg && box.contains(svg)) { read(ev, svg); }
        });
        window.addEventListener('pointerup', function () { dragging = null; });
      }

      var loaded = 0, failed = 0;
      function mark(audio, state) {
        if (audio.getAttribute('data-state') === state) { return; }
        audio.setAttribute('data-state', state);
        if (state === 'loaded') { loaded += 1; root.setAttribute('data-audio-loaded', String(loaded)); }
        if (state === 'error') { failed += 1; root.setAttribute('data-audio-failed', String(failed)); }
      }

      function setUpPlayer(li, e) {
        var canvas = li.querySelector('canvas'), button = li.querySelector('button'), audio = li.querySelector('audio');
        var pos = li.querySelector('.pos'), fraction = 0, pending = null, shown = false;
        var ctx = canvas.getContext('2d');
        function draw() {
          if (!shown) { return; }
          var w = canvas.width, h = canvas.height, n = e.bins.length || 96;
          ctx.clearRect(0, 0, w, h);
          var played = palette().played, rest = palette().rest, step = w / n;
          for (var i = 0; i < n; i++) {
            var v = e.bins.length ? Math.max(4, e.bins[i]) : 10;
            var bh = v / 100 * (h - 4);
            ctx.fillStyle = (i + 0.5) / n <= fraction ? played : rest;
            ctx.fillRect(i * step + step * 0.15, (h - bh) / 2, step * 0.7, bh);
          }
          if (audio && isFinite(audio.duration)) {
            var t = fraction * audio.duration;
            pos.textContent = Math.floor(t / 60) + ':' + pad(Math.floor(t % 60));
          }
        }
        redraws.push(draw);
        // Called when the row comes near the screen: draw it and fetch the clip's metadata.
        function show() {
          if (shown) { return; }
          shown = true;
          draw();
          if (audio && audio.preload === 'none' && audio.readyState === 0) { audio.preload = 'metadata'; audio.load(); }
        }
        if (!audio) { button.disabled = true; return show; }
        function applyPending() {
          if (pending !== null && isFinite(audio.duration)) { audio.currentTime = pending * audio.duration; pending = null; }
        }
        audio.addEventListener('loadedmetadata', function () { mark(audio, 'loaded'); applyPending(); draw(); });
        audio.addEventListener('error', function () { mark(audio, 'error'); button.disabled = true; });
        audio.addEventListener('timeupdate', function () {
          if (isFinite(audio.duration) && audio.duration > 0) { fraction = audio.currentTime / audio.duration; draw(); }
        });
        audio.addEventListener('ended', function () { button.textContent = '▶'; button.setAttribute('aria-label', 'Play'); });
        if (audio.readyState >= 1) { mark(audio, 'loaded'); }
        if (audio.error) { mark(audio, 'error'); }
        // Scrubbing works before play: it only positions the paused clip.
        function seek(ev) {
          var rect = canvas.getBoundingClientRect();
          fraction = Math.max(0, Math.min(1, (ev.clientX - rect.left) / rect.width));
          pending = fraction;
          if (audio.readyState >= 1) { applyPending(); } else if (audio.preload === 'none') { audio.preload = 'metadata'; audio.load(); }
          draw();
        }
        canvas.addEventListener('pointerdown', function (ev) {
          try { canvas.setPointerCapture(ev.pointerId); } catch (ignored) { /* a synthetic or vanished pointer */ }
          seek(ev);
        });
        canvas.addEventListener('pointermove', function (ev) { if (canvas.hasPointerCapture(ev.pointerId)) { seek(ev); } });
        button.addEventListener('click', function () {
          if (audio.paused) {
            document.querySelectorAll('audio').forEach(function (other) { if (other !== audio) { other.pause(); } });
            var p = audio.play();
            if (p && p.catch) { p.catch(function (err) { button.title = String(err); }); }
            button.textContent = '❚❚'; button.setAttribute('aria-label', 'Pause');
          } else {
            audio.pause(); button.textContent = '▶'; button.setAttribute('aria-label', 'Play');
          }
        });
        audio.addEventListener('pause', function () { button.textContent = '▶'; button.setAttribute('aria-label', 'Play'); });
        return show;
      }

      // A figure as the page's tables and the command line round it (Format.fixed): half away
      // from zero, a half a subtraction left a hair under taken as the half. toFixed rounds the
      // binary value, so 0.15 min read "0.1" on a chart and "0.2" in the table beside it.
      function fixed(v, d) {
        var scale = Math.pow(10, d), x = Math.abs(v) * scale, half = Math.floor(x) + 0.5;
        if (Math.abs(x - half) < 1e-6) x = half;
        var r = Math.round(x);
        return (v < 0 && r !== 0 ? '-' : '') + (r / scale).toFixed(d);
      }

      function drawTrends(trends, el) {
        // At least 14 slots wide, so a few nights give bars, not slabs.
        var n = trends.length, W = Math.max(n, 14) * 10, H = 100;
        function bars(values, cls, max, title) {
          return values.map(function (v, i) {
            var h = max > 0 ? v / max * (H - 4) : 0;
            return '<rect class="trend ' + cls + '" x="' + (i * 10 + 1.5) + '" width="7" y="' + (H - h).toFixed(2) + '" height="' + h.toFixed(2) +
              '"><title>' + trends[i].label + ': ' + title(v) + '</title></rect>';
          }).join('');
        }
        // The chart, the scale's top value, and the first and last night under it.
        function svg(inner, top) {
          return '<svg viewBox="0 0 ' + W + ' ' + H + '" preserveAspectRatio="none">' + inner + '</svg>' +
            '<div class="scale"><span>' + trends[0].label + '</span><span>max ' + top + '</span><span>' +
            (n > 1 ? trends[n - 1].label : '') + '</span></div>';
        }
        var minutes = trends.map(function (t) { return t.minutes; });
        var percent = trends.map(function (t) { return t.percent; });
        // Shares under 1 % are drawn on a 1 % scale, not blown up to full height; the label
        // still gives the largest share ("max 1.0 %" over nights of 0.0 % read as one that snored).
        var maxMinutes = Math.max.apply(null, minutes), largestPercent = Math.max.apply(null, percent);
        var maxPercent = Math.max(1, largestPercent);
        // The scale's top as its bars say it: tenths under 10 min ("max 0 min" over bars of 0.2).
        function minutesText(v) { return fixed(v, Math.abs(v) < 9.95 ? 1 : 0) + ' min'; }
        el.querySelector('[data-chart="minutes"]').innerHTML =
          svg(bars(minutes, 'min', maxMinutes, minutesText), minutesText(maxMinutes));
        el.querySelector('[data-chart="percent"]').innerHTML =
          svg(bars(percent, 'pct', maxPercent, function (v) { return fixed(v, 1) + ' %'; }), fixed(largestPercent, 1) + ' %');
        var classes = ['snoring', 'sleep_talk', 'cough'], maxRate = 0, stacked = [];
        trends.forEach(function (t) {
          var total = 0; classes.forEach(function (c) { total += t.rates[c] || 0; }); maxRate = Math.max(maxRate, total);
        });
        trends.forEach(function (t, i) {
          var y = H;
          classes.forEach(function (c) {
            var h = maxRate > 0 ? (t.rates[c] || 0) / maxRate * (H - 4) : 0;
            y -= h;
            stacked.push('<rect class="trend ' + c + '" x="' + (i * 10 + 1.5) + '" width="7" y="' + y.toFixed(2) + '" height="' + h.toFixed(2) +
              '"><title>' + t.label + ': ' + fixed(t.rates[c] || 0, 1) + ' ' + NAMES[c] + ' events per hour</title></rect>');
          });
        });
        el.querySelector('[data-chart="rates"]').innerHTML = svg(stacked.join(''), fixed(maxRate, 1) + ' per hour');
      }

      // The event list's class boxes and order.
      function setUpEventTools(el) {
        var list = el.querySelector('ol.events');
        el.querySelectorAll('.event-tools input[data-show]').forEach(function (box) {
          box.addEventListener('change', function () { list.classList.toggle('hide-' + box.getAttribute('data-show'), !box.checked); });
        });
        // An episode's loudest snore is shown before the link jumps to it, were snoring hidden.
        var snoring = el.querySelector('.event-tools input[data-show="snoring"]');
        el.querySelectorAll('table.episodes a').forEach(function (link) {
          link.addEventListener('click', function () {
            if (snoring && !snoring.checked) { snoring.checked = true; list.classList.remove('hide-snoring'); }
          });
        });
        var order = el.querySelector('.event-tools select[data-order]');
        if (!order) { return; }
        order.addEventListener('change', function () {
          var key = order.value === 'severity' ? 'data-severity' : 'data-start', sign = order.value === 'severity' ? -1 : 1;
          var items = Array.prototype.slice.call(list.querySelectorAll('li.event'));
          items.sort(function (a, b) {
            return sign * (Number(a.getAttribute(key)) - Number(b.getAttribute(key))) ||
              Number(a.getAttribute('data-start')) - Number(b.getAttribute('data-start'));
          });
          items.forEach(function (li) { list.appendChild(li); });
        });
      }

      var rows = [];
      data.nights.forEach(function (night, i) {
        var el = document.getElementById('night-' + i);
        drawTimeline(night, el);
        drawRibbon(night, el);
        drawHours(night, el);
        setUpEventTools(el);
        var byId = {};
        night.events.forEach(function (e) { byId[e.id] = e; });
        el.querySelectorAll('li.event').forEach(function (li) { rows.push([li, setUpPlayer(li, byId[li.getAttribute('data-event')])]); });
      });
      // The first rows are drawn and their clips' metadata fetched at once; the rest as they come
      // near the screen, so a night with hundreds of events still opens fast.
      var EAGER = 24;
      rows.slice(0, EAGER).forEach(function (r) { r[1](); });
      rows = rows.slice(EAGER);
      if ('IntersectionObserver' in window) {
        var shows = new Map(rows);
        var observer = new IntersectionObserver(function (entries) {
          entries.forEach(function (entry) {
            if (entry.isIntersecting) { shows.get(entry.target)(); observer.unobserve(entry.target); }
          });
        }, { rootMargin: '1200px 0px' });
        rows.forEach(function (r) { observer.observe(r[0]); });
      } else {
        rows.forEach(function (r) { r[1](); });
      }
      if (data.trends) { drawTrends(data.trends, document.getElementById('trends')); }
      root.setAttribute('data-rendered', '1');
      // Milliseconds from navigation to a fully drawn page, for the benchmark.
      root.setAttribute('data-rendered-ms', String(Math.round(performance.now())));
    })();
    """#
}
