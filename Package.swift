// swift-tools-version:6.1
import PackageDescription

/// Every target is compiled with the same strictness: Swift 6 language mode (set by the tools version),
/// explicit `any` for existentials and imports that must name the module a member comes from.
let strictness: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "skirmish",
    products: [
        .executable(name: "skirmish", targets: ["skirmish"]),
        .library(name: "SkirmishWire", targets: ["SkirmishWire"]),
        .library(name: "SkirmishGames", targets: ["SkirmishGames"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
    ],
    targets: [
        .target(name: "SkirmishWire"),
        .target(name: "SkirmishGames", dependencies: ["SkirmishWire"]),
        .target(
            name: "SkirmishNet",
            dependencies: [
                "SkirmishWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .target(name: "SkirmishServer", dependencies: ["SkirmishWire", "SkirmishGames", "SkirmishNet"]),
        .target(name: "SkirmishSwarm", dependencies: ["SkirmishWire", .product(name: "Yams", package: "Yams")]),
        // Counts heap allocations per thread for `skirmish bench`; linked into the executable only.
        .target(name: "CAllocCounter"),
        .executableTarget(
            name: "skirmish",
            dependencies: [
                "SkirmishWire",
                "SkirmishNet",
                "SkirmishServer",
                "SkirmishSwarm",
                "CAllocCounter",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "SkirmishWireTests", dependencies: ["SkirmishWire"]),
        .testTarget(name: "SkirmishGamesTests", dependencies: ["SkirmishGames", "SkirmishWire"]),
        .testTarget(
            name: "SkirmishServerTests",
            dependencies: ["SkirmishServer", "SkirmishWire", "SkirmishGames", "SkirmishNet"]),
        .testTarget(name: "SkirmishNetTests", dependencies: ["SkirmishNet", "SkirmishWire"]),
        .testTarget(name: "SkirmishSwarmTests", dependencies: ["SkirmishSwarm", "SkirmishWire"]),
    ]
)

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + strictness
}
