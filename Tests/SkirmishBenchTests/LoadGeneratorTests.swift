import NIOConcurrencyHelpers
import NIOPosix
import SkirmishServer
import SkirmishWire
import Testing

@testable import SkirmishBench

/// The load generator against the real reference server on loopback: a few clients, a bounded few seconds.
@Suite struct LoadGeneratorTests {
    /// Every client seated, its inputs and snapshots counted, and the protocol spoken as the server wants it: each
    /// Welcome acknowledged before the server resent it, and every datagram after it sealed with the session key.
    @Test func seatsEveryClientAndCountsInputsAndSnapshots() async throws {
        let clients = 4
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let generatorGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = ServerConfiguration()
        configuration.tcp = nil
        configuration.http = nil
        // A Welcome whose ack never came is resent after 1 s (not 200 ms), and the clients play for more than 1 s
        // after the last Welcome: a missing or wrong ack shows as a resend, a thread the busy machine held up for a
        // moment does not.
        configuration.reliability.initialRTO = .seconds(1)
        let server = try await ReferenceServer.start(configuration: configuration, group: serverGroup)
        let port = try #require(server.addresses.udp?.port)
        let control = NIOLockedValueBox(LoadGenerator.Control())
        let report = generatorGroup.next().submit {
            LoadGenerator(serverPort: port, clients: clients, inputRate: 30, control: control).run()
        }

        // Every client welcomed (polled, with a deadline generous for a busy machine).
        let seated = await poll(within: .seconds(30)) {
            control.withLockedValue { $0.welcomed + $0.failed } >= clients
        }
        // Record until the server has decoded another 2 s worth of inputs from every client, then stop.
        let warmedUp = try await server.stats().packetsReceived[MessageType.paddleState.index]
        control.withLockedValue { $0.recording = true }
        let played = await poll(within: .seconds(30)) {
            let stats = try? await server.stats()
            return (stats?.packetsReceived[MessageType.paddleState.index] ?? 0) >= warmedUp + UInt64(60 * clients)
        }
        control.withLockedValue {
            $0.recording = false
            $0.stop = true
        }
        let generated = try await report.get()
        let final = try await server.stats()
        let decoded = final.packetsReceived[MessageType.paddleState.index]
        await server.shutdown()
        try await generatorGroup.shutdownGracefully()
        try await serverGroup.shutdownGracefully()

        #expect(seated)
        #expect(played)
        #expect(control.withLockedValue { ($0.welcomed, $0.failed) } == (clients, 0))
        #expect(generated.error == nil)
        #expect(generated.closed == 0)
        #expect(generated.sendDrops == 0)
        // The server decoded no more inputs than the kernel took from the generator, and at least the ones waited for.
        #expect(decoded >= warmedUp + UInt64(60 * clients))
        #expect(decoded <= UInt64(generated.inputsAccepted))
        #expect(generated.inputsSent > 0)
        #expect(generated.inputsSent <= generated.inputsAccepted)
        // Snapshots came back to every client, and those counted in the window are the samples marked so.
        #expect(Set(generated.samples.map(\.client)) == Set(0..<UInt32(clients)))
        #expect(generated.snapshotsInWindow > 0)
        #expect(generated.snapshotsInWindow == generated.samples.filter(\.inWindow).count)
        #expect(generated.windowNanoseconds > 0)
        // 30 snapshots a second per client: the window cannot hold many more than that.
        let windowSeconds = Double(generated.windowNanoseconds) / 1e9
        #expect(Double(generated.snapshotsInWindow) <= Double(clients) * 30 * (windowSeconds + 0.5) + 8)
        // The protocol, as the plug-in speaks it: one Welcome per client (acknowledged, so never resent), one Ack
        // each (the Welcome is a Puck client's only reliable packet), and no datagram the server could not verify
        // or whose Ack named a packet it never sent.
        #expect(final.packetsSent[MessageType.welcome.index] == UInt64(clients))
        #expect(final.packetsReceived[MessageType.ack.index] == UInt64(clients))
        #expect(final.rejections(.badMAC) == 0)
        #expect(final.rejections(.unsentAck) == 0)
        #expect(generated.packetsInWindow > 0)
    }

    private func poll(within limit: Duration, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return await condition()
    }
}
