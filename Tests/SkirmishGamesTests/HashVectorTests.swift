import SkirmishGames
import SkirmishTestSupport
import SkirmishWire
import Testing

/// The vectors of `GameRules.md`, read from the article: each game's state serialisation and hash, and consecutive
/// Puck ticks from known states, reproduced with the real rules. The serialisations are rebuilt here from the
/// article's tables, field by field, so the rules, the hashes and the article cannot drift apart.
@Suite struct HashVectorTests {
    static let article = Result {
        try ArticleVectors(article: "GameRules.md", module: "SkirmishWire", testFile: #filePath)
    }

    func vector(_ label: String) throws -> ArticleVectors.Vector {
        try #require(try Self.article.get()[label], "GameRules.md has no vector `\(label)`")
    }

    func packet(_ label: String) throws -> Packet { try Packet.decode(vector(label).bytes) }

    func snapshot(_ label: String) throws -> (number: UInt32, snapshot: TableSnapshot) {
        let packet = try packet(label)
        guard case .tableSnapshot(let snapshot) = packet.message else {
            Issue.record("\(label) is a \(packet.message.type.name), not a TableSnapshot")
            throw ArticleVectors.Problem(description: label)
        }
        return (packet.number, snapshot)
    }

    func hash(_ field: String?) -> UInt32? { ArticleVectors.integer(field).map { UInt32(truncatingIfNeeded: $0) } }

    // MARK: Puck

    /// The article's 63-byte serialisation, written from its table: puck, seat 0's paddle, seat 1's, scores, phase, tick.
    static func serialisation(_ match: PuckMatch) -> (puck: [UInt8], paddles: [UInt8], score: [UInt8]) {
        func f32(_ values: Float...) -> [UInt8] { values.flatMap { u32($0.bitPattern) } }
        func u32(_ v: UInt32) -> [UInt8] {
            [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        }
        let p = match.puck
        let a = match.paddle(of: 0)
        let b = match.paddle(of: 1)
        return (
            f32(p.x, p.y, p.vx, p.vy, p.angle, p.spin), f32(a.x, a.y, a.vx, a.vy, b.x, b.y, b.vx, b.vy),
            [match.score(of: 0), match.score(of: 1), match.phase.rawValue] + u32(match.tick)
        )
    }

    @Test func thePuckHashVectorIsTheSerialisationOfTheFirstState() throws {
        let match = PuckMatch(snapshot: try snapshot("puck.play.0").snapshot, seat: 0)
        let vector = try vector("puck.hash.play.0")
        let parts = Self.serialisation(match)
        #expect(ArticleVectors.hex(parts.puck + parts.paddles + parts.score) == ArticleVectors.hex(vector.bytes))
        #expect(vector.bytes.count == 63)
        #expect(FNV1a.hash(vector.bytes) == match.stateHash)
        #expect(hash(vector.fields["fnv1a"]) == match.stateHash)
        #expect(hash(vector.fields["puck"]) == FNV1a.hash(parts.puck) && match.hashes.puck == FNV1a.hash(parts.puck))
        #expect(hash(vector.fields["paddles"]) == match.hashes.paddles)
        #expect(hash(vector.fields["score"]) == match.hashes.score)
    }

    /// Each sequence: adopt state 0, step with the stated inputs, and every later state, hash included, is the vector.
    @Test(arguments: ["play", "wall", "goal", "pause"])
    func puckTicksFromAKnownStateReproduceTheVectorsBitForBit(sequence: String) throws {
        let first = try snapshot("puck.\(sequence).0")
        var match = PuckMatch(snapshot: first.snapshot, seat: 0)
        let again = Packet(
            number: first.number, .tableSnapshot(match.snapshot(for: 0, lastInputStep: first.snapshot.lastInputStep)))
        #expect(ArticleVectors.hex(try again.encoded()) == ArticleVectors.hex(try vector("puck.\(sequence).0").bytes))
        var states = [first.snapshot]
        var tick = 1
        var events = PuckEvents()
        while let expected = try Self.article.get()["puck.\(sequence).\(tick)"] {
            var targets: [PuckTarget?] = [nil, nil]
            for seat in 0..<2 {
                guard let input = try Self.article.get()["puck.\(sequence).\(tick).input\(seat)"] else { continue }
                guard case .paddleState(let state) = try Packet.decode(input.bytes).message else {
                    Issue.record("puck.\(sequence).\(tick).input\(seat) is not a PaddleState")
                    continue
                }
                targets[seat] = PuckTarget(state)
            }
            events = match.step(targets: targets)
            let decoded = try Packet.decode(expected.bytes)
            guard case .tableSnapshot(let want) = decoded.message else {
                Issue.record("puck.\(sequence).\(tick) is not a TableSnapshot")
                break
            }
            let got = Packet(
                number: decoded.number, .tableSnapshot(match.snapshot(for: 0, lastInputStep: want.lastInputStep)))
            let gotHex = ArticleVectors.hex(try got.encoded())
            #expect(gotHex == ArticleVectors.hex(expected.bytes), "puck.\(sequence).\(tick): got \(gotHex)")
            states.append(want)
            tick += 1
        }
        #expect(states.count >= 2, "puck.\(sequence) has no ticks")
        let last = try #require(states.last)
        // What each sequence is there to show, so that it keeps showing it.
        switch sequence {
        case "play":
            #expect(states.count >= 4)
            let hit = states[1].puck
            #expect(first.snapshot.puck.vy > 0 && hit.vy < 0, "seat 0's paddle hits the puck on the first tick")
            #expect(abs((hit.vx * hit.vx + hit.vy * hit.vy).squareRoot() - PuckConstants.hitSpeed.upperBound) < 0.001)
            let step = states[2].me
            #expect((step.vx * step.vx + step.vy * step.vy).squareRoot() < PuckConstants.maxPaddleStep, "a capped step")
            #expect(states[3].me.vx == step.vx && states[3].me.vy == step.vy, "no input: on toward the last target")
        case "wall":
            #expect(last.puck.vx < 0 && last.puck.spin != first.snapshot.puck.spin - 0.05, "a side-wall bounce")
        case "goal":
            #expect(states[1].phase == .playing && states[1].puck.y < PuckConstants.puckRadius, "the puck in the mouth")
            #expect(
                last.phase == .goalPause && last.puck.angle == Float(PuckConstants.goalPauseTicks)
                    && last.myScore == first.snapshot.myScore + 1)
            let goal = try #require(events.goal, "the last tick scores")
            for seat in 0..<2 {
                let label = "puck.goal.\(states.count - 1).goal-scored.seat\(seat)"
                let packet = try packet(label)
                #expect(packet.message == .goalScored(goal.message(for: seat)), "\(label)")
                #expect(try packet.encoded() == vector(label).bytes)
            }
        default:
            #expect(states[1].phase == .goalPause && states[1].puck.angle == 1)
            #expect(last.phase == .playing && last.puck.angle == 0)
        }
    }

    /// The π and 2π the article states (`puck.constants`) are the ones the angle wraps by: `puck.wall` wraps, and its
    /// angle is (3 + spin) − 2π with the article's 2π, bit for bit.
    @Test func theAngleWrapsByTheArticlesTwoPi() throws {
        let constants = try vector("puck.constants")
        let pi = try #require(hash(constants.fields["pi"]))
        let twoPi = try #require(hash(constants.fields["two-pi"]))
        #expect(pi == Float.pi.bitPattern && twoPi == (2 * Float.pi).bitPattern)
        let first = try snapshot("puck.wall.0").snapshot
        var match = PuckMatch(snapshot: first, seat: 0)
        _ = match.step(targets: [nil, nil])
        let wrapped = (first.puck.angle + match.puck.spin) - Float(bitPattern: twoPi)
        #expect(first.puck.angle + match.puck.spin > Float(bitPattern: pi), "the sequence wraps")
        #expect(match.puck.angle.bitPattern == wrapped.bitPattern)
    }

    /// `GameRules.md`, "A goal": the puck rests at the centre (velocity and spin 0, angle 180: the kick-off's countdown); paddles, their targets,
    /// the tick and the other score stay as they were.
    @Test func aGoalResetsOnlyThePuck() throws {
        var match = PuckMatch(snapshot: try snapshot("puck.goal.0").snapshot, seat: 0)
        _ = match.step(targets: [PuckTarget(x: 100, y: 300), PuckTarget(x: 200, y: 300)])
        let before = (p0: match.paddle(of: 0), p1: match.paddle(of: 1), tick: match.tick)
        #expect(before.p0.vx != 0 && before.p1.vx != 0, "both paddles are moving")
        let events = match.step(targets: [nil, nil])
        #expect(events.goal != nil, "the second tick scores")
        #expect(match.phase == .goalPause && match.tick == before.tick + 1)
        #expect(match.puck == .init(x: 160, y: 240, vx: 0, vy: 0, angle: Float(PuckConstants.goalPauseTicks), spin: 0))
        // The paddles moved in the scoring step, toward the targets they had, and keep their velocities.
        #expect(match.paddle(of: 0).vx != 0 && match.paddle(of: 1).vx != 0)
        // The targets survive the goal: the first pause tick brings both paddles onto them (36.6 and 27.7 px left).
        _ = match.step(targets: [nil, nil])
        #expect(match.paddle(of: 0).x == 100 && match.paddle(of: 0).y == 300)
        #expect(match.paddle(of: 1).x == 120 && match.paddle(of: 1).y == 180, "seat 1's (200, 300), mirrored")
    }

    @Test func seatOnesViewIsTheMirrorImageWithTheSameHash() throws {
        let seat0 = try snapshot("puck.play.0")
        let seat1 = try snapshot("puck.play.0.seat1")
        let canonical = PuckMatch(snapshot: seat0.snapshot, seat: 0)
        #expect(PuckMatch(snapshot: seat1.snapshot, seat: 1).hashes == canonical.hashes)
        #expect(seat1.snapshot.stateHash == seat0.snapshot.stateHash)
        #expect(seat1.snapshot.me.x == PuckConstants.width - seat0.snapshot.them.x)
        #expect(seat1.snapshot.me.vx.bitPattern == (-seat0.snapshot.them.vx).bitPattern)
        let view = Packet(number: seat1.number, .tableSnapshot(canonical.snapshot(for: 1, lastInputStep: 0)))
        #expect(ArticleVectors.hex(try view.encoded()) == ArticleVectors.hex(try vector("puck.play.0.seat1").bytes))
    }

    // MARK: Snap

    /// The article's serialisation, from its table: deck, piles, turn.
    static func serialisation(_ game: SnapGame) -> (deck: [UInt8], piles: [UInt8], turn: [UInt8]) {
        var deck = [UInt8(game.seats)]
        for hand in game.hands { deck += [UInt8(hand.count)] + hand.map(\.rawValue) }
        var piles: [UInt8] = []
        for pile in game.piles { piles += [UInt8(pile.count)] + pile.map(\.rawValue) }
        let taken = UInt32(game.turnsTaken)
        let turn: [UInt8] = [
            UInt8(game.turn), game.winner.map(UInt8.init) ?? 255, UInt8(taken >> 24), UInt8(taken >> 16 & 0xFF),
            UInt8(taken >> 8 & 0xFF), UInt8(taken & 0xFF), game.pairClaimed ? 1 : 0,
        ]
        return (deck, piles, turn)
    }

    func checkSnapHash(_ game: SnapGame, _ label: String) throws {
        let vector = try vector(label)
        let parts = Self.serialisation(game)
        #expect(
            ArticleVectors.hex(parts.deck + parts.piles + parts.turn) == ArticleVectors.hex(vector.bytes), "\(label)")
        #expect(FNV1a.hash(vector.bytes) == game.stateHash)
        #expect(hash(vector.fields["fnv1a"]) == game.stateHash, "\(label)")
        #expect(hash(vector.fields["deck"]) == FNV1a.hash(parts.deck) && game.hashes.deck == FNV1a.hash(parts.deck))
        #expect(hash(vector.fields["piles"]) == game.hashes.piles && hash(vector.fields["turn"]) == game.hashes.turn)
    }

