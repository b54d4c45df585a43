import Foundation

/// One classifier window: where it sits in the recording and its ranked labels (best first).
public struct WindowLabels: Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var ranked: [LabelConfidence]
    public init(start: Double, end: Double, ranked: [LabelConfidence]) {
        self.start = start; self.end = end; self.ranked = ranked
    }
}

/// An event found in a night, before it gets an id and a clip.
public struct DetectedEvent: Sendable, Equatable {
    public var eventClass: EventClass
    public var start: Double
    public var end: Double
    /// The highest confidence among the windows that found it.
    public var confidence: Double
    /// 20·log10 of the loudest 50 ms raw RMS within the event.
    public var peakDBFS: Double
    /// 20·log10 of the RMS over the whole event (power mean of its frames).
    public var meanDBFS: Double
    public var severity: Double

    public init(eventClass: EventClass, start: Double, end: Double, confidence: Double,
                peakDBFS: Double, meanDBFS: Double, severity: Double) {
        self.eventClass = eventClass; self.start = start; self.end = end; self.confidence = confidence
        self.peakDBFS = peakDBFS; self.meanDBFS = meanDBFS; self.severity = severity
    }

    public var duration: Double { end - start }
    public var range: TimeRange { TimeRange(start: start, end: end) }

    public func sessionEvent(id: String, clip: String? = nil, episode: Int? = nil) -> SessionEvent {
        SessionEvent(id: id, eventClass: eventClass, start: start, end: end, confidence: confidence,
                     peakDBFS: peakDBFS, meanDBFS: meanDBFS, severity: severity, clip: clip, episode: episode)
    }
}

/// Turns ranked classifier windows into events.
///
/// 1. Each window's top five labels are scanned; the first one in a class set whose confidence
///    reaches the sensitivity's minimum decides the window (a fan holding first place does not
///    hide snoring in third).
/// 2. Positive windows of one class form spans: sleep-talk and cough windows whose gap is 2 s or
///    less; snoring windows one run of overlapping windows at a time (`windowRunGap`), merged at
///    2 s once placed (4).
/// 3. The span's edges are refined from the 50 ms frames: the relevant band (low for snoring, mid
///    for sleep-talk and coughs) is compared with a local floor (20th percentile of the frames
///    within ±15 s) × 3 (× 2 for snoring); the event runs from where the band rises above that
///    to where it falls back, within 1 s of the span. Coughs are then split at each sharp onset
///    after a dip, so a bout of three is three events.
/// 4. Snoring and sleep-talk events of one class within 2 s merge again; sleep-talk under 0.5 s
///    drops; snoring whose band core is under 0.2 s keeps its windows' span instead.
/// 5. Context: an unsure word or cough between snores is another snore, and snoring needs a
///    train: three snores less than 10 s apart heard at the full threshold, or 30 s of such
///    snoring; snores heard only at the lowered continuation threshold extend a train (before
///    it, a level of its own: `snoringLeadInShare`). A snore heard by one window alone needs a sure
///    one (0.9) to count as sure or to lead in (`heardAsSnore`). A piece heard fewer times that snore-band bursts
///    chain to a train at under 10 s a step is part of it (`rejoinedLoneSnores`).
/// 6. Sleep-talk heard by a single window needs a sure one (0.9): a deviation from the seeds,
///    whose threshold alone let one unsure window of a noise become an event.
/// 7. Last, snoring events are cut at pauses in the snore band (`splitAtPauses`): snores less
///    than 2 s apart merged in step 4, and each is counted, timed and clipped on its own; and
///    snippets of a frame or two inside an episode drop (`withoutSnippetsInsideEpisodes`).
public enum EventDetector {
    public static let scanDepth = 5
    public static let mergeGap = 2.0
    public static let minimumDuration = 0.5
    /// A snore the classifier heard whose low-band core is shorter than `minimumDuration` is
    /// still a snore (quieter ones rise above the local floor only at their peak); dropping it
    /// split episodes. Lone snore-like blips are removed by `minimumEpisodeSnores` instead.
    /// A core shorter than this places nothing: the snore keeps its windows' span (below).
    public static let minimumSnoreCore = 0.2

    public static func detect(windows: [WindowLabels], frames: FrameTrack, sensitivity: Int,
                              duration: Double) -> [DetectedEvent] {
        let minimum = Sensitivity.minimumConfidence(sensitivity)
        var hits: [EventClass: [Hit]] = [:]
        var undecided: [Int] = []
        let snoring = windows.map(snoringConfidence)
        for (i, w) in windows.enumerated() {
            guard let (c, confidence) = decide(w.ranked, minimum: minimum),
                  c != .snoring || heardAsSnore(i, in: windows, snoring: snoring, level: minimum * pairedSnoreShare)
            else { undecided.append(i); continue }
            hits[c, default: []].append(Hit(range: TimeRange(start: w.start, end: w.end), confidence: Double(confidence)))
        }
        let sureSnoring = (hits[.snoring] ?? []).map(\.range)
        hits[.snoring, default: []] += continuedSnoring(windows, undecided: undecided, accepted: hits[.snoring] ?? [],
                                                       minimum: minimum * snoringContinuationShare,
                                                       leadIn: minimum * snoringLeadInShare, snoring: snoring,
                                                       leadsIn: { heardAsSnore($0, in: windows, snoring: snoring,
                                                                               level: minimum * snoringLeadInShare) })
        reassignUnsureSoundsWithinSnoring(&hits)
        hits[.sleepTalk] = hits[.sleepTalk].map(confirmedTalk)
        var events: [DetectedEvent] = [], unplacedSnores: [TimeRange] = []
        for c in EventClass.allCases {
            guard let classHits = hits[c]?.sorted(by: { $0.range.start < $1.range.start }) else { continue }
            var found: [Hit] = []
            // Snores are placed one run of overlapping windows at a time, and merged after: a
            // span of two snores 2 s apart was placed by the band's runs alone, and a first snore
            // the network was sure of but the band did not show vanished with no event of its own.
            let spans = merge(classHits, gap: c == .snoring ? windowRunGap : mergeGap)
            for span in spans {
                for refined in BoundaryRefiner.refine(span.range, eventClass: c, frames: frames) {
                    // A faint snore under a fan clears the band's floor for a frame or two, too
                    // little to place it; it keeps its windows' span, as one the band does not
                    // show at all does (if about as loud as its train: `withoutFaintUnplacedSnores`).
                    // Dropping it broke the lead-in chains of quiet snorers' trains (found minutes
                    // late) and split their episodes.
                    let unplaced = c == .snoring && refined.duration < minimumSnoreCore
                    if unplaced { unplacedSnores.append(span.range) }
                    // Quiet talk under a fan clears the band's floor × 3 for a moment only; heard by
                    // two windows or more it keeps their span. Heard by one, a sound that short is
                    // a click, and drops below.
                    let heardTalk = c == .sleepTalk && refined.duration < minimumDuration
                        && members(of: span, in: classHits).count >= 2
                    let range = unplaced || heardTalk ? span.range : refined
                    let clamped = TimeRange(start: max(0, range.start), end: min(duration, range.end))
                    guard clamped.end > clamped.start else { continue }
                    let overlapping = classHits.filter { $0.range.overlaps(clamped) }.map(\.confidence)
                    found.append(Hit(range: clamped, confidence: overlapping.max() ?? span.confidence))
                }
            }
            if c != .cough {
                found = merge(found.sorted { $0.range.start < $1.range.start }, gap: mergeGap)
                    .filter { c == .snoring || $0.range.duration >= minimumDuration }
            }
            events += found.map { event(c, $0, frames: frames) }
        }
        // Trains first, from what the classifier heard: snores found from the band alone then
        // only join and extend them, and cannot make a train of two lone snore-like sounds.
        // (Bridging to a lone snore beyond a train as well was tried: it split more fan-night
        // episodes than it joined, since a lone snore then broke the gap it stood in.)
        let (trains, lone) = separatingLoneSnores(events, sure: sureSnoring)
        events = trains + rejoinedLoneSnores(lone, trains: trains, frames: frames)
        events = withoutFaintUnplacedSnores(events, unplaced: unplacedSnores, frames: frames)
        events += bridgedSnores(events, windows: windows, frames: frames)
        events += leadingSnores(events, windows: windows, frames: frames)
        events = events.flatMap { $0.eventClass == .snoring ? splitAtPauses($0, windows: windows, frames: frames) : [$0] }
        events = withoutSnippetsInsideEpisodes(events)
        return withoutOverlaps(events, frames: frames)
    }

