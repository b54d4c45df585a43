import Foundation

/// Renders a planned night block by block as an `AudioSource`: the background is generated
/// sample by sample and each clip is made again from its placement when a block reaches it and
/// dropped when the block passes it, so memory stays flat over 8 hours and the samples do not
/// depend on the block size.
public final class NightSynthesizer: AudioSource {
    public let plan: NightPlan
    private let bank: any SoundBank
    private var bed: RoomBed
    private var position = 0
    private var nextPlacement = 0
    /// Clips overlapping the current block, in placement order.
    private var active: [(placement: NightPlan.Placement, samples: [Float])] = []
    private var clippedSamples = 0

    public init(plan: NightPlan, bank: any SoundBank) {
        self.plan = plan
        self.bank = bank
        var bedRandom = plan.bedRandom
        // The hum after the scene's own components, so a night without it is the night it was.
        let hum = plan.configuration.humFrequency.map { [(RoomBed.Component.mainsHum(frequency: $0), plan.configuration.humLevel)] } ?? []
        bed = RoomBed(levels: plan.configuration.bedLevels + hum, rng: &bedRandom)
    }

    public convenience init(configuration: NightConfiguration, bank: any SoundBank) throws {
        self.init(plan: try NightPlan(configuration: configuration, bank: bank), bank: bank)
    }

    public var expectedDuration: Double? { plan.duration }

    public var warnings: [String] {
        plan.shortfalls + (clippedSamples > 0 ? ["\(clippedSamples) samples were louder than full scale and were clipped"] : [])
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        let n = min(buffer.count, plan.sampleCount - position)
        guard n > 0 else { return 0 }
        let blockEnd = position + n
        for i in 0..<n { buffer[i] = bed.next() }

        let placements = plan.placements
        while nextPlacement < placements.count, placements[nextPlacement].start < blockEnd {
            let p = placements[nextPlacement]
            var clipRandom = p.clipRandom
            let samples = try bank.clip(p.kind, rng: &clipRandom)
            guard samples.count == p.length else {
                throw SomniError(.internalError, "the sound bank made a different \(p.kind.rawValue) clip on rendering than on planning")
            }
            active.append((p, samples))
            nextPlacement += 1
        }
        for (p, samples) in active {
            let from = max(position, p.start), to = min(blockEnd, p.end)
            guard from < to else { continue }
            let fade = max(p.fade, 1)
            let inverseFade = 1 / Float(fade)
            samples.withUnsafeBufferPointer { clip in
                for t in from..<to {
                    let j = t - p.start
                    var g = p.gain
                    if j < fade || p.length - j < fade {
                        g *= min(1, Float(j + 1) * inverseFade, Float(p.length - j) * inverseFade)
                    }
                    buffer[t - position] += g * clip[j]
                }
            }
        }
        active.removeAll { $0.placement.end <= blockEnd }

        for i in 0..<n where abs(buffer[i]) > 1 {
            buffer[i] = buffer[i] > 0 ? 1 : -1
            clippedSamples += 1
        }
        position = blockEnd
        return n
    }

    /// Streams the rest of the night into `sink` and finishes it (unless `finishing` is false:
    /// the caller finishes it, with what must go into place beside it).
    public func render(to sink: some AudioSink, blockSize: Int = analysisSampleRate, finishing: Bool = true) throws {
        var block = [Float](repeating: 0, count: max(1, blockSize))
        try block.withUnsafeMutableBufferPointer { buffer in
            while true {
                let n = try read(into: buffer)
                if n == 0 { break }
                try sink.write(UnsafeBufferPointer(rebasing: buffer[0..<n]))
            }
        }
        if finishing { try sink.finish() }
    }
}
