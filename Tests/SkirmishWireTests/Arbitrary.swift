import SkirmishWire

/// Valid random packets of every type, for round-trip and mutation tests.
struct Arbitrary {
    var rng: SeededRandom

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    mutating func u8() -> UInt8 { UInt8.random(in: .min ... .max, using: &rng) }
    mutating func u16() -> UInt16 { UInt16.random(in: .min ... .max, using: &rng) }
    mutating func u32() -> UInt32 { UInt32.random(in: .min ... .max, using: &rng) }
    mutating func u64() -> UInt64 { rng.next() }

    /// A finite float: sometimes a plain value, sometimes any finite bit pattern (subnormals, -0, huge).
    mutating func float() -> Float {
        if Bool.random(using: &rng) { return Float.random(in: -1_000...1_000, using: &rng) }
        while true {
            let value = Float(bitPattern: u32())
            if value.isFinite { return value }
        }
    }

    mutating func unit() -> Float {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: 0
        case 1: 1
        default: Float.random(in: 0...1, using: &rng)
        }
    }

    mutating func double() -> Double {
        while true {
            let value = Double(bitPattern: u64())
            if value.isFinite { return value }
        }
    }

    /// A string of valid UTF-8 with no NUL, at most `limit` bytes, mixing ASCII and multi-byte scalars.
    mutating func string(limit: Int) -> String {
        let alphabet: [Unicode.Scalar] = ["a", "Z", " ", "é", "ß", "€", "あ", "😀", "\u{1}", "~"]
        var text = ""
        let target = Int.random(in: 0...limit, using: &rng)
        while true {
            let scalar = alphabet.randomElement(using: &rng)!
            if text.utf8.count + String(scalar).utf8.count > target { break }
            text.unicodeScalars.append(scalar)
        }
        return text
    }

    mutating func card() -> Card { Card(rawValue: UInt8.random(in: 0..<52, using: &rng))! }
    mutating func number() -> UInt32 { u32() }
    mutating func count(_ limit: Int) -> Int { Int.random(in: 0...limit, using: &rng) }

    mutating func paddle() -> TableSnapshot.Paddle { .init(x: float(), y: float(), vx: float(), vy: float()) }

    mutating func message(_ type: MessageType) -> Message {
        switch type {
        case .hello:
            .hello(
                Hello(
                    version: u16(), game: GameKind(rawValue: UInt8.random(in: 1...255, using: &rng)), seats: u8(),
                    match: u32(),
                    cookie: Cookie(high: u64(), low: u64()), resumeToken: u64(),
                    name: string(limit: WireLimits.maxName)))
        case .challenge: .challenge(Challenge(cookie: Cookie(high: u64(), low: u64())))
        case .welcome:
            .welcome(
                Welcome(
                    peer: u32(), match: u32(), seat: u8(), tickRate: u16(), resumeToken: u64(),
                    sessionKey: SessionKey(key0: u64(), key1: u64())))
        case .reject:
            .reject(Reject(reason: RejectReason(rawValue: u16()), text: string(limit: WireLimits.maxRejectText)))
        case .ack: .ack(Ack(cumulative: u32(), bitfield: u32()))
        case .ping: .ping(Ping(player: u32(), count: u32(), sendTime: double()))
        case .pong: .pong(Ping(player: u32(), count: u32(), sendTime: double()))
        case .disconnect: .disconnect(Disconnect(reason: DisconnectReason(rawValue: u16())))
        case .chat: .chat(Chat(text: string(limit: WireLimits.maxChat)))
        case .signInRequest: .signInRequest
        case .signInResponse: .signInResponse(SignInResponse(name: string(limit: WireLimits.maxName)))
        case .serverReady:
            {
                let n = count(WireLimits.maxSeats)
                return .serverReady(
                    ServerReady(
                        players: (0..<n).map { _ in
                            .init(
                                peer: u32(), position: UInt8.random(in: 0..<UInt8(n), using: &rng),
                                name: string(limit: WireLimits.maxName))
                        }))
            }()
        case .clientReady: .clientReady
        case .dealCards:
            {
                var left = WireLimits.deckSize
                let hands = (0..<count(WireLimits.maxSeats)).map { _ in
                    let n = count(left)
                    left -= n
                    return DealCards.Hand(peer: u32(), cards: (0..<n).map { _ in card() })
                }
                return .dealCards(DealCards(hands: hands))
            }()
        case .clientDealtCards: .clientDealtCards
        case .activatePlayer: .activatePlayer(PeerRef(peer: u32()))
        case .clientTurnedCard: .clientTurnedCard
        case .playerShouldSnap: .playerShouldSnap
        case .playerCalledSnap:
            .playerCalledSnap(
                PlayerCalledSnap(
                    peer: u32(), outcome: SnapOutcome.allCases.randomElement(using: &rng)!, stateHash: u32()))
        case .otherClientQuit: .otherClientQuit(PeerRef(peer: u32()))
        case .serverQuit: .serverQuit
        case .clientQuit: .clientQuit
        case .cardTurned: .cardTurned(CardTurned(peer: u32(), card: card(), stateHash: u32()))
        case .snapGameOver: .snapGameOver(SnapGameOver(winner: u32(), stateHash: u32()))
        case .paddleState: .paddleState(PaddleState(inputStep: u32(), x: float(), y: float(), vx: float(), vy: float()))
        case .tableSnapshot:
            .tableSnapshot(
                TableSnapshot(
                    tick: u32(), lastInputStep: u32(), me: paddle(), them: paddle(),
                    puck: .init(x: float(), y: float(), vx: float(), vy: float(), angle: float(), spin: float()),
                    myScore: u8(), theirScore: u8(), phase: PuckPhase.allCases.randomElement(using: &rng)!,
                    stateHash: u32()))
        case .goalScored:
            .goalScored(
                GoalScored(
                    tick: u32(), scorer: Side.allCases.randomElement(using: &rng)!, myScore: u8(), theirScore: u8()))
        case .puckMatchOver:
            .puckMatchOver(
                PuckMatchOver(winner: Side.allCases.randomElement(using: &rng)!, myScore: u8(), theirScore: u8()))
        case .sunsStart:
            .sunsStart(
                SunsStart(
                    coinToss: u32(), suns: (0..<count(WireLimits.maxSuns)).map { _ in .init(x: unit(), y: unit()) }))
        case .sunsStrike:
            .sunsStrike(
                SunsStrike(
                    x: unit(), y: unit(), radius: max(Float.leastNormalMagnitude, unit()), gameTime: unit() * 59))
        case .sunsCapture:
            .sunsCapture(
                SunsCapture(
                    sunIndex: UInt32.random(in: 0..<UInt32(WireLimits.maxSuns), using: &rng),
                    gameTime: abs(float())))
        case .sunsTally:
            .sunsTally(
                SunsTally(
                    entries: (0..<count(WireLimits.maxSuns)).map { _ in
                        .init(
                            owner: Bool.random(using: &rng)
                                ? SunsTally.Entry.unowned : UInt8.random(in: 0..<4, using: &rng),
                            time: abs(float()))
                    }))
        case .gameReliable, .gameUnreliable:
            .game(
                GamePayload(
                    reliable: type == .gameReliable,
                    bytes: (0..<count(GamePayload.maxSize)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        }
    }

    mutating func packet() -> Packet {
        let type = MessageType.allCases.randomElement(using: &rng)!
        return Packet(number: type.delivery == .handshake ? 0 : u32(), message(type))
    }
}