    /// The events in order, none overlapping another of its class. The rules above place their
    /// edges independently (a snore kept at its windows' span beside one the band placed, a
    /// bridge or a lead-in beside a train's first snore), and now and then two snores shared
    /// the 25–40 ms where one window's edge met the next snore's band edge (3 overlaps on 1 of
    /// 11 held-out half-hour nights): those were counted twice in snoring minutes and played in
    /// both clips. Two that overlap meet halfway through the overlap, each keeping its
    /// confidence, its levels measured again over what it keeps; one inside another is dropped.
    static func withoutOverlaps(_ events: [DetectedEvent], frames: FrameTrack) -> [DetectedEvent] {
        var out: [DetectedEvent] = []
        for e in events.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
            guard let i = out.lastIndex(where: { $0.eventClass == e.eventClass }), out[i].end > e.start else {
                out.append(e)
                continue
            }
            if e.end <= out[i].end { continue }
            let meeting = (e.start + out[i].end) / 2
            out[i] = resized(out[i], to: TimeRange(start: out[i].start, end: meeting), frames: frames)
            out.append(resized(e, to: TimeRange(start: meeting, end: e.end), frames: frames))
        }
        return out.sorted { ($0.start, $0.eventClass) < ($1.start, $1.eventClass) }
    }

    static func resized(_ e: DetectedEvent, to range: TimeRange, frames: FrameTrack) -> DetectedEvent {
        event(e.eventClass, Hit(range: range, confidence: e.confidence), frames: frames)
    }

    /// Below this confidence, a word or a cough heard with snoring less than an episode's gap
    /// before and after it is taken for one more snore. Snores come every few seconds, and the
    /// classifier's unsure speech and cough calls inside snore trains were nearly all snores
    /// (synthesised nights from held-out recordings); real talk and coughs there still count
    /// when the classifier is sure of them.
    public static let sureWithinSnoring = 0.9

    /// Moves unsure sleep-talk and cough spans that sit inside snoring to the snoring hits, and
    /// talk heard by one window there however sure: words fill two windows or more, and in quiet
    /// rooms nearly every false sleep-talk event was one window reading a snore of a train as
    /// speech at 0.9 or more (synthesised nights 1–12: 15 of 18).
    static func reassignUnsureSoundsWithinSnoring(_ hits: inout [EventClass: [Hit]], gap: Double = episodeGap) {
        let snoring = hits[.snoring] ?? []
        guard !snoring.isEmpty else { return }
        for c in [EventClass.sleepTalk, .cough] {
            guard let classHits = hits[c]?.sorted(by: { $0.range.start < $1.range.start }) else { continue }
            var kept: [Hit] = []
            for span in merge(classHits, gap: mergeGap) {
                let members = Self.members(of: span, in: classHits)
                let before = snoring.contains { $0.range.start < span.range.start && $0.range.end >= span.range.start - gap }
                let after = snoring.contains { $0.range.end > span.range.end && $0.range.start <= span.range.end + gap }
                let heardOnce = c == .sleepTalk && members.count < 2
                if span.confidence < sureWithinSnoring || heardOnce, before, after {
                    hits[.snoring, default: []] += members
                } else {
                    kept += members
                }
            }
            hits[c] = kept
        }
    }

    /// The hits that lie within `span` (one of `merge(hits, gap:)`'s spans).
    static func members(of span: Hit, in hits: [Hit]) -> [Hit] {
        hits.filter { $0.range.start >= span.range.start && $0.range.end <= span.range.end }
    }

    /// Sleep-talk is words, and a word or two fills more than one window (they overlap by half):
    /// talk heard by a single window counts only when the classifier is sure of it. On nights of
    /// background and bedroom sounds alone nearly every false sleep-talk event was one window
    /// read as speech at 0.5–0.88, while true sleep-talk spans two windows or more, or reaches
    /// 0.9 (synthesised nights from held-out recordings). Coughs are not held to this: a cough
    /// is shorter than a window, and a single window is all that hears many quieter ones.
    public static let sureTalk: Float = 0.9

    /// The sleep-talk hits whose span (hits within `mergeGap`) holds two windows or a sure one.
    static func confirmedTalk(_ talk: [Hit]) -> [Hit] {
        let sorted = talk.sorted { $0.range.start < $1.range.start }
        return merge(sorted, gap: mergeGap).flatMap { span in
            let members = Self.members(of: span, in: sorted)
            return members.count >= 2 || Float(span.confidence) >= sureTalk ? members : []
        }
    }

    /// Snores the classifier missed between two snores it found more than an episode's gap apart:
    /// bursts in the snore band that chain from one to the other with every step shorter than
    /// the gap. A run of two or three snores the classifier cannot hear (a few held-out
    /// recordings read as other whatever their level; a fan masks quieter ones) otherwise
    /// splits an episode. Only gaps between trains of found snoring are filled, so this starts
    /// no episode.
    /// Within a chain a single frame above the floor is enough: under a fan, a quieter snore
    /// of the train may rise above it only at its peak, and without it the chain broke.
    /// A burst here needs `bridgeFactor` × the band's local floor, not the 2 × that places a
    /// snore's edges.
    static func bridgedSnores(_ events: [DetectedEvent], windows: [WindowLabels], frames: FrameTrack,
                              gap: Double = episodeGap) -> [DetectedEvent] {
        let snores = events.filter { $0.eventClass == .snoring }.sorted { $0.start < $1.start }
        let others = events.filter { $0.eventClass != .snoring }
        var bridged: [TimeRange] = []
        for (a, b) in zip(snores, snores.dropFirst()) where b.start - a.end >= gap {
            bridged += bridge(TimeRange(start: a.end, end: b.start), frames: frames, apartFrom: others, gap: gap) ?? []
        }
        return bridged.map { snoringEvent($0, windows: windows, frames: frames) }
    }

    /// The bursts that chain across `between` (from one snore's end to the next one's start),
    /// every step shorter than `gap`; nil when the chain breaks.
    static func bridge(_ between: TimeRange, frames: FrameTrack, apartFrom others: [DetectedEvent],
                       gap: Double = episodeGap) -> [TimeRange]? {
        var chain: [TimeRange] = []
        var last = between.start
        for burst in snoreBursts(in: between, frames: frames, apartFrom: others,
                                 shortest: 0, orMidBand: true, factor: bridgeFactor) {
            guard burst.start - last < gap else { break }
            chain.append(burst); last = burst.end
        }
        return between.end - last < gap ? chain : nil
    }

    /// Lone snores (`separatingLoneSnores`) that belong to a train after all: a piece the classifier
    /// heard fewer than three times, cut off from a train at an episode's gap by a snore it
    /// missed and bridged to it (`bridge`) as two trains would be. A quiet snorer's first snores
    /// come one sure snore at a time, so the train's start was dropped and the train found late
    /// (steady-fan nights: 5 of 9 late onsets on seeds 5, 12, 18 and 23). A piece joins the
    /// train next to it, or a piece next to it already joined to one, up to `rejoinReach`
    /// away; two lone pieces still make no train.
    static func rejoinedLoneSnores(_ lone: [DetectedEvent], trains: [DetectedEvent], frames: FrameTrack,
                                   gap: Double = episodeGap, reach: Double = rejoinReach) -> [DetectedEvent] {
        let pieces = episodes(of: lone)
        guard !pieces.isEmpty else { return [] }
        let others = trains.filter { $0.eventClass != .snoring }
        // Trains and pieces in order of time, each with whether it is (now) part of a train.
        var units = (episodes(of: trains).map { (span: $0, joined: true) } + pieces.map { (span: $0, joined: false) })
            .sorted { $0.span.start < $1.span.start }
        func bridged(_ a: SnoringEpisode, _ b: SnoringEpisode) -> Bool {
            b.start - a.end <= reach
                && bridge(TimeRange(start: a.end, end: b.start), frames: frames, apartFrom: others, gap: gap) != nil
        }
        // After a train, then before one: each sweep carries a join on to the next piece.
        for i in units.indices.dropFirst() where !units[i].joined && units[i - 1].joined {
            units[i].joined = bridged(units[i - 1].span, units[i].span)
        }
        for i in units.indices.dropLast().reversed() where !units[i].joined && units[i + 1].joined {
            units[i].joined = bridged(units[i].span, units[i + 1].span)
        }
        let joined = units.filter(\.joined).map(\.span)
        return lone.filter { e in joined.contains { e.start >= $0.start && e.end <= $0.end } }
    }

    /// How far a lone piece may lie from the train it rejoins. Over a fan, chains of faint snores
    /// reach a piece minutes away (fan nights, snoring time: 30 s lost most of the gain, 60 s
    /// some, 90 s little). In a quiet room the band's floor is so low that single frames of
    /// room noise clear 1.5 × it every few seconds: unbounded, such a chain joined a rumble the
    /// heuristic took for snoring to a train 115 s away (the demo night), with 40 noise frames
    /// as snores between them.
    public static let rejoinReach = 90.0

    /// A train whose first snore the classifier missed starts late, outside the scoring collar:
    /// a burst in the snore or the voice band about one breathing period (the mean of the train's
    /// first two intervals; up to 1.5 of it) before its first found snore, and loud enough in
    /// either band (`LeadBar`), is taken for that snore; twice at most.
    /// It must end less than an episode's gap before the snore it leads into: a slow snorer's
    /// period reaches 1.5 × 7 s, and a burst further back split the train it was to begin.
    static func leadingSnores(_ events: [DetectedEvent], windows: [WindowLabels], frames: FrameTrack,
                              gap: Double = episodeGap) -> [DetectedEvent] {
        let snores = events.filter { $0.eventClass == .snoring }.sorted { $0.start < $1.start }
        let others = events.filter { $0.eventClass != .snoring }
        var found: [TimeRange] = []
        for episode in episodes(of: snores) {
            let train = snores.filter { $0.start >= episode.start && $0.end <= episode.end }.prefix(3)
            guard train.count == 3, let first = train.first?.start, let third = train.last?.start else { continue }
            let period = (third - first) / 2
            let before = TimeRange(start: first - 1.5 * period, end: first)
            let low = LeadBar(train, band: frames.low, before: before, frames: frames)
            let voice = LeadBar(train, band: frames.mid, before: before, frames: frames)
            var start = first
            for _ in 0..<2 {
                let expected = start - period
                // Up to just before the snore it leads into, beginning a short breath or half a
                // period before it, whichever is less: a found event can hold two snores, and a
                // period read from such events is too long (quiet night 5: read as 7.9 s, the
                // snores 3.1–5.8 s apart; the first began 3.3 s before the train).
                let latest = start - min(0.5 * period, shortestBreath)
                let candidates = snoreBursts(in: TimeRange(start: start - 1.5 * period, end: start - leadClearance),
                                             frames: frames, apartFrom: others, orMidBand: true)
                    .filter { burst in
                        burst.start <= latest && start - burst.end < gap
                            && (low.admits(burst, frames: frames) || voice.admits(burst, frames: frames))
                    }
                guard let best = candidates.min(by: { abs($0.start - expected) < abs($1.start - expected) }) else { break }
                found.append(TimeRange(start: best.start, end: min(start, best.end)))
                start = best.start
            }
        }
        return found.map { snoringEvent($0, windows: windows, frames: frames) }
    }

    /// How loud, in one band, a missed first snore must be to lead into `train` (its first three
    /// snores): at least `leadingSnoreShare` of the quietest of them, and rising over the band's
    /// floor before the train by at least half as many decibels as that snore does. Some
    /// snorers' first snore shows in the voice band more than in the snore band (held-out quiet
    /// nights: 7–29 dB over the voice band's floor, 4–17 dB over the snore band's), so both are
    /// read. The rise keeps a quiet room's short sounds out: a quarter of a train 20 dB over
    /// the room is only 8 dB over it, and such sounds took the lead on seven quiet nights.
    struct LeadBar {
        let minimum: Float, minimumRise: Float, band: [Float]

        init(_ train: some Collection<DetectedEvent>, band: [Float], before: TimeRange, frames: FrameTrack) {
            let quietest = quietestPeak(train, in: band, frames: frames)
            let floor = max(BoundaryRefiner.threshold(of: band, factor: 1, around: before, frames: frames), .leastNormalMagnitude)
            minimum = quietest * leadingSnoreShare
            minimumRise = floor * (quietest / floor).squareRoot()  // halfway, in dB, from the floor to it
            self.band = band
        }

        func admits(_ burst: TimeRange, frames: FrameTrack) -> Bool {
            let loudest = peak(of: band, in: burst, frames: frames)
            return loudest >= minimum && loudest >= minimumRise
        }
    }

    /// A snore the band could not place (`minimumSnoreCore`) stands only if its snore band
    /// reaches `leadingSnoreShare` of the quietest of its train's first three placed snores,
    /// as a missed first snore must. A quiet snorer's unplaced snores are as faint as the
    /// placed ones; a loud train's are the room (a recorded noise under a fan, read at the
    /// lead-in level, made a train start 7 s early).
    static func withoutFaintUnplacedSnores(_ events: [DetectedEvent], unplaced: [TimeRange],
                                           frames: FrameTrack) -> [DetectedEvent] {
        guard !unplaced.isEmpty, frames.count > 0 else { return events }
        func isUnplaced(_ e: DetectedEvent) -> Bool {
            unplaced.contains { e.start >= $0.start - 1e-9 && e.end <= $0.end + 1e-9 }
        }
        let snores = events.filter { $0.eventClass == .snoring }.sorted { $0.start < $1.start }
        var faint: [DetectedEvent] = []
        for episode in episodes(of: snores) {
            let members = snores.filter { $0.start >= episode.start && $0.end <= episode.end }
            let placed = members.filter { !isUnplaced($0) }.prefix(3)
            guard !placed.isEmpty else { continue }
            let bar = leadingSnoreBar(placed, frames: frames)
            faint += members.filter { isUnplaced($0) && snoreBandPeak($0.range, frames: frames) < bar }
        }
        return faint.isEmpty ? events : events.filter { !faint.contains($0) }
    }

    /// How loud in the snore band a snore the classifier or the band missed must be to join
    /// `train` (its first snores): `leadingSnoreShare` of the quietest of them.
    static func leadingSnoreBar(_ train: some Collection<DetectedEvent>, frames: FrameTrack) -> Float {
        quietestPeak(train, in: frames.low, frames: frames) * leadingSnoreShare
    }

    /// The quietest of `train`'s snores in `band`, each by its loudest frame there.
    static func quietestPeak(_ train: some Collection<DetectedEvent>, in band: [Float], frames: FrameTrack) -> Float {
        train.map { peak(of: band, in: $0.range, frames: frames) }.min() ?? 0
    }

    /// The loudest 50 ms frame of `band` (one of `frames`' bands) within `range`.
    static func peak(of band: [Float], in range: TimeRange, frames: FrameTrack) -> Float {
        band[frames.frames(in: range)].max() ?? 0
    }

    /// The snore band's loudest 50 ms frame within `range`.
    static func snoreBandPeak(_ range: TimeRange, frames: FrameTrack) -> Float {
        peak(of: frames.low, in: range, frames: frames)
    }

    /// Measured against the quietest of the first three, not the middle: a found event often
    /// holds several snores, so the middle one reads the train's loudest. Against the middle, a
    /// third missed a real first snore (14 dB under it, 6 dB under the quietest) and a tenth took
    /// two room-noise bursts for first snores, 7 s early (13–14 dB under the quietest).
    static let leadingSnoreShare: Float = 0.25

    /// A missed first snore ends at least this long before the snore it leads into, and begins
    /// at least `shortestBreath` before it (or half a period, if that is less).
    static let leadClearance = 0.3
    static let shortestBreath = 1.5

    /// How far over the local floor (its 20th percentile, in RMS) a burst must rise to carry a
    /// chain between two found trains. Under a fan the snores of a quiet snorer rise 3–6 dB
    /// over the background (`somni evaluate --audio`), where 2 × (6 dB over that floor) lost
    /// them and split the episode. A fan's own 50 ms frames seldom reach 1.5 ×, and a chain
    /// breaks at the first 10 s without a burst, so the fan alone does not carry one.
    static let bridgeFactor: Float = 1.5

    /// A snore is one breath in: a longer burst in the snore band found without the classifier
    /// is a rumble (traffic, a lorry), not a snore.
    public static let longestSnore = 4.0

    /// Runs in the snore band within `range` above the local floor (as `BoundaryRefiner` finds
    /// snoring's edges, `factor` × the floor), `shortest` to `longestSnore` long and clear of
    /// `others`. With `orMidBand`, runs of the 250–3000 Hz band above its own floor × the same
    /// factor count too: some snorers' snores sit higher, and under a fan a snore the low band
    /// shows only 3–6 dB over its floor can stand 11–14 dB over the mid band's.
    static func snoreBursts(in range: TimeRange, frames: FrameTrack, apartFrom others: [DetectedEvent],
                            shortest: Double = minimumSnoreCore, orMidBand: Bool = false,
                            factor: Float = BoundaryRefiner.factor(for: .snoring)) -> [TimeRange] {
        guard frames.count > 0, range.duration > 0 else { return [] }
        let region = frames.frames(in: range), bridge = 2
        func bursts(_ band: [Float]) -> [TimeRange] {
            let threshold = BoundaryRefiner.threshold(of: band, factor: factor,
                                                      around: range, frames: frames)
            return BoundaryRefiner.activeRuns(band, region: region, threshold: threshold, bridge: bridge).map {
                TimeRange(start: Double($0.lowerBound) / FrameTrack.rate, end: Double($0.upperBound) / FrameTrack.rate)
            }
        }
        // The two bands' runs joined as each band's own are: at most `bridge` frames apart.
        let found = orMidBand
            ? SilenceGate.union(bursts(frames.low), bursts(frames.mid), mergeGap: (Double(bridge) + 0.5) / FrameTrack.rate)
            : bursts(frames.low)
        return found
            .filter { burst in
                (shortest...longestSnore).contains(burst.duration) && !others.contains { $0.range.overlaps(burst) }
            }
    }

    /// A snore found from the frames; its confidence is the best snoring reading of the windows
    /// over it (often near 0: the classifier missed it).
    static func snoringEvent(_ range: TimeRange, windows: [WindowLabels], frames: FrameTrack) -> DetectedEvent {
        let heard = windows.filter { $0.start < range.end && range.start < $0.end }.map(snoringConfidence).max() ?? 0
        return event(.snoring, Hit(range: range, confidence: Double(heard)), frames: frames)
    }

    /// A pause in the snore band at least this long (every frame under the band's local floor
    /// × 2, as a snore's edges are placed) lies between two snores: a breath out. Windows of
    /// snores less than 2 s apart run together and their spans merge, so one event held two
    /// snores and the pause between them, and snoring minutes ran 7–12 % over the reference
    /// (stop 29's figures: quiet 41–48 +7 %, fan 49–56 +12 %), most of it such pauses. Within one
    /// snore the band dips for a frame or two (`activeRuns` bridges 100 ms); a breath out between
    /// snores lasts 1 s or more.
    public static let snorePause = 0.5

    /// `found` cut at its pauses (`snorePause`) into the snores either side, each keeping its
    /// own band edges and confidence; the event's outer edges stay. Pieces under
    /// `minimumSnoreCore` are too short to be snores of their own and are left inside the pause;
    /// an event with fewer than two longer pieces (one snore, or one the band does not show)
    /// stays whole. Runs last, after every rule that reads events: trains, bridges and lead-ins
    /// were chosen on whole events, and within this pass only counts, minutes and clips change
    /// (the night's later rounds read the new gaps when choosing where to classify more).
    static func splitAtPauses(_ found: DetectedEvent, windows: [WindowLabels], frames: FrameTrack) -> [DetectedEvent] {
        guard frames.count > 0, found.duration >= snorePause + 2 * minimumSnoreCore else { return [found] }
        let threshold = BoundaryRefiner.threshold(.snoring, around: found.range, frames: frames)
        let pauseFrames = Int((snorePause * FrameTrack.rate).rounded())
        let coreFrames = Int((minimumSnoreCore * FrameTrack.rate).rounded())
        let snores = BoundaryRefiner.activeRuns(frames.low, region: frames.frames(in: found.range), threshold: threshold,
                                                bridge: pauseFrames - 1)
            .filter { $0.count >= coreFrames }
        guard snores.count >= 2 else { return [found] }
        let time = { (i: Int) in Double(i) / FrameTrack.rate }
        return snores.indices.map { k in
            let start = k == 0 ? found.start : time(snores[k].lowerBound)
            let end = k == snores.count - 1 ? found.end : time(snores[k].upperBound)
            return snoringEvent(TimeRange(start: start, end: end), windows: windows, frames: frames)
        }
    }

    /// Snoring events shorter than `minimumSnoreCore` (a frame or two of the snore band that a
    /// bridge or a lead-in took for a snore) that lie inside an episode the longer snoring events
    /// make on their own: such a snippet adds nothing to the episode, only a 50 ms "snore" and
    /// its clip. On blind fan nights 49–56 there were 103–302 a night, most of them the fan's and
    /// the room's bursts between a train's snores, and 95 % lay inside such episodes. Snippets
    /// that join or extend an episode stay: without them it splits or starts late.
    static func withoutSnippetsInsideEpisodes(_ events: [DetectedEvent]) -> [DetectedEvent] {
        func isSnippet(_ e: DetectedEvent) -> Bool { e.eventClass == .snoring && e.duration < minimumSnoreCore }
        let episodes = episodes(of: events.filter { !isSnippet($0) })
        return events.filter { e in !isSnippet(e) || !episodes.contains { e.start >= $0.start && e.end <= $0.end } }
    }

    /// Snoring events less than this many seconds apart are one episode (Snore Detector's 10 s
    /// hangover); the context rules reach as far around a train.
    public static let episodeGap: Double = 10

    /// Snoring is a train of breaths: an episode needs this many snores the classifier heard at
    /// the full threshold (runs of such windows, apart from each other), or
    /// `minimumEpisodeSnoring` seconds of such windows (a snorer whose snores run together).
    /// One or two snore-like sounds on their own (a door, a grunt, a passing lorry) are not
    /// reported, nor are they when the weak continuation windows around them make events: on
    /// nights of street noise alone, models trained from other seeds made false trains of one
    /// or two sure windows and the rumble the continuation gathered round them. Counting events
    /// instead would not do: snores less than about 3.5 s apart refine into one event.
    public static let minimumEpisodeSnores = 3
    public static let minimumEpisodeSnoring = 30.0

    /// The merge gap that joins windows into runs of overlapping ones. Consecutive windows overlap
    /// by half; one that falls short between two leaves them touching, and so apart: only
    /// windows overlapping by more than 0.1 s join.
    static let windowRunGap = -0.1

    /// `sure`: the ranges of the windows that reached the full threshold for snoring, in order.
    /// Returns the events less the lone snores, and those lone snores, each in the given order.
    static func separatingLoneSnores(_ events: [DetectedEvent], sure: [TimeRange])
        -> (trains: [DetectedEvent], lone: [DetectedEvent]) {
        let runs = SilenceGate.merged(sure, gap: windowRunGap)
        let lone = episodes(of: events).filter { episode in
            let span = TimeRange(start: episode.start, end: episode.end)
            let heard = runs.filter { $0.overlaps(span) }
            return heard.count < minimumEpisodeSnores && heard.reduce(0) { $0 + $1.duration } < minimumEpisodeSnoring
        }
        guard !lone.isEmpty else { return (events, []) }
        var trains: [DetectedEvent] = [], loneSnores: [DetectedEvent] = []
        for e in events {
            if e.eventClass == .snoring, lone.contains(where: { e.start >= $0.start && e.end <= $0.end }) {
                loneSnores.append(e)
            } else {
                trains.append(e)
            }
        }
        return (trains, loneSnores)
    }

    /// Once snoring is found, windows within an episode's gap of it whose snoring confidence
    /// reaches this share of the threshold count too: hysteresis, as Snore Detector's live
    /// episodes have, so one quieter snore missed does not split an episode in two. A night's
    /// first snore still needs the full threshold.
    public static let snoringContinuationShare: Float = 0.2

    /// Before snoring that is found, windows need only this share of the threshold to lead into
    /// it. A quiet snorer's train was found late, its first snores scored under the full
    /// threshold, and a train whose start is more than 3 s out is a missed episode. What leads in
    /// must still chain to the train less than an episode's gap apart, and starts no train.
    /// A window leading in must be heard as a snore (`heardAsSnore`, its neighbour at this level).
    /// 0.4, chosen on synthesised nights 1–3 with the model trained with nights (stop 23: 0.1,
    /// 0.25, 0.4 tried; 0.4 best for all six models tried); the model before it had 0.1, chosen
    /// on seeds 1–24 (docs/quality-log.md).
    public static let snoringLeadInShare: Float = 0.4

    /// A snore fills more than one window (they overlap by half): the sound a single window
    /// reads as snoring, with neither neighbour reaching `pairedSnoreShare` of the threshold,
    /// counts only when the classifier is sure of it (`sureSingleSnore`). Otherwise it only
    /// continues a train, and neither starts one nor leads into one. Under a fan with the room's
    /// sounds taking turns, the model trained with nights (stop 24) read single windows of those
    /// sounds as snoring at 0.5–0.8 every few seconds, and trains were found up to a minute
    /// early, while the train's own snores filled two or three windows at 0.67–1.0. A quiet
    /// snorer's first snore heard by one window alone is lost this way (the train is then found
    /// a breathing period late). As sleep-talk heard by one window needs `sureTalk`.
    public static let pairedSnoreShare: Float = 0.5
    public static let sureSingleSnore: Float = 0.9

    /// Whether window `i` (of `windows`, sorted; `snoring` their `snoringConfidence`) is heard as
    /// a snore: sure on its own, or with an overlapping neighbour reaching `level` for snoring too.
    static func heardAsSnore(_ i: Int, in windows: [WindowLabels], snoring: [Float], level: Float) -> Bool {
        if snoring[i] >= sureSingleSnore { return true }
        let before = i > 0 && windows[i - 1].end > windows[i].start && snoring[i - 1] >= level
        let after = i + 1 < windows.count && windows[i + 1].start < windows[i].end && snoring[i + 1] >= level
        return before || after
    }

    /// Undecided windows that continue snoring, found by a forward and a backward sweep from the
    /// accepted snoring windows (so chains of quieter snores extend an episode both ways): at
    /// `minimum` after snoring, at `leadIn` (default `minimum`) before it, where `leadsIn` (by
    /// index into `windows`) must also hold. `snoring`: the windows' `snoringConfidence`, when
    /// the caller has it.
    static func continuedSnoring(_ windows: [WindowLabels], undecided: [Int], accepted: [Hit], minimum: Float,
                                 leadIn: Float? = nil, snoring: [Float]? = nil, leadsIn: (Int) -> Bool = { _ in true },
                                 gap: Double = episodeGap) -> [Hit] {
        let leadIn = leadIn ?? minimum
        guard !accepted.isEmpty, !undecided.isEmpty else { return [] }
        let acceptedRanges = accepted.map(\.range).sorted { $0.start < $1.start }
        var joined = [Bool](repeating: false, count: undecided.count)
        var confidence = [Float](repeating: 0, count: undecided.count)
        for (k, i) in undecided.enumerated() { confidence[k] = snoring?[i] ?? snoringConfidence(windows[i]) }
        // Forward: track the end of the latest snoring window seen so far.
        var a = 0
        var lastEnd = -Double.infinity
        for (k, i) in undecided.enumerated() {
            let w = windows[i]
            while a < acceptedRanges.count, acceptedRanges[a].start <= w.start {
                lastEnd = max(lastEnd, acceptedRanges[a].end); a += 1
            }
            if confidence[k] >= minimum, w.start - lastEnd <= gap { joined[k] = true; lastEnd = max(lastEnd, w.end) }
        }
        // Backward: track the start of the earliest snoring window after this one.
        a = acceptedRanges.count - 1
        var nextStart = Double.infinity
        for (k, i) in undecided.enumerated().reversed() {
            let w = windows[i]
            while a >= 0, acceptedRanges[a].start >= w.start { nextStart = min(nextStart, acceptedRanges[a].start); a -= 1 }
            if joined[k] { nextStart = min(nextStart, w.start); continue }
            if confidence[k] >= leadIn, nextStart - w.end <= gap, leadsIn(i) { joined[k] = true; nextStart = w.start }
        }
        return undecided.indices.filter { joined[$0] }.map {
            let w = windows[undecided[$0]]
            return Hit(range: TimeRange(start: w.start, end: w.end), confidence: Double(confidence[$0]))
        }
    }

    /// The highest confidence of a snoring-class label among the window's top `scanDepth`
    /// labels, 0 when there is none (the live segmenter reads windows the same way).
    public static func snoringConfidence(_ window: WindowLabels) -> Float {
        window.ranked.prefix(scanDepth)
            .filter { ClassSets.eventClass(forLabel: $0.label) == .snoring }.map(\.confidence).max() ?? 0
    }

    /// How far around snoring the gate's closed stretches are worth classifying after all:
    /// gaps up to this long between snoring events, and this long before and after each run.
    public static let snoringContext = 30.0

    /// Where snores the silence gate kept from the classifier may lie: the gaps of at most
    /// `snoringContext` between snoring events and that long before and after each run of them.
    /// Under a fan a quiet snore clears neither the gate's level nor its snore-band test, and
    /// a train split in two, or was found late, although the classifier hears those snores.
    /// `heard`: windows the classifier heard as snoring at the full threshold that made no
    /// event (`sureSnoring(in:within:minimum:)`), wherever they were classified: a quiet
    /// snorer's train is heard only now and then, each sure snore on its own dropped as lone,
    /// and the context stopped at the first gap without an event although the classifier heard
    /// the train go on; under a fan the gate may pass a single snore of a train and nothing else.
    public static func snoringContext(of events: [DetectedEvent], heard: [TimeRange] = [], duration: Double,
                                      reach: Double = snoringContext) -> [TimeRange] {
        let snores = (events.filter { $0.eventClass == .snoring }.map(\.range) + heard).sorted { $0.start < $1.start }
        var ranges: [TimeRange] = []
        var runStart: Double?, runEnd = 0.0  // a heard window may lie within an event
        for (i, e) in snores.enumerated() {
            if runStart == nil { runStart = e.start; runEnd = e.end } else { runEnd = max(runEnd, e.end) }
            if i + 1 < snores.count, snores[i + 1].start - runEnd <= reach {
                if snores[i + 1].start > runEnd { ranges.append(TimeRange(start: runEnd, end: snores[i + 1].start)) }
                continue
            }
            ranges.append(TimeRange(start: max(0, runStart! - reach), end: runStart!))
            ranges.append(TimeRange(start: runEnd, end: min(duration, runEnd + reach)))
            runStart = nil
        }
        return ranges.filter { $0.end > $0.start }.sorted { $0.start < $1.start }
    }

    /// The windows of `windows` (sorted by start) that reached `minimum` for snoring and overlap
    /// one of `stretches` (sorted, apart).
    public static func sureSnoring(in windows: [WindowLabels], within stretches: [TimeRange],
                                   minimum: Float) -> [TimeRange] {
        var heard: [TimeRange] = []
        var s = 0
        for w in windows {
            while s < stretches.count, stretches[s].end <= w.start { s += 1 }
            guard s < stretches.count else { break }
            if stretches[s].start < w.end, snoringConfidence(w) >= minimum {
                heard.append(TimeRange(start: w.start, end: w.end))
            }
        }
        return heard
    }

    /// Snoring events less than `maxGap` seconds apart, grouped.
    public static func episodes(of events: [DetectedEvent], maxGap: Double = episodeGap) -> [SnoringEpisode] {
        var episodes: [SnoringEpisode] = []
        for e in events.filter({ $0.eventClass == .snoring }).sorted(by: { $0.start < $1.start }) {
            if var last = episodes.last, e.start - last.end < maxGap {
                last.end = max(last.end, e.end)
                last.eventCount += 1
                episodes[episodes.count - 1] = last
            } else {
                episodes.append(SnoringEpisode(start: e.start, end: e.end, eventCount: 1))
            }
        }
        return episodes
    }

    /// The first target class among the top labels whose confidence reaches `minimum`.
    public static func decide(_ ranked: [LabelConfidence], minimum: Float) -> (EventClass, Float)? {
        for entry in ranked.prefix(scanDepth) {
            if let c = ClassSets.eventClass(forLabel: entry.label), entry.confidence >= minimum {
                return (c, entry.confidence)
            }
        }
        return nil
    }

    struct Hit {
        var range: TimeRange
        var confidence: Double
    }

    /// Sorted hits joined when the next starts at most `gap` after the current ends.
    static func merge(_ hits: [Hit], gap: Double) -> [Hit] {
        var out: [Hit] = []
        for h in hits {
            if var last = out.last, h.range.start - last.range.end <= gap {
                last.range.end = max(last.range.end, h.range.end)
                last.confidence = max(last.confidence, h.confidence)
                out[out.count - 1] = last
            } else {
                out.append(h)
            }
        }
        return out
    }

    static func event(_ c: EventClass, _ hit: Hit, frames: FrameTrack) -> DetectedEvent {
        let (peak, mean) = levels(hit.range, frames: frames)
        return DetectedEvent(eventClass: c, start: hit.range.start, end: hit.range.end, confidence: hit.confidence,
                             peakDBFS: peak, meanDBFS: mean,
                             severity: Severity.score(peakDBFS: peak, duration: hit.range.duration))
    }

    /// Peak and power-mean raw level of the frames within `range`, in dBFS (floored at −120).
    public static func levels(_ range: TimeRange, frames: FrameTrack) -> (peakDBFS: Double, meanDBFS: Double) {
        let frameRange = frames.frames(in: range)
        guard !frameRange.isEmpty else { return (dbfs(0), dbfs(0)) }
        var peak: Float = 0, power: Double = 0
        for i in frameRange {
            peak = max(peak, frames.raw[i])
            power += Double(frames.raw[i]) * Double(frames.raw[i])
        }
        return (dbfs(Double(peak)), dbfs((power / Double(frameRange.count)).squareRoot()))
    }

    public static func dbfs(_ rms: Double) -> Double {
        rms > 0 && rms.isFinite ? max(-120, 20 * log10(rms)) : -120
    }
}

