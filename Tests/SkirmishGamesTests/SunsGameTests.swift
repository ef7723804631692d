import SkirmishGames
import SkirmishWire
import Testing

@Suite struct SunsGameTests {
    func layout(_ seed: UInt64) -> [SunsStart.Sun] {
        var inputs = Inputs(seed: seed)
        return (0..<5).map { _ in SunsStart.Sun(x: inputs.unit(), y: inputs.unit()) }
    }

    /// Two peers toss until they agree, delivering each side's proposals in order but at any interleaving.
    func adopt(tosses: [(UInt32, UInt32)], rng: inout SeededRandom) -> (SunsGame, SunsGame) {
        var a = SunsGame(seat: 0)
        var b = SunsGame(seat: 1)
        var toB: [SunsStart] = []
        var toA: [SunsStart] = []
        var roundA = 0
        var roundB = 0
        func propose(_ game: inout SunsGame, _ toss: UInt32, _ outbox: inout [SunsStart], seed: UInt64) {
            let start = SunsStart(coinToss: toss, suns: layout(seed))
            game.propose(coinToss: start.coinToss, suns: start.suns)
            outbox.append(start)
        }
        propose(&a, tosses[0].0, &toB, seed: 1_000)
        propose(&b, tosses[0].1, &toA, seed: 2_000)
        var steps = 0
        while (a.layout == nil || b.layout == nil) && steps < 1_000 {
            steps += 1
            let deliverToA = !toA.isEmpty && (toB.isEmpty || rng.next() % 2 == 0)
            if deliverToA {
                if a.receiveStart(toA.removeFirst()) == .retoss {
                    roundA += 1
                    propose(&a, tosses[min(roundA, tosses.count - 1)].0, &toB, seed: 1_000 + UInt64(roundA))
                }
            } else if !toB.isEmpty {
                let result = b.receiveStart(toB.removeFirst())
                if result == .retoss {
                    roundB += 1
                    propose(&b, tosses[min(roundB, tosses.count - 1)].1, &toA, seed: 2_000 + UInt64(roundB))
                }
            }
        }
        return (a, b)
    }

    @Test func everyTossPairLeadsBothPeersToTheSameLayout() throws {
        var rng = SeededRandom(seed: 4)
        let cases: [[(UInt32, UInt32)]] = [
            [(5, 3)], [(3, 5)], [(7, 7), (1, 2)], [(7, 7), (9, 9), (4, 0)], [(0, .max)],
            Array(repeating: (1, 1), count: 40),
        ]
        for tosses in cases {
            let (a, b) = adopt(tosses: tosses, rng: &rng)
            let agreed = try #require(a.layout)
            #expect(b.layout == agreed)
            let decisive = tosses.first { $0.0 != $0.1 }
            if let decisive {
                let round = tosses.firstIndex { $0.0 != $0.1 }!
                #expect(agreed == layout(decisive.0 > decisive.1 ? 1_000 + UInt64(round) : 2_000 + UInt64(round)))
            } else {
                #expect(a.myProposals.count == SunsGame.maxTossRounds)
                #expect(agreed == layout(1_000 + UInt64(SunsGame.maxTossRounds - 1)))
            }
        }
        for _ in 0..<500 {
            let tosses = (0..<3).map { _ in (UInt32(rng.next() % 3), UInt32(rng.next() % 3)) }
            let (a, b) = adopt(tosses: tosses, rng: &rng)
            #expect(a.layout != nil && a.layout == b.layout)
        }
    }

    func started(_ seat: Int) -> SunsGame {
        var game = SunsGame(seat: seat)
        let suns = [SunsStart.Sun(x: 0.5, y: 0.5), SunsStart.Sun(x: 0.1, y: 0.1), SunsStart.Sun(x: 0.9, y: 0.9)]
        game.propose(coinToss: seat == 0 ? 10 : 1, suns: suns)
        game.receiveStart(SunsStart(coinToss: seat == 0 ? 1 : 10, suns: suns))
        return game
    }

    @Test func aStrikeCapturesSunsWithinItsRadiusAtTheScaledTime() {
        var game = started(0)
        let captures = game.strike(SunsStrike(x: 0.5, y: 0.8, radius: 0.4, gameTime: 10), by: 0)
        // Sun 0 is 0.3 away: 10 + 0.25 × 0.75; sun 2 is 0.41 away: outside.
        #expect(captures.map(\.sunIndex) == [0])
        #expect(captures[0].gameTime == 10 + 0.25 * ((0.3 as Float) * 0.3).squareRoot() / 0.4)
        // A later, closer strike improves the claim; a worse one does not.
        let closer = game.strike(SunsStrike(x: 0.5, y: 0.5, radius: 0.4, gameTime: 10.1), by: 0)
        #expect(closer.map(\.gameTime) == [10.1])
        let worse = game.strike(SunsStrike(x: 0.5, y: 0.6, radius: 0.4, gameTime: 10.2), by: 0)
        #expect(worse.isEmpty)
        let late = game.strike(SunsStrike(x: 0.9, y: 0.9, radius: 0.1, gameTime: SunsGame.duration), by: 0)
        #expect(late.isEmpty)
        #expect(!game.isOver && game.isOver(at: 60))
    }

