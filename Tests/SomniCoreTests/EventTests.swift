import Foundation
import Testing
@testable import SomniCore

@Suite struct EventTests {
    static let windowSeconds = Double(classifierWindowLength) / Signals.rate
    static let other = [LabelConfidence(label: "silence", confidence: 0.9)]

    /// Grid windows (0.975 s, 50 % overlap) over `seconds`; those overlapping a labelled range
    /// by at least a quarter window carry that label first.
    static func windows(seconds: Double, labelled: [(Double, Double, String, Float)]) -> [WindowLabels] {
        stride(from: 0.0, to: seconds - windowSeconds, by: windowSeconds / 2).map { s in
            let e = s + windowSeconds
            let hit = labelled.first { min(e, $0.1) - max(s, $0.0) >= windowSeconds / 4 }
            let ranked = hit.map { [LabelConfidence(label: $0.2, confidence: $0.3)] + other } ?? other
            return WindowLabels(start: s, end: e, ranked: ranked)
        }
    }

    static func frames(_ samples: [Float]) -> FrameTrack {
        let fx = FeatureExtractor()
        samples.withUnsafeBufferPointer { fx.process($0) }
        return fx.frames
    }

    /// A frame track at a quiet floor with `level` in the mid and raw bands over each range.
    static func track(seconds: Double, bursts: [(Double, Double)], level: Float = 0.05) -> FrameTrack {
        let n = Int(seconds * 20)
        var t = FrameTrack(raw: .init(repeating: 0.001, count: n), low: .init(repeating: 0.001, count: n),
                           mid: .init(repeating: 0.001, count: n), zcr: .init(repeating: 0.1, count: n))
        for (a, b) in bursts {
            for i in Int(a * 20)..<Int(b * 20) { t.raw[i] = level; t.mid[i] = level; t.low[i] = level }
        }
        return t
    }

    @Test func theFirstTargetInTheTopFiveAboveThresholdWins() {
        let fan: [LabelConfidence] = [.init(label: "white noise", confidence: 0.71), .init(label: "mechanical fan", confidence: 0.63),
                                      .init(label: "snoring", confidence: 0.58), .init(label: "breathing", confidence: 0.31),
                                      .init(label: "speech", confidence: 0.12)]
        #expect(EventDetector.decide(fan, minimum: 0.5).map { $0.0 } == .snoring)
        #expect(EventDetector.decide(fan, minimum: 0.6) == nil)
        #expect(EventDetector.decide(fan, minimum: 0.1).map { $0.0 } == .snoring)
        let deep = fan.map { LabelConfidence(label: "x\($0.label)", confidence: 0.9) } + [.init(label: "cough", confidence: 0.9)]
        #expect(EventDetector.decide(deep, minimum: 0.5) == nil)   // sixth place is not read
    }

    @Test func sensitivityMapsOneToTenOntoSeventyToTwentyFive() throws {
        #expect(abs(Sensitivity.minimumConfidence(1) - 0.70) < 1e-6)
        #expect(abs(Sensitivity.minimumConfidence(5) - 0.50) < 1e-6)
        #expect(abs(Sensitivity.minimumConfidence(10) - 0.25) < 1e-6)
        #expect(Sensitivity.minimumConfidence(0) == Sensitivity.minimumConfidence(1))
        #expect(Sensitivity.minimumConfidence(99) == Sensitivity.minimumConfidence(10))
        #expect(throws: SomniError.self) { try Sensitivity.validated(0) }
        #expect(throws: SomniError.self) { try Sensitivity.validated(11) }
        #expect(try Sensitivity.validated(7) == 7)
    }

    @Test func classSets() {
        #expect(ClassSets.eventClass(forLabel: "Snort") == .snoring)
        #expect(ClassSets.eventClass(forLabel: "whispering") == .sleepTalk)
        #expect(ClassSets.eventClass(forLabel: "babbling") == .sleepTalk)
        #expect(ClassSets.eventClass(forLabel: "cough") == .cough)
        #expect(ClassSets.eventClass(forLabel: "breathing") == nil)
        // Somni's own class names and a reference's spellings, as class folders may be named.
        #expect(ClassSets.eventClass(forLabel: "sleep_talk") == .sleepTalk)
        #expect(ClassSets.eventClass(forLabel: "Snore") == .snoring)
        #expect(ClassSets.eventClass(forLabel: "coughing") == .cough)
        // Every spelling a reference accepts names the same class as a model label.
        for (spelling, eventClass) in ReferenceCSV.classAliases { #expect(ClassSets.eventClass(forLabel: spelling) == eventClass, "\(spelling)") }
    }

    @Test func windowsWithinTwoSecondsMergeAndLongerGapsSplit() {
        // A snore heard by one window alone must be sure (`EventDetector.sureSingleSnore`).
        let w = { (s: Double, label: String) in
            WindowLabels(start: s, end: s + Self.windowSeconds, ranked: [.init(label: label, confidence: label == "snoring" ? 0.95 : 0.8)])
        }
        // No frames: the window spans stand as they are.
        let events = EventDetector.detect(windows: [w(10, "snoring"), w(12.9, "snoring"), w(16, "snoring"), w(20, "snoring"),
                                                    w(40, "speech"), w(40.4875, "speech")],
                                          frames: FrameTrack(), sensitivity: 5, duration: 60)
        let snores = events.filter { $0.eventClass == .snoring }
        #expect(snores.map(\.start) == [10, 16, 20])
        #expect(snores.first.map { abs($0.end - (12.9 + Self.windowSeconds)) < 1e-9 } == true)
        #expect(events.filter { $0.eventClass == .sleepTalk }.count == 1)
        let train = [w(10, "snoring"), w(14, "snoring"), w(18, "snoring")]
        #expect(EventDetector.detect(windows: train, frames: FrameTrack(), sensitivity: 1, duration: 60).count == 3)
        // Damaged window times neither trap nor invent events inside the night.
        let damaged = [WindowLabels(start: .nan, end: .infinity, ranked: [.init(label: "snoring", confidence: 0.9)])]
        #expect(EventDetector.detect(windows: damaged, frames: Self.track(seconds: 10, bursts: []), sensitivity: 5, duration: 10)
            .allSatisfy { $0.start >= 0 && $0.end <= 10 })
        let weak = [WindowLabels(start: 1, end: 2, ranked: [.init(label: "snoring", confidence: 0.6)])]
        #expect(EventDetector.detect(windows: weak, frames: FrameTrack(), sensitivity: 1, duration: 60).isEmpty)
    }

