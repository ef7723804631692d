import NIOCore
import SkirmishNet
import SkirmishWire
import Synchronization

/// What a check works with: the target, the loops, and a way to make players and raw probes.
struct CheckContext: Sendable {
    let target: Target
    let group: any EventLoopGroup
    /// Where the check stands, for the verdict when its limit runs out (``step(_:)``).
    let progress = Progress()
    /// Distinguishes the names (and link seeds) of this check's players from those of earlier checks.
    let run: Int
    /// The suite's ``ConformanceSuite/patience``: how many times its usual wait a seat may take.
    var patience: Double = 1
    /// Which games the server hosts (`handshake.games` fills it in; until then every built-in game is assumed).
    var surveyBox = SurveyBox()

    /// Which games the server hosts, as far as the run knows.
    var survey: GameSurvey { surveyBox.value ?? .everything }
    /// The game the checks that fit any game play: ``GameSurvey/game``.
    var game: GameKind { survey.game }

    var transport: Transport { target.transport }
    var isDatagram: Bool { target.transport == .udp }

    /// A player on the client runtime, asking for a table of `seats` seats of `game` (the context's ``game`` unless
    /// given).
    func player(
        _ name: String, game: GameKind? = nil, seats: Int = 2, link: LinkProfile = .perfect, seed: UInt64 = 1,
        match: UInt32 = 0
    ) async throws -> Player {
        try await Player.connect(
            target, game: game ?? self.game, seats: UInt8(seats), match: match, name: "\(name)\(run)",
            link: isDatagram ? link : .perfect, seed: seed, streamLoops: group)
    }

    /// `seats` players seated in one new match of `game` (the context's ``game`` unless given), each asking for a
    /// table of that size: each player with the Welcome that seated it, in the order they joined, or a failure.
    ///
    /// The first player asks for any match and the others for its match by id, so that the table never splits across
    /// matches. When the first landed beside someone else (a player some other client left waiting), the last ones
    /// cannot join that full match; the table is then made again, once, from fresh players.
    func table(
        of seats: Int, game: GameKind? = nil, link: LinkProfile = .perfect, within limit: Duration = .seconds(10)
    ) async throws -> Result<[Seated], TableFailure> {
        var saw = ""
        let game = game ?? self.game
        attempts: for attempt in 0..<2 {
            var table: [Seated] = []
            for index in 0..<seats {
                // Names cfa0-, cfb0-, …; link seeds 11, 23, 35, 47 (the first two what a pair has always had).
                let letter = String(UnicodeScalar(UInt8(ascii: "a") + UInt8(index)))
                let match = table.first?.welcome.match ?? 0
                let player: Player
                do {
                    player = try await self.player(
                        "cf\(letter)\(attempt)-", game: game, seats: seats, link: link, seed: 11 + 12 * UInt64(index),
                        match: match)
                } catch {
                    release(table.map(\.player))
                    throw error
                }
                guard let welcome = await player.seated(within: limit * patience) else {
                    guard index > 0 else {
                        return .failure(
                            TableFailure(
                                game: game, seats: seats, players: [player],
                                saw: "first player \(player.now.lastState)"))
                    }
                    saw = "player \(index + 1), asking for match \(match), \(player.now.lastState)"
                    release(table.map(\.player) + [player])
                    continue attempts
                }
                table.append(Seated(player: player, welcome: welcome))
            }
            let matches = table.map(\.welcome.match)
            guard Set(matches).count == 1 else {
                let listed = matches.map(String.init).joined(separator: ", ")
                return .failure(
                    TableFailure(
                        game: game, seats: seats, players: table.map(\.player),
                        saw: "the \(seats) players seated in matches \(listed)"))
            }
            return .success(table)
        }
        return .failure(TableFailure(game: game, seats: seats, players: [], saw: saw))
    }

