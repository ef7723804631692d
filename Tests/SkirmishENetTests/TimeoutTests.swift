import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishENet

/// libenet's timeouts with injected time: unacknowledged reliable commands double their timeout, and the peer is
/// given up after `timeoutMaximum`, or after `timeoutMinimum` once a timeout reached its limit.
@Suite struct TimeoutTests {
    /// Connected, past the bandwidth limit sent a second in, with every acknowledgement in: a 1 ms round trip, so
    /// resend timeouts start at 1 + 4 × 1 = 5 ms and their limit is `timeoutLimit` × 5 ms.
    static func quiet(_ configuration: ENetConnection<ENetRawCodec>.Configuration) -> Harness<ENetRawCodec> {
        var model = ServerModel()
        var harness = connected(configuration, model: &model)
        for datagram in model.flush(now: harness.now) { _ = harness.receive(datagram) }
        harness.advance(.seconds(1))
        for datagram in harness.tick() { model.receive(datagram, now: harness.now) }
        for datagram in model.flush(now: harness.now) { _ = harness.receive(datagram) }
        precondition(harness.connection.sentReliable.isEmpty && harness.connection.roundTrip.retransmissionTimeout == 5)
        return harness
    }

    /// Ticks at every deadline until the connection closes; returns when its reliable packet went out, from now.
    static func resends(_ harness: inout Harness<ENetRawCodec>) -> [Duration] {
        let start = harness.now
        var sends: [Duration] = []
        for _ in 0..<100 where harness.closed == nil {
            harness.now = harness.connection.nextDeadline
            let data = harness.tick().flatMap { commands(in: $0) }.contains { $0.header.number == .sendReliable }
            if data { sends.append(harness.now - start) }
        }
        return sends
    }

    @Test func silentServerIsGivenUp() throws {
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.timeoutMinimum = .seconds(1)
        configuration.timeoutMaximum = .seconds(4)
        var harness = Self.quiet(configuration)
        #expect(harness.connection.roundTrip.retransmissionTimeout == 5)
        // The server goes away: nothing comes back.
        _ = harness.send(packet(0, .reliable, [1]))
        let start = harness.now
        let sends = Self.resends(&harness)
        let reason = try #require(harness.closed)
        #expect(reason.kind == "silence_timeout" && reason.isOutage)
        // Doubling from 5 ms; at 315 ms the timeout reached its limit (160 ms), but only after `timeoutMinimum`
        // (1 s) since the first timeout is the peer given up: at the check after it, 1275 ms.
        #expect(sends == [5, 15, 35, 75, 155, 315, 635].map { Duration.milliseconds($0) })
        #expect(harness.now - start == .milliseconds(1275))
    }

    /// Without the limit, `timeoutMaximum` alone gives the peer up.
    @Test func timeoutMaximumGivesUp() throws {
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.timeoutLimit = 1_000_000
        configuration.timeoutMaximum = .seconds(2)
        var harness = Self.quiet(configuration)
        _ = harness.send(packet(0, .reliable, [1]))
        let start = harness.now
        let sends = Self.resends(&harness)
        #expect(sends == [5, 15, 35, 75, 155, 315, 635, 1275].map { Duration.milliseconds($0) })
        #expect(harness.closed?.kind == "silence_timeout")
        #expect(harness.now - start == .milliseconds(2555))
    }

    /// The limit: a timeout that reached `timeoutLimit` × the first, with `timeoutMinimum` passed, ends it early.
    @Test func timeoutLimitEndsEarly() throws {
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.timeoutLimit = 2
        configuration.timeoutMinimum = .milliseconds(100)
        var harness = Self.quiet(configuration)
        _ = harness.send(packet(0, .reliable, [1]))
        let start = harness.now
        let sends = Self.resends(&harness)
        // Limit 2 × 5 ms: reached at the second resend, but the peer is given up only at the first check past
        // 100 ms.
        #expect(sends == [5, 15, 35, 75].map { Duration.milliseconds($0) })
        #expect(harness.closed?.kind == "silence_timeout")
        #expect(harness.now - start == .milliseconds(155))
    }

    /// An idle connected client pings after `pingInterval` without an acknowledgement, and a server that answers
    /// keeps it alive indefinitely.
    @Test func pingsKeepItAlive() throws {
        var simulation = Simulation(client: Harness(ENetConnection<ENetRawCodec>.Configuration()), seed: 2)
        simulation.start()
        #expect(simulation.run(for: .seconds(5)) { $0.client.established != nil })
        _ = simulation.run(for: .seconds(60)) { $0.client.closed != nil }
        #expect(simulation.client.closed == nil)
        // And one that stops answering is given up within libenet's 30 s maximum (plus the last doubling).
        simulation.server.acknowledges = false
        let stopped = simulation.client.now
        #expect(simulation.run(for: .seconds(40)) { $0.client.closed != nil })
        #expect(simulation.client.closed?.kind == "silence_timeout")
        #expect(simulation.client.now - stopped <= .seconds(35))
    }
}
