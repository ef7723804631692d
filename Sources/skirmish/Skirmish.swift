import ArgumentParser

/// The `skirmish` command: swarms of bots, a reference server, AI opponents and benchmarks, from one binary.
@main
struct Skirmish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skirmish",
        abstract: "Bot swarms, AI opponents and metrics for real-time multiplayer game servers.",
        discussion: """
            Skirmish drives scripted bots through a game server's real wire protocol (UDP, TCP or WebSocket) \
            and measures what players would feel: round trips, snapshot age, loss, resends and desyncs.

            Start with `skirmish bench codec` to see what this machine can do.
            """,
        subcommands: [Bench.self]
    )
}