extension FrameTrack {
    /// Indices of the frames that overlap `range` (at least one when the range is inside the track).
    public func frames(in range: TimeRange) -> Range<Int> {
        let r = range.indices(rate: Self.rate, limit: count)
        return r.lowerBound..<max(r.upperBound, min(r.lowerBound + 1, count))
    }
}

/// Finds where an event really starts and ends from the 50 ms frames.
enum BoundaryRefiner {
    static let context = 15.0
    static let reach = 1.0
    static let floorPercentile = 0.2
    static let factor: Float = 3
    /// Snores fade in and out slowly: at 3 × the floor a quieter snore's edges were cut short,
    /// widening the gaps between snores until an episode split at 10 s (held-out 8 h nights:
    /// fan-night snoring episode F1 0.19 → 0.27 and 0.21 → 0.32 on two seeds at 2 ×).
    static func factor(for c: EventClass) -> Float { c == .snoring ? 2 : factor }
    /// ≈ −70 dBFS: below this a band is silent whatever the local floor.
    static let absoluteMinimum: Float = 0.0003

    static func band(for c: EventClass, in frames: FrameTrack) -> [Float] {
        c == .snoring ? frames.low : frames.mid
    }

    /// The edges of that band, in Hz.
    static func bandHz(for c: EventClass) -> ClosedRange<Double> {
        c == .snoring ? FrameTrack.lowBand : FrameTrack.midBand
    }

