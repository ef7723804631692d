import Logging
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishOpponent
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire

/// Hands each practice page a fresh AI opponent: `GET /play/match` starts one and answers with its match.
///
/// The opponent joins first, with match 0 (a new table), and the page then joins that match by id. Two opponents
/// asking for a new table at once would be seated at the same one, so openings are serialised: the next opponent
/// starts only when the previous one's table has filled (its page joined) or it has given up. A page that never joins
/// costs at most the opponent's join timeout. An opponent seated at somebody else's table (possible against a shared
/// `--target` server) leaves it and tries again.
package actor PracticeLobby {
    /// What the page is told: the match to join, how hard the opponent is, and where the game server is.
    package struct Offer: Sendable, Hashable {
        /// The match the opponent is seated at and waiting in; the page sends it in its `Hello`.
        package var match: UInt32
        /// The strength of the opponent waiting there.
        package var difficulty: Opponent.Level
        /// The WebSocket URL the page connects to; `nil`: `/ws` on the host that served the page.
        package var webSocketURL: String?

        /// An offer of `match` against an opponent of `difficulty`.
        package init(match: UInt32, difficulty: Opponent.Level, webSocketURL: String?) {
            self.match = match
            self.difficulty = difficulty
            self.webSocketURL = webSocketURL
        }

        /// The JSON body of `GET /play/match`.
        package var json: String {
            let url = webSocketURL.map { "\"\(Self.escaped($0))\"" } ?? "null"
            return "{\"match\":\(match),\"difficulty\":\"\(difficulty.rawValue)\",\"ws\":\(url)}\n"
        }

        static func escaped(_ text: String) -> String {
            var out = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20:
                    out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
    }

    /// The strength of the opponents this lobby starts when the page names none.
    package let difficulty: Opponent.Level
    private let runner: Result<AgentRunner, any Error>
    private let joinTimeout: Duration
    private var opponentTarget: Target?
    private var pageWebSocketURL: String?
    private var seats: [OpponentSeat] = []
    private var queue: Task<Void, Never>?
    private var closed = false
    private let logger: Logger
    /// At most one "could not offer" line per 10 s: a page that polls, or a hostile client, asks again and again.
    private var refusals = LogRateLimiter<String>(interval: .seconds(10))

    /// - Parameters:
    ///   - joinTimeout: how long an opponent waits for its page before leaving.
    ///   - logger: receives the lobby's start and stop, each opponent seated for a page (`match.id`, `persona`),
    ///     matches it could not offer, and at debug each opponent leaving.
    package init(
        difficulty: Opponent.Level, runner: AgentRunner? = nil, joinTimeout: Duration = .seconds(15),
        logger: Logger = Logger(label: "skirmish.practice")
    ) {
        self.logger = logger
        self.difficulty = difficulty
        self.runner =
            runner.map { .success($0) }
            ?? Result {
                try AgentRunner(
                    name: "skirmish-practice", streamLoops: MultiThreadedEventLoopGroup.singleton, logger: logger)
            }
        self.joinTimeout = joinTimeout
    }

    /// Where opponents connect, and the WebSocket URL pages are told (`nil`: the page's own host at `/ws`).
    ///
    /// Set once the game server listens; until then `/play/match` answers that practice is still starting.
    package func serve(opponentsAt target: Target, pageWebSocketURL: String?) {
        opponentTarget = target
        self.pageWebSocketURL = pageWebSocketURL
        logger.info(
            "practice lobby serving",
            metadata: [
                "target": "\(target)", "difficulty": "\(difficulty)",
                "join.timeout.seconds": "\(Int(joinTimeout.seconds))",
            ])
    }

    /// The `GET /play/match` route: starts an opponent at the lobby's ``difficulty`` and answers with its ``Offer`` as
    /// JSON.
    package nonisolated var route: HTTPServer.Route { route(difficulty: nil) }

    /// The `GET /play/match/<difficulty>` route of the page's difficulty selector (`nil`: the lobby's own).
    package nonisolated func route(difficulty: Opponent.Level?) -> HTTPServer.Route {
        HTTPServer.Route(contentType: "application/json") { [self] in
            Array(try await self.open(difficulty: difficulty).json.utf8)
        }
    }

    /// Where the page asks for an opponent of `difficulty`: `/play/match/hard`, `/play/match/adaptive`. A path per
    /// level rather than a query, since the listener routes by path alone (an unknown level's 404 lists them all).
    package static func matchPath(difficulty: Opponent.Level) -> String {
        PracticePage.matchPath + "/" + difficulty.rawValue
    }

    /// The page and the match routes (the lobby's default and one per difficulty), for an HTTP listener of their own
    /// (`--target`) or the game server's.
    package nonisolated var routes: [String: HTTPServer.Route] {
        var routes = [PracticePage.path: PracticePage.route, PracticePage.matchPath: route]
        for level in Opponent.Level.allCases {
            routes[Self.matchPath(difficulty: level)] = route(difficulty: level)
        }
        return routes
    }

    /// Starts an opponent of `difficulty` (`nil`: the lobby's ``difficulty``) at a new table and returns what the page
    /// needs to join it.
    package func open(difficulty: Opponent.Level? = nil) async throws -> Offer {
        try await openSeat(difficulty: difficulty).offer
    }

    /// ``open(difficulty:)``, with the opponent's seat itself: it stays valid after the opponent leaves the lobby's
    /// list (``opponents()``), so a caller can still ask how it ended.
    package func openSeat(difficulty: Opponent.Level? = nil) async throws -> (
        offer: Offer, seat: OpponentSeat
    ) {
        let previous = queue
        let level = difficulty ?? self.difficulty
        let work = Task { () async throws -> (offer: Offer, seat: OpponentSeat) in
            await previous?.value
            return try await self.openNow(difficulty: level)
        }
        queue = Task { _ = await work.result }
        do {
            return try await work.value
        } catch {
            let now = Duration(NIODeadline.now() - NIODeadline.uptimeNanoseconds(0))
            if let count = refusals.record("open", now: now) {
                logger.warning(
                    "could not offer a practice match",
                    metadata: ["error": "\(error)", "count": "\(count)", "suppressed": "\(count - 1)"])
            }
            throw error
        }
    }

    /// Every opponent still playing or waiting, oldest first.
    package func opponents() -> [OpponentSeat] {
        seats
    }

    /// Stops every opponent; later requests fail.
    package func close() async {
        closed = true
        logger.info("practice lobby closing", metadata: ["opponents": "\(seats.count)"])
        let running = seats
        seats.removeAll()
        for seat in running { await seat.stop() }
    }

    private func openNow(difficulty: Opponent.Level) async throws -> (offer: Offer, seat: OpponentSeat) {
        guard !closed else { throw LobbyError(description: "practice is shutting down") }
        guard let target = opponentTarget else {
            throw LobbyError(description: "practice is still starting; reload the page in a moment")
        }
        // The previous opponent's table must fill (or be given up) first, or this one would sit down at it.
        if let last = seats.last { _ = try? await last.started.get() }
        let runner: AgentRunner
        do {
            runner = try self.runner.get()
        } catch {
            throw LobbyError(description: "cannot start the opponents' client loop: \(error)")
        }
        for attempt in 1...3 {
            let seat: OpponentSeat
            do {
                seat = try await PracticeOpponent.start(
                    target: target, difficulty: difficulty, joinTimeout: joinTimeout, on: runner)
            } catch let error as Unseated where error.isRetryable && attempt < 3 && !closed {
                // A handshake that timed out on a busy machine (the server or this process starved for seconds):
                // the page waits a little longer for its match rather than getting an error.
                logger.notice(
                    "practice opponent could not join; trying again",
                    metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                continue
            }
            guard seat.welcome.seat == 0 else {
                await seat.stop()
                continue
            }
            seats.append(seat)
            logger.info(
                "practice opponent seated",
                metadata: [
                    "match.id": "\(seat.welcome.match)", "persona": "\(difficulty)",
                    "bot.id": "\(seat.welcome.peer)",
                ])
            seat.ended.whenComplete { [weak self] _ in
                Task { await self?.forget(seat.welcome.peer) }
            }
            return (Offer(match: seat.welcome.match, difficulty: difficulty, webSocketURL: pageWebSocketURL), seat)
        }
        throw LobbyError(
            description: "the opponent could not take a seat of its own on \(target) in three tries; try again")
    }

    private func forget(_ peer: UInt32) {
        logger.debug("practice opponent left", metadata: ["bot.id": "\(peer)"])
        seats.removeAll { $0.welcome.peer == peer }
    }
}

/// Why the lobby could not offer a match; the page shows the text.
package struct LobbyError: Error, Sendable, CustomStringConvertible {
    /// Why no opponent could be offered, in words the page can show.
    package var description: String
}
