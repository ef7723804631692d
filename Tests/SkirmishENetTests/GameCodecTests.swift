import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishENet

/// "ENet + my messages": a game's codec, written against the public protocol alone, drives the connection.
@Suite struct GameCodecTests {
    /// A small game's messages: the player's position goes up unreliably on channel 1, the server's state comes
    /// down unreliably on channel 1, and events (a chat line, a goal) go reliably on channel 0.
    enum GameMessage: Equatable {
        case position(x: Float, y: Float)
        case state(tick: UInt32, players: [(x: Float, y: Float)])
        case event(String)

        static func == (lhs: GameMessage, rhs: GameMessage) -> Bool {
            switch (lhs, rhs) {
            case (.position(let a, let b), .position(let c, let d)): a == c && b == d
            case (.state(let a, let b), .state(let c, let d)):
                a == c && b.count == d.count && zip(b, d).allSatisfy { $0.x == $1.x && $0.y == $1.y }
            case (.event(let a), .event(let b)): a == b
            default: false
            }
        }
    }

    /// Tags and big-endian fields, decoded straight from the borrowed bytes.
    struct GameCodec: ENetMessageCodec {
        static var protocolName: String { "game" }

        mutating func encode(_ message: GameMessage, into payload: inout [UInt8]) -> ENetRoute {
            switch message {
            case .position(let x, let y):
                payload.append(1)
                append(x.bitPattern, to: &payload)
                append(y.bitPattern, to: &payload)
                return .unreliable(1)
            case .state(let tick, let players):
                payload.append(2)
                append(tick, to: &payload)
                payload.append(UInt8(players.count))
                for player in players {
                    append(player.x.bitPattern, to: &payload)
                    append(player.y.bitPattern, to: &payload)
                }
                return .unreliable(1)
            case .event(let text):
                payload.append(3)
                payload.append(contentsOf: text.utf8)
                return .reliable(0)
            }
        }

        mutating func decode(_ payload: UnsafeRawBufferPointer, route: ENetRoute) -> GameMessage? {
            guard let tag = payload.first else { return nil }
            func word(_ offset: Int) -> UInt32? {
                guard offset + 4 <= payload.count else { return nil }
                return payload[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
            }
            switch tag {
            case 1:
                guard payload.count == 9, let x = word(1), let y = word(5) else { return nil }
                return .position(x: Float(bitPattern: x), y: Float(bitPattern: y))
            case 2:
                guard payload.count >= 6, let tick = word(1), payload.count == 6 + Int(payload[5]) * 8 else {
                    return nil
                }
                let players = (0..<Int(payload[5])).map { index in
                    (x: Float(bitPattern: word(6 + index * 8)!), y: Float(bitPattern: word(10 + index * 8)!))
                }
                return .state(tick: tick, players: players)
            case 3 where route.delivery == .reliable:
                return .event(String(decoding: payload[1...], as: UTF8.self))
            default:
                return nil
            }
        }

        private func append(_ value: UInt32, to payload: inout [UInt8]) {
            for shift in stride(from: 24, through: 0, by: -8) {
                payload.append(UInt8(truncatingIfNeeded: value >> shift))
            }
        }
    }

    @Test func positionsUpStatesDown() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<GameCodec>.Configuration(codec: GameCodec()), model: &model)
        for step in 0..<3 {
            for datagram in harness.send(.position(x: Float(step), y: 2.5)) {
                model.receive(datagram, now: harness.now)
            }
        }
        for datagram in harness.send(.event("gl hf")) { model.receive(datagram, now: harness.now) }
        #expect(model.delivered.map(\.channel) == [1, 1, 1, 0])
        #expect(model.delivered.map(\.delivery) == [.unreliable, .unreliable, .unreliable, .reliable])
        #expect(model.delivered.last?.bytes == [3] + Array("gl hf".utf8))

        var codec = GameCodec()
        for tick: UInt32 in 1...3 {
            var bytes: [UInt8] = []
            let route = codec.encode(.state(tick: tick, players: [(1, 2), (3, Float(tick))]), into: &bytes)
            model.send(channel: route.channel, delivery: route.delivery, bytes)
        }
        model.send(channel: 0, delivery: .reliable, [3] + Array("goal".utf8))
        model.send(channel: 1, delivery: .unreliable, [2, 0]) // not a state: the codec says no
        for datagram in model.flush(now: harness.now) { _ = harness.receive(datagram) }
        #expect(
            harness.messages == [
                .state(tick: 1, players: [(1, 2), (3, 1)]), .state(tick: 2, players: [(1, 2), (3, 2)]),
                .state(tick: 3, players: [(1, 2), (3, 3)]), .event("goal"),
            ])
        #expect(harness.errors == ["undecodable_message": 1])
        #expect(harness.counts(sent: true)["unreliable/ch1"]?.packets == 3)
        #expect(harness.counts(sent: false)["unreliable/ch1"]?.packets == 4)
    }

    /// The raw codec reuses its buffers, yet a packet the agent keeps never changes under it: more packets than it
    /// has buffers, kept and dropped in turn, and a large one between small ones.
    @Test func rawPacketsStayIntactWhileTheCodecReusesItsBuffers() {
        var codec = ENetRawCodec()
        var kept: [ENetPacket] = []
        var expected: [[UInt8]] = []
        for number in 0..<(3 * ENetRawCodec.buffers) {
            let bytes = [UInt8](repeating: UInt8(number), count: number == 5 ? 20_000 : 1 + number)
            let packet = bytes.withUnsafeBytes { codec.decode($0, route: .reliable(UInt8(number % 3))) }
            guard let packet else { return #expect(Bool(false), "the raw codec decodes every packet") }
            #expect(packet.bytes == bytes && packet.route == .reliable(UInt8(number % 3)))
            if number % 2 == 0 {
                kept.append(packet)
                expected.append(bytes)
            }
        }
        #expect(kept.map(\.bytes) == expected)
        #expect(codec == ENetRawCodec(), "its buffers are storage, not options")
    }

    /// The description names every series up front: per channel 0–7 and `ch8+` for each delivery, then control.
    @Test func descriptionIsFixed() {
        let description = ENetConnection<GameCodec>.description
        #expect(description.name == "game" && description.transports == [.udp])
        #expect(ENetConnection<ENetRawCodec>.description.name == "enet")
        #expect(description.packetKinds.count == 3 * 9 + 7)
        #expect(description.packetKinds[0] == PacketKind("reliable/ch0", delivery: "reliable"))
        #expect(description.packetKinds[MetricCatalog.data(.unreliable, channel: 200)].name == "unreliable/ch8+")
        #expect(description.packetKinds[MetricCatalog.control(.ping)] == PacketKind("ping", delivery: "control"))
        #expect(Set(description.errorKinds).count == description.errorKinds.count)
        #expect(description.figures.contains([.roundTrip, .resends, .loss, .handshake]))
    }
}
