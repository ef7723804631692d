import SkirmishGames
import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// The server answers a Hello for each built-in game with a Welcome (it hosts the game) or `Reject(4 bad
    /// request)` (it does not); the answers decide which game-specific checks run.
    static let handshakeGames = ConformanceCheck(
        id: "handshake.games", title: "a Hello for each built-in game gets a Welcome or Reject(4)", needs: .nothing,
        limit: .seconds(15)
    ) { context in
        let survey = await GameSurvey.take(context)
        context.surveyBox.value = survey
        let broken = GameSurvey.builtIn.compactMap { game in survey.broken[game].map { "\(game): \($0)" } }
        guard broken.isEmpty else {
            return .failed(
                "a Welcome or Reject(4 bad request) to a Hello for each of puck, snap and suns",
                broken.joined(separator: "; "))
        }
        guard !survey.hosted.isEmpty || !survey.otherSeats.isEmpty else {
            return .failed("a Welcome to a Hello for at least one of puck, snap and suns", "Reject(4) to each")
        }
        return .pass
    }

    /// Snap's opening, as a client sees it, at a table of the size the survey found (two where the server seats Snap
    /// for two, else the 4 or 3 it took: ``GameSurvey/seats(of:)``): sign-in, `ServerReady` positions relative to each
    /// receiver, one deal of 52 distinct cards in seat order, seat 0 first to turn, and a `CardTurned` whose card and
    /// state hash are what the rules give from that deal; then later rounds: a wrong snap call, seven more turns in the
    /// order the rules give, and a right and a late call whenever a pair shows, each result's hash as the rules give.
    static let snapDeal = ConformanceCheck(
        id: "snap.deal",
        title: "Snap deals 52 cards in seat order, positions relative, turns and calls hashed as the rules give",
        needs: .game(.snap), limit: .seconds(20)
    ) { context in
        let seats = context.survey.seats(of: .snap) ?? 2
        context.note(
            seats == 2
                ? "played at 2 seats" : "played at \(seats) seats: the server refused snap for 2 with Reject(4)")
        let (table, failure) = try await context.table(of: seats, game: .snap).players()
        guard let table else { return failure! }
        defer { release(table.map(\.player)) }
        // A, B, C, D in the order they joined; `bySeat[s]` is the player in seat s.
        let players = table.enumerated().map { index, seated in
            (
                player: seated.player, welcome: seated.welcome,
                name: String(UnicodeScalar(UInt8(ascii: "A") + UInt8(index)))
            )
        }
        let bySeat = players.sorted { $0.welcome.seat < $1.welcome.seat }
        let peers = bySeat.map(\.welcome.peer)
        let everyone = seats == 2 ? "both players" : "all \(seats) players"
        let limit = Duration.seconds(5) * context.patience
        /// The `index`-th (from 0) message `pick` takes, to every player (in the order they joined); `nil` when one
        /// has none within the limit.
        func nth<T>(_ index: Int, _ pick: @escaping @Sendable (Message) -> T?) async -> [T]? {
            var found: [T] = []
            for (player, _, _) in players {
                guard
                    let record = await player.wait(
                        limit, until: { $0.game.lazy.compactMap(pick).dropFirst(index).first != nil }),
                    let value = record.game.lazy.compactMap(pick).dropFirst(index).first
                else { return nil }
                found.append(value)
            }
            return found
        }
        context.step("waiting for SignInRequest")
        guard await nth(0, { $0 == .signInRequest ? true : nil }) != nil else {
            return .failed(
                "a SignInRequest to \(everyone) within 5 s",
                Self.listed(players.map { "\($0.player.now.game.count)" }) + " Snap messages")
        }
        for (player, _, name) in players {
            player.send(.signInResponse(SignInResponse(name: "snap\(name)\(context.run)")))
        }
        context.step("waiting for ServerReady")
        guard let readies = await nth(0, { if case .serverReady(let ready) = $0 { ready } else { nil } }) else {
            return .failed("a ServerReady to \(everyone) after their SignInResponses", "none within 5 s")
        }
        for ((_, welcome, name), ready) in zip(players, readies) {
            // The spec's rule: seat s is at position (s − the receiver's seat) mod n, the receiver at 0, then
            // clockwise (increasing seat number, wrapping).
            let expected = (0..<seats).map { position in
                (peer: peers[(Int(welcome.seat) + position) % seats], position: position)
            }
            let positions = Dictionary(
                ready.players.map { ($0.peer, Int($0.position)) }, uniquingKeysWith: { a, _ in a })
            guard ready.players.count == seats, expected.allSatisfy({ positions[$0.peer] == $0.position }) else {
                let others = Self.listed(expected.dropFirst().map { "peer \($0.peer) at \($0.position)" })
                return .failed(
                    "\(name)'s ServerReady to place \(name) (peer \(welcome.peer)) at position 0, "
                        + "then, clockwise by seat, \(others)",
                    ready.players.map { "peer \($0.peer) at \($0.position)" }.joined(separator: ", "))
            }
        }
        for (player, _, _) in players { player.send(.clientReady) }
        context.step("waiting for DealCards")
        guard let deals = await nth(0, { if case .dealCards(let deal) = $0 { deal } else { nil } }) else {
            return .failed("a DealCards to \(everyone) after their ClientReady", "none within 5 s")
        }
        guard deals.allSatisfy({ $0 == deals[0] }) else {
            return .failed("the same DealCards to \(everyone)", "\(Set(deals).count) different deals")
        }
        guard deals[0].hands.map(\.peer) == peers else {
            return .failed("hands in seat order, peers \(peers)", "peers \(deals[0].hands.map(\.peer))")
        }
        guard var game = try? SnapGame(hands: deals[0].hands.map(\.cards)) else {
            return .failed(
                "a deal of the 52 cards, each once", "\(deals[0].hands.map(\.cards.count).reduce(0, +)) cards")
        }
        for (player, _, _) in players { player.send(.clientDealtCards) }
        context.step("waiting for ActivatePlayer")
        guard let active = await nth(0, { if case .activatePlayer(let ref) = $0 { ref.peer } else { nil } }) else {
            return .failed("an ActivatePlayer to \(everyone) after their ClientDealtCards", "none within 5 s")
        }
        guard active.allSatisfy({ $0 == peers[0] }) else {
            return .failed("ActivatePlayer naming seat 0 (peer \(peers[0])), which turns first", "peers \(active)")
        }
        bySeat[0].player.send(.clientTurnedCard)
        context.step("waiting for CardTurned")
        guard let turned = await nth(0, { if case .cardTurned(let turned) = $0 { turned } else { nil } }) else {
            return .failed("a CardTurned to \(everyone) after seat 0 turned", "none within 5 s")
        }
        guard let card = try? game.turnCard(by: 0) else {
            return .failed("a deal seat 0 can turn from", "seat 0 holds no card")
        }
        for ((_, _, name), event) in zip(players, turned) {
            guard event.peer == peers[0], event.card == card else {
                return .failed(
                    "\(name) to see seat 0 (peer \(peers[0])) turn \(card), the top of its dealt hand",
                    "peer \(event.peer) turned \(event.card)")
            }
            guard event.stateHash == game.stateHash else {
                return .failed(
                    "the state hash the rules give after seat 0's first turn (\(hex32(game.stateHash))) to \(name)",
                    hex32(event.stateHash))
            }
        }
        // Later rounds: a wrong call, then turns in the order the rules give, each CardTurned checked like the
        // first, and a right call (and a late one) whenever a pair shows.
        var calls = 0
        // Every CardTurned and every PlayerCalledSnap is followed by an ActivatePlayer: the first one came before
        // the first turn, the second after it.
        var activations = 1
        /// Seat `seat` calls snap: every player must be told its outcome and the hash the rules give.
        func call(by seat: Int, after what: String) async -> CheckOutcome? {
            guard let outcome = try? game.callSnap(by: seat) else { return nil }
            bySeat[seat].player.send(.playerShouldSnap)
            context.step("waiting for PlayerCalledSnap \(calls + 1)")
            let expected = PlayerCalledSnap(peer: peers[seat], outcome: outcome, stateHash: game.stateHash)
            guard
                let called = await nth(
                    calls, { if case .playerCalledSnap(let called) = $0 { called } else { nil } })
            else { return .failed("a PlayerCalledSnap to \(everyone) after seat \(seat)'s call \(what)", "none") }
            calls += 1
            activations += 1
            for ((_, _, name), got) in zip(players, called) where got != expected {
                return .failed(
                    "\(name) to be told seat \(seat)'s call \(what): peer \(expected.peer), outcome \(outcome), state "
                        + "hash \(hex32(expected.stateHash))",
                    "peer \(got.peer), outcome \(got.outcome), state hash \(hex32(got.stateHash))")
            }
            return nil
        }
        if !game.hasPair, let failure = await call(by: 1, after: "with no pair showing (wrong)") { return failure }
        for turn in 1..<8 {
            let seat = game.turn
            guard game.winner == nil,
                let active = await nth(
                    activations, { if case .activatePlayer(let ref) = $0 { ref.peer } else { nil } })
            else { return .failed("ActivatePlayer number \(activations + 1) to \(everyone)", "none within 5 s") }
            activations += 1
            guard active.allSatisfy({ $0 == peers[seat] }) else {
                return .failed(
                    "ActivatePlayer number \(activations) naming seat \(seat) (peer \(peers[seat])), whose turn it is",
                    "peers \(active)")
            }
            bySeat[seat].player.send(.clientTurnedCard)
            context.step("waiting for CardTurned \(turn + 1)")
            guard let card = try? game.turnCard(by: seat) else { break }
            guard
                let turned = await nth(turn, { if case .cardTurned(let turned) = $0 { turned } else { nil } })
            else { return .failed("CardTurned number \(turn + 1) to \(everyone)", "none within 5 s") }
            for ((_, _, name), event) in zip(players, turned)
            where event.peer != peers[seat] || event.card != card || event.stateHash != game.stateHash {
                return .failed(
                    "\(name) to see turn \(turn + 1): seat \(seat) (peer \(peers[seat])) turns \(card), state hash "
                        + hex32(game.stateHash),
                    "peer \(event.peer) turned \(event.card), state hash \(hex32(event.stateHash))")
            }
            if game.hasPair {
                if let failure = await call(by: 0, after: "on a pair (right)") { return failure }
                if let failure = await call(by: 1, after: "after a right one (too late)") { return failure }
            }
        }
        return .pass
    }

    /// `items` as a person lists them: `a`, `a and b`, `a, b and c`.
    private static func listed(_ items: [String]) -> String {
        guard let last = items.last, items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " and " + last
    }

    /// Suns is relayed: each player's `SunsStart` reaches the other once both are seated, and a `SunsStrike` and its
    /// `SunsCapture` reach the other player unchanged, bit for bit, and in order.
    static let sunsRelay = ConformanceCheck(
        id: "suns.relay", title: "Suns proposals, strikes and captures reach the other player unchanged, in order",
        needs: .game(.suns), limit: .seconds(15)
    ) { context in
        let (pair, failure) = try await context.pair(game: .suns).players()
        guard let (a, _, b, _) = pair else { return failure! }
        defer { release(a, b) }
        let limit = Duration.seconds(5) * context.patience
        // Values whose bit patterns a server that converted or rounded them would change: 0.1 is not a short binary
        // fraction, and the time is the f32 just below 60 (the largest allowed).
        let startA = SunsStart(coinToss: 7, suns: [.init(x: 0.25, y: 0.25), .init(x: 0.75, y: 0.1)])
        let startB = SunsStart(coinToss: 3, suns: [.init(x: 0.5, y: 0.5)])
        a.send(.sunsStart(startA))
        b.send(.sunsStart(startB))
        for (player, name, expected) in [(b, "B", startA), (a, "A", startB)] {
            guard let record = await player.wait(limit, until: { $0.game.contains(where: Self.isSuns) }) else {
                return .failed("\(name) to receive the other player's SunsStart within 5 s", "nothing")
            }
            guard record.game.filter(Self.isSuns).first == .sunsStart(expected) else {
                return .failed(
                    "\(name) to receive the other's SunsStart unchanged: \(expected)",
                    "\(record.game.filter(Self.isSuns).first.map { "\($0)" } ?? "nothing")")
            }
        }
        let strike = SunsStrike(x: 0.25, y: 0.1, radius: 0.3, gameTime: Float(60).nextDown)
        let capture = SunsCapture(sunIndex: 1, gameTime: 0.1)
        a.send(.sunsStrike(strike))
        a.send(.sunsCapture(capture))
        let sent: [Message] = [.sunsStart(startA), .sunsStrike(strike), .sunsCapture(capture)]
        guard let record = await b.wait(limit, until: { $0.game.filter(Self.isSuns).count >= 3 }) else {
            return .failed(
                "B to receive A's SunsStrike and SunsCapture within 5 s", "\(b.now.game.filter(Self.isSuns))")
        }
        let got = Array(record.game.filter(Self.isSuns).prefix(3))
        guard got == sent else {
            return .failed("B to receive \(sent.dropFirst()) unchanged and in order", "\(got.dropFirst())")
        }
        return .pass
    }

    @Sendable private static func isSuns(_ message: Message) -> Bool {
        switch message {
        case .sunsStart, .sunsStrike, .sunsCapture: true
        default: false
        }
    }
}