    @Test func talkTheBandShowsForUnderHalfASecondNeedsTwoWindows() {
        // Heard by one sure window, a 0.3 s burst is a click and drops; 0.7 s of talk keeps the
        // band's edges. A 0.3 s burst heard as speech by three windows is quiet talk under a fan,
        // which clears the floor only at its loudest: it keeps the windows' span.
        let frames = Self.track(seconds: 60, bursts: [(10, 10.3), (20, 20.7), (30, 30.3)])
        let windows = Self.windows(seconds: 60, labelled: [(10, 10.3, "speech", 0.9), (19.5, 21.2, "speech", 0.9),
                                                           (29.5, 30.8, "speech", 0.9)])
        let talk = EventDetector.detect(windows: windows, frames: frames, sensitivity: 5, duration: 60)
            .map { (($0.start * 100).rounded() / 100, ($0.end * 100).rounded() / 100) }
        #expect(talk.count == 2)
        #expect(talk.count == 2 && talk[0] == (20, 20.7) && talk[1] == (29.25, 31.2))
    }

    @Test func refinementFindsTheEdgesOfAGeneratedBurst() {
        let floor = Signals.noise(seconds: 60, rms: 0.002)
        for (label, f) in [("snoring", 110.0), ("speech", 1000.0), ("snort", 80.0)] {
            // Three bursts 6 s apart: snoring is reported as a train, never alone.
            let burst = Signals.sine(f, seconds: 32.71 - 30.23, amplitude: 0.1)
            let onsets = [30.23, 36.23, 42.23]
            let track = Self.frames(onsets.reduce(floor) { Signals.mix($0, burst, at: $1) })
            let windows = Self.windows(seconds: 60, labelled: onsets.map { ($0, $0 + 32.71 - 30.23, label, 0.9) })
            let events = EventDetector.detect(windows: windows, frames: track, sensitivity: 5, duration: 60)
            #expect(events.count == 3, "\(label)")
            guard let e = events.first else { continue }
            #expect(abs(e.start - 30.23) <= 0.1 && abs(e.end - 32.71) <= 0.1, "\(label): \(e.start)–\(e.end)")
            #expect(abs(e.peakDBFS - 20 * log10(0.1 / 2.0.squareRoot())) < 0.5)
            #expect(e.meanDBFS <= e.peakDBFS && e.meanDBFS > e.peakDBFS - 1.5)
            #expect(abs(e.severity - Severity.score(peakDBFS: e.peakDBFS, duration: e.duration)) < 1e-9)
        }
    }

    @Test func aBoutOfThreeCoughsIsThreeEvents() {
        let floor = Signals.noise(seconds: 40, rms: 0.002)
        // Short coughs that fall back to the floor, then long ones whose tails run into the next onset.
        for length in [0.3, 0.6] {
            var x = floor
            for (k, at) in [20.0, 20.5, 21.0].enumerated() {
                x = Signals.mix(x, Signals.cough(seconds: length, amplitude: 0.4, seed: UInt64(k + 1)), at: at)
            }
            let windows = Self.windows(seconds: 40, labelled: [(20, 21.3, "cough", 0.8)])
            let coughs = EventDetector.detect(windows: windows, frames: Self.frames(x), sensitivity: 5, duration: 40)
            #expect(coughs.count == 3, "cough length \(length): \(coughs.map { ($0.start, $0.end) })")
            for (c, onset) in zip(coughs, [20.0, 20.5, 21.0]) {
                #expect(c.eventClass == .cough && abs(c.start - onset) <= 0.1, "\(c.start) vs \(onset)")
            }
        }
    }

    @Test func theSecondPhaseOfACoughIsNotAnotherCough() {
        // Two bursts whose onsets are 0.27 s apart: closer than any two hand-marked coughs.
        var x = Signals.noise(seconds: 40, rms: 0.002)
        x = Signals.mix(x, Signals.cough(seconds: 0.12, amplitude: 0.4, seed: 1), at: 20)
        x = Signals.mix(x, Signals.cough(seconds: 0.12, amplitude: 0.4, seed: 2), at: 20.27)
        let windows = Self.windows(seconds: 40, labelled: [(20, 20.4, "cough", 0.8)])
        let coughs = EventDetector.detect(windows: windows, frames: Self.frames(x), sensitivity: 5, duration: 40)
        #expect(coughs.map { ($0.start * 10).rounded() / 10 } == [20], "\(coughs.map { ($0.start, $0.end) })")
    }

    @Test func aQuietBreathBetweenCoughsIsNotACough() {
        var x = Signals.noise(seconds: 40, rms: 0.002)
        x = Signals.mix(x, Signals.cough(seconds: 0.3, amplitude: 0.4, seed: 1), at: 20)
        x = Signals.mix(x, Signals.cough(seconds: 0.3, amplitude: 0.03, seed: 2), at: 20.6)   // −22 dB
        x = Signals.mix(x, Signals.cough(seconds: 0.3, amplitude: 0.4, seed: 3), at: 21.2)
        let windows = Self.windows(seconds: 40, labelled: [(20, 21.5, "cough", 0.8)])
        let coughs = EventDetector.detect(windows: windows, frames: Self.frames(x), sensitivity: 5, duration: 40)
        #expect(coughs.map { ($0.start * 10).rounded() / 10 } == [20, 21.2])
    }

    @Test func aSingleCoughStaysOne() {
        let x = Signals.mix(Signals.noise(seconds: 40, rms: 0.002), Signals.cough(seconds: 0.35, amplitude: 0.4), at: 12.2)
        let windows = Self.windows(seconds: 40, labelled: [(12.2, 12.55, "cough", 0.7)])
        let coughs = EventDetector.detect(windows: windows, frames: Self.frames(x), sensitivity: 5, duration: 40)
        #expect(coughs.count == 1)
        #expect(coughs.first.map { abs($0.start - 12.2) <= 0.1 && $0.confidence == Double(Float(0.7)) } == true)
    }

    @Test func theContextOfSnoringIsItsGapsAndHalfAMinuteEitherSide() {
        func event(_ c: EventClass, _ start: Double, _ end: Double) -> DetectedEvent {
            DetectedEvent(eventClass: c, start: start, end: end, confidence: 0.9, peakDBFS: -30, meanDBFS: -33, severity: 40)
        }
        // Two runs (the second 74 s after the first ends), a cough that is not snoring, and a
        // run near the start of the night whose lead-in is cut at 0.
        let events = [event(.snoring, 100, 101), event(.snoring, 105, 106), event(.cough, 110, 110.3),
                      event(.snoring, 125, 126), event(.snoring, 200, 201), event(.snoring, 10, 11)]
        let context = EventDetector.snoringContext(of: events, duration: 220)
        let expected: [(Double, Double)] = [(0, 10), (11, 41), (70, 100), (101, 105), (106, 125), (126, 156),
                                            (170, 200), (201, 220)]
        #expect(context.map { [$0.start, $0.end] } == expected.map { [$0.0, $0.1] })
        #expect(EventDetector.snoringContext(of: [event(.cough, 5, 6)], duration: 60).isEmpty)
    }

