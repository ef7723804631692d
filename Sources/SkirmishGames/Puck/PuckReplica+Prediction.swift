import SkirmishWire

/// The prediction check: from each exact snapshot the replica runs the shared physics forward to the next one and
/// compares bit for bit wherever the outcome cannot depend on what a client does not know.
///
/// What a client does not know is the other player's paddle between two snapshots (only its positions at the
/// snapshots), and exactly when its own newer inputs reached the server. So:
/// - its own paddle is predicted for every tick at which each input it sent (and the server had not yet
///   acknowledged) may have arrived — up to the snapshot's own tick, since a snapshot taken while the match is paused
///   for a dropped player may acknowledge an input the next step has yet to use; the server's paddle must be one of
///   those outcomes (`paddles`);
/// - the puck is compared only when no paddle with an unknown path could have touched it: a paddle moves at most
///   `maxPaddleStep` per tick, so a puck that stays farther than `contactDistance + k × maxPaddleStep` from where
///   that paddle was, at every tick k of the interval, was not touched by it (`puck`);
/// - scores and phase are compared when the puck was predicted, or when no goal was reachable (the puck moves at most
///   `maxSpeed` per tick along y) — except a snapshot showing the match over, which a forfeit can cause at any time
///   (`score`, `phase`);
/// - every position the physics produces is a multiple of `quantum`, so a position that is not is wrong whatever the
///   inputs were (`puck`, `paddles`).
///
/// It is a value-type computation on a few copies of the 100-byte table: no allocation unless it finds a desync.
extension PuckReplica {
    /// The longest gap between two snapshots (in ticks) the replica predicts across; beyond it, it only adopts.
    public static let maxPredictedTicks = 8
    /// How many of its own inputs the replica remembers (about a second at 30 Hz: inputs in flight over a slow link).
    static let inputCapacity = 32

    /// Records an input this client sent (own frame), so the replica knows where its own paddle was heading.
    ///
    /// A step sent twice with different targets is ambiguous (the server keeps whichever arrived first): the replica
    /// then does not predict its paddle across it.
    public mutating func sent(_ input: PaddleState) {
        if input.inputStep == 0 { sentUnnumbered = true }
        guard input.inputStep != 0, input.x.isFinite, input.y.isFinite else { return }
        let slot = Int(input.inputStep % UInt32(Self.inputCapacity))
        let previous = inputs[slot]
        var entry = SentInput(step: input.inputStep, x: input.x, y: input.y)
        if previous.step == input.inputStep {
            entry.conflicted = previous.conflicted || previous.x != input.x || previous.y != input.y
        }
        inputs[slot] = entry
        if newestSent == 0 || SerialNumber.follows(input.inputStep, newestSent) { newestSent = input.inputStep }
    }

    /// The target of the input numbered `step`, if this replica still remembers sending it.
    func sentTarget(_ step: UInt32) -> PuckTarget? {
        let entry = inputs[Int(step % UInt32(Self.inputCapacity))]
        return entry.step == step && !entry.conflicted ? PuckTarget(x: entry.x, y: entry.y) : nil
    }

    /// Whether the input numbered `step` was sent more than once with different targets.
    func conflicted(_ step: UInt32) -> Bool {
        let entry = inputs[Int(step % UInt32(Self.inputCapacity))]
        return entry.step == step && entry.conflicted
    }

    /// Whether every input numbered `from` to `newestSent` is still remembered (none overwritten), so a step in that
    /// range that is not remembered was never sent.
    func remembersAll(from step: UInt32) -> Bool {
        guard step != 0, newestSent != 0 else { return false }
        let span = newestSent &- step
        return span < UInt32(Self.inputCapacity) && (span == 0 || SerialNumber.follows(newestSent, step))
    }

