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

            Start here:
              skirmish swarm bots/quickstart.yaml   30 s of mixed bots, embedded server
              skirmish swarm bots/puck-ladder.yaml --target udp://host:4000
              skirmish serve                        the reference server on loopback
              skirmish practice                     play Puck against the AI in a browser
              skirmish ai-eval --quick              how well the AI plays across latency
              skirmish soak bots/soak.yaml          a nightly run with health checks
              skirmish compare base.json new.json   did a run regress against a baseline?
              skirmish merge results/nightly-0412   one summary and verdict for a sharded run
              skirmish conformance --target udp://host:4000   does a server keep the protocol's rules?
              skirmish bench codec                  what this machine can do
            """,
        version: Version.text,
        subcommands: [
            SwarmCommand.self, SoakCommand.self, Serve.self, PracticeCommand.self, AIEvalCommand.self,
            ReportCommand.self, CompareCommand.self, MergeCommand.self, ConformanceCommand.self, Bench.self,
        ]
    )
}