    @Test func sureSnoresHeardInTheContextCarryItOn() {
        func snore(_ start: Double, _ end: Double) -> DetectedEvent {
            DetectedEvent(eventClass: .snoring, start: start, end: end, confidence: 0.9, peakDBFS: -30, meanDBFS: -33, severity: 40)
        }
        let train = [snore(100, 101), snore(105, 106), snore(125, 126)]
        // A sure window 19 s before the train, dropped as a lone snore: the context reaches
        // half a minute before it instead of before the train.
        let heard = [TimeRange(start: 80, end: 80.975)]
        let context = EventDetector.snoringContext(of: train, heard: heard, duration: 220)
        let expected: [(Double, Double)] = [(50, 80), (80.975, 100), (101, 105), (106, 125), (126, 156)]
        #expect(context.map { [$0.start, $0.end] } == expected.map { [$0.0, $0.1] })
        // A heard window within an event does not shorten the run.
        let inside = EventDetector.snoringContext(of: [snore(100, 110), snore(115, 116)],
                                                  heard: [TimeRange(start: 102, end: 102.975)], duration: 220)
        let whole: [(Double, Double)] = [(70, 100), (110, 115), (116, 146)]
        #expect(inside.map { [$0.start, $0.end] } == whole.map { [$0.0, $0.1] })
    }

    @Test func sureSnoringIsTakenOnlyWithinTheGivenStretches() {
        func window(_ t: Double, _ snoring: Float) -> WindowLabels {
            WindowLabels(start: t, end: t + 0.975, ranked: [.init(label: "snoring", confidence: snoring),
                                                            .init(label: "other", confidence: 1 - snoring)])
        }
        let windows = [window(0, 0.8), window(10, 0.8), window(20, 0.3), window(24.5, 0.8), window(30, 0.8), window(41, 0.9)]
        let stretches = [TimeRange(start: 9, end: 25), TimeRange(start: 40, end: 50)]
        let heard = EventDetector.sureSnoring(in: windows, within: stretches, minimum: 0.5)
        // 0 and 30 s lie outside, 20 s is unsure; 24.5 s overlaps the first stretch's end.
        #expect(heard.map(\.start) == [10, 24.5, 41])
    }

    @Test func runsWidenOverFramesAboveTheKeepLevel() {
        // Floor 1; one frame clears 3, its neighbours only 2.
        var v = [Float](repeating: 1, count: 30)
        v[9] = 2.5; v[10] = 3.5; v[11] = 2.5; v[12] = 2.2; v[13] = 1.5
        v[20] = 2.6  // above the keep level, but no frame of its own clears the threshold
        #expect(BoundaryRefiner.activeRuns(v, region: 0..<30, threshold: 3, bridge: 1) == [10..<11])
        #expect(BoundaryRefiner.activeRuns(v, region: 0..<30, threshold: 3, keepAbove: 2, bridge: 1) == [9..<13])
    }

    @Test func aCoughThatClearsThreeTimesTheFloorForOneFrameKeepsItsOnset() {
        // Under a fan the mid band sits high: a cough rises to 2.5 × the floor, peaks at 3.5 ×
        // for one frame and falls back. Its onset is where it rose, not its peak.
        var t = Self.track(seconds: 40, bursts: [])
        for i in t.mid.indices { t.mid[i] = 0.01 }
        for (k, level) in [Float(0.025), 0.035, 0.028, 0.022].enumerated() { t.mid[400 + k] = level; t.raw[400 + k] = level }
        let windows = Self.windows(seconds: 40, labelled: [(20, 20.3, "cough", 0.8)])
        let coughs = EventDetector.detect(windows: windows, frames: t, sensitivity: 5, duration: 40)
        #expect(coughs.count == 1)
        #expect(coughs.first.map { abs($0.start - 20) < 0.01 && abs($0.end - 20.2) < 0.01 } == true,
                "\(coughs.map { ($0.start, $0.end) })")
    }

    /// Starts (to 0.01 s) of the coughs found in 40 s whose mid band sits at `floor` but for
    /// `levels` (frame, level), one window at 20 s scoring 0.8 for cough.
    static func coughStarts(floor: Float, levels: [(Int, Float)]) -> [Double] {
        var t = track(seconds: 40, bursts: [])
        for i in t.mid.indices { t.mid[i] = floor }
        for (i, level) in levels { t.mid[i] = level; t.raw[i] = level }
        let windows = windows(seconds: 40, labelled: [(20, 20.975, "cough", 0.8)])
        return EventDetector.detect(windows: windows, frames: t, sensitivity: 5, duration: 40)
            .filter { $0.eventClass == .cough }.map { ($0.start * 100).rounded() / 100 }
    }

    @Test func aQuieterCoughOfABoutThatClearsTheFloorForOneFrameIsACough() {
        // Under a fan (mid band 0.01) a cough clears 3 × the floor for four frames; the next
        // cough of the bout, 0.5 s later, for its loudest frame only, its neighbours under 2 ×.
        // A one-frame piece 0.3 s after an onset is the second phase of that cough instead.
        func coughs(quieterAt frame: Int) -> [Double] {
            Self.coughStarts(floor: 0.01, levels: [(400, 0.035), (401, 0.04), (402, 0.033), (403, 0.031),
                                                   (frame - 1, 0.018), (frame, 0.034), (frame + 1, 0.019)])
        }
        #expect(coughs(quieterAt: 410) == [20, 20.5])
        #expect(coughs(quieterAt: 406) == [20])
    }

    @Test func aQuieterCoughOfABoutAboveTwoAndAQuarterTimesTheFloorIsACough() {
        // Under a fan (mid band 0.01) a cough clears 3 × the floor; a quieter one of the bout
        // peaks at 2.8 × (or 2.3 ×) over three frames. Standing 0.5 s after the first, it is a
        // cough; 0.3 s after (a second phase), or peaking at 2.2 ×, or where the first cough is
        // 30 × the floor (the quieter one then under the bout's prominence), it is not.
        func coughs(quieterAt frame: Int, peak: Float = 0.028, loud: Float = 0.035) -> [Double] {
            Self.coughStarts(floor: 0.01, levels: [(400, loud), (401, loud * 1.15), (402, loud * 0.95), (403, loud * 0.9),
                                                   (frame, peak * 0.95), (frame + 1, peak), (frame + 2, 0.022)])
        }
        #expect(coughs(quieterAt: 410) == [20, 20.5])
        #expect(coughs(quieterAt: 410, peak: 0.023) == [20, 20.5])
        #expect(coughs(quieterAt: 406) == [20])
        #expect(coughs(quieterAt: 410, peak: 0.021) == [20])
        #expect(coughs(quieterAt: 410, loud: 0.3) == [20])
    }

    @Test func aQuieterCoughJoinsABoutWhoseOnlyLoudPieceIsOneFrame() {
        // Under a fan (mid band 0.01) the one piece over 3 × the floor is a single frame, which
        // stands for the span's cough; a quieter cough (2.6–2.9 ×) 0.5 s before it joins it. One
        // 0.2 s before it is a phase of that cough instead.
        func coughs(quieterAt frame: Int) -> [Double] {
            Self.coughStarts(floor: 0.01, levels: [(frame, 0.026), (frame + 1, 0.029), (frame + 2, 0.027), (frame + 3, 0.023),
                                                   (410, 0.036), (411, 0.015)])
        }
        #expect(coughs(quieterAt: 400) == [20, 20.5])
        #expect(coughs(quieterAt: 406) == [20.3])
    }

    @Test func snoringEventsGroupIntoEpisodes() {
        let e = { (s: Double, d: Double, c: EventClass) in
            DetectedEvent(eventClass: c, start: s, end: s + d, confidence: 0.8, peakDBFS: -30, meanDBFS: -35, severity: 40)
        }
        let episodes = EventDetector.episodes(of: [e(25, 2, .snoring), e(0, 2, .snoring), e(8, 2, .snoring),
                                                   e(12, 1, .cough), e(45, 2, .snoring)])
        #expect(episodes == [SnoringEpisode(start: 0, end: 10, eventCount: 2),
                             SnoringEpisode(start: 25, end: 27, eventCount: 1),
                             SnoringEpisode(start: 45, end: 47, eventCount: 1)])
    }

    @Test func severityCorners() {
        #expect(Severity.score(peakDBFS: -50, duration: 0) == 0)
        #expect(abs(Severity.score(peakDBFS: -10, duration: 20) - 100) < 1e-9)
        #expect(abs(Severity.score(peakDBFS: -10, duration: 0) - 60) < 1e-9)
        #expect(abs(Severity.score(peakDBFS: -50, duration: 20) - 40) < 1e-9)
        #expect(abs(Severity.score(peakDBFS: -30, duration: 10) - 50) < 1e-9)
        #expect(Severity.score(peakDBFS: 0, duration: 100) == Severity.score(peakDBFS: -10, duration: 20))
        #expect(Severity.score(peakDBFS: -120, duration: -1) == 0)
    }

    @Test func clipsAreNormalisedAndPadded() {
        let n = ClipMaker.normalised([0.1, -0.3, 0.2])
        #expect(abs(n[1] + 0.9) < 1e-6 && abs(n[0] - 0.3) < 1e-6)
        #expect(ClipMaker.normalised([0, 0]) == [0, 0])
        #expect(ClipMaker.clipRange(start: 0.4, end: 3, duration: 10) == TimeRange(start: 0, end: 4))
        #expect(ClipMaker.clipRange(start: 5, end: 9.5, duration: 10) == TimeRange(start: 4, end: 10))
        #expect(ClipMaker.sampleRange(TimeRange(start: 1, end: 2), totalSamples: 20_000) == 16_000..<20_000)
        #expect(ClipMaker.sampleRange(TimeRange(start: -.infinity, end: .nan), totalSamples: 100) == 0..<0)
        #expect(ClipMaker.sampleRange(TimeRange(start: 1e300, end: .infinity), totalSamples: 100) == 100..<100)
    }
}