    /// Compares `observed` (the canonical table of `snapshot`, already hash-checked) with the prediction from
    /// `base`, the previous exact table (`nil`: nothing to predict from), whose snapshot said `baseInputStep`.
    mutating func predictionCheck(
        base: PuckMatch?, baseInputStep: UInt32, observed: PuckMatch, snapshot: TableSnapshot
    ) -> ReplicaCheck {
        if let part = invariantCheck(observed, snapshot: snapshot) { return part }
        guard let base else { return .ok }
        let gap = Int(snapshot.tick &- base.tick)
        guard base.phase == .playing || base.phase == .goalPause, snapshot.tick != base.tick,
            SerialNumber.follows(snapshot.tick, base.tick), gap <= Self.maxPredictedTicks
        else { return .ok }
        // Which of its own inputs this seat's paddle may have followed: `steps` holds the candidates for the first
        // tick of the interval (`from` 0 with `ownKnown`: the target it already had, no input ever accepted); with
        // `secondTick`, the second tick may have taken a newer one of the same steps.
        //
        // A snapshot produced by a step names the input that step used, but one taken without a step (the match
        // paused for a dropped player) may name an input accepted after the last step and still pending
        // (GameRules.md, "The step"): so even the interval's last tick may have used any input from `s1` to `s2`,
        // never a newer one, and never an older one than the tick before it.
        let s1 = baseInputStep
        let s2 = snapshot.lastInputStep
        var ownKnown = false
        var steps: (from: UInt32, count: UInt32) = (0, 1)
        var secondTick = false
        if s1 == s2 {
            if s1 == 0 {
                // No input accepted yet means the paddle kept its target, unless the client sent unnumbered inputs,
                // which the server applies without counting them.
                ownKnown = !sentUnnumbered
            } else if sentTarget(s1) != nil {
                ownKnown = true
                steps = (s1, 1)
            }
        } else if gap <= 2, SerialNumber.follows(s2, s1), sentTarget(s2) != nil,
            (s1 == 0 && !sentUnnumbered) || (sentTarget(s1) != nil && remembersAll(from: s1))
        {
            ownKnown = true
            steps = (s1, s2 &- s1 &+ 1)
            secondTick = gap == 2
        }
        if ownKnown, steps.count > 1 {
            // A step in between sent twice with different targets could have taken effect with either.
            var step = steps.from
            for _ in 0..<steps.count {
                if conflicted(step) { ownKnown = false }
                step &+= 1
            }
        }
        if !ownKnown { steps = (0, 1) }

        var candidates = 0
        var allClear = true
        var puckMatched = false
        var paddleMatched = false
        var scoreMatched = false
        var phaseMatched = false
        var first: PuckMatch?
        var stepReading = false
        var step = steps.from
        for index in 0..<steps.count {
            defer { step &+= 1 }
            let target: PuckTarget?
            if ownKnown, step != 0 {
                // A step in the range that was never sent is no candidate.
                guard let known = sentTarget(step) else { continue }
                target = known
            } else {
                target = nil
            }
            // At the second tick the paddle kept this target (`nil`) or took a newer input, up to `s2`.
            var later = step
            for _ in index..<(secondTick ? steps.count : index + 1) {
                defer { later &+= 1 }
                let then: PuckTarget?
                if later == step {
                    then = nil
                } else {
                    guard let known = sentTarget(later) else { continue }
                    then = known
                }
                let (table, clear) = simulate(base, ticks: gap, first: target, then: then, ownKnown: ownKnown)
                candidates += 1
                allClear = allClear && clear
                // A divergence reports the reading of a snapshot produced by a step: its last tick used `s2`.
                if first == nil || (!stepReading && later == s2) {
                    first = table
                    stepReading = later == s2
                }
                puckMatched = puckMatched || table.puck == observed.puck
                paddleMatched = paddleMatched || table.paddle(of: seat) == observed.paddle(of: seat)
                scoreMatched = scoreMatched || table.scores == observed.scores
                phaseMatched = phaseMatched || table.phase == observed.phase
            }
        }
        guard candidates > 0, let predicted = first else { return .ok }
        // A forfeit ends the match at any tick, with the puck reset: nothing after it can be predicted.
        if observed.phase == .over, !phaseMatched { return .ok }
        let puckKnown = allClear
        let since = base.tick &+ 1
        if puckKnown { compared.puck += 1 }
        if ownKnown { compared.paddles += 1 }
        if puckKnown, !puckMatched {
            return diverged(
                "puck", snapshot: snapshot, since: since, expected: Self.describe(Self.view(predicted.puck, seat)),
                observed: Self.describe(snapshot.puck))
        }
        if ownKnown, !paddleMatched {
            return diverged(
                "paddles", snapshot: snapshot, since: since,
                expected: "me " + Self.describe(Self.view(predicted.paddle(of: seat), seat)),
                observed: "me " + Self.describe(snapshot.me))
        }
        let noGoalReachable =
            base.phase == .goalPause
            || (base.puck.y > PuckConstants.maxSpeed * Float(gap)
                && base.puck.y < PuckConstants.height - PuckConstants.maxSpeed * Float(gap))
        guard puckKnown || noGoalReachable else { return .ok }
        compared.score += 1
        if !scoreMatched {
            let mine = predicted.score(of: seat)
            let theirs = predicted.score(of: 1 - seat)
            return diverged(
                "score", snapshot: snapshot, since: since, expected: "my=\(mine) their=\(theirs)",
                observed: "my=\(snapshot.myScore) their=\(snapshot.theirScore)")
        }
        if !phaseMatched {
            return diverged(
                "phase", snapshot: snapshot, since: since, expected: "\(predicted.phase)",
                observed: "\(snapshot.phase)")
        }
        return .ok
    }

