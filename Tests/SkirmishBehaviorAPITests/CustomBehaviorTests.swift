import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire
import Testing

/// A behaviour written outside the library, registered, named in a script and run in a swarm against the real
/// reference server on loopback — through the public API alone, as a user's own package would.
@Suite(.serialized) struct CustomBehaviorTests {
    /// Scripts as a program that registered the mirror loads them.
    static func loader() -> ScriptLoader {
        Catalogue.withMirror(tally: MirrorTally()).scriptLoader
    }

    /// Four mirrors 80 px up from their goal line and four chasers, for nine seconds. Personas are dealt alternately
    /// and bots arrive 125 ms apart, so each mirror meets a chaser, which moves the puck for it to follow. The checks
    /// below ask for two seconds of play each: the rest is room for a machine so busy that handshakes and ticks run
    /// late.
    static let script = """
        name: mirror-test
        profile: [{ramp: {to: 8, over: 1s}}, {hold: {for: 8s}}]
        personas:
          - {name: mirror, weight: 1, game: puck, behavior: mirror, input_rate: 30hz, depth: 80}
          - {name: chaser, weight: 1, game: puck, behavior: chaser, input_rate: 30hz}
        thresholds: {desyncs: "== 0"}
        """

    @Test func aRegisteredBehaviourIsSeatedPlaysAndIsMeasured() async throws {
        let tally = MirrorTally()
        let script = try Self.loader().parse(Self.script, file: "mirror.yaml")
        #expect(script.personas.map(\.behavior.rawValue) == ["mirror", "chaser"])
        let plan = try LoadPlan(script: script)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ReferenceServer.start(configuration: ServerConfiguration(), group: group)
        let port = try #require(server.addresses.udp?.port)
        var configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: 11,
            // One client loop: with two, bot n runs on loop n % 2, so one loop holds every mirror and the other every
            // chaser, and a loop that falls behind on a busy machine pairs mirrors with mirrors.
            runID: "mirror-test", loops: 1)
        configuration.catalogue = Catalogue.withMirror(tally: tally)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let outcome = await swarm.run()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "mirror.yaml", startedAt: Date(), exporter: nil)

        // The inputs still in flight when the swarm stopped reach the server within moments on loopback.
        let mirrorOnly = ["persona": "mirror"]
        let inputs = ["type": "PaddleState"]
        let sent = outcome.snapshot.counterTotal(SkirmishMetrics.packetsSent, where: inputs)
        var serverMetrics = try await server.metricsSnapshot()
        let deadline = ContinuousClock.now + .seconds(5)
        while serverMetrics.counterTotal(SkirmishMetrics.serverPacketsReceived, where: inputs) < sent,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
            serverMetrics = try await server.metricsSnapshot()
        }
        await server.shutdown()
        try await group.shutdownGracefully()

        let mirrors = try #require(summary.personas.first { $0.name == "mirror" }?.peakBots)
        #expect(mirrors == 4)
        // Every mirror was seated and played: the server applied its inputs (it echoes the last one in snapshots).
        #expect(tally[.seated] >= mirrors)
        #expect(tally[.inputsApplied] >= mirrors)
        #expect(outcome.snapshot.counterTotal(SkirmishMetrics.matchesStarted, where: mirrorOnly) >= UInt64(mirrors))
        // About 30 snapshots a second for at least two seconds of play each (eight are planned).
        let playing = tally[.playingSnapshots]
        #expect(playing >= mirrors * 30 * 2, "\(playing) playing snapshots")
        #expect(tally[.snapshots] >= playing)
        // It does what it says: its paddle follows the puck along its goal line, off the centre line too.
        let offCentre = tally[.offCentre]
        let shadowing = tally[.shadowing]
        #expect(offCentre >= 30, "the puck was off the centre line in \(offCentre) snapshots")
        #expect(Double(shadowing) >= 0.6 * Double(offCentre), "shadowing in \(shadowing) of \(offCentre) snapshots")
        // On the line its own script option set, not on its goal line: the option reached the agent.
        let atDepth = tally[.atDepth]
        #expect(Double(atDepth) >= 0.7 * Double(playing), "at depth in \(atDepth) of \(playing) playing snapshots")
        #expect(tally.deepest == 80, "the paddles stood at most \(tally.deepest) px up")

        let mirrorInputs = outcome.snapshot.counterTotal(
            SkirmishMetrics.packetsSent, where: ["persona": "mirror", "type": "PaddleState"])
        #expect(mirrorInputs >= UInt64(mirrors * 30 * 2))
        // The server counted (nearly) every input the swarm sent; a debug build on a busy machine may lose a few
        // datagrams to a full receive buffer, never more than it was sent.
        let received = serverMetrics.counterTotal(SkirmishMetrics.serverPacketsReceived, where: inputs)
        #expect(received <= sent)
        #expect(Double(received) >= 0.9 * Double(sent), "server received \(received) of \(sent) inputs")

        #expect(summary.desyncs == 0)
        #expect(summary.personas.first { $0.name == "mirror" }?.desyncs == 0)
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.handshakes.failed == 0)
        #expect(summary.passed)
    }

    @Test func anUnregisteredBehaviourIsAScriptErrorListingTheChoices() throws {
        let yaml = """
            name: typo
            personas: [{name: p, game: puck, behavior: mirorr}]
            """
        let error = try #require(throws: ScriptError.self) { try Self.loader().parse(yaml, file: "typo.yaml") }
        #expect(error.file == "typo.yaml")
        #expect(error.line == 2)
        #expect(error.message.contains("`mirorr`"), "\(error)")
        let hint = try #require(error.hint)
        #expect(hint.contains("did you mean `mirror`?"), "\(hint)")
        for choice in ["mirror", "chaser", "snap-player"] { #expect(hint.contains(choice), "\(hint)") }
    }

    @Test func aBehaviourRegisteredForPuckCannotPlaySnap() throws {
        let yaml = """
            name: wrong-game
            personas:
              - {name: p, game: snap, behavior: mirror}
            """
        let error = try #require(throws: ScriptError.self) { try Self.loader().parse(yaml, file: "wrong.yaml") }
        #expect(error.line == 3)
        #expect(error.message == "behavior `mirror` cannot play snap", "\(error)")
        #expect(error.hint == "it plays puck")
        // The same script without the registration does not know the name at all.
        #expect(throws: ScriptError.self) { try Catalogue.builtIn.scriptLoader.parse(yaml, file: "wrong.yaml") }
    }

    @Test func aCustomBehaviourWithoutAGameTakesTheOneItIsRegisteredFor() throws {
        let script = try Self.loader().parse(
            "name: inferred\npersonas: [{name: p, behavior: mirror}]\n", file: "inferred.yaml")
        #expect(script.personas.first?.game == .puck)
        #expect(script.personas.first?.behavior == BehaviorName(rawValue: "mirror"))
    }
}
