import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishENet

/// The connect request byte for byte as protocol.h lays it out, the verify-connect's negotiation, and how a
/// handshake fails.
@Suite struct HandshakeTests {
    /// enet_host_connect's request with libenet's defaults: peer id 0xFFF with the sent-time flag, CONNECT with the
    /// acknowledge flag on the control channel, then `ENetProtocolConnect`'s fields, big-endian.
    @Test func connectRequestBytes() throws {
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.connectData = 0x0102_0304
        var harness = Harness(configuration, seed: 42)
        let packets = harness.start()
        let id = connectID(seed: 42)
        let expected: [UInt8] =
            [
                0x8F, 0xFF, // peer id 0xFFF | ENET_PROTOCOL_HEADER_FLAG_SENT_TIME
                0x00, 0x00, // sent time: 0 ms since the start
                0x82, 0xFF, 0x00, 0x01, // CONNECT | FLAG_ACKNOWLEDGE, channel 0xFF, reliable sequence 1
                0x00, 0x00, // outgoingPeerID: this side's id for the server, 0
                0xFF, 0xFF, // incoming and outgoing session ids: 0xFF, let the server pick
                0x00, 0x00, 0x05, 0x78, // mtu 1400
                0x00, 0x01, 0x00, 0x00, // window 65536 (unlimited outgoing bandwidth)
                0x00, 0x00, 0x00, 0x02, // channel count 2
                0x00, 0x00, 0x00, 0x00, // incoming bandwidth 0
                0x00, 0x00, 0x00, 0x00, // outgoing bandwidth 0
                0x00, 0x00, 0x13, 0x88, // throttle interval 5000 ms
                0x00, 0x00, 0x00, 0x02, // acceleration 2
                0x00, 0x00, 0x00, 0x02, // deceleration 2
            ] + [UInt8(id >> 24), UInt8(id >> 16 & 0xFF), UInt8(id >> 8 & 0xFF), UInt8(id & 0xFF)]
            + [0x01, 0x02, 0x03, 0x04] // connect data
        #expect(packets == [expected])
        #expect(harness.metrics.contains(.sent(kind: MetricCatalog.control(.connect), bytes: 52)))
    }

