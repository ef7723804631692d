import NIOCore
import SkirmishWire

/// The forms tests and tools use: each entry point returning a fresh ``ClientActions`` instead of appending to a
/// reused one, on `NIODeadline` time, and what a connection wrote read back as packets.
extension SnapConnection {
    /// A connection on `transport` for a player named `name`.
    package init(configuration: Configuration, transport: Transport, name: String = "player", player: Int = 0) {
        self.init(
            configuration: configuration,
            setup: ConnectionSetup(transport: transport, player: player, name: name, seed: 1))
    }

    package mutating func connect(now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        start(now: Instant(now), into: &actions)
        return actions
    }

    package mutating func receive(_ bytes: UnsafeRawBufferPointer, now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        receive(bytes, now: Instant(now), into: &actions)
        return actions
    }

    /// Takes in one packet already decoded (as a WebSocket codec or a test has it).
    package mutating func receive(_ packet: Packet, now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        receive(packet, size: 0, now: Instant(now), into: &actions)
        return actions
    }

    package mutating func send(_ message: Message, now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        send(message, now: Instant(now), into: &actions)
        return actions
    }

    package mutating func tick(now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        tick(now: Instant(now), into: &actions)
        return actions
    }

    package mutating func close(reason: DisconnectReason, now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        close(reason: reason, now: Instant(now), into: &actions)
        return actions
    }

    package mutating func suspend(now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        suspend(now: Instant(now), into: &actions)
        return actions
    }

    package mutating func resume(now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        resume(now: Instant(now), into: &actions)
        return actions
    }

    package mutating func transportFailed(_ text: String, now: NIODeadline) -> ClientActions<Self> {
        var actions = ClientActions<Self>()
        transportFailed(text, now: Instant(now), into: &actions)
        return actions
    }

    /// When ``tick(now:)`` next has work, on the loops' clock.
    package var nextDeadlineOnLoop: NIODeadline { NIODeadline(nextDeadline) }

    /// What `actions` holds for the server, decoded: a TCP frame's length and a datagram's session trailer
    /// (checked) removed. A packet that does not decode is left out.
    package func packets(in actions: ClientActions<Self>) -> [Packet] {
        (0..<actions.packetCount).compactMap { index in
            actions.withPacket(index) { bytes -> Packet? in
                var body = bytes
                if transport == .tcp {
                    guard bytes.count >= 4 else { return nil }
                    body = UnsafeRawBufferPointer(rebasing: bytes[4...])
                }
                if let packet = try? Packet.decode(body, maxSize: WireLimits.maxFrame) { return packet }
                guard transport == .udp, let key = sessionKey, let opened = key.open(body, from: .client) else {
                    return nil
                }
                return try? Packet.decode(opened, maxSize: WireLimits.maxDatagram)
            }
        }
    }
}