    /// The level an event's band must exceed: the local floor (the chosen percentile of the
    /// frames within `context` of `span`) × the class's factor, never below `absoluteMinimum`.
    static func threshold(_ c: EventClass, around span: TimeRange, frames: FrameTrack) -> Float {
        threshold(of: band(for: c, in: frames), factor: factor(for: c), around: span, frames: frames)
    }

    /// The same for any band of `frames` and any factor.
    static func threshold(of band: [Float], factor: Float, around span: TimeRange, frames: FrameTrack) -> Float {
        let around = frames.frames(in: TimeRange(start: span.start - context, end: span.end + context))
        return max(SilenceGate.roomFloor(Array(band[around]), floorPercentile) * factor, absoluteMinimum)
    }

    /// The refined event(s) for a span of positive windows; the span itself when the frames show
    /// nothing above the local floor (the classifier heard something the bands cannot place).
    static func refine(_ span: TimeRange, eventClass c: EventClass, frames: FrameTrack) -> [TimeRange] {
        guard frames.count > 0 else { return [span] }
        let values = band(for: c, in: frames)
        let threshold = threshold(c, around: span, frames: frames)
        let region = frames.frames(in: TimeRange(start: span.start - reach, end: span.end + reach))
        let inside = frames.frames(in: span)
        // A cough under a steady noise (a fan) often clears 3 × the floor in one frame only, and
        // a one-frame piece reads as a click: its run is widened by the frames around it above
        // 2 × the floor, a level a steady noise's frames stay well below.
        let keep = c == .cough ? threshold * coughKeepShare : threshold
        let runs = activeRuns(values, region: region, threshold: threshold, keepAbove: keep, bridge: c == .cough ? 1 : 2)
            .filter { $0.overlaps(inside) }
        guard !runs.isEmpty else { return [span] }
        let time = { (i: Int) in Double(i) / FrameTrack.rate }
        if c != .cough, let first = runs.first, let last = runs.last {
            return [TimeRange(start: time(first.lowerBound), end: time(last.upperBound))]
        }
        // A piece of a single frame is a click, not a cough, unless nothing longer was found or
        // it stands as far apart from its neighbours as the coughs of a bout do (`standsApart`).
        let pieces = joinCloseOnsets(runs.flatMap { splitAtOnsets(values, $0) })
        let loudest = pieces.flatMap { values[$0] }.max() ?? 0
        let coughs = pieces.indices.filter { i in
            values[pieces[i]].contains { $0 >= prominence * loudest } && (pieces[i].count >= 2 || standsApart(i, in: pieces))
        }.map { pieces[$0] }
        // Where no piece stood out as a cough, the pieces are the span's cough(s); either way, a
        // bout's quieter coughs join them.
        let quieter = activeRuns(values, region: region, threshold: threshold * quieterCoughShare, keepAbove: keep, bridge: 1)
            .filter { $0.overlaps(inside) }
        return addingQuieterCoughs(joinCloseOnsets(quieter.flatMap { splitAtOnsets(values, $0) }), to: coughs.isEmpty ? pieces : coughs,
                                   besides: pieces, values: values, loudest: loudest)
            .map { TimeRange(start: time($0.lowerBound), end: time($0.upperBound)) }
    }