    @Test func conflictsGoToTheEarlierTimeAndTiesToTheLowerSeat() {
        var game = started(1)
        game.receiveCapture(SunsCapture(sunIndex: 0, gameTime: 5), by: 0)
        game.receiveCapture(SunsCapture(sunIndex: 0, gameTime: 4.5), by: 1)
        game.receiveCapture(SunsCapture(sunIndex: 1, gameTime: 3), by: 1)
        game.receiveCapture(SunsCapture(sunIndex: 1, gameTime: 3), by: 0)
        game.receiveCapture(SunsCapture(sunIndex: 2, gameTime: 8), by: 1)
        #expect(game.owner(of: 0) == SunsGame.Claim(seat: 1, time: 4.5))
        #expect(game.owner(of: 1) == SunsGame.Claim(seat: 0, time: 3))
        #expect(game.owner(of: 2) == SunsGame.Claim(seat: 1, time: 8))
        #expect(game.isOver)
        #expect(
            game.tally().entries == [
                SunsTally.Entry(owner: 1, time: 4.5), SunsTally.Entry(owner: 0, time: 3),
                SunsTally.Entry(owner: 1, time: 8),
            ])
        let badIndex = game.receiveCapture(SunsCapture(sunIndex: 3, gameTime: 1), by: 0)
        let notEarlier = game.receiveCapture(SunsCapture(sunIndex: 0, gameTime: 9), by: 1)
        #expect(!badIndex && !notEarlier)
    }

    /// Random races: each peer strikes, sends its captures; the other receives them in any order and at any delay.
    @Test func tallyAgreesUnderAnyMessageOrder() {
        var rng = SeededRandom(seed: 99)
        var inputs = Inputs(seed: 98)
        var disagreements = 0
        var contested = 0
        for _ in 0..<300 {
            var peers = [started(0), started(1)]
            var sent: [[SunsCapture]] = [[], []]
            var time: Float = 0
            for _ in 0..<12 {
                time += inputs.unit()
                let seat = Int(rng.next() % 2)
                // Quantised strike times make exact ties between the seats happen too.
                let strike = SunsStrike(
                    x: inputs.unit(), y: inputs.unit(), radius: 0.05 + inputs.unit() * 0.5,
                    gameTime: (time * 4).rounded() / 4)
                sent[seat] += peers[seat].strike(strike, by: seat)
            }
            for seat in 0..<2 {
                var inbox = sent[1 - seat]
                for i in stride(from: inbox.count - 1, to: 0, by: -1) {
                    inbox.swapAt(i, Int(rng.next() % UInt64(i + 1)))
                }
                for capture in inbox {
                    peers[seat].receiveCapture(capture, by: 1 - seat)
                }
            }
            let claimedByBoth = Set(sent[0].map(\.sunIndex)).intersection(sent[1].map(\.sunIndex))
            contested += claimedByBoth.count
            disagreements += SunsTallyComparison.agree(peers[0].tally(), peers[1].tally()) ? 0 : 1
            disagreements += peers[0].hashes.captures == peers[1].hashes.captures ? 0 : 1
        }
        #expect(disagreements == 0)
        #expect(contested > 50)
    }

    @Test func talliesAgreeOnlyWhenEveryEntryMatchesBitForBit() {
        let a = SunsTally(entries: [.init(owner: 0, time: 1), .init(owner: 255, time: 0)])
        #expect(SunsTallyComparison.agree(a, a))
        #expect(!SunsTallyComparison.agree(a, SunsTally(entries: [.init(owner: 0, time: 1)])))
        #expect(!SunsTallyComparison.agree(a, SunsTally(entries: [.init(owner: 1, time: 1), a.entries[1]])))
        #expect(
            !SunsTallyComparison.agree(a, SunsTally(entries: [.init(owner: 0, time: Float(1).nextUp), a.entries[1]])))
        #expect(!SunsTallyComparison.agree(a, SunsTally(entries: [a.entries[0], .init(owner: 255, time: -0.0)])))
    }
}

@Suite struct SunsTallyTimingTests {
    @Test func theTallyIsDueTwoSecondsAfterTheLastKnownCapture() {
        var game = SunsGame(seat: 0)
        game.propose(coinToss: 2, suns: [SunsStart.Sun(x: 0.5, y: 0.5)])
        game.receiveStart(SunsStart(coinToss: 1, suns: []))
        #expect(!game.isTallyDue(at: 30))
        game.receiveCapture(SunsCapture(sunIndex: 0, gameTime: 12), by: 1)
        #expect(game.isOver)
        #expect(!game.isTallyDue(at: 13.9))
        #expect(game.isTallyDue(at: 14))
        #expect(SunsGame(seat: 1).isTallyDue(at: 100) == false)
    }
}
