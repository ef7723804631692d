import SkirmishWire

@testable import SkirmishENet

/// One datagram from the server to the client, packed by the wire layer's writer: for tests that hand-craft what a
/// server (or a hostile one) sends.
func datagram(
    peerID: UInt16 = 0, session: UInt8 = 1, sentTime: UInt16? = 1, checksum: Bool = false, seed: UInt32 = 0,
    _ commands: [(CommandHeader, Command, [UInt8])]
) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let length = buffer.withUnsafeMutableBytes { raw in
        var writer = DatagramWriter(into: raw, checksum: checksum)
        for (header, command, payload) in commands {
            precondition(payload.withUnsafeBytes { writer.append(header, command, payload: $0) })
        }
        return writer.finish(peerID: peerID, sessionID: session, sentTime: sentTime, checksumSeed: seed)
    }
    return Array(buffer[0..<length])
}

/// The commands of a datagram the client sent (checksums off).
func commands(in datagram: [UInt8], checksum: Bool = false) -> [DecodedCommand] {
    datagram.withUnsafeBytes { bytes in
        guard var reader = try? DatagramReader(bytes, checksum: checksum) else { return [] }
        var result: [DecodedCommand] = []
        while let command = try? reader.next() { result.append(command) }
        return result
    }
}

/// The header of a datagram the client sent.
func header(of datagram: [UInt8], checksum: Bool = false) -> DatagramHeader? {
    datagram.withUnsafeBytes { try? DatagramReader($0, checksum: checksum).header }
}

/// A harness connected to a ``ServerModel`` directly (no link): the connect request, the verify-connect, and the
/// client's acknowledgement delivered at once.
func connected<Codec>(
    _ configuration: ENetConnection<Codec>.Configuration, model: inout ServerModel, seed: UInt64 = 7
) -> Harness<Codec> {
    var harness = Harness(configuration, seed: seed)
    model.checksum = configuration.checksum
    for packet in harness.start() { model.receive(packet, now: harness.now) }
    harness.advance(.milliseconds(20))
    for packet in model.flush(now: harness.now) {
        for reply in harness.receive(packet) { model.receive(reply, now: harness.now) }
    }
    precondition(harness.established != nil && model.connected, "the handshake did not complete")
    return harness
}

/// A raw packet on `channel`.
func packet(_ channel: UInt8, _ delivery: ENetDelivery, _ bytes: [UInt8]) -> ENetPacket {
    ENetPacket(channel: channel, delivery: delivery, bytes: bytes)
}
