import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// Malformed, oversize, wrong-direction and random packets, from strangers and from a seated player, are
    /// dropped: the players keep playing and a new client can still join.
    static let hostileInput = ConformanceCheck(
        id: "hostile.input", title: "malformed and hostile packets are dropped and the server keeps serving",
        limit: .seconds(25)
    ) { context in
        let (pair, failure) = try await context.pair().players()
        guard let (a, _, b, _) = pair else { return failure! }
        defer { release(a, b) }
        let barrage = try hostilePackets()
        let stranger = try await context.probe()
        defer { stranger.close() }
        for bytes in barrage {
            stranger.send(bytes, sealed: false)
            a.session.sendRaw(bytes)
        }
        var big: RawProbe?
        defer { big?.close() }
        if context.transport == .tcp {
            // A frame announcing more than 64 KiB, refused from its prefix alone.
            big = try await context.probe()
            big?.sendUnframed([0x00, 0x02, 0x00, 0x00, 0x53, 0x4e, 0x41, 0x50])
        }
        // Both players still play: each one's Chat reaches the other (whatever the game), and a Puck table keeps
        // streaming snapshots.
        a.send(.chat(Chat(text: "after the barrage a")))
        b.send(.chat(Chat(text: "after the barrage b")))
        for (player, name, text) in [
            (a, "the player that sent the barrage", "after the barrage b"),
            (b, "the other player", "after the barrage a"),
        ] {
            let before = player.now.snapshots.count
            let playing = context.game != .puck ? 0 : 11
            guard
                await player.wait(
                    .seconds(4) * context.patience,
                    until: { ($0.chats.contains(text) && $0.snapshots.count >= before + playing) || $0.isClosed })
                    != nil, !player.now.isClosed
            else {
                return .failed(
                    "\(name) to stay seated and keep playing (a Chat relayed"
                        + (playing > 0 ? ", snapshots)" : ")"), player.now.lastState)
            }
        }
        let newcomer = try await context.probe()
        defer { newcomer.close() }
        switch await newcomer.handshake(context.hello("after"))?.message {
        case .welcome?: return .pass
        case .reject(let reject)?: return .failed("a new client to join after the barrage", "Reject(\(reject.reason))")
        default: return .failed("a new client to join after the barrage", "no answer within 5 s")
        }
    }
}

/// One of each kind of bad packet the spec names, and seeded random bytes.
private func hostilePackets() throws -> [[UInt8]] {
    let magic: [UInt8] = [0x53, 0x4e, 0x41, 0x50]
    let hello = try Packet(.hello(Hello(game: .puck, seats: 2, name: "x"))).encoded()
    let paddle = try Packet(number: 7, .paddleState(PaddleState(inputStep: 1, x: 1, y: 1, vx: 0, vy: 0))).encoded()
    var nan = paddle
    nan.replaceSubrange(14..<18, with: [0x7f, 0xc0, 0x00, 0x00])
    var padded = hello
    padded[padded.count - 1] = 1
    let snapshot = try Packet(
        number: 3,
        .tableSnapshot(
            TableSnapshot(
                tick: 1, lastInputStep: 1, me: .init(x: 160, y: 400, vx: 0, vy: 0),
                them: .init(x: 160, y: 80, vx: 0, vy: 0),
                puck: .init(x: 160, y: 240, vx: 0, vy: 0, angle: 0, spin: 0), myScore: 0, theirScore: 0,
                phase: .playing, stateHash: 0))
    ).encoded()
    var packets: [[UInt8]] = [
        [0x53, 0x4e, 0x41], // tooShort
        [0x58, 0x58, 0x58, 0x58, 0, 0, 0, 1, 0x00, 0x06], // badMagic
        magic + [0, 0, 0, 1, 0x77, 0x77], // unknownType
        Array(hello.prefix(40)), // truncatedPayload
        hello + [0], // trailingBytes
        magic + [0, 0, 0, 0, 0x00, 0x65, 0xff, 0xfe, 0x00], // badString
        nan, // badValue: NaN
        padded, // badValue: padding
        snapshot, // wrong direction
        magic + [0, 0, 0, 9, 0x00, 0x09] + [UInt8](repeating: 0x41, count: 1_300), // tooLarge
    ]
    var random = SeededRandom(seed: 0xBAD_F00D)
    for _ in 0..<20 {
        let count = Int.random(in: 0..<120, using: &random)
        packets.append((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) })
    }
    return packets
}
