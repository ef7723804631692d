import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishOpponent
import SkirmishPractice
import SkirmishServer
import SkirmishWire
import Testing

/// The practice plumbing without a browser: the page and match routes, the lobby's tables and the opponents.
///
/// A test that waits on a stream of events ends as a failure, not a hang, if what it waits for never comes.
@Suite(.timeLimit(.minutes(4))) struct PracticeLobbyTests {
    @Test func theServerServesThePageAndTheMatchRouteOnItsHTTPPort() async throws {
        // Joining is not what this test is about: under load the opponent must not give up on its page first.
        let practice = try await PracticeFixture.start(difficulty: .hard, joinTimeout: .seconds(120))
        let outcome = await Result { () async throws in
            let page = try await HTTPGet.fetch(port: practice.port, path: "/play")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.body.contains("<canvas"))
            #expect(page.body.utf8.count == PracticePage.html.count)
            // Works offline: nothing is loaded from anywhere but the game server.
            #expect(!page.body.contains("http://") && !page.body.contains("https://"))
            #expect(!page.body.contains("<script src") && !page.body.contains("<link"))
            // The selector offers every level the lobby has a route for, adaptive included.
            for level in Opponent.Level.allCases {
                #expect(page.body.contains("<option value=\"\(level.rawValue)\""), "\(level)")
            }

            let answer = try await HTTPGet.fetch(port: practice.port, path: "/play/match")
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "application/json")
            let offer = try #require(
                try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            #expect(offer["difficulty"] as? String == "hard")
            #expect(offer["ws"] is NSNull)
            let match = try #require(offer["match"] as? Int)
            let opponent = try #require(await practice.opponent(at: UInt32(match)))
            #expect(opponent.welcome.seat == 0)
            #expect(opponent.difficulty == .hard)
        }
        await practice.stop()
        try outcome.get()
    }

    /// The page's difficulty selector asks `/play/match/<difficulty>`: the opponent seated is of that strength,
    /// whatever the lobby's default.
    @Test(arguments: Opponent.Level.allCases)
    func theMatchRouteOfADifficultySeatsAnOpponentOfThatStrength(difficulty: Opponent.Level) async throws {
        // Joining is not what this test is about: under load the opponent must not give up on its page (15 s by
        // default) before the test looks it up, or the lookup finds no opponent at that table.
        let practice = try await PracticeFixture.start(
            difficulty: difficulty == .medium ? .hard : .medium, joinTimeout: .seconds(120))
        let outcome = await Result { () async throws in
            let answer = try await HTTPGet.fetch(port: practice.port, path: "/play/match/\(difficulty.rawValue)")
            #expect(answer.status == 200)
            let offer = try #require(
                try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            #expect(offer["difficulty"] as? String == difficulty.rawValue)
            let match = try #require(offer["match"] as? Int)
            let opponent = try #require(await practice.opponent(at: UInt32(match)))
            #expect(opponent.difficulty == difficulty)
            let unknown = try await HTTPGet.fetch(port: practice.port, path: "/play/match/impossible")
            #expect(unknown.status == 404)
        }
        await practice.stop()
        try outcome.get()
    }

    /// The lobby's default opponent, and the adaptive one the page's selector can ask for, both play a person.
    @Test(arguments: [Opponent.Level?.none, .adaptive])
    func aClientJoiningTheOfferedMatchPlaysTheOpponent(level: Opponent.Level?) async throws {
        // The opponent waits long for its person: under load, connecting took longer than the 15 s default, the
        // opponent gave up, and the person sat alone at its table waiting for play that never came.
        let practice = try await PracticeFixture.start(joinTimeout: .seconds(120))
        let outcome = await Result { () async throws in
            let offer = try await practice.lobby.open(difficulty: level)
            let lobbyLevel = await practice.lobby.difficulty
            let expected = level ?? lobbyLevel
            #expect(offer.difficulty == expected)
            var configuration = AsyncClientSession.Configuration(
                target: practice.webSocket, game: .puck, seats: 2, name: "person")
            configuration.connection.match = offer.match
            let person = try await AsyncClientSession.connect(configuration)
            var welcome: Welcome?
            var playing = false
            var events = person.events.makeAsyncIterator()
            for _ in 0..<1_000 {
                guard let event = await events.next() else { break }
                if case .stateChanged(.seated(let seated)) = event { welcome = seated }
                if case .message(.tableSnapshot(let snapshot), _) = event, snapshot.phase == .playing {
                    playing = true
                    break
                }
            }
            #expect(welcome?.match == offer.match)
            #expect(welcome?.seat == 1)
            #expect(playing)
            // The person's paddle, as the server applied it, is what the opponent sees (mirrored).
            for step in 1...5 {
                person.send(.paddleState(PaddleState(inputStep: UInt32(step), x: 60, y: 420, vx: 0, vy: 0)))
            }
            let seen = await practice.opponentSeesOtherPaddle(match: offer.match, near: 260, 60)
            #expect(seen != nil)
            let opponent = try #require(await practice.opponent(at: offer.match))
            #expect(try await opponent.inputsSent() > 0)
            // The AI plays: the server moved its paddle off the start spot (160, 400 in its frame).
            let moved = await poll(timeout: .seconds(10)) { () -> Bool? in
                guard let me = try? await opponent.lastSnapshot()?.me else { return nil }
                return abs(me.x - 160) + abs(me.y - 400) > 4 ? true : nil
            }
            #expect(moved == true)
            let stats = try await practice.server.stats()
            #expect(stats.totalRejected == 0)
            await person.disconnect()
        }
        await practice.stop()
        try outcome.get()
    }

    @Test func eachPageGetsATableOfItsOwn() async throws {
        // Opponents wait long for their pages here: under load, connecting two people took longer than the 15 s
        // default, and an opponent that had given up was no longer listed.
        let practice = try await PracticeFixture.start(joinTimeout: .seconds(120))
        let outcome = await Result { () async throws in
            var matches: [UInt32] = []
            var opponents: [OpponentSeat] = []
            var people: [AsyncClientSession] = []
            for name in ["ann", "bob"] {
                let (offer, opponent) = try await practice.lobby.openSeat()
                matches.append(offer.match)
                opponents.append(opponent)
                var configuration = AsyncClientSession.Configuration(
                    target: practice.webSocket, game: .puck, seats: 2, name: name)
                configuration.connection.match = offer.match
                people.append(try await AsyncClientSession.connect(configuration))
            }
            #expect(Set(matches).count == 2)
            for (match, opponent) in zip(matches, opponents) {
                #expect(opponent.welcome.match == match && opponent.welcome.seat == 0)
                // Each opponent's match starts: its page (here a client) joined it, not the other table.
                try await opponent.started.get()
            }
            for person in people { await person.disconnect() }
        }
        await practice.stop()
        try outcome.get()
    }

    @Test func anOpponentWhosePageNeverJoinsLeaves() async throws {
        let practice = try await PracticeFixture.start(joinTimeout: .seconds(1))
        let outcome = await Result { () async throws in
            // The seat itself, not a lookup in the lobby's list: on a busy machine the opponent can give up and leave
            // the list before the test's next step.
            let (offer, opponent) = try await practice.lobby.openSeat()
            #expect(opponent.welcome.match == offer.match)
            let reason = try await opponent.ended.get()
            #expect(reason.contains("nobody joined"))
            let gone = await poll(timeout: .seconds(5)) { await practice.lobby.opponents().isEmpty ? true : nil }
            #expect(gone == true)
            // The table is gone too, so the next page's opponent opens a fresh one.
            let next = try await practice.lobby.open()
            #expect(next.match != offer.match)
        }
        await practice.stop()
        try outcome.get()
    }

    @Test func aPlainServerServesThePageWithoutAnOpponent() async throws {
        var configuration = ServerConfiguration()
        configuration.udp = nil
        configuration.tcp = nil
        let server = try await ReferenceServer.start(configuration: configuration)
        let port = try #require(server.addresses.http?.port)
        let outcome = await Result { () async throws in
            #expect(try await HTTPGet.fetch(port: port, path: "/play").status == 200)
            // No lobby: the page falls back to joining any open table at /ws.
            let missing = try await HTTPGet.fetch(port: port, path: "/play/match")
            #expect(missing.status == 404)
            #expect(missing.body.contains("/play"))
            #expect(try await HTTPGet.fetch(port: port, path: "/metrics").status == 200)
        }
        await server.shutdown()
        try outcome.get()
    }

    @Test func againstAnotherServerThePageIsToldWhereItIs() async throws {
        var configuration = ServerConfiguration()
        configuration.udp = nil
        configuration.tcp = nil
        let game = try await ReferenceServer.start(configuration: configuration)
        let gamePort = try #require(game.addresses.http?.port)
        let target = Target(transport: .webSocket, host: "127.0.0.1", port: gamePort)
        let lobby = PracticeLobby(difficulty: .easy)
        await lobby.serve(opponentsAt: target, pageWebSocketURL: target.description)
        let pages = try await HTTPServer.bind(
            host: "127.0.0.1", port: 0, group: MultiThreadedEventLoopGroup.singleton, routes: lobby.routes,
            webSocketPath: nil, onWebSocket: nil)
        let outcome = await Result { () async throws in
            let pagePort = try #require(pages.localAddress.port)
            #expect(try await HTTPGet.fetch(port: pagePort, path: "/play").status == 200)
            let answer = try await HTTPGet.fetch(port: pagePort, path: "/play/match")
            let offer = try #require(
                try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            #expect(offer["ws"] as? String == "ws://127.0.0.1:\(gamePort)/ws")
            #expect(offer["difficulty"] as? String == "easy")
            let stats = try await game.stats()
            #expect(stats.sessions == 1) // the opponent waits at its table on the game server
        }
        await lobby.close()
        try? await pages.close()
        await game.shutdown()
        try outcome.get()
    }

    @Test func theOfferIsJSON() {
        let offer = PracticeLobby.Offer(match: 7, difficulty: .expert, webSocketURL: "ws://h:1/a\"b\\c\n")
        #expect(offer.json == "{\"match\":7,\"difficulty\":\"expert\",\"ws\":\"ws://h:1/a\\\"b\\\\c\\u000a\"}\n")
        let local = PracticeLobby.Offer(match: 1, difficulty: .easy, webSocketURL: nil)
        #expect(local.json == "{\"match\":1,\"difficulty\":\"easy\",\"ws\":null}\n")
    }
}

extension Result where Failure == any Error {
    /// Runs `body` and keeps its outcome, so a fixture can be stopped before the test rethrows.
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
