/// One message of the catalogue, with its payload.
///
/// Messages without a payload are plain cases. `Ping` and `Pong` share a payload type, as do `ActivatePlayer` and
/// `OtherClientQuit`.
public enum Message: Sendable, Hashable {
    case hello(Hello)
    case challenge(Challenge)
    case welcome(Welcome)
    case reject(Reject)
    case ack(Ack)
    case ping(Ping)
    case pong(Ping)
    case disconnect(Disconnect)
    case chat(Chat)
    case signInRequest
    case signInResponse(SignInResponse)
    case serverReady(ServerReady)
    case clientReady
    case dealCards(DealCards)
    case clientDealtCards
    case activatePlayer(PeerRef)
    case clientTurnedCard
    case playerShouldSnap
    case playerCalledSnap(PlayerCalledSnap)
    case otherClientQuit(PeerRef)
    case serverQuit
    case clientQuit
    case cardTurned(CardTurned)
    case snapGameOver(SnapGameOver)
    case paddleState(PaddleState)
    case tableSnapshot(TableSnapshot)
    case goalScored(GoalScored)
    case puckMatchOver(PuckMatchOver)
    case sunsStart(SunsStart)
    case sunsStrike(SunsStrike)
    case sunsCapture(SunsCapture)
    case sunsTally(SunsTally)
    /// A message of a game that is not built in (`GameReliable` or `GameUnreliable`, by ``GamePayload/reliable``).
    case game(GamePayload)

    /// The type code this message travels under.
    public var type: MessageType {
        switch self {
        case .hello: .hello
        case .challenge: .challenge
        case .welcome: .welcome
        case .reject: .reject
        case .ack: .ack
        case .ping: .ping
        case .pong: .pong
        case .disconnect: .disconnect
        case .chat: .chat
        case .signInRequest: .signInRequest
        case .signInResponse: .signInResponse
        case .serverReady: .serverReady
        case .clientReady: .clientReady
        case .dealCards: .dealCards
        case .clientDealtCards: .clientDealtCards
        case .activatePlayer: .activatePlayer
        case .clientTurnedCard: .clientTurnedCard
        case .playerShouldSnap: .playerShouldSnap
        case .playerCalledSnap: .playerCalledSnap
        case .otherClientQuit: .otherClientQuit
        case .serverQuit: .serverQuit
        case .clientQuit: .clientQuit
        case .cardTurned: .cardTurned
        case .snapGameOver: .snapGameOver
        case .paddleState: .paddleState
        case .tableSnapshot: .tableSnapshot
        case .goalScored: .goalScored
        case .puckMatchOver: .puckMatchOver
        case .sunsStart: .sunsStart
        case .sunsStrike: .sunsStrike
        case .sunsCapture: .sunsCapture
        case .sunsTally: .sunsTally
        case .game(let payload): payload.reliable ? .gameReliable : .gameUnreliable
        }
    }
}

extension Message {
    /// Decodes the payload of a message of `type`; the reader must end exactly at the payload's end.
    init(type: MessageType, reading reader: inout WireReader) throws(DecodeError) {
        switch type {
        case .hello: self = .hello(try Hello(reading: &reader))
        case .challenge: self = .challenge(try Challenge(reading: &reader))
        case .welcome: self = .welcome(try Welcome(reading: &reader))
        case .reject: self = .reject(try Reject(reading: &reader))
        case .ack: self = .ack(try Ack(reading: &reader))
        case .ping: self = .ping(try Ping(reading: &reader))
        case .pong: self = .pong(try Ping(reading: &reader))
        case .disconnect: self = .disconnect(try Disconnect(reading: &reader))
        case .chat: self = .chat(try Chat(reading: &reader))
        case .signInRequest: self = .signInRequest
        case .signInResponse: self = .signInResponse(try SignInResponse(reading: &reader))
        case .serverReady: self = .serverReady(try ServerReady(reading: &reader))
        case .clientReady: self = .clientReady
        case .dealCards: self = .dealCards(try DealCards(reading: &reader))
        case .clientDealtCards: self = .clientDealtCards
        case .activatePlayer: self = .activatePlayer(try PeerRef(reading: &reader))
        case .clientTurnedCard: self = .clientTurnedCard
        case .playerShouldSnap: self = .playerShouldSnap
        case .playerCalledSnap: self = .playerCalledSnap(try PlayerCalledSnap(reading: &reader))
        case .otherClientQuit: self = .otherClientQuit(try PeerRef(reading: &reader))
        case .serverQuit: self = .serverQuit
        case .clientQuit: self = .clientQuit
        case .cardTurned: self = .cardTurned(try CardTurned(reading: &reader))
        case .snapGameOver: self = .snapGameOver(try SnapGameOver(reading: &reader))
        case .paddleState: self = .paddleState(try PaddleState(reading: &reader))
        case .tableSnapshot: self = .tableSnapshot(try TableSnapshot(reading: &reader))
        case .goalScored: self = .goalScored(try GoalScored(reading: &reader))
        case .puckMatchOver: self = .puckMatchOver(try PuckMatchOver(reading: &reader))
        case .sunsStart: self = .sunsStart(try SunsStart(reading: &reader))
        case .sunsStrike: self = .sunsStrike(try SunsStrike(reading: &reader))
        case .sunsCapture: self = .sunsCapture(try SunsCapture(reading: &reader))
        case .sunsTally: self = .sunsTally(try SunsTally(reading: &reader))
        case .gameReliable: self = .game(try GamePayload(reliable: true, reading: &reader))
        case .gameUnreliable: self = .game(try GamePayload(reliable: false, reading: &reader))
        }
    }

    /// Writes the payload (not the header).
    func write(to writer: inout WireWriter) throws(EncodeError) {
        switch self {
        case .hello(let body): try body.write(to: &writer)
        case .challenge(let body): try body.write(to: &writer)
        case .welcome(let body): try body.write(to: &writer)
        case .reject(let body): try body.write(to: &writer)
        case .ack(let body): try body.write(to: &writer)
        case .ping(let body), .pong(let body): try body.write(to: &writer)
        case .disconnect(let body): try body.write(to: &writer)
        case .chat(let body): try body.write(to: &writer)
        case .signInResponse(let body): try body.write(to: &writer)
        case .serverReady(let body): try body.write(to: &writer)
        case .dealCards(let body): try body.write(to: &writer)
        case .activatePlayer(let body), .otherClientQuit(let body): try body.write(to: &writer)
        case .playerCalledSnap(let body): try body.write(to: &writer)
        case .cardTurned(let body): try body.write(to: &writer)
        case .snapGameOver(let body): try body.write(to: &writer)
        case .paddleState(let body): try body.write(to: &writer)
        case .tableSnapshot(let body): try body.write(to: &writer)
        case .goalScored(let body): try body.write(to: &writer)
        case .puckMatchOver(let body): try body.write(to: &writer)
        case .sunsStart(let body): try body.write(to: &writer)
        case .sunsStrike(let body): try body.write(to: &writer)
        case .sunsCapture(let body): try body.write(to: &writer)
        case .sunsTally(let body): try body.write(to: &writer)
        case .game(let body): try body.write(to: &writer)
        case .signInRequest, .clientReady, .clientDealtCards, .clientTurnedCard, .playerShouldSnap, .serverQuit,
            .clientQuit:
            break
        }
    }
}
