import Foundation

/// What a synthesised night contains.
public struct NightConfiguration: Sendable, Equatable {
    public enum Scene: String, Sendable, CaseIterable {
        /// Room hiss and rumble only.
        case quiet
        /// A fan or air conditioner running all night.
        case fan
        /// Street rumble and frequent passing traffic.
        case street
    }

    public var hours: Double
    public var seed: UInt64
    public var scene: Scene
    /// RMS level (dBFS) of the scene's main background; nil = the scene's default
    /// (quiet −60, fan −42, street −46).
    public var backgroundLevel: Double?
    /// Background and bedroom distractors only, no snoring, talk or coughs: for false-alarm tests.
    public var noiseOnly: Bool
    /// Mains hum (50 or 60 Hz and its harmonics) under the whole night at `humLevel` dBFS RMS,
    /// on top of the scene: nil, none.
    public var humFrequency: Double?
    public var humLevel: Double = -45
    /// With a bank of recordings, lay its noise recordings end to end under the whole night at
    /// the scene's background level, on top of the generated bed. Off: the generated bed alone
    /// (one steady fan in the fan scene), whose floor never changes.
    public var recordedBed = true
    /// Snoring comes in episodes of this many minutes, pulses every `snoreInterval` seconds
    /// (onset to onset), separated by `quietMinutes` without snoring.
    public var snoreEpisodeMinutes: ClosedRange<Double> = 2...20
    public var snoreInterval: ClosedRange<Double> = 3...6
    public var quietMinutes: ClosedRange<Double> = 5...40
    /// Minutes before the first episode (at most a fifth of the night).
    public var firstSnoreMinutes: ClosedRange<Double> = 5...30
    public var speechPerHour: Double = 4
    /// Bouts of 1–4 coughs.
    public var coughBoutsPerHour: Double = 3
    /// Doors, footsteps and passing traffic per hour, each; nil = the scene's default
    /// (0.5 each indoors; street: traffic 15, doors and footsteps 1).
    public var distractorsPerHour: Double?
    /// RMS levels (dBFS) events are drawn from: several signal-to-noise ratios in one night.
    public var snoreLevel: ClosedRange<Double> = -45 ... -22
    public var speechLevel: ClosedRange<Double> = -42 ... -22
    public var coughLevel: ClosedRange<Double> = -38 ... -18
    public var distractorLevel: ClosedRange<Double> = -45 ... -25

    public init(hours: Double = 8, seed: UInt64 = 1, scene: Scene = .quiet, noiseOnly: Bool = false) {
        self.hours = hours; self.seed = seed; self.scene = scene; self.noiseOnly = noiseOnly
    }

    /// A few minutes with every kind of event in it (episodes of under a minute, talk, coughs and
    /// distractors every minute or two): for demos and quick tests.
    public static func compressed(minutes: Double, seed: UInt64 = 1, scene: Scene = .quiet) -> NightConfiguration {
        var c = NightConfiguration(hours: minutes / 60, seed: seed, scene: scene)
        c.firstSnoreMinutes = 0.2...0.4
        c.snoreEpisodeMinutes = 0.5...1
        c.quietMinutes = 0.5...1
        c.speechPerHour = 60
        c.coughBoutsPerHour = 60
        c.distractorsPerHour = 30
        return c
    }

    /// Throws `.badInput` for settings that would make no night or never finish planning.
    public func validate() throws {
        func bad(_ why: String) -> SomniError { SomniError(.badInput, "night configuration: \(why)") }
        guard hours.isFinite, hours * 3600 >= 1, hours <= 24 else { throw bad("hours must be at least a second and at most 24, not \(hours)") }
        if let hum = humFrequency, !(hum >= 20 && hum <= 400) { throw bad("the hum's frequency must be from 20 to 400 Hz, not \(hum)") }
        guard humLevel.isFinite, humLevel <= 0, humLevel >= -120 else { throw bad("the hum's level must be from -120 to 0 dBFS, not \(humLevel)") }
        // No longer than a day: the planner steps through the night by them.
        let ranges = [("snoreEpisodeMinutes", snoreEpisodeMinutes, 1440.0), ("snoreInterval", snoreInterval, 86_400),
                      ("quietMinutes", quietMinutes, 1440), ("firstSnoreMinutes", firstSnoreMinutes, 1440)]
        for (name, r, longest) in ranges where !(r.lowerBound >= 0 && r.upperBound <= longest) {
            throw bad("\(name) must be from 0 to \(Int(longest)) (a day), not \(r.lowerBound)...\(r.upperBound)")
        }
        guard snoreEpisodeMinutes.lowerBound + quietMinutes.lowerBound > 0 else {
            throw bad("snoring episodes and the quiet between them cannot both be 0 minutes long")
        }
        for (name, rate) in [("speechPerHour", speechPerHour), ("coughBoutsPerHour", coughBoutsPerHour),
                             ("distractorsPerHour", distractorsPerHour ?? 0)] where !(rate.isFinite && rate >= 0 && rate <= 3600) {
            throw bad("\(name) must be between 0 and 3600")
        }
        for level in [snoreLevel, speechLevel, coughLevel, distractorLevel].flatMap({ [$0.lowerBound, $0.upperBound] })
            + [backgroundLevel ?? -60] where !(level.isFinite && level <= 0) {
            throw bad("levels are dBFS: finite and at most 0")
        }
    }

