import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishENet

/// Every kind of bad input is counted by kind and dropped; nothing crashes, and held memory stays under its bound.
@Suite struct BadInputTests {
    static func connectedClient(_ configure: (inout ENetConnection<ENetRawCodec>.Configuration) -> Void = { _ in })
        -> Harness<ENetRawCodec>
    {
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configure(&configuration)
        var model = ServerModel()
        return connected(configuration, model: &model)
    }

    static let reliable = CommandHeader(.sendReliable, channelID: 0, reliableSequenceNumber: 1, acknowledge: true)

    /// One datagram per kind; each is counted exactly once under its kind, and none delivers anything.
    @Test(
        arguments: [
            ("truncated_header", [0x80]),
            ("truncated_header", [0x80, 0x00, 0x00]),
            ("oversized_datagram", [UInt8](repeating: 0, count: 4097)),
            ("truncated_command", [0x90, 0x00, 0x00, 0x01, 0x86, 0x00, 0x00]),
            ("truncated_command", [0x90, 0x00, 0x00, 0x01, 0x83, 0xFF, 0x00, 0x01, 0x00]),
            ("unknown_command", [0x90, 0x00, 0x00, 0x01, 0x0E, 0x00, 0x00, 0x00]),
            ("unknown_command", [0x90, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00]),
            ("truncated_payload", [0x90, 0x00, 0x00, 0x01, 0x86, 0x00, 0x00, 0x01, 0x00, 0x09, 1, 2]),
            ("peer_id_out_of_range", [0x90, 0x07, 0x00, 0x01, 0x05, 0xFF, 0x00, 0x01]),
            ("unexpected_command", [0x8F, 0xFF, 0x00, 0x01, 0x05, 0xFF, 0x00, 0x01]),
            ("session_mismatch", [0xB0, 0x00, 0x00, 0x01, 0x05, 0xFF, 0x00, 0x01]),
            ("compressed_unsupported", [0xD0, 0x00, 0x00, 0x01, 0x05, 0xFF, 0x00, 0x01]),
            ("missing_sent_time", [0x10, 0x00, 0x85, 0xFF, 0x00, 0x02]),
        ] as [(String, [UInt8])])
    func malformedDatagram(kind: String, bytes: [UInt8]) {
        var harness = Self.connectedClient()
        _ = harness.receive(bytes)
        #expect(harness.errors == [kind: 1])
        #expect(harness.messages.isEmpty && harness.closed == nil)
    }

