import Foundation
import SomniCore

/// Wall and CPU seconds of `body` (CPU time is the honest figure on a shared machine).
private func timed(_ body: () -> Void) -> (wall: Double, cpu: Double) {
    let wall = DispatchTime.now().uptimeNanoseconds
    let cpu = clock()
    body()
    return (Double(DispatchTime.now().uptimeNanoseconds - wall) / 1e9, Double(clock() - cpu) / Double(CLOCKS_PER_SEC))
}

/// One minute of generated 16 kHz audio: a quiet noise floor under snore-like 100 Hz pulses.
private func generatedMinute() -> [Float] {
    var audio = [Float](repeating: 0, count: analysisSampleRate * 60)
    var seed: UInt64 = 0x1234_5678
    for i in audio.indices {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let t = Double(i) / Double(analysisSampleRate)
        audio[i] = Float(Int64(bitPattern: seed) >> 40) / Float(1 << 23) * 0.003
            + 0.1 * Float(sin(2 * .pi * 100 * t) * max(0, sin(2 * .pi * t / 2.5)))
    }
    return audio
}

private func report(_ what: String, _ t: (wall: Double, cpu: Double), audioSeconds: Double, _ extra: String = "") {
    print(String(format: "%@: %.0f s of audio in %.3f s CPU (%.3f s wall) = %.0f× real time per core%@",
                 what, audioSeconds, t.cpu, t.wall, audioSeconds / max(t.cpu, 1e-9), extra))
}

/// Times the overnight feature loop on one hour of generated audio fed in 100 ms blocks (as
/// capture and decoding deliver it), and on an hour of digital silence (where the filter
/// memories would otherwise decay through denormals).
func runFeatureBenchmark() {
    let block = analysisSampleRate / 10
    for (name, minute) in [("snore+noise", generatedMinute()), ("silence", [Float](repeating: 0, count: analysisSampleRate * 60))] {
        let fx = FeatureExtractor()
        let t = timed {
            minute.withUnsafeBufferPointer { p in
                for _ in 0..<60 {
                    for offset in stride(from: 0, to: p.count, by: block) {
                        fx.process(UnsafeBufferPointer(rebasing: p[offset..<min(offset + block, p.count)]))
                    }
                }
            }
        }
        report("features (\(name))", t, audioSeconds: 3600, " — \(fx.frames.count) frames")
    }
}

/// Times the mains-hum remover over an hour fed in 1 s blocks: without hum (it only listens;
/// the snore-like pulses hold 100 Hz but come and go), and with 50 Hz hum at −45 dBFS under them
/// (it notches thirteen lines).
func runHumBenchmark() {
    let minute = generatedMinute()
    let hummed = minute.enumerated().map { i, x -> Float in
        let t = Double(i) / Double(analysisSampleRate)
        var hum = 0.0
        for k in 1...13 { hum += (k % 2 == 1 ? 1 : 0.3) / Double(k) * sin(2 * .pi * 50 * Double(k) * t) }
        return x + Float(0.0056 * 1.06 * hum / 1.5)
    }
    for (name, audio) in [("no hum", minute), ("50 Hz hum", hummed)] {
        let remover = HumRemover()
        var out = 0
        let t = timed {
            audio.withUnsafeBufferPointer { p in
                for _ in 0..<60 {
                    for offset in stride(from: 0, to: p.count, by: analysisSampleRate) {
                        out += remover.process(UnsafeBufferPointer(rebasing: p[offset..<min(offset + analysisSampleRate, p.count)])).count
                    }
                }
            }
            out += remover.finish().count
        }
        report("hum remover (\(name))", t, audioSeconds: 3600,
               " — \(remover.hum.map { "\($0.harmonics.count) lines notched at \(String(format: "%.2f", $0.mainsFrequency)) Hz" } ?? "none notched")")
    }
}

/// Times the heuristic classifier reading a whole hour at 50 % overlap (the gate's bypass case,
/// the most it can ever be asked to do).
func runHeuristicBenchmark() {
    var classifier = HeuristicClassifier()
    classifier.prepare(noiseFloor: 0.002)
    let length = classifier.windowLength
    let minute = generatedMinute()
    var scores = [Float](repeating: 0, count: classifier.labels.count)
    var windows = 0, snoring = 0
    let t = timed {
        minute.withUnsafeBufferPointer { p in
            scores.withUnsafeMutableBufferPointer { s in
                for _ in 0..<60 {
                    for offset in stride(from: 0, through: p.count - length, by: length / 2) {
                        classifier.classify(UnsafeBufferPointer(rebasing: p[offset..<offset + length]), scores: s)
                        windows += 1
                        if s[0] >= 0.5 { snoring += 1 }
                    }
                }
            }
        }
    }
    report("heuristic classifier (every window, 50 % overlap)", t, audioSeconds: 3600,
           " — \(windows) windows, \(snoring) snoring")
}
