import SkirmishGames
import SkirmishTestSupport
import SkirmishWire
import Testing

@Suite struct SnapGameTests {
    /// Cards by "rank letter + suit index" for readable fixtures: `c(0, 5)` is the 6 of suit 0.
    func c(_ suit: Int, _ rank: Int) -> Card { Card(suit: suit, rank: rank)! }

    /// A full deck dealt so that the given cards lead each hand, the rest spread round-robin after them.
    func table(leading: [[Card]]) throws -> SnapGame {
        var hands = leading
        let used = Set(leading.joined())
        for (i, card) in Card.deck.filter({ !used.contains($0) }).enumerated() {
            hands[i % hands.count].append(card)
        }
        return try SnapGame(hands: hands)
    }

    /// Whether the hands and piles hold each of the 52 cards exactly once.
    func isFullDeck(_ game: SnapGame) -> Bool {
        var seen: UInt64 = 0
        var count = 0
        for stack in game.hands + game.piles {
            for card in stack {
                seen |= 1 << UInt64(card.rawValue)
                count += 1
            }
        }
        return count == 52 && seen == (1 << 52) - 1
    }

    @Test(arguments: 2...4)
    func theDealIsSeededEvenAndComplete(seats: Int) {
        let game = SnapGame(seats: seats, seed: 42)
        #expect(isFullDeck(game))
        let counts = (0..<seats).map { game.hands[$0].count }
        #expect(counts.max()! - counts.min()! <= 1)
        #expect(counts == counts.sorted(by: >))
        #expect(SnapGame(seats: seats, seed: 42) == game)
        #expect(SnapGame(seats: seats, seed: 43) != game)
        #expect(game.turn == 0 && game.winner == nil)
    }

