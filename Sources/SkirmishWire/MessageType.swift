/// The 16-bit type code of every message in the catalogue, with its delivery class and direction.
public enum MessageType: UInt16, CaseIterable, Sendable {
    case hello = 0x0001
    case challenge = 0x0002
    case welcome = 0x0003
    case reject = 0x0004
    case ack = 0x0005
    case ping = 0x0006
    case pong = 0x0007
    case disconnect = 0x0008
    case chat = 0x0009
    case signInRequest = 0x0064
    case signInResponse = 0x0065
    case serverReady = 0x0066
    case clientReady = 0x0067
    case dealCards = 0x0068
    case clientDealtCards = 0x0069
    case activatePlayer = 0x006A
    case clientTurnedCard = 0x006B
    case playerShouldSnap = 0x006C
    case playerCalledSnap = 0x006D
    case otherClientQuit = 0x006E
    case serverQuit = 0x006F
    case clientQuit = 0x0070
    case cardTurned = 0x0071
    case snapGameOver = 0x0072
    case paddleState = 0x00C8
    case tableSnapshot = 0x00C9
    case goalScored = 0x00CA
    case puckMatchOver = 0x00CB
    case sunsStart = 0x012C
    case sunsStrike = 0x012D
    case sunsCapture = 0x012E
    case sunsTally = 0x012F
    /// A game that is not built in: its bytes, reliable or not (``GamePayload``).
    case gameReliable = 0x0400
    case gameUnreliable = 0x0401

    /// How packets of this type are delivered over UDP.
    public var delivery: Delivery {
        switch self {
        case .hello, .challenge, .reject, .ack, .disconnect: .handshake
        case .ping, .pong, .paddleState, .tableSnapshot, .gameUnreliable: .unreliable
        default: .reliable
        }
    }

    /// Which side may send this type.
    public var direction: Direction {
        switch self {
        case .hello, .signInResponse, .clientReady, .clientDealtCards, .clientTurnedCard, .playerShouldSnap,
            .clientQuit, .paddleState, .sunsTally:
            .clientToServer
        case .challenge, .welcome, .reject, .signInRequest, .serverReady, .dealCards, .activatePlayer,
            .playerCalledSnap, .otherClientQuit, .serverQuit, .cardTurned, .snapGameOver, .tableSnapshot,
            .goalScored, .puckMatchOver:
            .serverToClient
        case .ack, .ping, .pong, .disconnect, .chat, .sunsStart, .sunsStrike, .sunsCapture, .gameReliable,
            .gameUnreliable:
            .both
        }
    }

    /// The catalogue name, as used in metric labels (`skirmish_packets_sent_total{type="PaddleState"}`).
    public var name: String {
        switch self {
        case .hello: "Hello"
        case .challenge: "Challenge"
        case .welcome: "Welcome"
        case .reject: "Reject"
        case .ack: "Ack"
        case .ping: "Ping"
        case .pong: "Pong"
        case .disconnect: "Disconnect"
        case .chat: "Chat"
        case .signInRequest: "SignInRequest"
        case .signInResponse: "SignInResponse"
        case .serverReady: "ServerReady"
        case .clientReady: "ClientReady"
        case .dealCards: "DealCards"
        case .clientDealtCards: "ClientDealtCards"
        case .activatePlayer: "ActivatePlayer"
        case .clientTurnedCard: "ClientTurnedCard"
        case .playerShouldSnap: "PlayerShouldSnap"
        case .playerCalledSnap: "PlayerCalledSnap"
        case .otherClientQuit: "OtherClientQuit"
        case .serverQuit: "ServerQuit"
        case .clientQuit: "ClientQuit"
        case .cardTurned: "CardTurned"
        case .snapGameOver: "SnapGameOver"
        case .paddleState: "PaddleState"
        case .tableSnapshot: "TableSnapshot"
        case .goalScored: "GoalScored"
        case .puckMatchOver: "PuckMatchOver"
        case .sunsStart: "SunsStart"
        case .sunsStrike: "SunsStrike"
        case .sunsCapture: "SunsCapture"
        case .sunsTally: "SunsTally"
        case .gameReliable: "GameReliable"
        case .gameUnreliable: "GameUnreliable"
        }
    }

    /// A dense index in `0..<MessageType.allCases.count`, for per-type counter arrays on hot paths.
    public var index: Int {
        switch self {
        case .hello: 0
        case .challenge: 1
        case .welcome: 2
        case .reject: 3
        case .ack: 4
        case .ping: 5
        case .pong: 6
        case .disconnect: 7
        case .chat: 8
        case .signInRequest: 9
        case .signInResponse: 10
        case .serverReady: 11
        case .clientReady: 12
        case .dealCards: 13
        case .clientDealtCards: 14
        case .activatePlayer: 15
        case .clientTurnedCard: 16
        case .playerShouldSnap: 17
        case .playerCalledSnap: 18
        case .otherClientQuit: 19
        case .serverQuit: 20
        case .clientQuit: 21
        case .cardTurned: 22
        case .snapGameOver: 23
        case .paddleState: 24
        case .tableSnapshot: 25
        case .goalScored: 26
        case .puckMatchOver: 27
        case .sunsStart: 28
        case .sunsStrike: 29
        case .sunsCapture: 30
        case .sunsTally: 31
        case .gameReliable: 32
        case .gameUnreliable: 33
        }
    }
}
