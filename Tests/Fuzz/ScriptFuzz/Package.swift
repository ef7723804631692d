// swift-tools-version:6.1
import PackageDescription

/// A fuzz-only package, never a dependency of anything: the swarm-script loader's module (the main package's
/// `SkirmishScript` target, whose folder is linked in, as those of the modules it builds on are) with Yams, as one libFuzzer executable. Build it with
/// `swift build --package-path Tests/Fuzz/ScriptFuzz -c release --sanitize fuzzer --sanitize address`, which
/// instruments every target — Yams and its C parser included — so coverage guides the fuzzer through the YAML parser
/// as well as the loader. `make fuzz` does this. The main package's library targets stay free of unsafe flags.
let package = Package(
    name: "ScriptFuzz",
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2")
    ],
    targets: [
        .target(name: "SkirmishWire", path: "Sources/SkirmishWire", exclude: ["Documentation.docc"]),
        .target(
            name: "SkirmishGames", dependencies: ["SkirmishWire"], path: "Sources/SkirmishGames",
            exclude: ["Documentation.docc"]),
        .target(
            name: "SkirmishOpponent", dependencies: ["SkirmishWire", "SkirmishGames"], path: "Sources/SkirmishOpponent",
            exclude: ["Documentation.docc"]),
        .target(
            name: "SkirmishScript",
            dependencies: ["SkirmishWire", "SkirmishOpponent", .product(name: "Yams", package: "Yams")],
            path: "Sources/SkirmishScript", exclude: ["Documentation.docc"]),
        .executableTarget(
            name: "ScriptFuzz",
            dependencies: ["SkirmishScript"],
            path: "Sources/ScriptFuzz",
            // libFuzzer supplies `main`; the entry point is LLVMFuzzerTestOneInput.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