@Suite struct LiveEpisodeSegmenterTests {
    static let hop = Double(classifierWindowLength) / 2 / Signals.rate

    /// Windows on the live grid; `snoring` lists the window indices that hear a snore.
    static func run(_ count: Int, snoring: Set<Int>, confidence: Float = 0.8) -> (changes: [LiveEpisodeSegmenter.Change], last: SnoringEpisode?) {
        var s = LiveEpisodeSegmenter()
        var changes: [LiveEpisodeSegmenter.Change] = []
        for i in 0..<count {
            let ranked: [LabelConfidence] = snoring.contains(i)
                ? [.init(label: "breathing", confidence: 0.9), .init(label: "snoring", confidence: confidence)]
                : [.init(label: "silence", confidence: 0.9)]
            changes += s.feed(WindowLabels(start: Double(i) * hop, end: Double(i) * hop + 2 * hop, ranked: ranked))
        }
        return (changes, s.finish())
    }

    @Test func twoConsecutiveWindowsOpenAnEpisodeBackdatedToTheFirst() {
        let r = Self.run(40, snoring: [5, 9, 10, 11, 20, 21])
        #expect(r.changes == [.started(at: 9 * Self.hop)])   // window 5 alone starts nothing
        #expect(r.last == SnoringEpisode(start: 9 * Self.hop, end: 21 * Self.hop + 2 * Self.hop, eventCount: 2))
    }

    @Test func tenSecondsWithoutASnoreCloseIt() {
        // 10 s is 20.5 hops: positives at 2–3, then silence until 60, then 60–61.
        let r = Self.run(80, snoring: [2, 3, 60, 61])
        #expect(r.changes.count == 3)
        #expect(r.changes.first == .started(at: 2 * Self.hop))
        if r.changes.count == 3, case .ended(let e) = r.changes[1] {
            #expect(e == SnoringEpisode(start: 2 * Self.hop, end: 3 * Self.hop + 2 * Self.hop, eventCount: 1))
        }
        #expect(r.changes.last == .started(at: 60 * Self.hop))
        #expect(Self.run(80, snoring: [2, 3, 60, 61], confidence: 0.55).changes.isEmpty)   // below 0.6
    }
}

/// Snoring hysteresis: quieter snores continue an episode but never start one.
@Suite struct SnoringContinuationTests {
    func window(_ t: Double, _ snoring: Float, other: Float = 0) -> WindowLabels {
        WindowLabels(start: t, end: t + 0.975, ranked: [.init(label: "other", confidence: max(other, 1 - snoring)),
                                                        .init(label: "snoring", confidence: snoring)])
    }

    @Test func quieterSnoresNearAnAcceptedOneJoinBothWays() {
        let windows = [window(0, 0.3), window(6, 0.8), window(12, 0.3), window(20, 0.3), window(40, 0.3)]
        let undecided = [0, 2, 3, 4]
        let accepted = [EventDetector.Hit(range: TimeRange(start: 6, end: 6.975), confidence: 0.8)]
        let joined = EventDetector.continuedSnoring(windows, undecided: undecided, accepted: accepted, minimum: 0.2)
        // 0 s (before, within 10 s), 12 s (after), 20 s (chained from 12 s); 40 s is too far.
        #expect(joined.map(\.range.start) == [0, 12, 20])
    }

    @Test func belowTheContinuationThresholdOrWithoutAStartNothingJoins() {
        let windows = [window(0, 0.15), window(5, 0.3)]
        #expect(EventDetector.continuedSnoring(windows, undecided: [0, 1], accepted: [], minimum: 0.2).isEmpty)
        let accepted = [EventDetector.Hit(range: TimeRange(start: 10, end: 10.975), confidence: 0.9)]
        let joined = EventDetector.continuedSnoring(windows, undecided: [0, 1], accepted: accepted, minimum: 0.2)
        #expect(joined.map(\.range.start) == [5])
    }

    @Test func fainterWindowsLeadIntoSnoringButDoNotTrailIt() {
        let windows = [window(0, 0.04), window(4, 0.07), window(8, 0.8), window(14, 0.07)]
        let accepted = [EventDetector.Hit(range: TimeRange(start: 8, end: 8.975), confidence: 0.8)]
        let joined = EventDetector.continuedSnoring(windows, undecided: [0, 1, 3], accepted: accepted,
                                                    minimum: 0.1, leadIn: 0.05)
        // 4 s leads in (0.07 ≥ 0.05); 0 s is under the lead-in; 14 s is after, under 0.1.
        #expect(joined.map(\.range.start) == [4])
        let without = EventDetector.continuedSnoring(windows, undecided: [0, 1, 3], accepted: accepted, minimum: 0.1)
        #expect(without.isEmpty)
    }

