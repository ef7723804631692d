import Foundation
import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// A Snap player: signs in, readies, turns its card when activated, and calls snap after a human-like reaction time
/// drawn from the persona's `snap_reaction` distribution whenever two face-up cards share a rank.
///
/// Its replica follows every server message and checks each state hash the server sends (desyncs).
struct SnapPlayer: Agent {
    typealias Connection = SnapConnection

    private var replica: SnapReplica?
    private var ready: ServerReady?
    private var me: UInt32 = 0
    private var turnAt: Instant?
    private var snapAt: Instant?
    private var desyncEpisode = false
    private(set) var isMatchOver = false
    private let reactionMean: Double
    private let reactionDeviation: Double

    init(context: inout AgentContext<SnapConnection>) {
        let reaction = context.persona.options.get(SnapOptions.SnapPlayer.self)?.reaction
        reactionMean = reaction.map { $0.mean.seconds } ?? 0.6
        reactionDeviation = reaction.map { $0.stddev.seconds } ?? 0.15
    }

    var nextWake: Instant? {
        switch (turnAt, snapAt) {
        case (let turn?, let snap?): min(turn, snap)
        case (let turn?, nil): turn
        case (nil, let snap?): snap
        case (nil, nil): nil
        }
    }

    mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        me = welcome.peer
    }

    mutating func wake(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        if let turn = turnAt, turn <= now {
            turnAt = nil
            context.send(.clientTurnedCard)
        }
        if let snap = snapAt, snap <= now {
            snapAt = nil
            // Cards may have moved since the call was planned: a player left without cards has no call to make.
            if holdsCards { context.send(.playerShouldSnap) }
        }
    }

    mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        switch message {
        case .activatePlayer, .cardTurned, .playerCalledSnap, .snapGameOver:
            // Reliable and ordered: none of these can come before the deal they play on.
            context.check(.replyState, passed: replica != nil)
        default:
            break
        }
        switch message {
        case .signInRequest:
            context.send(.signInResponse(SignInResponse(name: String(context.persona.name.prefix(WireLimits.maxName)))))
        case .serverReady(let received):
            ready = received
            context.send(.clientReady)
        case .dealCards(let deal):
            guard let ready else { return }
            do {
                replica = try SnapReplica(ready: ready, deal: deal)
            } catch {
                context.recordDesync(part: "deal")
            }
            context.meters.shard.add(context.meters.matchesStarted)
            context.send(.clientDealtCards)
        case .activatePlayer(let active):
            if let replica { context.check(replica.applyActivate(active), episode: &desyncEpisode) }
            // A snap call can move the turn on before this bot's delayed turn fires: only the latest activation counts.
            turnAt = active.peer == me ? now + reaction(scale: 0.25, context: &context) : nil
        case .cardTurned(let turned):
            guard replica != nil else { return }
            let result = replica!.apply(turned)
            context.check(result, episode: &desyncEpisode, divergence: result.isOK ? nil : replica!.divergence)
            if replica!.game.hasPair, holdsCards, snapAt == nil { snapAt = now + reaction(scale: 1, context: &context) }
        case .playerCalledSnap(let called):
            guard replica != nil else { return }
            let result = replica!.apply(called)
            context.check(result, episode: &desyncEpisode, divergence: result.isOK ? nil : replica!.divergence)
            if !replica!.game.hasPair { snapAt = nil }
        case .snapGameOver(let over):
            if let replica {
                // The announced winner must be the one the piles make: the player holding every card.
                let winner = replica.game.winner.map { replica.peers[$0] }
                context.check(.snapOutcome, passed: winner == over.winner)
                context.check(replica.apply(over), episode: &desyncEpisode)
            }
            context.meters.shard.add(context.meters.matchesCompleted)
            finish()
        case .otherClientQuit(let quit):
            if replica != nil { context.check(replica!.applyQuit(quit), episode: &desyncEpisode) }
        case .serverQuit:
            finish()
        default:
            break
        }
    }

    /// Whether this player is still in the game (holds cards in hand or pile), as its replica sees it: one that is
    /// out watches the rest play and calls nothing.
    private var holdsCards: Bool {
        guard let replica else { return false }
        return replica.game.winner == nil && replica.game.isIn(replica.seat)
    }

    private mutating func finish() {
        isMatchOver = true
        turnAt = nil
        snapAt = nil
    }

    /// A reaction time from a normal distribution (Box–Muller on the bot's seeded generator), at least 50 ms.
    private func reaction(scale: Double, context: inout AgentContext<SnapConnection>) -> Duration {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &context.random)
        let u2 = Double.random(in: 0..<1, using: &context.random)
        let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        let seconds = max(0.05, (reactionMean + reactionDeviation * normal) * scale)
        return Duration(seconds: seconds)
    }
}