    var bedLevels: [(RoomBed.Component, Double)] {
        switch scene {
        case .quiet: [(.room, backgroundLevel ?? -60)]
        case .fan: [(.room, -62), (.fan(hum: 55), backgroundLevel ?? -42)]
        case .street: [(.room, -60), (.streetRumble, backgroundLevel ?? -46)]
        }
    }

    func distractorRate(_ kind: SoundKind) -> Double {
        if let rate = distractorsPerHour { return rate }
        return scene == .street ? (kind == .traffic ? 15 : 1) : 0.5
    }
}

/// A night laid out in time: the reference events and where every clip goes. Clips are not kept:
/// each placement remembers the generator state that makes its clip, so the synthesiser can
/// make it again when its time comes.
public struct NightPlan: Sendable {
    struct Placement: Sendable {
        var kind: SoundKind
        var start: Int
        var length: Int
        var gain: Float
        /// Linear fade in and out, samples.
        var fade: Int
        var clipRandom: SeededRandom
        var end: Int { start + length }
    }

    public let configuration: NightConfiguration
    public let sampleCount: Int
    /// Where the target sounds are, sorted by start: one event per snore, per utterance, per cough.
    public let events: [ReferenceEvent]
    /// Talk and cough bouts asked for that found no room (targets keep 3 s from each other and
    /// from the snoring), said in words; empty when every one was placed.
    public let shortfalls: [String]
    let placements: [Placement]
    let bedRandom: SeededRandom

    public var duration: Double { Double(sampleCount) / Double(analysisSampleRate) }

    /// Target events keep this far from each other (seconds) unless they belong together
    /// (pulses of one episode, coughs of one bout).
    static let targetMargin = 3.0
    /// Distractors keep this far from target events, so the reference stays unambiguous.
    static let distractorMargin = 1.0

    public init(configuration c: NightConfiguration, bank: some SoundBank) throws {
        try c.validate()
        configuration = c
        let rate = Double(analysisSampleRate)
        sampleCount = Int(c.hours * 3600 * rate)
        var builder = PlanBuilder(sampleCount: sampleCount, rng: SeededRandom(seed: c.seed), bank: bank)
        bedRandom = builder.rng.split()
        if bank.providesBeds, c.recordedBed { try builder.layRecordedBed(level: c.bedLevels.last?.1 ?? -50) }
        if !c.noiseOnly {
            try builder.placeSnoring(c)
            try builder.placeScattered(.speech, perHour: c.speechPerHour * c.hours, levels: c.speechLevel)
            try builder.placeCoughBouts(perHour: c.coughBoutsPerHour * c.hours, levels: c.coughLevel)
        }
        for kind in [SoundKind.door, .footsteps, .traffic] {
            try builder.placeScattered(kind, perHour: c.distractorRate(kind) * c.hours, levels: c.distractorLevel)
        }
        shortfalls = builder.shortfalls.map { name, count in
            "only \(count.placed) of the \(count.asked) \(name) asked for found room in the night (each keeps "
                + "\(Int(NightPlan.targetMargin)) s from the snoring and the others), so there are fewer an hour than asked"
        }
        let ordered = builder.placements.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
        placements = ordered.map(\.element)
        events = placements.compactMap { p in
            p.kind.eventClass.map {
                ReferenceEvent(eventClass: $0, start: Double(p.start) / rate, end: Double(p.end) / rate)
            }
        }
    }
}

/// The mutable state of planning: the generator, the placements so far and where targets are.
private struct PlanBuilder<Bank: SoundBank> {
    let sampleCount: Int
    var rng: SeededRandom
    let bank: Bank
    var placements: [NightPlan.Placement] = []
    /// Target sounds so far, as sorted, disjoint sample ranges (pulses of one episode, coughs of
    /// one bout are one range each).
    var targets: [Range<Int>] = []
    /// Target sounds asked for and placed, where some found no room, by what they are called.
    var shortfalls: [(name: String, count: (asked: Int, placed: Int))] = []
    let rate = Double(analysisSampleRate)

    init(sampleCount: Int, rng: SeededRandom, bank: Bank) {
        self.sampleCount = sampleCount; self.rng = rng; self.bank = bank
    }