    @Test func aFaintSnoreTheBandCannotPlaceKeepsItsWindowsInAQuietSnorersTrain() {
        // Three sure snores at 30, 34 and 38 s, and a faint one at 25 s heard at 0.3 (under the
        // threshold, over the lead-in) whose snore band clears twice its floor for one frame.
        func snoring(train level: Float, faintCore: ClosedRange<Int>) -> [DetectedEvent] {
            var frames = EventTests.track(seconds: 60, bursts: [(30.2, 30.8), (34.2, 34.8), (38.2, 38.8)], level: level)
            for i in faintCore { frames.low[i] = 0.0025 }
            let windows = EventTests.windows(seconds: 60, labelled: [(25, 25.9, "snoring", 0.3), (30.2, 30.8, "snoring", 0.8),
                                                                      (34.2, 34.8, "snoring", 0.8), (38.2, 38.8, "snoring", 0.8)])
            return EventDetector.detect(windows: windows, frames: frames, sensitivity: 5, duration: 60)
                .filter { $0.eventClass == .snoring }
        }
        // A quiet snorer (the train 12 dB over the floor): one frame places nothing, so the
        // faint snore keeps the span of its windows (24.375 s to 26.325 s) and the train starts there.
        let faint = snoring(train: 0.004, faintCore: 508...508)
        #expect(faint.count == 4)
        #expect(faint.first.map { abs($0.start - 24.375) < 1e-6 && abs($0.end - 26.325) < 1e-6 } == true,
                "\(faint.map { ($0.start, $0.end) })")
        // A core of 0.4 s places it.
        let placed = snoring(train: 0.004, faintCore: 506...513)
        #expect(placed.first.map { abs($0.start - 25.3) < 1e-6 && abs($0.end - 25.7) < 1e-6 } == true,
                "\(placed.map { ($0.start, $0.end) })")
        // Before a loud train (34 dB over the floor) the same window is the room, not a snore:
        // under a quarter of the train's quietest placed snore, it makes no event.
        let loud = snoring(train: 0.05, faintCore: 508...508)
        #expect(loud.first.map { abs($0.start - 30.2) < 1e-6 } == true, "\(loud.map { ($0.start, $0.end) })")
    }

    @Test func noiseOnlyWindowsNeverBecomeSnoring() {
        let windows = (0..<20).map { window(Double($0) * 0.4875, 0.45) }
        let events = EventDetector.detect(windows: windows, frames: FrameTrack(), sensitivity: 5, duration: 12)
        #expect(events.isEmpty)
    }
}

/// Context: snoring comes in trains, and an unsure call between snores is another snore.
@Suite struct SnoringContextTests {
    /// One window; a snore heard by one window alone counts only when sure (0.95 by default here).
    func w(_ t: Double, _ label: String, _ confidence: Float? = nil) -> WindowLabels {
        WindowLabels(start: t, end: t + EventTests.windowSeconds,
                     ranked: [.init(label: label, confidence: confidence ?? (label == "snoring" ? 0.95 : 0.8))])
    }

    @Test func aSnoreHeardByOneWindowNeedsASureOne() {
        let snoring = { (windows: [WindowLabels]) in
            EventDetector.detect(windows: windows.sorted { $0.start < $1.start }, frames: FrameTrack(), sensitivity: 5, duration: 120)
                .filter { $0.eventClass == .snoring }.map(\.start)
        }
        // Two overlapping windows over the sound, the second at half the threshold or more.
        let pair = { (t: Double, second: Float) in [self.w(t, "snoring", 0.8), self.w(t + 0.4875, "snoring", second)] }
        #expect(snoring([w(10, "snoring", 0.8), w(15, "snoring", 0.8), w(20, "snoring", 0.8)]).isEmpty)
        #expect(snoring([w(10, "snoring", 0.9), w(15, "snoring", 0.9), w(20, "snoring", 0.9)]) == [10, 15, 20])
        #expect(snoring(pair(10, 0.3) + pair(15, 0.3) + pair(20, 0.3)) == [10, 15, 20])
        #expect(snoring(pair(10, 0.2) + pair(15, 0.2) + pair(20, 0.2)).isEmpty)   // under 0.25
        // Within a train a lone unsure window still continues it.
        #expect(snoring([w(10, "snoring"), w(15, "snoring"), w(20, "snoring"), w(25, "snoring", 0.6)]) == [10, 15, 20, 25])
        // Before one, a lone window leads in only if sure; one with a neighbour at the lead-in
        // level (0.4 × 0.5 = 0.2) leads in.
        let train = [w(20, "snoring"), w(25, "snoring"), w(30, "snoring")]
        #expect(snoring(train + [w(14, "snoring", 0.7)]) == [20, 25, 30])
        #expect(snoring(train + [w(14, "snoring", 0.3), w(14.4875, "snoring", 0.25)]) == [14, 20, 25, 30])
        #expect(snoring(train + [w(14, "snoring", 0.3), w(14.4875, "snoring", 0.1)]) == [20, 25, 30])
    }

    @Test func oneOrTwoSnoresAloneAreNotReported() {
        let classes = { (windows: [WindowLabels]) in
            EventDetector.detect(windows: windows, frames: FrameTrack(), sensitivity: 5, duration: 120).map(\.eventClass)
        }
        #expect(classes([w(10, "snoring")]).isEmpty)
        #expect(classes([w(10, "snoring"), w(15, "snoring")]).isEmpty)
        #expect(classes([w(10, "snoring"), w(15, "snoring"), w(60, "snoring")]).isEmpty)   // the third is 44 s later
        #expect(classes([w(10, "snoring"), w(15, "snoring"), w(20, "snoring")]) == [.snoring, .snoring, .snoring])
        // Close snores merge into one event: half a minute of it is a train too.
        let merged = stride(from: 10.0, through: 39.5, by: 0.5).map { w($0, "snoring") }
        #expect(classes(merged) == [.snoring])
        #expect(classes(Array(merged.prefix(50))).isEmpty)   // 25.5 s
        // Other classes stand alone.
        #expect(classes([w(10, "speech", 0.95), w(50, "cough")]) == [.sleepTalk, .cough])
    }