    @Test func snapHashesFollowTheDealTwoTurnsAndARightCall() throws {
        var game = try SnapGame(hands: [
            (0..<26).map { Card(rawValue: UInt8($0))! }, (26..<52).map { Card(rawValue: UInt8($0))! },
        ])
        try checkSnapHash(game, "snap.hash.dealt")
        let first = try game.turnCard(by: 0)
        #expect(
            try packet("snap.card-turned.0").message
                == .cardTurned(CardTurned(peer: 7, card: first, stateHash: game.stateHash)))
        let second = try game.turnCard(by: 1)
        #expect(
            try packet("snap.card-turned.1").message
                == .cardTurned(CardTurned(peer: 9, card: second, stateHash: game.stateHash)))
        let outcome = try game.callSnap(by: 1)
        #expect(outcome == .right)
        #expect(
            try packet("snap.player-called-snap").message
                == .playerCalledSnap(PlayerCalledSnap(peer: 9, outcome: outcome, stateHash: game.stateHash)))
        try checkSnapHash(game, "snap.hash.after-snap")
        for label in ["snap.card-turned.0", "snap.card-turned.1", "snap.player-called-snap"] {
            let bytes = try vector(label).bytes
            #expect(try packet(label).encoded() == bytes, "\(label)")
        }
    }

    // MARK: Suns

    @Test func sunsHashCoversTheLayoutAndEveryClaim() throws {
        var game = SunsGame(seat: 0)
        game.propose(coinToss: 7, suns: [.init(x: 0.25, y: 0.25), .init(x: 0.75, y: 0.5)])
        game.receiveStart(SunsStart(coinToss: 3, suns: [.init(x: 0.5, y: 0.5)]))
        let strike = SunsStrike(x: 0.25, y: 0.375, radius: 0.25, gameTime: 1)
        #expect(try packet("suns.strike").message == .sunsStrike(strike))
        let captures = game.strike(strike, by: 0)
        #expect(captures.map { Message.sunsCapture($0) } == [try packet("suns.capture").message])
        // Seat 1 computes the same capture from the strike, bit for bit, and the capture vector passes its check.
        var receiver = SunsReplica(seat: 1)
        receiver.game.propose(coinToss: 3, suns: [.init(x: 0.5, y: 0.5)])
        receiver.game.receiveStart(SunsStart(coinToss: 7, suns: [.init(x: 0.25, y: 0.25), .init(x: 0.75, y: 0.5)]))
        #expect(receiver.receive(strike) == .ok)
        guard case .sunsCapture(let capture) = try packet("suns.capture").message else {
            Issue.record("suns.capture is not a SunsCapture")
            return
        }
        #expect(receiver.receive(capture) == .ok)
        #expect(receiver.game.best[0][0]?.bitPattern == 0x3F90_0000)
        let recorded = game.receiveCapture(SunsCapture(sunIndex: 1, gameTime: 2.5), by: 1)
        #expect(recorded)
        #expect(try packet("suns.tally").message == .sunsTally(game.tally()))
        let final = try vector("suns.hash.final")
        func f32(_ v: Float) -> [UInt8] { withUnsafeBytes(of: v.bitPattern.bigEndian) { Array($0) } }
        let layout = [UInt8(2)] + f32(0.25) + f32(0.25) + f32(0.75) + f32(0.5)
        var claims: [UInt8] = []
        for sun in 0..<2 {
            for seat in 0..<2 {
                let time = game.best[seat][sun]
                claims += [time == nil ? 0 : 1] + f32(time ?? 0)
            }
        }
        #expect(ArticleVectors.hex(layout + claims) == ArticleVectors.hex(final.bytes))
        #expect(FNV1a.hash(final.bytes) == game.hashes.combined && hash(final.fields["fnv1a"]) == game.hashes.combined)
        #expect(
            hash(final.fields["layout"]) == game.hashes.layout && hash(final.fields["captures"]) == game.hashes.captures
        )
        for label in ["suns.strike", "suns.capture", "suns.tally"] {
            let bytes = try vector(label).bytes
            #expect(try packet(label).encoded() == bytes, "\(label)")
        }
    }
}
