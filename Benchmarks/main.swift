// Prints speed and memory figures. Build and run in release mode:
//   scripts/build-release.sh --product SomniBench && .build/release/SomniBench [night [HOURS [ROUNDS]]|decode|clips [COUNT [FORMAT]]|features|hum|heuristic|classifier|report|store|record|all]
#if canImport(Glibc)
@preconcurrency import Glibc  // `stdout`, a C global, for setvbuf
#endif
import Foundation
import SomniAudio

ProcessMemory.keepLargeBuffersInTheirOwnMappings()
// Each figure shows as soon as it is measured, into `| tee` or a file too: a night run takes minutes.
setvbuf(stdout, nil, _IOLBF, 0)
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first ?? "all" {
    case "_decode": try childDecode(arguments[1])
    case "_analyze":
        try childAnalyze(arguments[1], classifier: arguments[2], into: arguments[3],
                         workers: arguments.count > 4 ? Int(arguments[4]) : nil,
                         speculating: arguments.count > 5 ? arguments[5] != "plain" : true,
                         keepsClips: arguments.count > 6 ? arguments[6] != "no-clips" : true)
    case "night":
        let hours = arguments.count > 1 ? Double(arguments[1]) ?? 8 : 8
        try runNightBenchmark(hours: hours, classifiers: ["model", "heuristic"],
                              rounds: arguments.count > 2 ? Int(arguments[2]) ?? 1 : 1)
    case "decode": try runDecodeBenchmark()
    case "clips": try runClipBenchmark(count: arguments.count > 1 ? Int(arguments[1]) ?? 300 : 300,
                                      only: arguments.count > 2 ? arguments[2] : nil)
    case "features": runFeatureBenchmark()
    case "hum": runHumBenchmark()
    case "heuristic": runHeuristicBenchmark()
    case "classifier": try runClassifierBenchmark()
    case "report": try runReportBenchmark()
    case "store": try runStoreBenchmark()
    case "record": try runRecordBenchmark()
    case "all":
        runFeatureBenchmark()
        runHeuristicBenchmark()
        try runDecodeBenchmark()
        try runClassifierBenchmark()
        try runNightBenchmark(hours: 8, classifiers: ["model", "heuristic"])
        try runReportBenchmark()
        try runStoreBenchmark()
        try runRecordBenchmark()
    default:
        print("usage: SomniBench [night [HOURS [ROUNDS]]|decode|clips [COUNT [FORMAT]]|features|hum|heuristic|classifier|report|store|record|all]")
        exit(64)
    }
} catch {
    print("SomniBench: \(error)")
    exit(1)
}
