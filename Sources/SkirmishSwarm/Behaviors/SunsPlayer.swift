import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// A Suns racer: proposes a coin toss and a layout, strikes at suns it has not captured yet, tells the other player
/// of its captures, and sends its tally once the other side's captures can no longer change its view (2 s after the
/// last capture it knows of).
///
/// Its replica (``SunsReplica``) computes the other player's captures from its strikes and checks each `SunsCapture`
/// against them, bit for bit (desyncs in part `captures`, detected at the capture's receipt). The server compares the
/// two tallies, which a client never sees; correct clients never disagree, so any difference is a desync there too.
struct SunsPlayer: Agent {
    typealias Connection = SnapConnection

    private var replica = SunsReplica(seat: 0)
    /// When the other player's latest strike arrived: a capture's detection delay is measured from it.
    private var theirStrike: Instant?
    private var desyncEpisode = false
    private var seat = 0
    private var gameStart: Instant?
    private var nextStrike: Instant?
    private var lastCapture: Instant?
    private var tallied = false
    private(set) var isMatchOver = false
    private var started = false

    /// Suns in each proposed layout.
    static let layoutSize = 5
    /// Strike radius, in unit coordinates.
    static let radius: Float = 0.08

    init() {}

    var nextWake: Instant? {
        guard !isMatchOver else { return nil }
        if replica.game.isOver, let lastCapture { return lastCapture + .seconds(2) }
        return nextStrike
    }

    mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        seat = Int(welcome.seat)
        replica = SunsReplica(seat: seat)
        propose(context: &context)
    }

    private mutating func propose(context: inout AgentContext<SnapConnection>) {
        let toss = UInt32.random(in: 0...UInt32.max, using: &context.random)
        let suns = (0..<Self.layoutSize).map { _ in
            SunsStart.Sun(
                x: Float.random(in: 0.05...0.95, using: &context.random),
                y: Float.random(in: 0.05...0.95, using: &context.random))
        }
        replica.game.propose(coinToss: toss, suns: suns)
        context.send(.sunsStart(SunsStart(coinToss: toss, suns: suns)))
    }

    mutating func wake(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        guard let gameStart, !isMatchOver else { return }
        if replica.game.isOver {
            if let lastCapture, now >= lastCapture + .seconds(2) { sendTally(context: &context) }
            return
        }
        guard let due = nextStrike, due <= now else { return }
        let time = Float((now - gameStart).seconds)
        // At game time 60 the race is over even with suns left (the protocol refuses later strikes): tally 2 s after
        // the last capture.
        if replica.game.isOver(at: time) {
            let last = lastCapture ?? now
            lastCapture = last
            if now >= last + .seconds(2) { sendTally(context: &context) } else { nextStrike = last + .seconds(2) }
            return
        }
        let layout = replica.game.layout ?? []
        let open = layout.indices.filter { replica.game.owner(of: $0) == nil }
        if let target = open.randomElement(using: &context.random) {
            let sun = layout[target]
            let strike = SunsStrike(
                x: min(max(sun.x + Float.random(in: -0.03...0.03, using: &context.random), 0), 1),
                y: min(max(sun.y + Float.random(in: -0.03...0.03, using: &context.random), 0), 1), radius: Self.radius,
                gameTime: time)
            // The strike goes before its captures: the receiver checks each capture against the strike.
            context.send(.sunsStrike(strike))
            let captures = replica.game.strike(strike, by: seat)
            for capture in captures { context.send(.sunsCapture(capture)) }
            if !captures.isEmpty { lastCapture = now }
        }
        nextStrike = now + .milliseconds(Int64.random(in: 250...600, using: &context.random))
        if replica.game.isOver, lastCapture == nil { lastCapture = now }
    }

    mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        switch message {
        case .sunsStart(let other):
            switch replica.game.receiveStart(other) {
            case .adopted:
                if !started {
                    started = true
                    gameStart = now
                    context.meters.shard.add(context.meters.matchesStarted)
                    nextStrike = now + .milliseconds(Int64.random(in: 100...400, using: &context.random))
                }
            case .retoss:
                propose(context: &context)
            case .waiting:
                break
            }
        case .sunsStrike(let strike):
            theirStrike = now
            let result = replica.receive(strike)
            context.check(result, episode: &desyncEpisode, divergence: result.isOK ? nil : replica.divergence)
        case .sunsCapture(let capture):
            let result = replica.receive(capture)
            // Detected at the capture's receipt: the delay is the time since the strike it belongs to arrived.
            context.check(
                result, episode: &desyncEpisode, divergence: result.isOK ? nil : replica.divergence,
                detectionSeconds: result.isOK ? nil : theirStrike.map { (now - $0).seconds } ?? 0)
            lastCapture = now
        case .otherClientQuit, .serverQuit:
            isMatchOver = true
        default:
            break
        }
    }

    private mutating func sendTally(context: inout AgentContext<SnapConnection>) {
        guard !tallied else { return }
        tallied = true
        context.send(.sunsTally(replica.game.tally()))
        context.meters.shard.add(context.meters.matchesCompleted)
        isMatchOver = true
    }
}
