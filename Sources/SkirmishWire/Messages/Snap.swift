/// `SignInResponse` (0x0065, C→S, reliable): the player's name, answering `SignInRequest`.
public struct SignInResponse: Sendable, Hashable {
    /// At most 32 UTF-8 bytes.
    public var name: String

    /// A sign-in answer; names longer than 32 bytes or holding control characters are refused.
    public init(name: String) { self.name = name }
}

extension SignInResponse: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        name = try reader.string(limit: WireLimits.maxName)
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.string(name, limit: WireLimits.maxName)
    }
}

/// `ServerReady` (0x0066, S→C, reliable): who sits where, each position relative to the receiver (0 = itself).
public struct ServerReady: Sendable, Hashable {
    /// One seated player and where they sit relative to the receiver.
    public struct Player: Sendable, Hashable {
        /// The player's peer id (from their `Welcome`).
        public var peer: UInt32
        /// 0 is the receiver; others follow clockwise.
        public var position: UInt8
        /// The name the player signed in with.
        public var name: String

        /// A player entry; `position` must be below the number of players.
        public init(peer: UInt32, position: UInt8, name: String) {
            self.peer = peer
            self.position = position
            self.name = name
        }
    }

    /// At most 4 players; every position is below the player count.
    public var players: [Player]

    /// The seating of at most 4 players.
    public init(players: [Player]) { self.players = players }
}

extension ServerReady: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        let n = try reader.count(limit: WireLimits.maxSeats)
        players = []
        players.reserveCapacity(n)
        for _ in 0..<n {
            let peer = try reader.u32()
            let position = try reader.u8()
            guard Int(position) < n else { throw .badValue }
            players.append(Player(peer: peer, position: position, name: try reader.string(limit: WireLimits.maxName)))
        }
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.count(players.count, limit: WireLimits.maxSeats)
        for player in players {
            guard Int(player.position) < players.count else { throw .badValue }
            try writer.u32(player.peer)
            try writer.u8(player.position)
            try writer.string(player.name, limit: WireLimits.maxName)
        }
    }
}

/// `DealCards` (0x0068, S→C, reliable): every player's hand, face down. At most 4 hands and 52 cards in all.
public struct DealCards: Sendable, Hashable {
    /// One player's face-down pile after the deal.
    public struct Hand: Sendable, Hashable {
        /// The peer id whose pile this is.
        public var peer: UInt32
        /// The pile, top card first.
        public var cards: [Card]

        /// A hand of `cards` for `peer`.
        public init(peer: UInt32, cards: [Card]) {
            self.peer = peer
            self.cards = cards
        }
    }

    /// One hand per player, at most 4, holding at most 52 cards in all.
    public var hands: [Hand]

    /// A deal of `hands`.
    public init(hands: [Hand]) { self.hands = hands }
}

extension DealCards: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        let n = try reader.count(limit: WireLimits.maxSeats)
        hands = []
        hands.reserveCapacity(n)
        var total = 0
        for _ in 0..<n {
            let peer = try reader.u32()
            let count = try reader.count(limit: WireLimits.deckSize)
            total += count
            guard total <= WireLimits.deckSize else { throw .tooLarge }
            var cards: [Card] = []
            cards.reserveCapacity(count)
            for _ in 0..<count {
                cards.append(try reader.card())
            }
            hands.append(Hand(peer: peer, cards: cards))
        }
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.count(hands.count, limit: WireLimits.maxSeats)
        var total = 0
        for hand in hands {
            total += hand.cards.count
            guard total <= WireLimits.deckSize else { throw .tooManyElements }
            try writer.u32(hand.peer)
            try writer.count(hand.cards.count, limit: WireLimits.deckSize)
            for card in hand.cards {
                try writer.card(card)
            }
        }
    }
}

/// A payload that is one peer id: `ActivatePlayer` (0x006A) and `OtherClientQuit` (0x006E), both S→C, reliable.
public struct PeerRef: Sendable, Hashable {
    /// The peer id the message names: the player whose turn it is, or the player who left.
    public var peer: UInt32

    /// A reference to `peer`.
    public init(peer: UInt32) { self.peer = peer }
}

extension PeerRef: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        peer = try reader.u32()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(peer)
    }
}

/// The result of a snap call.
public enum SnapOutcome: UInt8, Sendable, Hashable, CaseIterable {
    /// Two face-up top cards shared a rank: the caller takes every face-up pile.
    case right = 0
    /// No match: the caller pays one card to each other player.
    case wrong = 1
    /// Someone else called first.
    case tooLate = 2
}

/// `PlayerCalledSnap` (0x006D, S→C, reliable): who called, how it went, and the state hash after it.
public struct PlayerCalledSnap: Sendable, Hashable {
    /// The peer id of the player who called snap.
    public var peer: UInt32
    /// Whether the call was right, wrong or too late.
    public var outcome: SnapOutcome
    /// FNV-1a hash of the game state after the call; a replica compares its own against it.
    public var stateHash: UInt32

    /// A snap call result as the server broadcasts it.
    public init(peer: UInt32, outcome: SnapOutcome, stateHash: UInt32) {
        self.peer = peer
        self.outcome = outcome
        self.stateHash = stateHash
    }
}

extension PlayerCalledSnap: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        peer = try reader.u32()
        guard let outcome = SnapOutcome(rawValue: try reader.u8()) else { throw .badValue }
        self.outcome = outcome
        stateHash = try reader.u32()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(peer)
        try writer.u8(outcome.rawValue)
        try writer.u32(stateHash)
    }
}

/// `CardTurned` (0x0071, S→C, reliable): a player turned their top card; the state hash after the turn.
public struct CardTurned: Sendable, Hashable {
    /// The peer id of the player who turned the card.
    public var peer: UInt32
    /// The card that went face up.
    public var card: Card
    /// FNV-1a hash of the game state after the turn; a replica compares its own against it.
    public var stateHash: UInt32

    /// A turned card as the server broadcasts it.
    public init(peer: UInt32, card: Card, stateHash: UInt32) {
        self.peer = peer
        self.card = card
        self.stateHash = stateHash
    }
}

extension CardTurned: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        peer = try reader.u32()
        card = try reader.card()
        stateHash = try reader.u32()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(peer)
        try writer.card(card)
        try writer.u32(stateHash)
    }
}

/// `SnapGameOver` (0x0072, S→C, reliable): the winner and the final state hash.
public struct SnapGameOver: Sendable, Hashable {
    /// The peer id of the winner.
    public var winner: UInt32
    /// FNV-1a hash of the final game state.
    public var stateHash: UInt32

    /// The end of a Snap game.
    public init(winner: UInt32, stateHash: UInt32) {
        self.winner = winner
        self.stateHash = stateHash
    }
}

extension SnapGameOver: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        winner = try reader.u32()
        stateHash = try reader.u32()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(winner)
        try writer.u32(stateHash)
    }
}
