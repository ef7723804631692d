import SkirmishWire

/// How one shot at a defender ends, judged from the authoritative table tick by tick: a package-only evaluation tool
/// (the reference server's shot machine and the evaluation's tests), no rule of the game.
///
/// The definition follows the Robot Air Hockey Challenge's *defend* task (its environment ends a defend episode when
/// the puck is slower than a threshold, or is over the middle line moving toward the opponent), in this table's units
/// and in the defender's frame (its goal at y = 480):
///
/// - **goal**: the puck enters the defender's goal (an own goal too). A deflection that stays in the defender's half
///   and goes on to score is a goal.
/// - **stopped** (a save): the puck's speed falls below ``stopSpeed`` px/tick while its centre is in the defender's
///   half (y ≥ 240) — everywhere there is within the defender's reach (its paddle box, y 280…440 and x 40…280, plus
///   the 60 px contact distance, covers the whole half). Friction stops removing speed below 0.3 px/tick per axis,
///   so a "stopped" puck may still drift: 1 px/tick (60 px/s, about 0.24 m/s on a 1.95 m table) is the least
///   threshold every resting puck passes.
/// - **returned** (a save): after the defender touched it, the puck's centre crosses the centre line (y < 240)
///   moving away from the defender's goal. A defender that scores on the shooter has returned it too.
/// - **timeout**: none of these within ``timeoutTicks``: *not* a save, reported on its own.
///
/// It also measures the **physical intercept error**: the distance between the defender's paddle centre and the
/// puck's centre at the tick the puck crosses the defence line (puck-centre y = ``defenceLine`` moving toward the
/// goal), both from the authoritative table. A puck the defender already touched never crosses where it was going;
/// then the puck's centre is where the untouched puck would be at that tick (its free path from the serve, which the
/// deterministic physics gives exactly), so a paddle standing on the line where the shot was going scores 0 however
/// early the contact.
///
/// A paddle that meets the puck ahead of the line and drives through it is elsewhere by that tick, so a second figure
/// says how well the paddle met the puck: the **contact offset**, at the defender's first contact, the distance from
/// the paddle's centre to the line the puck was travelling along (0 for a hit through its centre, up to the 60 px
/// contact distance for a graze); `nil` when the defender never touched it.
package struct ShotReferee: Sendable {
    /// How a shot ended.
    package enum Outcome: String, Sendable, Hashable, CaseIterable, Codable {
        case goal, stopped, returned, timeout

        /// Whether the outcome is a save (stopped or returned).
        package var isSave: Bool { self == .stopped || self == .returned }
    }

    /// The defence line, in the defender's frame: the puck-centre y of the intercept error (the AI's own line,
    /// `Opponent.defenceLine`, where it blocks shots: the deepest a paddle goes).
    package static let defenceLine: Float = 440
    /// Below this speed (px per tick) in the defender's half the puck is stopped.
    package static let stopSpeed: Float = 1
    /// A shot not decided after this many ticks (five seconds) times out.
    package static let timeoutTicks = 300

    /// The seat defending (its goal is the bottom one of its own frame).
    package let defender: Int
    /// Ticks stepped since the serve.
    package private(set) var ticks = 0
    /// Whether the defender's paddle has touched the puck since the serve.
    package private(set) var touched = false
    /// The physical intercept error, px, once the tick of the crossing has passed.
    package private(set) var interceptError: Float?
    /// The contact offset, px, once the defender has touched the puck.
    package private(set) var contactOffset: Float?
    /// The puck as if nobody touched it (canonical frame), followed until it crosses the defence line.
    private var free: TableSnapshot.Puck
    private var freeCrossed = false
    private var previous: TableSnapshot.Puck

    /// A referee for the puck just served (`puck`, canonical frame) at the seat `defender`.
    package init(served puck: TableSnapshot.Puck, defender: Int) {
        self.defender = defender
        free = puck
        previous = puck
    }

    /// After each step of the authoritative `match`: the outcome once the shot is decided, `nil` while it is in play.
    package mutating func observe(_ match: PuckMatch, events: PuckEvents) -> Outcome? {
        ticks += 1
        let puck = match.puck
        let paddle = match.paddle(of: defender)
        // A contact: the puck did not move as a free puck would, and the defender's paddle is near enough to have
        // hit it this tick (contact distance plus the fastest a hit sends it).
        var expected = previous
        _ = PuckMatch.advanceFreePuck(&expected)
        let dx = puck.x - paddle.x
        let dy = puck.y - paddle.y
        let reach = PuckConstants.contactDistance + PuckConstants.hitSpeed.upperBound + 1
        if !touched, expected != puck, dx * dx + dy * dy < reach * reach {
            touched = true
            // The puck is where it moved freely this tick; `expected` still carries the velocity it came in with.
            let speed = (expected.vx * expected.vx + expected.vy * expected.vy).squareRoot()
            let ox = paddle.x - expected.x
            let oy = paddle.y - expected.y
            contactOffset =
                speed > 0 ? abs(ox * expected.vy - oy * expected.vx) / speed : (ox * ox + oy * oy).squareRoot()
        }
        previous = puck
        if !freeCrossed {
            _ = PuckMatch.advanceFreePuck(&free)
            let own = PuckMatch.view(free, seat: defender)
            if own.y >= Self.defenceLine, own.vy > 0 {
                freeCrossed = true
                let probe = touched ? free : puck
                let ex = probe.x - paddle.x
                let ey = probe.y - paddle.y
                interceptError = (ex * ex + ey * ey).squareRoot()
            } else if ticks > Self.timeoutTicks {
                freeCrossed = true
            }
        }
        if let goal = events.goal { return goal.scorer == defender ? .returned : .goal }
        guard match.phase == .playing else { return nil }
        let own = PuckMatch.view(puck, seat: defender)
        let half = PuckConstants.height / 2
        if touched, own.y < half, own.vy < 0 { return .returned }
        if own.y >= half, own.vx * own.vx + own.vy * own.vy < Self.stopSpeed * Self.stopSpeed { return .stopped }
        if ticks >= Self.timeoutTicks { return .timeout }
        return nil
    }
}
