import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishENet

/// Disconnects both ways, now, later and with data.
@Suite struct DisconnectTests {
    /// `disconnect(data:)`: a reliable DISCONNECT with the data; the server's acknowledgement ends the connection.
    @Test func disconnectWithData() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<ENetRawCodec>.Configuration(), model: &model)
        let sent = harness.disconnect(data: 0xC0FFEE)
        let disconnect = try #require(sent.flatMap { commands(in: $0) }.first { $0.header.number == .disconnect })
        #expect(disconnect.header.acknowledge && disconnect.command == .disconnect(data: 0xC0FFEE))
        #expect(harness.closed == nil)
        for datagram in sent { model.receive(datagram, now: harness.now) }
        #expect(model.disconnectData == 0xC0FFEE)
        for datagram in model.flush(now: harness.now) { _ = harness.receive(datagram) }
        let reason = try #require(harness.closed)
        #expect(reason.kind == "local" && reason.code == 0xC0FFEE)
        #expect(harness.connection.nextDeadline == .distantFuture)
    }

    /// `disconnectLater`: queued reliable packets are sent and acknowledged first, then the disconnect goes out;
    /// nothing more can be sent meanwhile.
    @Test func disconnectLaterDrainsFirst() throws {
        var simulation = Simulation(
            client: Harness(ENetConnection<ENetRawCodec>.Configuration()), seed: 4, loss: 0.2)
        simulation.start()
        #expect(simulation.run(for: .seconds(30)) { $0.client.established != nil && $0.server.connected })
        for number in 0..<20 { simulation.send(packet(0, .reliable, [UInt8(number)])) }
        simulation.up.send(simulation.client.disconnectLater(data: 5), now: simulation.client.now)
        simulation.send(packet(0, .reliable, [99]))
        #expect(simulation.client.errors["send_not_connected"] == 1)
        #expect(simulation.run(for: .seconds(30)) { $0.client.closed != nil })
        #expect(simulation.server.delivered.map(\.bytes) == (0..<20).map { [UInt8($0)] })
        #expect(
            simulation.server.disconnectData == 5
                || simulation.client.closed?.detail.contains("did not acknowledge") == true)
        #expect(simulation.client.closed?.code == 5)
    }

    /// The server disconnects with data: the client acknowledges, and the data reaches the agent in the close
    /// reason (`closed_by_server`, ``CloseReason/code``).
    @Test func serverDisconnectsWithData() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<ENetRawCodec>.Configuration(), model: &model)
        model.disconnect(data: 77)
        let replies = model.flush(now: harness.now).flatMap { harness.receive($0) }
        let reason = try #require(harness.closed)
        #expect(reason.kind == "closed_by_server" && reason.code == 77 && !reason.isOutage)
        let acknowledgement = try #require(replies.flatMap { commands(in: $0) }.first)
        #expect(acknowledgement.header.number == .acknowledge && acknowledgement.header.channelID == 0xFF)
        for datagram in replies { model.receive(datagram, now: harness.now) }
        #expect(model.isIdle)
    }

    /// `close`: an unacknowledged, unsequenced DISCONNECT, and no event (the caller knows).
    @Test func closeSendsDisconnectNow() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<ENetRawCodec>.Configuration(), model: &model)
        let sent = harness.close()
        let disconnect = try #require(sent.flatMap { commands(in: $0) }.first)
        #expect(
            disconnect.header.number == .disconnect && disconnect.header.unsequenced && !disconnect.header.acknowledge)
        #expect(harness.closed == nil && harness.connection.nextDeadline == .distantFuture)
        #expect(harness.tick().isEmpty)
    }

    /// A server that disconnects during the handshake refuses the connection.
    @Test func refusedDuringHandshake() throws {
        var harness = Harness(ENetConnection<ENetRawCodec>.Configuration())
        _ = harness.start()
        let disconnect = CommandHeader(.disconnect, channelID: 0xFF, reliableSequenceNumber: 1, unsequenced: true)
        _ = harness.receive(datagram(sentTime: nil, [(disconnect, .disconnect(data: 3), [])]))
        #expect(harness.closed?.kind == "refused_by_server" && harness.closed?.code == 3)
    }
}
