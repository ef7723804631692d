import SkirmishWire

/// A test and evaluation hook, not part of the game or the protocol: the server shoots seeded shots at one seat of
/// every Puck match, so an AI's saves can be counted through the real protocol.
///
/// It is reachable only through `ServerConfiguration.shotMachine` (package access: no command-line flag or wire
/// message can turn it on); `skirmish ai-eval` sets it on its embedded server. A match still needs both seats filled
/// — the shooter's seat is an ordinary player that may stay idle. Then, instead of open play:
///
/// - every shot puts the puck in play from the shooter's half with the velocity of a seeded corner shot
///   (``PuckShot/corner(banked:using:)``: direct and banked off a side wall in turn, scoring on an empty goal) and resets
///   the score to 0–0, so a match never ends;
/// - the defender is told of each shot by a Chat line carrying a ``ShotEvent`` (`.served`: its own frame; the puck
///   is exactly there at that tick), and of the result by another (`.ended`);
/// - a ``ShotReferee`` judges every tick of the server's own table: *goal*, *stopped* or *returned* (the two kinds
///   of save), or *timeout* after ``Configuration/shotTicks`` (not a save), with the physical intercept error;
/// - the next shot follows ``Configuration/gapTicks`` later (cutting a goal pause short).
package struct ShotMachine: Sendable {
    package struct Configuration: Sendable, Hashable {
        /// Seeds the shots; each match draws its own sequence from this and its match id.
        package var seed: UInt64
        /// The seat shot at (the other seat is the shooter).
        package var defender: Int
        /// Ticks between the end of one shot and the next serve.
        package var gapTicks: Int
        /// A shot still undecided after this many ticks times out (not a save).
        package var shotTicks: Int

        package init(
            seed: UInt64 = 1, defender: Int = 1, gapTicks: Int = 20, shotTicks: Int = ShotReferee.timeoutTicks
        ) {
            self.seed = seed
            self.defender = defender
            self.gapTicks = gapTicks
            self.shotTicks = shotTicks
        }
    }

    private enum State: Sendable {
        case waiting(ticks: Int)
        case inFlight(ShotReferee)
    }

    let configuration: Configuration
    private var random: SeededRandom
    private var state = State.waiting(ticks: 0)
    private var number: UInt32 = 0

    package init(_ configuration: Configuration, match: UInt32) {
        self.configuration = configuration
        random = SeededRandom(seed: configuration.seed).derived(UInt64(match))
    }

    /// Before the match steps: serves the next shot when it is due.
    mutating func beforeStep(_ match: inout PuckMatch, into out: inout MatchOutputs) {
        guard case .waiting(let ticks) = state else { return }
        guard ticks >= configuration.gapTicks else {
            state = .waiting(ticks: ticks + 1)
            return
        }
        number &+= 1
        let shot = PuckShot.corner(banked: number % 2 == 0, using: &random)
        let defender = configuration.defender
        match.serve(Self.view(shot.puck, seat: defender), resettingScore: true)
        let served = ShotEvent.served(
            number: number, tick: match.tick, puck: Self.view(match.puck, seat: defender), bounces: shot.bounces)
        out.append(MatchOutput(seat: defender, .chat(Chat(text: served.text))))
        state = .inFlight(ShotReferee(served: match.puck, defender: defender))
    }

    /// After the match stepped: ends the shot in play when the referee has decided it.
    mutating func afterStep(_ match: PuckMatch, events: PuckEvents, into out: inout MatchOutputs) {
        guard case .inFlight(var referee) = state else { return }
        var outcome = referee.observe(match, events: events)
        if outcome == nil, referee.ticks >= configuration.shotTicks { outcome = .timeout }
        guard let outcome else {
            state = .inFlight(referee)
            return
        }
        let ended = ShotEvent.ended(
            number: number, outcome: outcome, interceptError: referee.interceptError,
            contactOffset: referee.contactOffset)
        out.append(MatchOutput(seat: configuration.defender, .chat(Chat(text: ended.text))))
        state = .waiting(ticks: 0)
    }

    /// A puck seen from `seat` (the half turn is its own inverse).
    static func view(_ p: TableSnapshot.Puck, seat: Int) -> TableSnapshot.Puck {
        guard seat != 0 else { return p }
        return TableSnapshot.Puck(
            x: PuckConstants.width - p.x, y: PuckConstants.height - p.y, vx: -p.vx, vy: -p.vy, angle: p.angle,
            spin: p.spin)
    }
}
