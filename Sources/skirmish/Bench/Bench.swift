import ArgumentParser

/// `skirmish bench …`: what can this machine drive?
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure what this machine can drive, one component at a time.",
        discussion: """
            Each benchmark prints times, ratios and heap allocations per operation, so a regression shows up as \
            a number rather than a feeling. Run them on an otherwise idle machine; build with `-c release` \
            (`make bench` does) or the figures describe the debug build.
            """,
        subcommands: [
            CodecBench.self, ExportBench.self, SwarmBench.self, GamesBench.self, NetBench.self, ServerBench.self,
            OpponentBench.self, ENetBench.self,
        ]
    )
}
