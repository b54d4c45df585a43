// Prints speed and memory figures; run with `swift run -c release SomniBench`.
runFeatureBenchmark()
runHeuristicBenchmark()
try runDecodeBenchmark()