    /// With checksums on, a CRC-32 follows the header, computed with 0 in its place (no peer id yet).
    @Test func connectRequestChecksum() throws {
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.checksum = true
        var harness = Harness(configuration)
        let packet = try #require(harness.start().first)
        #expect(packet.count == 56)
        var seeded = packet
        seeded.replaceSubrange(4..<8, with: [0, 0, 0, 0])
        let crc = seeded.withUnsafeBytes { CRC32.checksum($0) }
        #expect(
            Array(packet[4..<8]) == [
                UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF),
            ])
    }

    /// The verify-connect settles the fewer channels, the smaller MTU and the server's ids; the client acknowledges
    /// it (with the server's sent time), pings at once, and from then on uses the server's peer id and session.
    @Test func verifyConnectNegotiates() throws {
        var model = ServerModel()
        model.channelLimit = 1
        model.mtu = 1000
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.channelCount = 4
        var harness = Harness(configuration)
        for packet in harness.start() { model.receive(packet, now: harness.now) }
        harness.advance(.milliseconds(30))
        let verify = try #require(model.flush(now: harness.now).first)
        let replies = harness.receive(verify)
        let session = try #require(harness.established)
        #expect(session.channelCount == 1 && session.mtu == 1000 && session.peerID == 5)
        #expect(session.connectID == connectID(seed: 7))
        #expect(harness.metrics.contains(.handshake(.milliseconds(30))))
        let reply = try #require(replies.first)
        let replyHeader = try #require(header(of: reply))
        #expect(replyHeader.peerID == 5 && replyHeader.sessionID == 2)
        let sent = commands(in: reply).map(\.command)
        let verifySentTime = try #require(header(of: verify)?.sentTime)
        #expect(sent == [.acknowledge(receivedReliableSequenceNumber: 1, receivedSentTime: verifySentTime), .ping])
        model.receive(reply, now: harness.now)
        #expect(model.connected && model.headerErrors == 0)
        #expect(harness.connection.isConnected)
    }

    /// Starts the connection and follows its deadlines with no answer until it closes (bounded); returns when each
    /// connect request was resent, since the start.
    static func connectResends(_ harness: inout Harness<ENetRawCodec>) -> [Duration] {
        let start = harness.now
        _ = harness.start()
        var resends: [Duration] = []
        for _ in 0..<100 {
            guard harness.closed == nil else { break }
            harness.now = harness.connection.nextDeadline
            if !harness.tick().isEmpty { resends.append(harness.now - start) }
        }
        return resends
    }

    /// No answer, and no handshake timeout of its own: the connect request is resent at ENet's doubling timeouts
    /// from a 500 ms start, and the handshake ends after `timeoutMaximum` (libenet: 30 s) with a message that names
    /// checksums as a possible cause.
    @Test func handshakeTimesOutAsLibENetDoes() throws {
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.handshakeTimeout = nil
        var harness = Harness(configuration)
        let start = harness.now
        let resends = Self.connectResends(&harness)
        #expect(
            resends == [
                .milliseconds(500), .milliseconds(1500), .milliseconds(3500), .milliseconds(7500),
                .milliseconds(15_500),
            ])
        let reason = try #require(harness.closed)
        #expect(reason.kind == "handshake_timeout")
        #expect(reason.detail.contains("checksum"))
        #expect(harness.now - start == .milliseconds(31_500))
        #expect(harness.metrics.filter { if case .resent = $0 { true } else { false } }.count == 5)
    }

    /// No answer: by default the handshake is given up after 5 s (as libenet's tutorial gives up waiting for the
    /// connect event), between the connect request's resends, with the same reason.
    @Test func handshakeTimeoutEndsItFirst() throws {
        var harness = Harness(ENetConnection<ENetRawCodec>.Configuration())
        let start = harness.now
        let resends = Self.connectResends(&harness)
        #expect(resends == [.milliseconds(500), .milliseconds(1500), .milliseconds(3500)])
        #expect(harness.now - start == .seconds(5))
        let reason = try #require(harness.closed)
        #expect(reason.kind == "handshake_timeout" && !reason.isOutage)
        #expect(reason.detail.contains("4 connect requests") && reason.detail.contains("checksums"))
    }

    /// A server without checksums answering a client with them: its verify-connect fails the CRC, but read without
    /// one it is this connection's, so the client stops at once with `checksum_mismatch`.
    @Test func serverWithoutChecksum() throws {
        var model = ServerModel()
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.checksum = true
        var harness = Harness(configuration)
        let request = try #require(harness.start().first)
        // A server without checksums reads the CRC as a command; give it the request as it would be without one.
        var plain = request
        plain.removeSubrange(4..<8)
        model.receive(plain, now: harness.now)
        let verify = try #require(model.flush(now: harness.now).first)
        _ = harness.receive(verify)
        #expect(harness.errors["bad_checksum"] == 1)
        let reason = try #require(harness.closed)
        #expect(reason.kind == "checksum_mismatch")
        #expect(reason.detail.contains("checksum"))
    }

    /// A server with checksums drops a request without one; the client times out saying checksums may differ.
    @Test func serverWithChecksum() throws {
        var model = ServerModel()
        model.checksum = true
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.timeoutMaximum = .seconds(2)
        var simulation = Simulation(client: Harness(configuration), seed: 3)
        simulation.server = model
        simulation.start()
        #expect(simulation.run(for: .seconds(5)) { $0.client.closed != nil })
        #expect(simulation.server.headerErrors > 0 && !simulation.server.connected)
        let reason = try #require(simulation.client.closed)
        #expect(reason.kind == "handshake_timeout")
        #expect(reason.detail.contains("checksums") && reason.detail.contains("off"))
    }

    /// Both ends with checksums connect and exchange data.
    @Test func checksumsOnBothEnds() throws {
        var model = ServerModel()
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.checksum = true
        var harness = connected(configuration, model: &model)
        for datagram in harness.send(packet(0, .reliable, [1, 2, 3])) { model.receive(datagram, now: harness.now) }
        #expect(model.delivered == [ServerModel.Delivery(channel: 0, delivery: .reliable, bytes: [1, 2, 3])])
        model.send(channel: 1, delivery: .reliable, [4, 5])
        for datagram in model.flush(now: harness.now) { _ = harness.receive(datagram) }
        #expect(harness.messages == [packet(1, .reliable, [4, 5])])
        #expect(model.headerErrors == 0 && harness.errors.isEmpty)
    }

    /// A verify-connect for another connect id (a late answer to an earlier connection) is counted and ignored,
    /// unacknowledged; one that breaks the rules ends the handshake.
    @Test func staleAndBadVerifyConnect() throws {
        var harness = Harness(ENetConnection<ENetRawCodec>.Configuration())
        _ = harness.start()
        var parameters = ConnectParameters(
            outgoingPeerID: 3, incomingSessionID: 1, outgoingSessionID: 2, mtu: 1400, windowSize: 65536,
            channelCount: 2, incomingBandwidth: 0, outgoingBandwidth: 0, packetThrottleInterval: 5000,
            packetThrottleAcceleration: 2, packetThrottleDeceleration: 2, connectID: connectID(seed: 7) &+ 1)
        let verify = CommandHeader(.verifyConnect, channelID: 0xFF, reliableSequenceNumber: 1, acknowledge: true)
        #expect(harness.receive(datagram([(verify, .verifyConnect(parameters), [])])).isEmpty)
        #expect(harness.errors["stale_verify_connect"] == 1 && harness.established == nil && harness.closed == nil)
        parameters.connectID = connectID(seed: 7)
        parameters.packetThrottleDeceleration = 3
        _ = harness.receive(datagram([(verify, .verifyConnect(parameters), [])]))
        #expect(harness.closed?.kind == "bad_verify_connect")
    }
}
