// swift-tools-version:6.0
// Somni: a portable core (Foundation only), thin wrappers around C libraries, a thin command line.
import PackageDescription

let package = Package(
    name: "Somni",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "SomniCore", targets: ["SomniCore"]),
        .library(name: "SomniAudio", targets: ["SomniAudio"]),
        .library(name: "SomniStore", targets: ["SomniStore"]),
        .library(name: "SomniReport", targets: ["SomniReport"]),
        .executable(name: "somni", targets: ["somni"]),
    ],
    targets: [
        // C libraries from Debian's -dev packages.
        .systemLibrary(
            name: "CFFmpeg", path: "Sources/CFFmpeg", pkgConfig: "libavformat libavcodec libswresample libavutil",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswresample-dev", "libavutil-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // Without pkgConfig: libpulse's .pc file gives only -D_REENTRANT and -pthread beyond
        // -lpulse (the module map links it), which SwiftPM warns of in every build, an app's too.
        .systemLibrary(
            name: "CPulse", path: "Sources/CPulse",
            providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(
            name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]),

        // Portable pure Swift: DSP, gate, windows, classifiers, events, evaluation, synthesis.
        .target(name: "SomniCore", resources: [.copy("Resources")]),
        // Decoding and encoding through FFmpeg's libraries.
        .target(name: "SomniAudio", dependencies: ["SomniCore", "CFFmpeg"]),
        // Live capture (PulseAudio, ALSA) and the overnight recorder.
        .target(name: "SomniCapture", dependencies: ["SomniCore", "SomniAudio", "CPulse", "CALSA"]),
        // Nights in SQLite plus night folders on disk.
        .target(name: "SomniStore", dependencies: ["SomniCore", "CSQLite"]),
        // Self-contained HTML report and exports.
        .target(name: "SomniReport", dependencies: ["SomniCore", "SomniStore"]),
        // The command line: parse, call, print.
        .executableTarget(name: "somni", dependencies: ["SomniCore", "SomniAudio", "SomniCapture", "SomniStore", "SomniReport"]),
        // The engine used from Swift with the core alone, as an app would (docs/engine.md).
        .executableTarget(name: "somni-engine-example", dependencies: ["SomniCore"], path: "Examples/EngineExample"),
        // Figures for speed and memory, run in release mode.
        .executableTarget(name: "SomniBench", dependencies: ["SomniCore", "SomniAudio", "SomniCapture", "SomniStore", "SomniReport"], path: "Benchmarks"),

        .testTarget(name: "SomniCoreTests", dependencies: ["SomniCore"]),
        .testTarget(name: "SomniAudioTests", dependencies: ["SomniAudio", "SomniCore"]),
        .testTarget(name: "SomniCaptureTests", dependencies: ["SomniCapture", "SomniAudio", "SomniCore"]),
        .testTarget(name: "SomniStoreTests", dependencies: ["SomniStore", "SomniCore"]),
        .testTarget(name: "SomniReportTests", dependencies: ["SomniReport", "SomniStore", "SomniCore", "SomniAudio", "CZlib"]),
        // zlib, only to decode the browser's PNG screenshots in the report tests.
        .systemLibrary(name: "CZlib", path: "Tests/CZlib", providers: [.apt(["zlib1g-dev"])]),
        .testTarget(name: "SomniCLITests", dependencies: ["somni", "somni-engine-example", "SomniCore", "SomniAudio", "SomniStore"]),
    ]
)