    @Test func weakSnoringAroundOneOrTwoSureSnoresIsNoTrain() {
        let snoring = { (windows: [WindowLabels]) in
            EventDetector.detect(windows: windows.sorted { $0.start < $1.start }, frames: FrameTrack(), sensitivity: 5, duration: 120)
                .filter { $0.eventClass == .snoring }.map(\.start)
        }
        // At sensitivity 5 a window needs 0.5; near found snoring, 0.2 × that continues it.
        let weak = [w(14, "snoring", 0.2), w(18, "snoring", 0.15), w(22, "snoring", 0.3)]
        #expect(snoring([w(10, "snoring")] + weak).isEmpty)
        #expect(snoring([w(10, "snoring"), w(26, "snoring")] + weak).isEmpty)
        // Three sure snores make the train, and the weak ones between and around them join it.
        #expect(snoring([w(10, "snoring"), w(26, "snoring"), w(30, "snoring")] + weak) == [10, 14, 18, 22, 26, 30])
    }

    @Test func anUnsureWordOrCoughBetweenSnoresIsASnore() {
        let snores = [w(10, "snoring"), w(15, "snoring"), w(24, "snoring"), w(30, "snoring")]
        let detect = { (extra: [WindowLabels]) in
            EventDetector.detect(windows: (snores + extra).sorted { $0.start < $1.start }, frames: FrameTrack(),
                                 sensitivity: 5, duration: 120)
        }
        let unsure = detect([w(20, "speech", 0.7), w(27.5, "cough", 0.6)])
        // 27.5 s ends 1.5 s before the snore at 30 s and merges with it.
        #expect(unsure.allSatisfy { $0.eventClass == .snoring })
        #expect(unsure.map(\.start) == [10, 15, 20, 24, 27.5])
        // Talk heard by one window there is a snore however sure; heard by two sure windows, or
        // with snoring on one side only, the words stay words.
        #expect(detect([w(20, "speech", 0.95)]).allSatisfy { $0.eventClass == .snoring })
        #expect(detect([w(20, "speech", 0.95), w(20.4875, "speech", 0.95)]).filter { $0.eventClass == .sleepTalk }.count == 1)
        let words = { (t: Double) in [w(t, "speech", 0.7), w(t + 0.4875, "speech", 0.7)] }
        #expect(detect(words(35)).filter { $0.eventClass == .sleepTalk }.count == 1)
        #expect(detect(words(50)).filter { $0.eventClass == .sleepTalk }.count == 1)
    }

    /// Snores at `heard` (1 s each) that the windows label, plus `missed` ones only the frames show.
    /// `quiet`: snores whose snore band reaches only the level given (the others reach 0.05).
    /// `peaks`: snores whose snore band rises above the floor for one frame only.
    /// `higher`: missed snores that only the 250–3000 Hz band shows (a higher-pitched snorer).
    func snoring(heard: [Double], missed: [Double], quiet: [Double: Float] = [:], peaks: [Double] = [],
                 higher: [Double] = [], talk: [(Double, Double)] = [], seconds: Double = 80) -> [DetectedEvent] {
        var frames = EventTests.track(seconds: seconds, bursts: (heard + missed + higher).map { ($0, $0 + 1) } + talk)
        for t in higher { for i in Int(t * 20)..<Int((t + 1) * 20) { frames.low[i] = 0.001 } }
        for (t, level) in quiet { for i in Int(t * 20)..<Int((t + 1) * 20) { frames.low[i] = level } }
        for t in peaks { frames.low[Int(t * 20)] = 0.01 }
        let windows = EventTests.windows(seconds: seconds, labelled: heard.map { ($0, $0 + 1, "snoring", 0.9) }
                                         + talk.map { ($0.0, $0.1, "speech", 0.95) })
        return EventDetector.detect(windows: windows, frames: frames, sensitivity: 5, duration: seconds)
    }

    @Test func snoresTheClassifierMissedBridgeAnEpisode() {
        let heard = [10.0, 14, 18, 30, 34, 38]
        // 18 → 30 s is more than an episode's gap: alone, two episodes.
        #expect(EventDetector.episodes(of: snoring(heard: heard, missed: [])).count == 2)
        let bridged = snoring(heard: heard, missed: [22, 26])
        #expect(EventDetector.episodes(of: bridged).count == 1)
        #expect(bridged.contains { abs($0.start - 22) < 0.06 && $0.confidence < 0.5 })
        // Every step of the chain must be shorter than the gap; sleep-talk is never a snore.
        #expect(EventDetector.episodes(of: snoring(heard: [10, 14, 18, 40, 44, 48], missed: [29])).count == 2)
        let talk = snoring(heard: heard, missed: [], talk: [(23, 25)])
        #expect(EventDetector.episodes(of: talk).count == 2)
        #expect(talk.filter { $0.eventClass == .sleepTalk }.count == 1)
    }

    @Test func snoresOnlyTheMidBandShowsBridgeToo() {
        let heard = [10.0, 14, 18, 30, 34, 38]
        let bridged = snoring(heard: heard, missed: [], higher: [22, 26])
        #expect(EventDetector.episodes(of: bridged).count == 1)
        #expect(bridged.contains { abs($0.start - 22) < 0.06 } && bridged.contains { abs($0.start - 26) < 0.06 })
        // Before a train they lead in a period back, as the snore band's bursts do; two periods
        // before its first found snore, one starts nothing.
        #expect(EventDetector.episodes(of: snoring(heard: heard, missed: [], higher: [6])).map(\.start) == [6, 30])
        #expect(snoring(heard: heard, missed: [], higher: [2]).allSatisfy { $0.start >= 10 })
    }

    @Test func faintSnoresOverAFanStillBridge() {
        // Missed snores at 22 and 26 s rising 1.7 × over the floor in both bands, as a quiet
        // snorer's do under a fan: they carry the chain. At 1.3 × they are the fan's own wobble.
        let heard = [10.0, 14, 18, 30, 34, 38]
        func detect(faint: Float) -> [DetectedEvent] {
            var frames = EventTests.track(seconds: 80, bursts: heard.map { ($0, $0 + 1) })
            for t in [22.0, 26] {
                for i in Int(t * 20)..<Int((t + 1) * 20) { frames.low[i] = 0.001 * faint; frames.mid[i] = 0.001 * faint }
            }
            let windows = EventTests.windows(seconds: 80, labelled: heard.map { ($0, $0 + 1, "snoring", 0.9) })
            return EventDetector.detect(windows: windows, frames: frames, sensitivity: 5, duration: 80)
        }
        #expect(EventDetector.episodes(of: detect(faint: 1.7)).count == 1)
        #expect(EventDetector.episodes(of: detect(faint: 1.3)).count == 2)
    }

    @Test func aSnoreThatPeaksAboveTheFloorForOneFrameStillBridges() {
        let heard = [10.0, 14, 18, 34, 38, 42]
        // 24 → 34 s is a step of 10 s: the chain breaks without the snore at 28.5 s.
        #expect(EventDetector.episodes(of: snoring(heard: heard, missed: [23])).count == 2)
        let bridged = snoring(heard: heard, missed: [23], peaks: [28.5])
        #expect(EventDetector.episodes(of: bridged).count == 1)
        #expect(bridged.contains { abs($0.start - 28.5) < 0.06 })
        // A peak is a snore only inside a train: before the first found snore it starts nothing.
        #expect(snoring(heard: heard, missed: [], peaks: [3]).allSatisfy { $0.start >= 10 })
    }