extension GameSurvey {
    /// Asks the server for each built-in game at once, from a probe each (two seats, any match), and lets every
    /// probe go again: a Welcome is hosted, `Reject(4)` not hosted, anything else broken.
    static func take(_ context: CheckContext) async -> GameSurvey {
        let limit = Duration.seconds(5) * context.patience
        /// One Hello for `game` with `seats` from a fresh probe: `nil` for a Welcome, "refused" for `Reject(4)`,
        /// else what came.
        @Sendable func ask(_ game: GameKind, seats: UInt8) async -> String? {
            let probe: RawProbe
            do {
                probe = try await context.probe()
            } catch {
                return "cannot connect (\(ConformanceSuite.reason(error)))"
            }
            defer { probe.close() }
            let hello = Hello(game: game, seats: seats, name: "sv\(game.rawValue)-\(seats)-\(context.run)")
            switch await probe.handshake(hello, within: limit)?.message {
            case .welcome?: return nil
            case .reject(let reject)? where reject.reason == .badRequest: return "refused"
            case .reject(let reject)?: return "Reject(\(reject.reason))"
            default: return "no answer within \(limit)"
            }
        }
        let answers = await withTaskGroup(of: (GameKind, String?, UInt8?).self) { group in
            for game in builtIn {
                group.addTask {
                    let answer = await ask(game, seats: 2)
                    guard answer == "refused" else { return (game, answer, nil) }
                    // Reject(4) is also what a seat count the server does not take gets: ask for the others.
                    for seats in otherSeatCounts(for: game) where await ask(game, seats: seats) == nil {
                        return (game, answer, seats)
                    }
                    return (game, answer, nil)
                }
            }
            var answers: [GameKind: (String?, UInt8?)] = [:]
            for await (game, answer, seats) in group { answers[game] = (answer, seats) }
            return answers
        }
        var survey = GameSurvey()
        for game in builtIn {
            let (answer, seats) = answers[game] ?? ("no answer", nil)
            switch answer {
            case nil: survey.hosted.append(game)
            case "refused"? where seats != nil: survey.otherSeats[game] = seats
            case "refused"?: survey.refused.append(game)
            case let other?: survey.broken[game] = other
            }
        }
        return survey
    }
}
