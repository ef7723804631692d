import SkirmishENet

// The "Your server speaks ENet" article's example, step 1: a game's own messages on ENet. It uses the public API
// alone (no @testable import), as a team's own package would.

/// A small arena game's messages: each player's position goes up, the server's state and events come down.
enum ArenaMessage: Sendable, Equatable {
    /// A player's position: sent up (unreliable, channel 1) and relayed by the server to the other players.
    case position(x: Float, y: Float)
    /// The server's state broadcast, 30 times a second (unreliable, channel 1): its tick.
    case state(tick: UInt32)
    /// A game event from the server (reliable, channel 0): its number, counting up.
    case event(number: UInt32)
}

/// The arena's wire format on ENet: a tag byte, then little-endian fields, as its C server writes them.
struct ArenaCodec: ENetMessageCodec {
    static let protocolName = "arena"

    /// Whether positions are relayed to the other players (tag `R`) or echoed to the sender (tag `P`): a codec
    /// option, from the script's `protocol:` block.
    var relay = true

    func encode(_ message: ArenaMessage, into payload: inout [UInt8]) -> ENetRoute {
        switch message {
        case .position(let x, let y):
            payload.append(UInt8(ascii: relay ? "R" : "P"))
            append(x.bitPattern, to: &payload)
            append(y.bitPattern, to: &payload)
            return .unreliable(1)
        case .state(let tick):
            payload.append(UInt8(ascii: "S"))
            append(tick, to: &payload)
            payload.append(contentsOf: repeatElement(0, count: 27))
            return .unreliable(1)
        case .event(let number):
            payload.append(UInt8(ascii: "V"))
            append(number, to: &payload)
            payload.append(contentsOf: repeatElement(0, count: 3))
            return .reliable(0)
        }
    }

    func decode(_ payload: UnsafeRawBufferPointer, route: ENetRoute) -> ArenaMessage? {
        guard let tag = payload.first else { return nil }
        func word(_ offset: Int) -> UInt32 {
            (0..<4).reduce(0) { $0 | UInt32(payload[offset + $1]) << (8 * $1) }
        }
        switch (tag, route.channel, payload.count) {
        case (UInt8(ascii: "R"), 1, 9), (UInt8(ascii: "P"), 1, 9):
            return .position(x: Float(bitPattern: word(1)), y: Float(bitPattern: word(5)))
        case (UInt8(ascii: "S"), 1, 32):
            return .state(tick: word(1))
        case (UInt8(ascii: "V"), 0, 8):
            return .event(number: word(1))
        default:
            return nil
        }
    }

    private func append(_ value: UInt32, to payload: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { payload.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}