    @Test func bandBurstsDoNotMakeATrainOfTwoLoneSnoreLikeSounds() {
        // Two sounds the classifier called snoring, 12 s apart, with bursts between them: a
        // train only if the classifier's own snores make one.
        #expect(snoring(heard: [20, 32], missed: [24, 28]).filter { $0.eventClass == .snoring }.isEmpty)
        // Between two trains the bursts join them into one episode.
        let joined = EventDetector.episodes(of: snoring(heard: [8, 12, 16, 28, 32, 36], missed: [20, 24]))
        #expect(joined.count == 1 && joined.first?.start == 8 && joined.first?.end == 37)
    }

    @Test func aHeardSnoreTheBandDoesNotShowKeepsItsPlaceBesideAPlacedOne() {
        // A quiet train (5 × the floor) whose first snore, 2 s before the second, reaches only
        // 1.8 × the floor: under the 2 × that places a snore, over a quarter of its train. Its
        // windows are merged with the second snore's within 2 s; placed together, the band's
        // run at 13 s alone stood for both and the train started there.
        let quiet: [Double: Float] = [10: 0.0018, 13: 0.005, 17: 0.005, 21: 0.005]
        let events = snoring(heard: [10, 13, 17, 21], missed: [], quiet: quiet).filter { $0.eventClass == .snoring }
        let start = EventDetector.episodes(of: events).first?.start ?? -1
        #expect(abs(start - 9.75) < 1e-6, "\(events.map { ($0.start, $0.end) })")
    }

    @Test func aTrainsFirstSnoresCutOffByAMissedOneRejoinIt() {
        // Sure snores at 2 and 6 s, one the classifier missed at 12 s, and the train heard from
        // 20 s: 7 → 20 s is more than an episode's gap, so the first two are a lone pair, and the
        // lead-in (a period, 4.5 s, before 20 s) finds nothing. The missed snore bridges them.
        let train = [20.0, 24.5, 29, 33.5]
        let rejoined = snoring(heard: [2, 6] + train, missed: [12])
        #expect(EventDetector.episodes(of: rejoined).map(\.start) == [2], "\(rejoined.map { ($0.start, $0.end) })")
        #expect(rejoined.contains { abs($0.start - 12) < 0.06 })
        // Without it the pair stays lone and the train starts where it was heard.
        #expect(EventDetector.episodes(of: snoring(heard: [2, 6] + train, missed: [])).map(\.start) == [20])
        // Two lone pairs bridged to each other are still no train.
        #expect(snoring(heard: [2, 6, 20, 24.5], missed: [12]).filter { $0.eventClass == .snoring }.isEmpty)
        // A pair after the train rejoins it the same way.
        let after = snoring(heard: train + [50, 54], missed: [43])
        #expect(EventDetector.episodes(of: after).map(\.end) == [55], "\(after.map { ($0.start, $0.end) })")
        // A chain of bursts every 8 s reaches a pair 53 s away, not one 103 s away (`rejoinReach`).
        func pairBefore(trainAt t: Double) -> [Double] {
            let far = snoring(heard: [2, 6] + [t, t + 4.5, t + 9, t + 13.5],
                              missed: Array(stride(from: 13.0, to: t - 5, by: 8)), seconds: t + 20)
            return EventDetector.episodes(of: far).map(\.start)
        }
        #expect(pairBefore(trainAt: 60) == [2])
        #expect(pairBefore(trainAt: 110) == [110])
    }

    @Test func aLeadingSnoreMustJoinTheTrainItLeadsInto() {
        // A slow snorer (8 s a breath) heard from 30 s: the lead-in looks 4–12 s before it. A
        // burst there that ends 8 s before the train is its first snore; one that ends 10.5 s
        // before would make an episode of its own.
        let heard = [30.0, 38, 46, 54]
        let near = snoring(heard: heard, missed: [21])
        #expect(EventDetector.episodes(of: near).map(\.start) == [21])
        let far = snoring(heard: heard, missed: [18.5])
        #expect(EventDetector.episodes(of: far).map(\.start) == [30], "\(far.map { ($0.start, $0.end) })")
    }

    @Test func aMissedFirstSnoreOfATrainIsFoundOnePeriodEarlier() {
        let heard = [20.0, 25, 30, 35]
        let start = { (events: [DetectedEvent]) in events.first.map { ($0.start * 10).rounded() / 10 } }
        #expect(start(snoring(heard: heard, missed: [])) == 20)
        #expect(start(snoring(heard: heard, missed: [15])) == 15)
        #expect(start(snoring(heard: heard, missed: [10, 15])) == 10)
        // Not a period away, or too quiet next to the train: the train starts where it was heard.
        #expect(start(snoring(heard: heard, missed: [11])) == 20)
        #expect(start(snoring(heard: heard, missed: [], quiet: [15: 0.004])) == 20)
        // A sixth as loud (16 dB under the train) is a room noise; half as loud is a softer snore.
        #expect(start(snoring(heard: heard, missed: [], quiet: [15: 0.05 / 6])) == 20)
        #expect(start(snoring(heard: heard, missed: [], quiet: [15: 0.05 / 2])) == 15)
        // Measured against the train's quietest snore: a train that grows from a soft first
        // snore keeps a missed one as soft before it.
        #expect(start(snoring(heard: heard, missed: [], quiet: [15: 0.05 / 6, 20: 0.05 / 3])) == 15)
    }

    @Test func aMissedFirstSnoreOnlyTheVoiceBandShowsLeadsInWhenItRisesHalfAsFarAsTheTrain() {
        // A train 20 dB over the room's floor (0.01 against 0.001, both bands); before it a sound
        // only the voice band shows, a period back. At 12 dB it is the train's missed first
        // snore; at 9 dB (over a quarter of the train, and twice the floor) it is not: a snore
        // rises at least half as far as its train.
        let heard = [20.0, 25, 30, 35]
        func start(voiceOnlyAt level: Float) -> Double? {
            var frames = EventTests.track(seconds: 80, bursts: heard.map { ($0, $0 + 1) } + [(15, 16)], level: 0.01)
            for i in 300..<320 { frames.low[i] = 0.001; frames.mid[i] = level }
            let windows = EventTests.windows(seconds: 80, labelled: heard.map { ($0, $0 + 1, "snoring", 0.9) })
            let events = EventDetector.detect(windows: windows, frames: frames, sensitivity: 5, duration: 80)
            return EventDetector.episodes(of: events).first?.start
        }
        #expect(start(voiceOnlyAt: 0.004) == 15)
        #expect(start(voiceOnlyAt: 0.0028) == 20)
    }