    /// Makes a clip once to learn its length and level; nil for an empty or silent clip.
    mutating func measure(_ kind: SoundKind, level: Double) throws -> NightPlan.Placement? {
        let clipRandom = rng.split()
        var copy = clipRandom
        let clip = try bank.clip(kind, rng: &copy)
        let rms = rootMeanSquare(clip)
        guard !clip.isEmpty, rms > 0 else { return nil }
        return NightPlan.Placement(kind: kind, start: 0, length: clip.count, gain: Float(pow(10, level / 20) / rms),
                                   fade: min(80, clip.count / 4), clipRandom: clipRandom)
    }

    func isFree(_ range: Range<Int>, margin: Double) -> Bool {
        let pad = Int(margin * rate)
        var low = 0, high = targets.count
        while low < high {  // first target ending after range.lowerBound - pad
            let mid = (low + high) / 2
            if targets[mid].upperBound <= range.lowerBound - pad { low = mid + 1 } else { high = mid }
        }
        return low == targets.count || targets[low].lowerBound >= range.upperBound + pad
    }

    mutating func reserve(_ range: Range<Int>) {
        let i = targets.firstIndex { $0.lowerBound > range.lowerBound } ?? targets.count
        targets.insert(range, at: i)
    }

    /// Episodes of snore trains separated by quiet stretches.
    mutating func placeSnoring(_ c: NightConfiguration) throws {
        var t = min(rng.uniform(c.firstSnoreMinutes) * 60, 0.2 * Double(sampleCount) / rate)
        while Int(t * rate) < sampleCount {
            let episodeEnd = t + rng.uniform(c.snoreEpisodeMinutes) * 60
            let baseLevel = rng.uniform(c.snoreLevel)
            var pulse = t
            var firstStart: Int?
            var lastEnd = 0
            while pulse < episodeEnd {
                let level = min(c.snoreLevel.upperBound, baseLevel + rng.uniform(-3...3))
                guard var p = try measure(.snore, level: level) else { break }
                p.start = Int(pulse * rate)
                guard p.end <= sampleCount else { break }
                placements.append(p)
                firstStart = firstStart ?? p.start
                lastEnd = p.end
                pulse += max(rng.uniform(c.snoreInterval), Double(p.length) / rate + 0.8)
            }
            if let first = firstStart { reserve(first..<lastEnd) }
            t = episodeEnd + rng.uniform(c.quietMinutes) * 60
        }
    }

    /// `expected` clips of one kind at random free times (the fraction is a chance of one more).
    mutating func placeScattered(_ kind: SoundKind, perHour expected: Double, levels: ClosedRange<Double>) throws {
        let isTarget = kind.eventClass != nil
        let count = Int(expected) + (rng.chance(expected - expected.rounded(.down)) ? 1 : 0)
        var placed = 0
        for _ in 0..<count {
            guard var p = try measure(kind, level: rng.uniform(levels)), p.length < sampleCount else { continue }
            for _ in 0..<100 {
                p.start = rng.int(0...(sampleCount - p.length))
                if isFree(p.start..<p.end, margin: isTarget ? NightPlan.targetMargin : NightPlan.distractorMargin) {
                    placements.append(p)
                    if isTarget { reserve(p.start..<p.end) }
                    placed += 1
                    break
                }
            }
        }
        if isTarget, placed < count { shortfalls.append((kind == .speech ? "utterances" : "\(kind.rawValue) sounds", (count, placed))) }
    }

    /// Bouts of 1–4 coughs, onsets 0.4–0.8 s apart (more when a cough is long).
    mutating func placeCoughBouts(perHour expected: Double, levels: ClosedRange<Double>) throws {
        let count = Int(expected) + (rng.chance(expected - expected.rounded(.down)) ? 1 : 0)
        var placed = 0
        for _ in 0..<count {
            let size = rng.chance(0.4) ? 1 : rng.int(2...4)
            let level = rng.uniform(levels)
            var bout: [NightPlan.Placement] = []
            var offset = 0
            for _ in 0..<size {
                guard var p = try measure(.cough, level: level + rng.uniform(-4...2)) else { continue }
                p.start = offset
                bout.append(p)
                offset += max(Int(rng.uniform(0.4...0.8) * rate), p.length + Int(0.1 * rate))
            }
            guard let last = bout.last, last.end < sampleCount else { continue }
            for _ in 0..<100 {
                let start = rng.int(0...(sampleCount - last.end))
                if isFree(start..<(start + last.end), margin: NightPlan.targetMargin) {
                    for var p in bout { p.start += start; placements.append(p) }
                    reserve(start..<(start + last.end))
                    placed += 1
                    break
                }
            }
        }
        if placed < count { shortfalls.append(("cough bouts", (count, placed))) }
    }

    /// Recorded noise laid end to end under the whole night, crossfaded over half a second.
    mutating func layRecordedBed(level: Double) throws {
        let fade = analysisSampleRate / 2
        var start = 0
        while start < sampleCount {
            guard var p = try measure(.roomNoise, level: level), p.length > 2 * fade else { return }
            p.start = start
            p.fade = fade
            placements.append(p)
            start = p.end - fade
        }
    }
}
