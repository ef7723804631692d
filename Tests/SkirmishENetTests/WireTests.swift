import Testing

@testable import SkirmishENet

/// The wire layer against enet/protocol.h: sizes, byte layouts, the CRC, and a decoder that is total.
@Suite struct WireTests {
    /// Every command's size is its packed struct's in protocol.h (header 4 bytes + fields).
    @Test func commandSizesMatchProtocolH() {
        let expected: [CommandNumber: Int] = [
            .acknowledge: 4 + 2 + 2, .connect: 4 + 2 + 1 + 1 + 10 * 4, .verifyConnect: 4 + 2 + 1 + 1 + 9 * 4,
            .disconnect: 4 + 4, .ping: 4, .sendReliable: 4 + 2, .sendUnreliable: 4 + 2 + 2,
            .sendFragment: 4 + 2 + 2 + 4 * 4, .sendUnsequenced: 4 + 2 + 2, .bandwidthLimit: 4 + 4 + 4,
            .throttleConfigure: 4 + 3 * 4, .sendUnreliableFragment: 4 + 2 + 2 + 4 * 4,
        ]
        for number in CommandNumber.allCases { #expect(number.size == expected[number], "\(number)") }
    }

    /// The common CRC-32 check value, which libenet's table-driven `enet_crc32` also gives.
    @Test func crcCheckValue() {
        let bytes = Array("123456789".utf8)
        #expect(bytes.withUnsafeBytes { CRC32.checksum($0) } == 0xCBF4_3926)
        // The seeded form equals the plain CRC of the bytes with the seed written in place.
        var datagram: [UInt8] = [0x80, 0x01, 0x12, 0x34, 0, 0, 0, 0, 0x85, 0xFF, 0, 1]
        let seeded = datagram.withUnsafeBytes { CRC32.checksum($0, seedAt: 4, seed: 0xDEAD_BEEF) }
        datagram.replaceSubrange(4..<8, with: [0xDE, 0xAD, 0xBE, 0xEF])
        #expect(seeded == datagram.withUnsafeBytes { CRC32.checksum($0) })
    }

    static let samples: [(CommandHeader, Command, [UInt8])] = [
        (
            CommandHeader(.acknowledge, channelID: 1, reliableSequenceNumber: 9),
            .acknowledge(receivedReliableSequenceNumber: 9, receivedSentTime: 0xBEEF), []
        ),
        (
            CommandHeader(.connect, channelID: 0xFF, reliableSequenceNumber: 1, acknowledge: true),
            .connect(
                ConnectParameters(
                    outgoingPeerID: 3, incomingSessionID: 0xFF, outgoingSessionID: 0xFF, mtu: 1400, windowSize: 65536,
                    channelCount: 2, incomingBandwidth: 1, outgoingBandwidth: 2, packetThrottleInterval: 5000,
                    packetThrottleAcceleration: 2, packetThrottleDeceleration: 2, connectID: 0x0102_0304),
                data: 42), []
        ),
        (
            CommandHeader(.disconnect, channelID: 0xFF, reliableSequenceNumber: 4, unsequenced: true),
            .disconnect(data: 7), []
        ),
        (CommandHeader(.ping, channelID: 0xFF, reliableSequenceNumber: 2, acknowledge: true), .ping, []),
        (
            CommandHeader(.sendReliable, channelID: 0, reliableSequenceNumber: 1, acknowledge: true), .sendReliable,
            [1, 2, 3]
        ),
        (
            CommandHeader(.sendUnreliable, channelID: 1, reliableSequenceNumber: 1),
            .sendUnreliable(unreliableSequenceNumber: 5), [9]
        ),
        (CommandHeader(.sendUnsequenced, channelID: 2, unsequenced: true), .sendUnsequenced(unsequencedGroup: 77), []),
        (
            CommandHeader(.sendFragment, channelID: 0, reliableSequenceNumber: 3, acknowledge: true),
            .sendFragment(
                FragmentHeader(
                    startSequenceNumber: 2, fragmentCount: 3, fragmentNumber: 1, totalLength: 10, fragmentOffset: 4)),
            [5, 6, 7, 8]
        ),
        (
            CommandHeader(.bandwidthLimit, channelID: 0xFF, reliableSequenceNumber: 3, acknowledge: true),
            .bandwidthLimit(incoming: 1000, outgoing: 0), []
        ),
        (
            CommandHeader(.throttleConfigure, channelID: 0xFF, reliableSequenceNumber: 5, acknowledge: true),
            .throttleConfigure(interval: 5000, acceleration: 2, deceleration: 0), []
        ),
    ]

    /// What the writer packs, the reader reads back, with and without a checksum.
    @Test(arguments: [false, true]) func roundTrip(checksum: Bool) throws {
        var buffer = [UInt8](repeating: 0, count: 1400)
        let length = buffer.withUnsafeMutableBytes { raw in
            var writer = DatagramWriter(into: raw, checksum: checksum)
            for (header, command, payload) in Self.samples {
                #expect(payload.withUnsafeBytes { writer.append(header, command, payload: $0) })
            }
            return writer.finish(peerID: 12, sessionID: 2, sentTime: 0x1234, checksumSeed: 99)
        }
        let datagram = Array(buffer[0..<length])
        try datagram.withUnsafeBytes { bytes in
            var reader = try DatagramReader(bytes, checksum: checksum)
            #expect(reader.header == DatagramHeader(peerID: 12, sessionID: 2, compressed: false, sentTime: 0x1234))
            #expect(reader.checksumMatches(seed: 99))
            if checksum { #expect(!reader.checksumMatches(seed: 98)) }
            for (header, command, payload) in Self.samples {
                let decoded = try #require(try reader.next())
                #expect(decoded.header == header)
                #expect(decoded.command == command)
                #expect(Array(bytes[decoded.payload]) == payload)
            }
            #expect(try reader.next() == nil)
        }
    }

    /// Without a reliable command the header is two bytes: the writer moves the commands down.
    @Test func headerWithoutSentTime() {
        var buffer = [UInt8](repeating: 0, count: 64)
        let length = buffer.withUnsafeMutableBytes { raw in
            var writer = DatagramWriter(into: raw, checksum: false)
            writer.append(
                CommandHeader(.sendUnreliable, channelID: 1, reliableSequenceNumber: 0),
                .sendUnreliable(unreliableSequenceNumber: 1), payload: UnsafeRawBufferPointer(start: nil, count: 0))
            return writer.finish(peerID: 0x123, sessionID: 3, sentTime: nil, checksumSeed: 0)
        }
        // peerID 0x123 | session 3 << 12; then SEND_UNRELIABLE(7), channel 1, seq 0, unreliable 1, length 0.
        #expect(Array(buffer[0..<length]) == [0x31, 0x23, 0x07, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00])
    }

    /// Every prefix of a valid datagram, and every single-byte change to it, reads as commands or a typed error:
    /// never a trap, never a read past the end.
    @Test func decodingIsTotal() {
        var buffer = [UInt8](repeating: 0, count: 1400)
        let length = buffer.withUnsafeMutableBytes { raw in
            var writer = DatagramWriter(into: raw, checksum: true)
            for (header, command, payload) in Self.samples {
                _ = payload.withUnsafeBytes { writer.append(header, command, payload: $0) }
            }
            return writer.finish(peerID: 1, sessionID: 0, sentTime: 1, checksumSeed: 5)
        }
        let datagram = Array(buffer[0..<length])
        var outcomes = Set<String>()
        func read(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { raw in
                do throws(DatagramError) {
                    var reader = try DatagramReader(raw, checksum: true)
                    while let command = try reader.next() { #expect(command.payload.upperBound <= raw.count) }
                    outcomes.insert("ok")
                } catch {
                    outcomes.insert(error.kind)
                }
            }
        }
        for end in 0...datagram.count { read(Array(datagram[0..<end])) }
        for index in datagram.indices {
            for value: UInt8 in [0x00, 0x0F, 0x7F, 0xFF] {
                var changed = datagram
                changed[index] = value
                read(changed)
            }
        }
        read([UInt8](repeating: 0, count: 5000))
        #expect(
            outcomes.isSuperset(of: [
                "ok", "truncated_header", "truncated_command", "truncated_payload", "unknown_command", "bad_fragment",
                "oversized_datagram",
            ]))
    }
}