    @Test func aMissedFirstSnoreIsFoundWhenTheTrainsEventsHoldTwoSnoresEach() {
        // Snores 2.5 and 5.5 s apart: each pair merges into one event, so the train's first three
        // events start 8 s apart and read a period of 8 s. The missed snore 3.5 s before the
        // train is less than half that period before it, yet more than a breath (1.5 s).
        let pairs = [20.0, 28, 36, 44].flatMap { [$0, $0 + 2.5] }
        let events = snoring(heard: pairs, missed: [16.5])
        #expect(EventDetector.episodes(of: events).map(\.start) == [16.5], "\(events.map { ($0.start, $0.end) })")
    }

    @Test func snoresLessThanTheMergeGapApartAreCountedOneByOne() {
        // 1 s snores 2.5 s apart: their windows run together and their 1.5 s pauses are under
        // the 2 s merge gap, yet each snore is an event of its own, and the night's time in
        // snoring is the snores' 5 s, not the pauses' too.
        let heard = [10.0, 12.5, 15, 17.5, 20]
        let events = snoring(heard: heard, missed: [])
        #expect(events.map { ($0.start * 20).rounded() / 20 } == heard, "\(events.map { ($0.start, $0.end) })")
        #expect(abs(events.reduce(0) { $0 + $1.duration } - 5) < 0.11)
        #expect(EventDetector.episodes(of: events).count == 1)
    }

    @Test func aDipShorterThanAPauseStaysInsideOneSnore() {
        // Each snore of a train drops out of the snore band for `dip` seconds halfway.
        func count(dip: Double) -> Int {
            let snores = [10.0, 16, 22]
            let frames = EventTests.track(seconds: 40, bursts: snores.flatMap { [($0, $0 + 0.8), ($0 + 0.8 + dip, $0 + 1.6 + dip)] })
            let windows = EventTests.windows(seconds: 40, labelled: snores.map { ($0, $0 + 1.6 + dip, "snoring", 0.9) })
            return EventDetector.detect(windows: windows, frames: frames, sensitivity: 5, duration: 40).count
        }
        #expect(count(dip: 0.3) == 3)
        #expect(count(dip: EventDetector.snorePause + 0.1) == 6)
    }

    @Test func aSnippetInsideAnEpisodeDropsAndOneThatJoinsOrLeadsInStays() {
        func snore(_ start: Double, _ length: Double = 1) -> DetectedEvent {
            DetectedEvent(eventClass: .snoring, start: start, end: start + length, confidence: 0.9,
                          peakDBFS: -30, meanDBFS: -33, severity: 20)
        }
        // Two trains 15 s apart; one-frame snippets between a train's snores (16, 40), joining
        // the trains (23, 29.5) and leading into the first (5); a cough that short is no snippet.
        let trains = [10.0, 14, 18, 34, 38, 42].map { snore($0) }
        let snippets = [16.0, 40, 23, 29.5, 5].map { snore($0, 0.05) }
        let cough = DetectedEvent(eventClass: .cough, start: 12, end: 12.1, confidence: 0.9, peakDBFS: -30, meanDBFS: -33, severity: 10)
        let kept = EventDetector.withoutSnippetsInsideEpisodes(trains + snippets + [cough])
        #expect(kept.filter { $0.duration < 0.2 && $0.eventClass == .snoring }.map(\.start).sorted() == [5, 23, 29.5])
        #expect(kept.contains(cough) && kept.count == trains.count + 4)
        #expect(EventDetector.episodes(of: kept).map { [$0.start, $0.end] } == EventDetector.episodes(of: trains + snippets).map { [$0.start, $0.end] })
    }

    @Test func talkHeardByOneWindowNeedsToBeSure() {
        let talk = { (windows: [WindowLabels]) in
            EventDetector.detect(windows: windows, frames: FrameTrack(), sensitivity: 5, duration: 120)
                .filter { $0.eventClass == .sleepTalk }.map(\.start)
        }
        #expect(talk([w(10, "speech", 0.85)]).isEmpty)
        #expect(talk([w(10, "speech", 0.92)]) == [10])
        // Two unsure windows of one span (overlapping, or words up to 2 s apart) are talk.
        #expect(talk([w(10, "speech", 0.6), w(10.4875, "speech", 0.6)]) == [10])
        #expect(talk([w(10, "speech", 0.6), w(12.5, "shout", 0.6)]) == [10])
        // Apart, each is one unsure window again; a cough heard by one window still counts.
        #expect(talk([w(10, "speech", 0.6), w(20, "speech", 0.6)]).isEmpty)
        #expect(EventDetector.detect(windows: [w(10, "cough", 0.6)], frames: FrameTrack(), sensitivity: 5, duration: 120)
            .map(\.eventClass) == [.cough])
    }

    @Test func aSnoreWhoseLowBandCoreIsShortStaysInItsTrain() {
        // Windows hear three snores; the middle one rises above the floor for only 0.3 s.
        let frames = EventTests.track(seconds: 60, bursts: [(10, 11), (15, 15.3), (20, 21)])
        let windows = EventTests.windows(seconds: 60, labelled: [(10, 11, "snoring", 0.9), (14.8, 15.6, "snoring", 0.9),
                                                                  (20, 21, "snoring", 0.9)])
        let events = EventDetector.detect(windows: windows, frames: frames, sensitivity: 5, duration: 60)
        #expect(events.count == 3)
        #expect(events.count == 3 && abs(events[1].start - 15) < 0.06 && abs(events[1].end - 15.3) < 0.06)
        // Sleep-talk that short, heard by one window, still drops.
        let talk = EventTests.windows(seconds: 60, labelled: [(15, 15.3, "speech", 0.9)])
        #expect(EventDetector.detect(windows: talk, frames: frames, sensitivity: 5, duration: 60).isEmpty)
    }

    /// Two events of one class never share time: snoring minutes would count it twice, and two
    /// clips would play it. Overlapping ones meet halfway, each measured again over what it
    /// keeps; one inside another goes; another class's event is left where it is.
    @Test func eventsOfOneClassNeverOverlap() {
        let frames = EventTests.track(seconds: 60, bursts: [(10, 12), (11.9, 14)], level: 0.05)
        func e(_ c: EventClass, _ a: Double, _ b: Double, _ confidence: Double = 0.8) -> DetectedEvent {
            EventDetector.event(c, .init(range: TimeRange(start: a, end: b), confidence: confidence), frames: frames)
        }
        let out = EventDetector.withoutOverlaps([e(.snoring, 11.75, 14, 0.7), e(.snoring, 10, 12, 0.9), e(.snoring, 12.5, 13),
                                                 e(.cough, 11, 11.5), e(.snoring, 30, 31)], frames: frames)
        let snores = out.filter { $0.eventClass == .snoring }
        #expect(snores.map(\.start) == [10, 11.875, 30] && snores.map(\.end) == [11.875, 14, 31], "\(snores)")
        #expect(snores.map(\.confidence) == [0.9, 0.7, 0.8])
        #expect(snores[0] == e(.snoring, 10, 11.875, 0.9) && snores[1] == e(.snoring, 11.875, 14, 0.7))
        #expect(out.filter { $0.eventClass == .cough } == [e(.cough, 11, 11.5)])
        #expect(out.map(\.start) == out.map(\.start).sorted())
    }
}
