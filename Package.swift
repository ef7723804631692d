// swift-tools-version:6.1
import PackageDescription

/// Every target is compiled with the same strictness: Swift 6 language mode (set by the tools version),
/// explicit `any` for existentials and imports that must name the module a member comes from.
let strictness: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]
let testStrictness: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "skirmish",
    products: [
        .executable(name: "skirmish", targets: ["skirmish"]),
        .library(name: "SkirmishWire", targets: ["SkirmishWire"]),
        .library(name: "SkirmishGames", targets: ["SkirmishGames"]),
        .library(name: "SkirmishOpponent", targets: ["SkirmishOpponent"]),
        // What a program needs to run swarms with behaviours of its own (DocC: "Writing a behaviour"): the runtime
        // and its scripts, the `Target` it connects to, the metrics it reports and the in-process reference server.
        .library(name: "SkirmishSwarm", targets: ["SkirmishSwarm"]),
        // Swarm scripts alone: the model and the YAML loader with its located errors (also what the fuzzer links).
        .library(name: "SkirmishScript", targets: ["SkirmishScript"]),
        .library(name: "SkirmishNet", targets: ["SkirmishNet"]),
        .library(name: "SkirmishTelemetry", targets: ["SkirmishTelemetry"]),
        .library(name: "SkirmishServer", targets: ["SkirmishServer"]),
        // `skirmish conformance` as a library: a team's own test suite can run the checks against its server.
        .library(name: "SkirmishConformance", targets: ["SkirmishConformance"]),
        // Protocol plug-ins (DESIGN §11), each built on the runtime's public API alone, as a user's own would be.
        .library(name: "SkirmishENet", targets: ["SkirmishENet"]),
        .library(name: "SkirmishDDNet", targets: ["SkirmishDDNet"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // Structured logs for operators (issue 17): one `Logger` value passed to every long-lived component.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // One lifecycle (issue 17): each command's long-lived parts are `Service`s in one `ServiceGroup`.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(name: "SkirmishWire"),
        .target(name: "SkirmishGames", dependencies: ["SkirmishWire"]),
        .target(name: "SkirmishOpponent", dependencies: ["SkirmishWire", "SkirmishGames"]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CJSONC", pkgConfig: "json-c", providers: [.apt(["libjson-c-dev"])]),
        .target(
            name: "SkirmishTelemetry",
            dependencies: [
                "CCurl", "CJSONC", .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // epoll and eventfd for the client loop, which Swift's Glibc module does not export.
        .target(name: "CClientIO"),
        .target(
            name: "SkirmishNet",
            dependencies: [
                "SkirmishWire",
                "CClientIO",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .target(
            name: "SkirmishServer",
            dependencies: [
                "SkirmishWire", "SkirmishGames", "SkirmishNet", "SkirmishTelemetry",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The practice page, compiled in (`PackageResources.play_html`): no bundle lookup that can fail.
            resources: [.embedInCode("Practice/play.html")]
        ),
        // `skirmish practice`: AI opponents per page and the page's match route.
        .target(
            name: "SkirmishPractice",
            dependencies: [
                "SkirmishWire", "SkirmishGames", "SkirmishNet", "SkirmishServer", "SkirmishOpponent", "SkirmishSwarm",
                "SkirmishScript", "SkirmishTelemetry", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The swarm-script model and its YAML loader; Sources/SkirmishScript is also the fuzz package's target. A
        // persona's `difficulty:` is the opponent's own preset type, hence SkirmishOpponent.
        .target(
            name: "SkirmishScript",
            dependencies: ["SkirmishWire", "SkirmishOpponent", .product(name: "Yams", package: "Yams")]),
        .target(
            name: "SkirmishSwarm",
            dependencies: [
                "SkirmishWire", "SkirmishScript", "SkirmishGames", "SkirmishNet", "SkirmishOpponent",
                "SkirmishTelemetry",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `skirmish ai-eval`'s method: seeded shots and matches against the reference server over emulated links,
        // the AI's measurements (saves, intercept and prediction errors, decisions), intervals and the report.
        .target(
            name: "SkirmishEvaluation",
            dependencies: [
                "SkirmishWire", "SkirmishGames", "SkirmishNet", "SkirmishServer", "SkirmishOpponent", "SkirmishSwarm",
                "SkirmishScript", "SkirmishTelemetry", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `skirmish bench`'s harness, load generator, HTTP client, Prometheus parser and benchmarks. It does not link
        // CAllocCounter: the executable passes its allocation counter in (`BenchEnvironment`).
        .target(
            name: "SkirmishBench",
            dependencies: [
                "SkirmishWire", "SkirmishGames", "SkirmishNet", "SkirmishServer", "SkirmishOpponent", "SkirmishSwarm",
                "SkirmishScript", "SkirmishTelemetry", "SkirmishDDNet", "SkirmishENet",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // How a command's long-lived parts run: each a `Service` (server, swarm, exporter, /metrics, practice lobby,
        // soak watch) in one `ServiceGroup` that owns SIGINT/SIGTERM, the start and stop order and the final steps.
        .target(
            name: "SkirmishRun",
            dependencies: [
                "SkirmishWire", "SkirmishNet", "SkirmishServer", "SkirmishSwarm", "SkirmishScript", "SkirmishTelemetry",
                "SkirmishPractice", "SkirmishDDNet", "SkirmishENet",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // `skirmish conformance`: the protocol's rules checked over the wire against any server, on the client
        // runtime (sessions, link emulation) plus one raw probe for the bytes a well-behaved client never sends.
        .target(
            name: "SkirmishConformance",
            dependencies: [
                "SkirmishWire", "SkirmishGames", "SkirmishNet",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        // ENet 1.3 (the reliable UDP under Godot, Cube 2 and many indie servers) as a protocol plug-in: codec,
        // connection machine, script options and behaviours, composable with a user's own message codec. Built on the
        // runtime's public API alone (no `package` access), exactly as a user's own plug-in would be.
        .target(
            name: "SkirmishENet", dependencies: ["SkirmishNet", "SkirmishWire", "SkirmishSwarm", "SkirmishScript"],
            packageAccess: false),
        // The Teeworlds 0.6 protocol with DDNet's extensions, as DDNet servers speak it: codec, snapshots, connection
        // machine, behaviours and their registration in a `Catalogue`. Without package access, so it builds on the
        // runtime's public API alone, exactly as a user's own plug-in would.
        .target(
            name: "SkirmishDDNet", dependencies: ["SkirmishNet", "SkirmishWire", "SkirmishSwarm", "SkirmishScript"],
            packageAccess: false),
        // Counts heap allocations per thread for `skirmish bench`; linked into the executable only.
        .target(name: "CAllocCounter"),
        .executableTarget(
            name: "skirmish",
            dependencies: [
                "SkirmishWire",
                "SkirmishNet",
                "SkirmishServer",
                "SkirmishSwarm",
                "SkirmishScript",
                "SkirmishTelemetry",
                "SkirmishOpponent",
                "SkirmishPractice",
                "SkirmishEvaluation",
                "SkirmishGames",
                "SkirmishBench",
                "SkirmishRun",
                "SkirmishConformance",
                "CAllocCounter",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // What several test targets share: a loopback collector stand-in that records pushes, the readers of the byte
        // vectors and code blocks of the DocC articles, and the trait that keeps blocking tests off the cooperative
        // pool (not a product).
        .target(name: "SkirmishTestSupport", path: "Tests/Support"),
        .testTarget(name: "SkirmishWireTests", dependencies: ["SkirmishWire", "SkirmishTestSupport"]),
        .testTarget(
            name: "SkirmishGamesTests", dependencies: ["SkirmishGames", "SkirmishWire", "SkirmishTestSupport"]),
        .testTarget(
            name: "SkirmishServerTests",
            dependencies: [
                "SkirmishServer", "SkirmishWire", "SkirmishGames", "SkirmishNet", "SkirmishTelemetry",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "SkirmishNetTests",
            dependencies: [
                "SkirmishNet", "SkirmishWire", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]),
        // Scripts as the product loads them: SNAP's catalogue decodes the protocol's and the behaviours' keys.
        .testTarget(
            name: "SkirmishScriptTests",
            dependencies: ["SkirmishScript", "SkirmishWire", "SkirmishSwarm", "SkirmishNet", "SkirmishOpponent"]),
        .testTarget(
            name: "SkirmishEvaluationTests",
            dependencies: [
                "SkirmishEvaluation", "SkirmishGames", "SkirmishOpponent", "SkirmishWire", "SkirmishTestSupport",
            ]),
        .testTarget(
            name: "SkirmishSwarmTests",
            dependencies: [
                "SkirmishTestSupport", "SkirmishSwarm", "SkirmishScript", "SkirmishWire", "SkirmishServer",
                "SkirmishNet",
                "SkirmishTelemetry", "SkirmishOpponent", "SkirmishGames",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A user's own package in miniature: a custom behaviour written against the public API only (no `@testable`,
        // and no `package` access either), run in a swarm against the in-process reference server.
        .testTarget(
            name: "SkirmishBehaviorAPITests",
            dependencies: [
                "SkirmishSwarm", "SkirmishScript", "SkirmishWire", "SkirmishGames", "SkirmishNet", "SkirmishServer",
                "SkirmishTelemetry", "SkirmishTestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            packageAccess: false
        ),
        .testTarget(
            name: "SkirmishTelemetryTests",
            dependencies: [
                "SkirmishTelemetry", "SkirmishTestSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "SkirmishBenchTests",
            dependencies: [
                "SkirmishBench", "SkirmishServer", "SkirmishWire", "SkirmishNet", "SkirmishTelemetry",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "SkirmishRunTests",
            dependencies: [
                "SkirmishTestSupport", "SkirmishRun", "SkirmishServer", "SkirmishSwarm", "SkirmishScript",
                "SkirmishTelemetry", "SkirmishNet", "SkirmishWire",
                "SkirmishPractice", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A user's own protocol in miniature: a plug-in, behaviours, a catalogue and a server for it written in the test,
        // run in a swarm over UDP and TCP and checked against the server's own counts — public API only.
        .testTarget(
            name: "SkirmishProtocolAPITests",
            dependencies: [
                "SkirmishNet", "SkirmishSwarm", "SkirmishScript", "SkirmishWire", "SkirmishTelemetry",
                "SkirmishTestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            packageAccess: false
        ),
        // A fourth game in miniature, as a user's own package would add one: rules, registration with the server and
        // the swarm, a behaviour, played through the real server and a swarm — public API only.
        .testTarget(
            name: "SkirmishGamePluginTests",
            dependencies: [
                "SkirmishSwarm", "SkirmishScript", "SkirmishWire", "SkirmishGames", "SkirmishServer",
                "SkirmishTelemetry", "SkirmishNet", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            packageAccess: false
        ),
        // The conformance suite against the real server on every transport, and against a fault-injecting proxy
        // that breaks one rule at a time (each check shown able to fail).
        .testTarget(
            name: "SkirmishConformanceTests",
            dependencies: [
                "SkirmishConformance", "SkirmishGames", "SkirmishServer", "SkirmishNet", "SkirmishWire",
                "SkirmishTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The ENet plug-in alone (no sockets), against a libenet server the tests build and start on loopback, and as
        // swarms against that server; its C source (Peer/) is compiled by the tests with gcc, not by SwiftPM.
        .testTarget(
            name: "SkirmishENetTests",
            dependencies: [
                "SkirmishENet", "SkirmishNet", "SkirmishWire", "SkirmishSwarm", "SkirmishScript", "SkirmishTelemetry",
                "SkirmishTestSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Peer"]),
        // The DDNet plug-in alone (no sockets), and its connections and swarms against Debian's DDNet-Server started
        // on loopback.
        .testTarget(
            name: "SkirmishDDNetTests",
            dependencies: [
                "SkirmishDDNet", "SkirmishNet", "SkirmishWire", "SkirmishSwarm", "SkirmishScript", "SkirmishTelemetry",
                "SkirmishTestSupport", .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        .testTarget(
            name: "SkirmishOpponentTests",
            dependencies: ["SkirmishOpponent", "SkirmishGames", "SkirmishWire", "SkirmishTestSupport"]),
        .testTarget(
            name: "SkirmishPracticeTests",
            dependencies: [
                "SkirmishPractice", "SkirmishServer", "SkirmishNet", "SkirmishWire", "SkirmishOpponent",
                "SkirmishTestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
    ]
)

// Test targets, their support and the bench keep ExistentialAny but not MemberImportVisibility: with it, the compiler attributes the
// members of C structs such as `sockaddr_in` to whichever Clang module first loaded the system header (NIO's CNIOLinux
// in some build orders), so code that fills socket addresses itself (test helpers, the bench's load generator and
// HTTP client) failed to build or not depending on the module cache.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? [])
        + (target.type == .test || ["SkirmishBench", "SkirmishTestSupport"].contains(target.name)
            ? testStrictness : strictness)
}
