import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// Hostile traffic for testing a server's defences: malformed, oversized, replayed, wrong-direction, out-of-state,
/// NaN-carrying and flooding packets, at the persona's `rogue_rate`.
///
/// A rogue bot holds a real seat (it completed the handshake), so its packets reach the match logic and not only the
/// decoder. What it sends is counted under `skirmish_rogue_packets_total{kind}` and never mixed into the legitimate
/// figures; the server is expected to count each one under a rejection reason and carry on.
struct Rogue: Agent {
    typealias Connection = SnapConnection

    enum Kind: String, CaseIterable, Sendable {
        case garbage
        case badMagic = "bad_magic"
        case truncated, oversized, replayed
        case wrongDirection = "wrong_direction"
        case outOfState = "out_of_state"
        case notANumber = "nan"
        case flood
    }

    private let period: Int64
    private var due: Instant?
    private var sent: UInt32 = 0
    private(set) var isMatchOver = false

    init(context: inout AgentContext<SnapConnection>) {
        period = Int64(1e9 / max(context.persona.options.get(SnapOptions.Rogue.self)?.rate ?? 50, 1))
    }

    var nextWake: Instant? { isMatchOver ? nil : due }

    mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        due = now + .milliseconds(200)
    }

    mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        switch message {
        case .puckMatchOver, .snapGameOver, .serverQuit: isMatchOver = true
        default: break
        }
    }

    mutating func wake(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        guard var next = due else { return }
        var burst = 0
        while next <= now, burst < 64 {
            let kind = Kind.allCases.randomElement(using: &context.random)!
            send(kind, context: &context)
            next = next + .nanoseconds(period)
            burst += 1
        }
        if next <= now { next = now + .nanoseconds(period) }
        due = next
    }

    private mutating func send(_ kind: Kind, context: inout AgentContext<SnapConnection>) {
        sent &+= 1
        context.meters.roguePacket(kind.rawValue)
        switch kind {
        case .garbage:
            let count = Int.random(in: 10...200, using: &context.random)
            var bytes = Self.encode(Packet(number: sent, .chat(Chat(text: "x"))))
            bytes += (0..<count).map { _ in UInt8.random(in: 0...255, using: &context.random) }
            context.sendRaw(bytes)
        case .badMagic:
            var bytes = Self.encode(Packet(number: sent, .ping(Ping(player: 0, count: sent, sendTime: 0))))
            bytes[0] = 0x47
            context.sendRaw(bytes)
        case .truncated:
            let bytes = Self.encode(
                Packet(number: sent, .paddleState(PaddleState(inputStep: sent, x: 1, y: 1, vx: 0, vy: 0))))
            context.sendRaw(Array(bytes.prefix(14)))
        case .oversized:
            var bytes = Self.encode(Packet(number: sent, .chat(Chat(text: "x"))))
            bytes += [UInt8](repeating: 0x41, count: 1_400)
            context.sendRaw(bytes)
        case .replayed:
            // A reliable packet number the server has long since delivered: must be acked and dropped, never re-run.
            context.sendRaw(Self.encode(Packet(number: 1, .chat(Chat(text: "replayed")))))
        case .wrongDirection:
            context.sendRaw(Self.encode(Packet(number: sent, .serverQuit)))
        case .outOfState:
            context.sendRaw(Self.encode(Packet(number: sent, .clientTurnedCard)))
        case .notANumber:
            var bytes = Self.encode(
                Packet(number: sent, .paddleState(PaddleState(inputStep: sent, x: 1, y: 1, vx: 0, vy: 0))))
            // x lives at offset 14 (after the 10-byte header and the u32 input step): a quiet NaN, big-endian.
            bytes.replaceSubrange(14..<18, with: [0x7F, 0xC0, 0x00, 0x00])
            context.sendRaw(bytes)
        case .flood:
            for index in 0..<32 {
                context.sendRaw(
                    Self.encode(
                        Packet(number: sent &+ UInt32(index), .ping(Ping(player: 0, count: sent, sendTime: 0)))))
            }
        }
    }

    static func encode(_ packet: Packet) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: WireLimits.maxFrame) { buffer, count in
            count = (try? packet.encode(into: UnsafeMutableRawBufferPointer(buffer))) ?? 0
        }
    }
}
