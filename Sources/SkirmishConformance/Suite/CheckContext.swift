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

    /// A player on the client runtime, asking for two seats of `game` (the context's ``game`` unless given).
    func player(
        _ name: String, game: GameKind? = nil, link: LinkProfile = .perfect, seed: UInt64 = 1, match: UInt32 = 0
    ) async throws -> Player {
        try await Player.connect(
            target, game: game ?? self.game, match: match, name: "\(name)\(run)", link: isDatagram ? link : .perfect,
            seed: seed, streamLoops: group)
    }

    /// Two players seated in one new match of `game` (the context's ``game`` unless given): both Welcomes, or a
    /// failure.
    ///
    /// The second player asks for the first one's match by id, so that the pair never splits across matches. When
    /// the first landed beside someone else (a player some other client left waiting), the second cannot join that
    /// full match; the pair is then made again, once, from fresh players.
    func pair(
        game: GameKind? = nil, link: LinkProfile = .perfect, within limit: Duration = .seconds(10)
    ) async throws -> Result<(Player, Welcome, Player, Welcome), PairFailure> {
        var saw = ""
        let game = game ?? self.game
        for attempt in 0..<2 {
            let a = try await player("cfa\(attempt)-", game: game, link: link, seed: 11)
            guard let wa = await a.seated(within: limit * patience) else {
                return .failure(PairFailure(game: game, players: [a], saw: "first player \(a.now.lastState)"))
            }
            let b = try await player("cfb\(attempt)-", game: game, link: link, seed: 23, match: wa.match)
            guard let wb = await b.seated(within: limit * patience) else {
                saw = "second player, asking for match \(wa.match), \(b.now.lastState)"
                release(a, b)
                continue
            }
            guard wa.match == wb.match else {
                return .failure(
                    PairFailure(
                        game: game, players: [a, b],
                        saw: "the two players seated in matches \(wa.match) and \(wb.match)"
                    ))
            }
            return .success((a, wa, b, wb))
        }
        return .failure(PairFailure(game: game, players: [], saw: saw))
    }

    /// A raw probe on a new socket or connection.
    func probe() async throws -> RawProbe { try await RawProbe.open(target, group: group) }

    /// The first Hello of a probe: the context's ``game``, 2 seats, any match.
    func hello(_ name: String = "probe", cookie: Cookie = .zero, resumeToken: UInt64 = 0) -> Hello {
        Hello(game: game, seats: 2, cookie: cookie, resumeToken: resumeToken, name: "\(name)\(run)")
    }
}

/// Why two players did not end up in one match; the players are kept so the check can let them go.
struct PairFailure: Error {
    var game: GameKind
    var players: [Player]
    var saw: String
}

extension Result where Failure == PairFailure {
    /// The pair, or the failure outcome for a check that needs one (its players told to leave).
    func players() async -> (pair: Success?, outcome: CheckOutcome?) {
        switch self {
        case .success(let pair): return (pair, nil)
        case .failure(let failure):
            for player in failure.players { await player.leave() }
            return (nil, .failed("two players seated in one \(failure.game) match within 10 s", failure.saw))
        }
    }
}

extension CheckContext {
    /// The last step a check said it reached, and when: a check that runs out of time says where it stood.
    final class Progress: Sendable {
        private let state = Mutex<(step: String, at: ContinuousClock.Instant)?>(nil)

        func record(_ step: String) { state.withLock { $0 = (step, .now) } }

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
}
