import SkirmishWire

/// What a Suns client keeps: its own ``SunsGame``, in which the other player's claims come from the other player's
/// strikes, computed with the shared rules, and against which each of the other player's `SunsCapture` is checked.
///
/// The server only relays Suns, so a relay that changed a capture time (or a client that computed one wrongly)
/// would otherwise surface only as a tally mismatch at the end. `SunsStrike` carries the striker's game time, so the
/// receiver computes exactly what the striker computed: which suns the strike reaches, at which times, and which of
/// them improve the striker's earliest claim (the captures the striker must send). A `SunsCapture` that is not that
/// time bit for bit, that names a sun no strike of the other player reached, or that is missing when the next strike
/// arrives is a desync in part `captures`; ``divergence`` says which sun and the two times (hex and decimal).
///
/// Order is guaranteed, not assumed: the striker sends its `SunsStrike` before the captures it makes, both reliable
/// (delivered in order, exactly once) on one connection, and the server relays each in the order it received it, so
/// a capture always arrives after its strike and before the striker's next one. A replica that reports a desync
/// keeps the claim its own rules computed, so its tally is still its own view.
///
/// Storage is fixed when the layout is adopted (at most 16 suns): checking a strike or a capture allocates nothing
/// unless a check fails.
public struct SunsReplica: Sendable {
    /// The replica's game: this client's own proposals and strikes go straight to it.
    public var game: SunsGame
    /// The last desync found, in detail; set only when a check fails.
    public private(set) var divergence: ReplicaDivergence?
    /// Bit `i`: the other player's latest strike improved its claim on sun `i`, and its `SunsCapture` has not come.
    private var owed: UInt16 = 0

    /// A replica seen from `seat` (0 or 1).
    public init(seat: Int) {
        game = SunsGame(seat: seat)
    }

    /// The other player's seat.
    public var otherSeat: Int { 1 - game.seat }

    /// Applies the other player's `SunsStrike`: records the claims it improves, as the striker does, and expects one
    /// `SunsCapture` for each. A capture still owed from the previous strike is a desync (`captures`).
    public mutating func receive(_ strike: SunsStrike) -> ReplicaCheck {
        divergence = nil
        var result = ReplicaCheck.ok
        if owed != 0 {
            let missing = owed.trailingZeroBitCount
            let time = game.best[otherSeat][missing] ?? 0
            result = diverged(
                expected: "sun=\(missing) time=\(Self.describe(time))",
                observed: "sun=\(missing) no SunsCapture before the next SunsStrike")
        }
        var improved: UInt16 = 0
        game.apply(strike, by: otherSeat) { sun, _ in improved |= 1 << sun }
        owed = improved
        return result
    }

    /// Checks the other player's `SunsCapture`: its time must be, bit for bit, the claim the other player's known
    /// strikes give that sun (the earliest time they reach it at); otherwise a desync (`captures`).
    public mutating func receive(_ capture: SunsCapture) -> ReplicaCheck {
        divergence = nil
        let sun = Int(capture.sunIndex)
        // The strings are built only when a check fails: the honest path allocates nothing.
        guard sun < game.layout?.count ?? 0 else {
            return diverged(expected: "a sun below \(game.layout?.count ?? 0)", observed: Self.describe(capture))
        }
        guard let claim = game.best[otherSeat][sun] else {
            return diverged(
                expected: "sun=\(sun) unreached by seat \(otherSeat)'s strikes", observed: Self.describe(capture))
        }
        owed &= ~(1 << sun)
        guard claim.bitPattern == capture.gameTime.bitPattern else {
            return diverged(expected: "sun=\(sun) time=\(Self.describe(claim))", observed: Self.describe(capture))
        }
        return .ok
    }

    /// A time as its bit pattern and its shortest decimal spelling (`0x3f900000 (1.125)`), so a one-ulp difference
    /// shows.
    public static func describe(_ time: Float) -> String {
        let hex = String(time.bitPattern, radix: 16)
        return "0x\(String(repeating: "0", count: 8 - hex.count))\(hex) (\(time))"
    }

    private static func describe(_ capture: SunsCapture) -> String {
        "sun=\(capture.sunIndex) time=\(describe(capture.gameTime))"
    }

    private mutating func diverged(expected: String, observed: String) -> ReplicaCheck {
        divergence = ReplicaDivergence(part: "captures", tick: nil, expected: expected, observed: observed)
        return .desync(part: "captures")
    }
}
