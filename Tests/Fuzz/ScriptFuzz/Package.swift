// swift-tools-version:6.1
import PackageDescription

/// A fuzz-only package, never a dependency of anything: the main package's script loader (SkirmishScript, with Yams)
/// and the vocabulary the `skirmish` command loads scripts with (SNAP's, ENet's and DDNet's options and behaviours,
/// from SkirmishSwarm's catalogue and the two plug-ins) as one libFuzzer executable. Build it with
/// `swift build --package-path Tests/Fuzz/ScriptFuzz --sanitize fuzzer --sanitize address`, which instruments every
/// target it builds — the loader, Yams and its C parser included — so coverage guides the fuzzer through the YAML
/// parser as well as the loader. `make fuzz` does this. The main package's library targets stay free of unsafe flags.
let package = Package(
    name: "ScriptFuzz",
    dependencies: [
        .package(name: "skirmish", path: "../../..")
    ],
    targets: [
        .executableTarget(
            name: "ScriptFuzz",
            dependencies: [
                .product(name: "SkirmishScript", package: "skirmish"),
                .product(name: "SkirmishSwarm", package: "skirmish"),
                .product(name: "SkirmishENet", package: "skirmish"),
                .product(name: "SkirmishDDNet", package: "skirmish"),
            ],
            path: "Sources/ScriptFuzz",
            // libFuzzer supplies `main`; the entry point is LLVMFuzzerTestOneInput.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ]
)