    /// Commands that are well formed but impossible here.
    @Test func impossibleCommands() {
        var harness = Self.connectedClient { $0.maxMessageSize = 1000 }
        let badChannel = CommandHeader(.sendReliable, channelID: 7, reliableSequenceNumber: 1, acknowledge: true)
        _ = harness.receive(datagram([(badChannel, .sendReliable, [1])]))
        let farAhead = CommandHeader(.sendReliable, channelID: 0, reliableSequenceNumber: 30_000, acknowledge: true)
        _ = harness.receive(datagram([(farAhead, .sendReliable, [1])]))
        _ = harness.receive(datagram([(Self.reliable, .sendReliable, [UInt8](repeating: 0, count: 1001))]))
        let fragment = CommandHeader(.sendFragment, channelID: 0, reliableSequenceNumber: 2, acknowledge: true)
        let first = FragmentHeader(
            startSequenceNumber: 2, fragmentCount: 2, fragmentNumber: 0, totalLength: 10, fragmentOffset: 0)
        _ = harness.receive(datagram([(fragment, .sendFragment(first), [1, 2, 3, 4, 5])]))
        var other = first
        other.totalLength = 12
        other.fragmentNumber = 1
        _ = harness.receive(datagram([(fragment, .sendFragment(other), [1])]))
        var huge = first
        huge.totalLength = 5000
        huge.startSequenceNumber = 10
        _ = harness.receive(datagram([(fragment, .sendFragment(huge), [1])]))
        let connect = CommandHeader(.connect, channelID: 0xFF, reliableSequenceNumber: 1, acknowledge: true)
        let parameters = ConnectParameters(
            outgoingPeerID: 0, incomingSessionID: 0, outgoingSessionID: 0, mtu: 1400, windowSize: 4096,
            channelCount: 1, incomingBandwidth: 0, outgoingBandwidth: 0, packetThrottleInterval: 0,
            packetThrottleAcceleration: 0, packetThrottleDeceleration: 0, connectID: 1)
        _ = harness.receive(datagram([(connect, .connect(parameters, data: 0), [])]))
        #expect(
            harness.errors == [
                "bad_channel": 1, "window_overflow": 1, "oversized_packet": 2, "fragment_mismatch": 1,
                "unexpected_command": 1,
            ])
        #expect(harness.messages.isEmpty && harness.closed == nil)
    }

    /// A fragment whose fields cannot describe a packet is refused by the decoder.
    @Test(arguments: [
        FragmentHeader(startSequenceNumber: 1, fragmentCount: 0, fragmentNumber: 0, totalLength: 10, fragmentOffset: 0),
        FragmentHeader(startSequenceNumber: 1, fragmentCount: 2, fragmentNumber: 2, totalLength: 10, fragmentOffset: 0),
        FragmentHeader(
            startSequenceNumber: 1, fragmentCount: 2, fragmentNumber: 0, totalLength: 10, fragmentOffset: 10),
        FragmentHeader(startSequenceNumber: 1, fragmentCount: 2, fragmentNumber: 1, totalLength: 10, fragmentOffset: 8),
        FragmentHeader(
            startSequenceNumber: 1, fragmentCount: 2_000_000, fragmentNumber: 0, totalLength: 3_000_000,
            fragmentOffset: 0),
        FragmentHeader(
            startSequenceNumber: 1, fragmentCount: 50, fragmentNumber: 0, totalLength: 10, fragmentOffset: 0),
    ])
    func impossibleFragment(_ fragment: FragmentHeader) {
        var harness = Self.connectedClient()
        let header = CommandHeader(.sendFragment, channelID: 0, reliableSequenceNumber: 1, acknowledge: true)
        _ = harness.receive(datagram([(header, .sendFragment(fragment), [1, 2, 3, 4])]))
        #expect(harness.errors == ["bad_fragment": 1])
    }

    /// A bad checksum, on a connection that uses them.
    @Test func badChecksum() {
        var harness = Self.connectedClient { $0.checksum = true }
        var bytes = datagram(checksum: true, seed: connectID(seed: 7), [(Self.reliable, .sendReliable, [1])])
        _ = harness.receive(bytes)
        #expect(harness.messages.count == 1 && harness.errors.isEmpty)
        bytes[bytes.count - 1] ^= 1
        _ = harness.receive(bytes)
        #expect(harness.errors == ["bad_checksum": 1] && harness.messages.count == 1)
    }

    /// Packets held behind a gap, and reassembly buffers, stop at `maxIncomingBytes`: past it commands are refused
    /// unacknowledged (so the server sends them again), and once the gap fills everything is delivered in order.
    @Test func heldMemoryIsBounded() {
        var harness = Self.connectedClient { $0.maxIncomingBytes = 10_000 }
        for sequence in 2...200 {
            let header = CommandHeader(
                .sendReliable, channelID: 0, reliableSequenceNumber: UInt16(sequence), acknowledge: true)
            let replies = harness.receive(
                datagram([(header, .sendReliable, [UInt8](repeating: UInt8(sequence), count: 100))]))
            let acknowledged = !replies.flatMap { commands(in: $0) }.filter { $0.header.number == .acknowledge }.isEmpty
            #expect(acknowledged == (harness.errors["incoming_limit"] == nil))
            #expect(harness.connection.heldBytes <= 10_000)
            #expect(harness.connection.pool.bytes <= 10_000)
        }
        let refused = harness.errors["incoming_limit"] ?? 0
        #expect(refused > 100)
        _ = harness.receive(datagram([(Self.reliable, .sendReliable, [1])]))
        let delivered = harness.messages.map { Int($0.bytes[0]) }
        #expect(delivered == Array(1...(200 - refused)))
        #expect(harness.connection.heldBytes == 0)
    }

    /// Sends the connection cannot take are counted, never queued.
    @Test func badSends() {
        var harness = Self.connectedClient { $0.maxQueuedBytes = 3000 }
        _ = harness.send(packet(9, .reliable, [1]))
        _ = harness.send(packet(0, .unreliable, [UInt8](repeating: 0, count: 2_000_000)))
        #expect(harness.errors == ["send_bad_channel": 1, "send_dropped": 1])
        // Unacknowledged reliable packets past the queue bound end the connection: the server cannot keep up.
        for _ in 0..<4 { _ = harness.send(packet(0, .reliable, [UInt8](repeating: 0, count: 1000))) }
        #expect(harness.closed?.kind == "ack_timeout")
        // Empty messages count too: a server that acknowledges nothing cannot make the queue grow without bound.
        var empty = Self.connectedClient { $0.maxQueuedBytes = 3200 }
        for _ in 0..<101 { _ = empty.send(packet(1, .reliable, [])) }
        #expect(empty.closed?.kind == "ack_timeout")
        #expect(empty.counts(sent: true)["reliable/ch1"]?.packets == 100)
        var idle = Harness(ENetConnection<ENetRawCodec>.Configuration())
        _ = idle.start()
        _ = idle.send(packet(0, .reliable, [1]))
        #expect(idle.errors == ["send_not_connected": 1])
    }
}