    @Test func theDealIsGolden() {
        var four = SnapGame(seats: 4, seed: 7)
        for _ in 0..<10 {
            _ = try? four.turnCard(by: four.turn)
        }
        _ = try? four.callSnap(by: 3)
        #expect(four.stateHash == 0xA13F_5CF2, "got \(String(four.stateHash, radix: 16))")
        let game = SnapGame(seats: 2, seed: 1)
        #expect(
            game.hands[0].prefix(5).map(\.rawValue) == [19, 16, 20, 23, 47],
            "got \(game.hands[0].prefix(5).map(\.rawValue))")
    }

    @Test func turnsGoInSeatOrderAndOutOfTurnIsRefused() throws {
        var game = SnapGame(seats: 3, seed: 1)
        #expect(throws: SnapError.notYourTurn) { try game.turnCard(by: 1) }
        #expect(throws: SnapError.invalidSeat) { try game.turnCard(by: 3) }
        let top = game.hands[0][0]
        #expect(try game.turnCard(by: 0) == top)
        #expect(game.piles[0] == [top] && game.turn == 1)
        _ = try game.turnCard(by: 1)
        _ = try game.turnCard(by: 2)
        #expect(game.turn == 0 && game.turnsTaken == 3)
    }

    @Test func aRightCallTakesEveryPileAndALaterCallIsTooLate() throws {
        var game = try table(leading: [[c(0, 4)], [c(1, 9)], [c(2, 4)]])
        _ = try game.turnCard(by: 0)
        _ = try game.turnCard(by: 1)
        #expect(!game.hasPair)
        _ = try game.turnCard(by: 2)
        #expect(game.hasPair)
        let handBefore = game.hands[1]
        #expect(try game.callSnap(by: 1) == .right)
        #expect(game.hands[1] == handBefore + [c(0, 4), c(1, 9), c(2, 4)])
        #expect(game.piles.allSatisfy { $0.isEmpty })
        let hash = game.stateHash
        #expect(try game.callSnap(by: 0) == .tooLate)
        #expect(game.stateHash == hash)
        #expect(isFullDeck(game))
        // The next turn resets it: a call with no pair is wrong again.
        _ = try game.turnCard(by: 0)
        #expect(try game.callSnap(by: 2) == .wrong)
    }

    @Test func aWrongCallPaysOneCardToEachOtherPlayerClockwise() throws {
        var game = try table(leading: [[c(0, 1)], [c(1, 2)], [c(2, 3)]])
        _ = try game.turnCard(by: 0)
        let payer = game.hands[1]
        let before0 = game.hands[0]
        let before2 = game.hands[2]
        #expect(try game.callSnap(by: 1) == .wrong)
        #expect(game.hands[1] == Array(payer.dropFirst(2)))
        #expect(game.hands[2] == before2 + [payer[0]])
        #expect(game.hands[0] == before0 + [payer[1]])
        #expect(isFullDeck(game))
    }

    @Test func aPlayerWithoutCardsIsOutAndTheLastHolderWins() throws {
        // Seat 1 holds one card; a wrong call pays it to seat 2 and leaves it out.
        var hands: [[Card]] = [[], [c(0, 0)], []]
        for (i, card) in Card.deck.dropFirst().enumerated() {
            hands[i % 2 == 0 ? 0 : 2].append(card)
        }
        var game = try SnapGame(hands: hands)
        #expect(try game.callSnap(by: 1) == .wrong)
        #expect(!game.isIn(1))
        #expect(game.hands[2].last == c(0, 0))
        #expect(throws: SnapError.eliminated) { try game.callSnap(by: 1) }
        _ = try game.turnCard(by: 0)
        #expect(game.turn == 2)
        // Seat 2 quits: its cards go to seat 0, the last holder, who wins.
        try game.quit(seat: 2)
        #expect(game.winner == 0)
        #expect(game.cardCount(of: 0) == 52)
        #expect(throws: SnapError.gameOver) { try game.turnCard(by: 0) }
    }

    @Test func anEmptyHandTurnsItsPileOver() throws {
        var game = try table(leading: [[c(0, 0), c(0, 1)], [c(1, 5), c(1, 6)]])
        // Play without calls until seat 0 is to turn with an empty hand: it flips its pile over (bottom first).
        var turns = 0
        while !(game.hands[0].isEmpty && game.turn == 0) && turns < 200 && game.winner == nil {
            _ = try game.turnCard(by: game.turn)
            turns += 1
        }
        try #require(game.hands[0].isEmpty && game.turn == 0)
        let pile = game.piles[0]
        #expect(try game.turnCard(by: 0) == pile[0])
        #expect(game.hands[0] == Array(pile.dropFirst()))
    }

    @Test func withoutCallsTheTurnLimitEndsTheGameOnCardCount() throws {
        var game = SnapGame(seats: 2, seed: 5)
        var actions = 0
        while game.winner == nil && actions < SnapGame.turnLimit + 10 {
            _ = try game.turnCard(by: game.turn)
            actions += 1
        }
        #expect(actions == SnapGame.turnLimit)
        #expect(game.winner == 0) // 26 each: the tie goes to the lower seat
    }

    @Test func relativePositionsPutTheViewerAtZeroAndOthersClockwise() {
        let game = SnapGame(seats: 4, seed: 0)
        #expect((0..<4).map { game.relativePosition(of: $0, viewer: 2) } == [2, 3, 0, 1])
        for viewer in 0..<4 {
            for seat in 0..<4 {
                #expect(game.seat(atPosition: game.relativePosition(of: seat, viewer: viewer), viewer: viewer) == seat)
            }
        }
    }

    /// 2,000 short games (turn limit 60) and 100 at the full limit, with checks after every action.
    @Test(.ownThread, arguments: [(0, 60), (1, 60), (2, 60), (3, 60), (4, 5_000)] as [(UInt64, Int)])
    func thousandsOfSeededGamesConserveTheDeckAndEnd(part: UInt64, turnLimit: Int) {
        var rng = SeededRandom(seed: 0xC0FFEE + part)
        let games = turnLimit == SnapGame.turnLimit ? 100 : 500
        var unfinished = 0
        var broken = 0
        var hashWrong = 0
        var outcomes: [SnapOutcome: Int] = [:]
        var eliminations = 0
        for game in 0..<games {
            var state = SnapGame(seats: 2 + game % 3, seed: rng.next(), turnLimit: turnLimit)
            var actions = 0
            while state.winner == nil && actions < 3 * turnLimit {
                actions += 1
                let before = state
                let hashBefore = state.stateHash
                let roll = rng.next() % 10
                if roll < 7 {
                    _ = try? state.turnCard(by: roll == 0 ? Int(rng.next() % 4) : state.turn)
                } else if let outcome = try? state.callSnap(by: Int(rng.next() % UInt64(state.seats))) {
                    outcomes[outcome, default: 0] += 1
                }
                if !isFullDeck(state) { broken += 1 }
                if (before == state) != (hashBefore == state.stateHash) { hashWrong += 1 }
            }
            unfinished += state.winner == nil ? 1 : 0
            eliminations += state.turnsTaken < turnLimit ? 1 : 0
        }
        #expect(unfinished == 0)
        #expect(broken == 0)
        #expect(hashWrong == 0)
        #expect(eliminations > 0)
        #expect(outcomes[.right, default: 0] > 10 && outcomes[.wrong, default: 0] > 10)
        #expect(outcomes[.tooLate, default: 0] > 0)
    }
}
