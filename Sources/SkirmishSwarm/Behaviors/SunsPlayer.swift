import NIOCore
import SkirmishGames
import SkirmishTelemetry
import SkirmishWire

/// A Suns racer: proposes a coin toss and a layout, strikes at suns it has not captured yet, tells the other player
/// of its captures, and sends its tally once the other side's captures can no longer change its view (2 s after the
/// last capture it knows of).
///
/// The server compares the two tallies; correct clients never disagree, so any difference is a desync.
final class SunsPlayer: Brain {
    private unowned let bot: any BotHandle
    private var game = SunsGame(seat: 0)
    private var seat = 0
    private var gameStart: NIODeadline?
    private var nextStrike: NIODeadline?
    private var lastCapture: NIODeadline?
    private var tallied = false
    private(set) var isMatchOver = false
    private var started = false

    /// Suns in each proposed layout.
    static let layoutSize = 5
    /// Strike radius, in unit coordinates.
    static let radius: Float = 0.08

    init(bot: any BotHandle) {
        self.bot = bot
    }

    var nextWake: NIODeadline? {
        guard !isMatchOver else { return nil }
        if game.isOver, let lastCapture { return lastCapture + .seconds(2) }
        return nextStrike
    }

    func connected(_ welcome: Welcome, now: NIODeadline) {
        seat = Int(welcome.seat)
        game = SunsGame(seat: seat)
        propose()
    }

    private func propose() {
        let toss = UInt32.random(in: 0...UInt32.max, using: &bot.random)
        let suns = (0..<Self.layoutSize).map { _ in
            SunsStart.Sun(
                x: Float.random(in: 0.05...0.95, using: &bot.random),
                y: Float.random(in: 0.05...0.95, using: &bot.random))
        }
        game.propose(coinToss: toss, suns: suns)
        bot.send(.sunsStart(SunsStart(coinToss: toss, suns: suns)))
    }

    func wake(now: NIODeadline) {
        guard let gameStart, !isMatchOver else { return }
        if game.isOver {
            if let lastCapture, now >= lastCapture + .seconds(2) { sendTally() }
            return
        }
        guard let due = nextStrike, due <= now else { return }
        let time = Float(Double((now - gameStart).nanoseconds) / 1e9)
        let layout = game.layout ?? []
        let open = layout.indices.filter { game.owner(of: $0) == nil }
        if let target = open.randomElement(using: &bot.random) {
            let sun = layout[target]
            let strike = SunsStrike(
                x: min(max(sun.x + Float.random(in: -0.03...0.03, using: &bot.random), 0), 1),
                y: min(max(sun.y + Float.random(in: -0.03...0.03, using: &bot.random), 0), 1), radius: Self.radius)
            bot.send(.sunsStrike(strike))
            let captures = game.strike(strike, by: seat, at: time)
            for capture in captures { bot.send(.sunsCapture(capture)) }
            if !captures.isEmpty { lastCapture = now }
        }
        nextStrike = now + .milliseconds(Int64.random(in: 250...600, using: &bot.random))
        if game.isOver, lastCapture == nil { lastCapture = now }
    }

    func received(_ message: Message, at now: NIODeadline) {
        switch message {
        case .sunsStart(let other):
            switch game.receiveStart(other) {
            case .adopted:
                if !started {
                    started = true
                    gameStart = now
                    bot.meters.shard.add(bot.meters.matchesStarted)
                    nextStrike = now + .milliseconds(Int64.random(in: 100...400, using: &bot.random))
                }
            case .retoss:
                propose()
            case .waiting:
                break
            }
        case .sunsCapture(let capture):
            game.receiveCapture(capture, by: 1 - seat)
            lastCapture = now
        case .otherClientQuit, .serverQuit:
            isMatchOver = true
        default:
            break
        }
    }

    private func sendTally() {
        guard !tallied else { return }
        tallied = true
        bot.send(.sunsTally(game.tally()))
        bot.meters.shard.add(bot.meters.matchesCompleted)
        isMatchOver = true
    }
}
