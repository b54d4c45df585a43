import Foundation
import SomniCore

/// Times the overnight feature loop on one hour of generated 16 kHz audio (a quiet noise floor
/// with snore-like pulses), fed in 100 ms blocks as capture and decoding deliver them, plus an hour of
/// digital silence (the case where filter memories would otherwise decay through denormals).
func runFeatureBenchmark() {
    let rate = analysisSampleRate
    let block = rate / 10
    var second = [Float](repeating: 0, count: rate)
    var seed: UInt64 = 0x1234_5678
    for i in 0..<rate {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let noise = Float(Int64(bitPattern: seed) >> 40) / Float(1 << 23) * 0.003
        let t = Double(i) / Double(rate)
        second[i] = noise + 0.2 * Float(sin(2 * .pi * 110 * t) * sin(.pi * t))
    }
    let silence = [Float](repeating: 0, count: rate)
    for (name, signal) in [("snore+noise", second), ("silence", silence)] {
        let fx = FeatureExtractor()
        let start = DispatchTime.now().uptimeNanoseconds
        signal.withUnsafeBufferPointer { p in
            for _ in 0..<3600 {
                var offset = 0
                while offset < p.count {
                    fx.process(UnsafeBufferPointer(rebasing: p[offset..<offset + block]))
                    offset += block
                }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        print(String(format: "features %@: 1 h of audio in %.3f s = %.0f× real time (%d frames)",
                     name, seconds, 3600 / seconds, fx.frames.count))
    }
}
