// Prints speed and memory figures; run with `swift run -c release SomniBench`.
print("SomniBench: nothing yet")
try runDecodeBenchmark()
try runClassifierBenchmark()
