import SkirmishGames
import SkirmishWire

/// Reproducible Puck inputs built from raw `SeededRandom` bits (no standard-library float sampling, whose algorithm
/// may change between toolchains), so golden values stay valid.
struct Inputs {
    var rng: SeededRandom

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    /// A value in [0, 1) with 24 random bits, exactly.
    mutating func unit() -> Float { Float(rng.next() >> 40) / 16_777_216 }

    mutating func below(_ n: UInt64) -> Int { Int(rng.next() % n) }

    /// A target for `seat` in its own frame: mostly chasing the puck (so there are hits and goals), sometimes
    /// anywhere, sometimes far off the table, sometimes non-finite, sometimes nothing.
    mutating func target(seat: Int, match: PuckMatch) -> PuckTarget? {
        let puck = PuckMatch.view(x: match.puck.x, y: match.puck.y, seat: seat)
        switch below(20) {
        case 0...9: return PuckTarget(x: puck.x + (unit() - 0.5) * 60, y: puck.y + unit() * 50)
        case 10...14: return PuckTarget(x: unit() * 320, y: unit() * 480)
        case 15: return PuckTarget(x: (unit() - 0.5) * 1e30, y: (unit() - 0.5) * 1e6)
        case 16: return PuckTarget(x: [Float.nan, .infinity, -.infinity][below(3)], y: unit() * 480)
        default: return nil
        }
    }

    /// A finite target anywhere on (or a little off) the table.
    mutating func finiteTarget() -> PuckTarget {
        PuckTarget(x: unit() * 400 - 40, y: unit() * 560 - 40)
    }
}

/// Whether two snapshots are identical bit for bit (unlike `==`, which equates `-0` and `0`).
func bitEqual(_ a: TableSnapshot, _ b: TableSnapshot) -> Bool {
    bits(a) == bits(b)
}

func bits(_ s: TableSnapshot) -> [UInt32] {
    let p = s.puck
    return [
        s.tick, s.lastInputStep, s.me.x.bitPattern, s.me.y.bitPattern, s.me.vx.bitPattern, s.me.vy.bitPattern,
        s.them.x.bitPattern, s.them.y.bitPattern, s.them.vx.bitPattern, s.them.vy.bitPattern, p.x.bitPattern,
        p.y.bitPattern, p.vx.bitPattern, p.vy.bitPattern, p.angle.bitPattern, p.spin.bitPattern, UInt32(s.myScore),
        UInt32(s.theirScore), UInt32(s.phase.rawValue), s.stateHash,
    ]
}