    /// Positions the physics always leaves on the `quantum` grid; a snapshot off it is wrong whatever the inputs.
    private mutating func invariantCheck(_ observed: PuckMatch, snapshot: TableSnapshot) -> ReplicaCheck? {
        let puck = snapshot.puck
        if !Self.onGrid(puck.x) || !Self.onGrid(puck.y) {
            return diverged(
                "puck", snapshot: snapshot, since: nil,
                expected: "x=\(PuckMatch.quantise(puck.x)) y=\(PuckMatch.quantise(puck.y))",
                observed: "x=\(puck.x) y=\(puck.y)")
        }
        if let found = offGrid("me", snapshot.me, snapshot: snapshot) { return found }
        if let found = offGrid("them", snapshot.them, snapshot: snapshot) { return found }
        return nil
    }

    private mutating func offGrid(
        _ name: String, _ paddle: TableSnapshot.Paddle, snapshot: TableSnapshot
    ) -> ReplicaCheck? {
        guard !Self.onGrid(paddle.x) || !Self.onGrid(paddle.y) || !Self.onGrid(paddle.vx) || !Self.onGrid(paddle.vy)
        else { return nil }
        let grid = TableSnapshot.Paddle(
            x: PuckMatch.quantise(paddle.x), y: PuckMatch.quantise(paddle.y), vx: PuckMatch.quantise(paddle.vx),
            vy: PuckMatch.quantise(paddle.vy))
        return diverged(
            "paddles", snapshot: snapshot, since: nil, expected: "\(name) " + Self.describe(grid),
            observed: "\(name) " + Self.describe(paddle))
    }

    @inline(__always)
    static func onGrid(_ v: Float) -> Bool {
        !(v.magnitude < 1024) || PuckMatch.quantise(v) == v
    }

    /// Runs `base` forward `ticks` with this seat's target `first` at the first tick and `then` from the second
    /// (`nil`: unchanged), the other paddle held; `clear` says no paddle whose path is unknown can have touched the
    /// puck on the way.
    private func simulate(
        _ base: PuckMatch, ticks: Int, first: PuckTarget?, then: PuckTarget?, ownKnown: Bool
    ) -> (PuckMatch, clear: Bool) {
        var table = base
        let them = base.paddle(of: 1 - seat)
        let mine = base.paddle(of: seat)
        var clear = Self.clear(them, table.puck, ticks: 0) && (ownKnown || Self.clear(mine, table.puck, ticks: 0))
        for k in 1...ticks {
            let target = k == 1 ? first : (k == 2 ? then : nil)
            _ = seat == 0 ? table.step(target, nil) : table.step(nil, target)
            if clear {
                clear = Self.clear(them, table.puck, ticks: k) && (ownKnown || Self.clear(mine, table.puck, ticks: k))
            }
        }
        return (table, clear)
    }

    /// Whether a paddle that was at `paddle` cannot be in contact with `puck` after moving for `ticks` ticks.
    @inline(__always)
    static func clear(_ paddle: TableSnapshot.Paddle, _ puck: TableSnapshot.Puck, ticks: Int) -> Bool {
        let dx = puck.x - paddle.x
        let dy = puck.y - paddle.y
        let reach = PuckConstants.contactDistance + PuckConstants.maxPaddleStep * Float(ticks) + 1
        return dx * dx + dy * dy > reach * reach
    }

    private mutating func diverged(
        _ part: String, snapshot: TableSnapshot, since: UInt32?, expected: String, observed: String
    ) -> ReplicaCheck {
        divergence = ReplicaDivergence(
            part: part, tick: snapshot.tick, since: since, expected: expected, observed: observed)
        return .desync(part: part)
    }

    static func view(_ puck: TableSnapshot.Puck, _ seat: Int) -> TableSnapshot.Puck { PuckMatch.view(puck, seat: seat) }

    static func view(_ paddle: TableSnapshot.Paddle, _ seat: Int) -> TableSnapshot.Paddle {
        PuckMatch.view(paddle, seat: seat)
    }

    static func describe(_ p: TableSnapshot.Puck) -> String {
        "x=\(p.x) y=\(p.y) vx=\(p.vx) vy=\(p.vy) angle=\(p.angle) spin=\(p.spin)"
    }

    static func describe(_ p: TableSnapshot.Paddle) -> String { "x=\(p.x) y=\(p.y) vx=\(p.vx) vy=\(p.vy)" }
}

/// How many snapshots a replica compared, by part: what its predictions covered (tests and benchmarks read it).
package struct ComparedParts: Sendable, Hashable {
    /// Snapshots whose puck was predicted and compared.
    package var puck = 0
    /// Snapshots whose own paddle was predicted and compared.
    package var paddles = 0
    /// Snapshots whose scores and phase were compared.
    package var score = 0

    package init() {}
}

/// One input a Puck client sent: its number and target (own frame). Step 0 marks an empty slot.
struct SentInput: Sendable, Hashable {
    var step: UInt32
    var x: Float
    var y: Float
    /// Sent again with another target: which one the server applied is unknown.
    var conflicted = false

    static let empty = SentInput(step: 0, x: 0, y: 0)
}