    /// In a bout, a cough under a fan may peak at 2.25–3 × the band's floor: between louder
    /// coughs the classifier hears, it is one too when it stands apart from them as the coughs of
    /// a bout do (`apartOnsetFrames`, `apartGapFrames`) and reaches the bout's prominence.
    /// `candidates` are the pieces cut at that lower bar; those touching a piece cut at the full
    /// one (`besides`, kept or not) are that sound already.
    static func addingQuieterCoughs(_ candidates: [Range<Int>], to coughs: [Range<Int>], besides pieces: [Range<Int>],
                                    values: [Float], loudest: Float) -> [Range<Int>] {
        var kept = coughs
        for c in candidates where !pieces.contains(where: { $0.overlaps(c) }) && values[c].contains(where: { $0 >= prominence * loudest }) {
            let next = kept.firstIndex { $0.lowerBound > c.lowerBound } ?? kept.count
            guard next == 0 || isApart(c, from: kept[next - 1]), next == kept.count || isApart(kept[next], from: c) else { continue }
            kept.insert(c, at: next)
        }
        return kept
    }

    /// Runs of frames above `threshold` within `region`, joining runs separated by at most
    /// `bridge` frames (100 ms within a snore or a sentence; 50 ms between coughs, which need a
    /// breath in between — closer ones are told apart by their onsets).
    /// With `keepAbove` below `threshold`, a run is widened both ways over frames above
    /// `keepAbove` (hysteresis).
    static func activeRuns(_ v: [Float], region: Range<Int>, threshold: Float, keepAbove: Float? = nil,
                           bridge: Int) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start: Int?
        let keep = min(keepAbove ?? threshold, threshold)
        for i in region.lowerBound...region.upperBound {
            var active = i < region.upperBound && v[i] > threshold
            if !active, start != nil, i < region.upperBound, v[i] > keep { active = true }
            if active, start == nil {
                start = i
                // Widen backwards over frames above keep.
                while let s = start, s > region.lowerBound, v[s - 1] > keep, s - 1 >= (runs.last?.upperBound ?? region.lowerBound) {
                    start = s - 1
                }
            }
            if !active, let s = start {
                if let last = runs.last, s - last.upperBound <= bridge {
                    runs[runs.count - 1] = last.lowerBound..<i
                } else {
                    runs.append(s..<i)
                }
                start = nil
            }
        }
        return runs
    }

    /// Frames between two cough onsets at the least (0.30 s: in CoughSeg's hand-marked coughs
    /// no two onsets are closer than 0.25 s and 1.3 % are closer than 0.30 s, 5.4 % than 0.35 s).
    /// Closer pieces are the phases of one cough: at 0.25 s, most coughs the synthesised nights
    /// counted twice were one cough whose second phase began 0.25 s after its onset.
    static let minimumOnsetFrames = 6
    /// An onset needs the level to have dipped to this share of the peak before it…
    static let dipRatio: Float = 0.35
    /// …and to rise to this multiple of the dip.
    static let riseRatio: Float = 3
    /// A cough piece must reach this share of the loudest piece in its span (−14 dB): quieter
    /// ones are breaths and throat noises between coughs.
    static let prominence: Float = 0.2
    /// A cough's run, once a frame clears the threshold, goes on over frames above this share of
    /// it (2 × the floor instead of 3 ×).
    static let coughKeepShare: Float = 2.0 / 3.0
    /// A bout's quieter coughs are looked for at this share of the threshold (2.25 × the floor).
    static let quieterCoughShare: Float = 2.25 / 3.0

    /// Frames from the previous piece's onset to a one-frame piece's (0.45 s), and of silence
    /// between them (0.2 s), for the piece to be a cough of its own. Under a fan a bout's quieter
    /// coughs clear the band's floor × 3 in their loudest frame only; the second phase of a cough
    /// comes closer (0.30–0.40 s after its onset, 0–0.15 s after it) and is not one.
    static let apartOnsetFrames = 9
    static let apartGapFrames = 4

    /// Whether one-frame piece `i` is a separate cough: far enough after the piece before it, or,
    /// the first, far enough before the next.
    static func standsApart(_ i: Int, in pieces: [Range<Int>]) -> Bool {
        i > 0 ? isApart(pieces[i], from: pieces[i - 1]) : i + 1 < pieces.count && isApart(pieces[i + 1], from: pieces[i], checkingGap: false)
    }

    /// Whether `later` starts `apartOnsetFrames` after `earlier`'s onset and, when checking the
    /// gap, `apartGapFrames` after its end.
    static func isApart(_ later: Range<Int>, from earlier: Range<Int>, checkingGap: Bool = true) -> Bool {
        later.lowerBound - earlier.lowerBound >= apartOnsetFrames
            && (!checkingGap || later.lowerBound - earlier.upperBound >= apartGapFrames)
    }

    /// Pieces (in time order) joined while one starts less than `minimumOnsetFrames` after the
    /// start of the one before.
    static func joinCloseOnsets(_ pieces: [Range<Int>]) -> [Range<Int>] {
        var out: [Range<Int>] = []
        for p in pieces {
            if let last = out.last, p.lowerBound - last.lowerBound < minimumOnsetFrames {
                out[out.count - 1] = last.lowerBound..<max(last.upperBound, p.upperBound)
            } else {
                out.append(p)
            }
        }
        return out
    }

    /// Splits a run where the level, having dipped to `dipRatio` of its peak or less, jumps back
    /// up sharply (to `riseRatio` × the dip and 1.5× the previous frame): the next cough's onset.
    static func splitAtOnsets(_ v: [Float], _ run: Range<Int>) -> [Range<Int>] {
        var pieces: [Range<Int>] = []
        var pieceStart = run.lowerBound
        var peak = v[run.lowerBound], dip = v[run.lowerBound]
        for i in run.dropFirst() {
            let x = v[i]
            if dip <= dipRatio * peak, x >= riseRatio * dip, x >= 1.5 * v[i - 1] {
                pieces.append(pieceStart..<i)
                pieceStart = i
                peak = x; dip = x
            } else if x >= peak {
                peak = x; dip = x
            } else {
                dip = min(dip, x)
            }
        }
        pieces.append(pieceStart..<run.upperBound)
        return pieces
    }
}