    /// Two players seated in one new match of `game` (the context's ``game`` unless given), with their Welcomes in the
    /// order they joined: ``table(of:game:link:within:)`` for two.
    func pair(
        game: GameKind? = nil, link: LinkProfile = .perfect, within limit: Duration = .seconds(10)
    ) async throws -> Result<(Player, Welcome, Player, Welcome), TableFailure> {
        try await table(of: 2, game: game, link: link, within: limit).map { table in
            (table[0].player, table[0].welcome, table[1].player, table[1].welcome)
        }
    }

    /// A raw probe on a new socket or connection.
    func probe() async throws -> RawProbe { try await RawProbe.open(target, group: group) }

    /// Tries every case at once, each from a probe of its own (a busy machine's late resumptions then overlap instead
    /// of adding up): `attempt` returns what was wrong with its case, `nil` when nothing was. Returns the first wrong
    /// case in order, with what was wrong; a probe that cannot connect is wrong with the reason.
    func eachAtOnce<Case: Sendable>(
        _ cases: [Case], _ attempt: @escaping @Sendable (Case, RawProbe) async -> String?
    ) async -> (item: Case, wrong: String)? {
        let answers = await withTaskGroup(of: (Int, String?).self) { group in
            for (index, item) in cases.enumerated() {
                group.addTask {
                    let probe: RawProbe
                    do {
                        probe = try await self.probe()
                    } catch {
                        return (index, "no connection (\(ConformanceSuite.reason(error)))")
                    }
                    defer { probe.close() }
                    return (index, await attempt(item, probe))
                }
            }
            var answers: [Int: String] = [:]
            for await (index, wrong) in group { if let wrong { answers[index] = wrong } }
            return answers
        }
        return cases.indices.lazy.compactMap { index in answers[index].map { (cases[index], $0) } }.first
    }

    /// The first Hello of a probe: the context's ``game``, 2 seats, any match.
    func hello(_ name: String = "probe", cookie: Cookie = .zero, resumeToken: UInt64 = 0) -> Hello {
        Hello(game: game, seats: 2, cookie: cookie, resumeToken: resumeToken, name: "\(name)\(run)")
    }
}

/// One player of a table the check made, and the Welcome that seated it.
struct Seated: Sendable {
    let player: Player
    let welcome: Welcome
}

/// Why the players of a table did not end up in one match; the players are kept so the check can let them go.
struct TableFailure: Error {
    var game: GameKind
    var seats: Int
    var players: [Player]
    var saw: String
}

extension Result where Failure == TableFailure {
    /// The table, or the failure outcome for a check that needs one (its players told to leave).
    func players() async -> (table: Success?, outcome: CheckOutcome?) {
        switch self {
        case .success(let table): return (table, nil)
        case .failure(let failure):
            for player in failure.players { await player.leave() }
            let players = failure.seats == 2 ? "two players" : "\(failure.seats) players"
            return (nil, .failed("\(players) seated in one \(failure.game) match within 10 s", failure.saw))
        }
    }
}

extension CheckContext {
    /// The last step a check said it reached, and when: a check that runs out of time says where it stood. Also what
    /// it noted about how it ran (``CheckContext/note(_:)``).
    final class Progress: Sendable {
        private let state = Mutex<(step: String, at: ContinuousClock.Instant)?>(nil)
        private let noted = Mutex<String?>(nil)

        func record(_ step: String) { state.withLock { $0 = (step, .now) } }

        /// What the check noted about how it ran, for its line in the report; `nil` when nothing.
        var note: String? {
            get { noted.withLock { $0 } }
            set { noted.withLock { $0 = newValue } }
        }

        /// The last step and how long ago it was reached, or `nil` before the first.
        var last: String? {
            state.withLock { state in
                state.map { "last at \($0.step), \(Self.format(ContinuousClock.now - $0.at)) before the limit" }
            }
        }

        private static func format(_ duration: Duration) -> String {
            let milliseconds =
                duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
            return "\(milliseconds) ms"
        }
    }

    /// Records that the check reached `step` (shown if the check runs out of time).
    func step(_ step: String) { progress.record(step) }

    /// Says how the check ran where its title cannot (`snap.deal`: at how many seats), in its line of the report
    /// whether it passes or fails (``CheckResult/note``).
    func note(_ text: String) { progress.note = text }
}
