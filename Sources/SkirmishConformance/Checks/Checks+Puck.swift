import SkirmishGames
import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// Each player sees itself at the bottom: the other's paddle arrives mirrored, (x, y) → (320 − x, 480 − y).
    static let puckMirroring = ConformanceCheck(
        id: "puck.mirroring", title: "each player sees the other's paddle mirrored into its own frame",
        needs: .game(.puck), limit: .seconds(20)
    ) { context in
        let (pair, failure) = try await context.pair(game: .puck).players()
        guard let (a, _, b, _) = pair else { return failure! }
        defer { release(a, b) }
        let targetA = (x: Float(100), y: Float(380))
        let targetB = (x: Float(200), y: Float(420))
        // Judged on snapshots of ticks after both paddles reached their targets: each player's latest snapshot alone
        // may be a tick behind the other's, showing the other paddle still on its way.
        var bothThere: UInt32?
        let settled = await steer(a, to: targetA, b, to: targetB, within: .seconds(6) * context.patience) { ra, rb in
            guard let sa = ra.snapshots.last, let sb = rb.snapshots.last else { return false }
            if bothThere == nil, near(sa.me, targetA), near(sb.me, targetB) { bothThere = max(sa.tick, sb.tick) }
            guard let bothThere else { return false }
            return sa.tick > bothThere && sb.tick > bothThere && near(sa.me, targetA) && near(sb.me, targetB)
        }
        guard settled, let sa = a.now.snapshots.last, let sb = b.now.snapshots.last else {
            return .failed(
                "both paddles at their targets (100, 380) and (200, 420), each in its own frame, within 6 s",
                "A at \(point(a.now.snapshots.last?.me)), B at \(point(b.now.snapshots.last?.me))")
        }
        let mirroredB = (x: 320 - targetB.x, y: 480 - targetB.y)
        let mirroredA = (x: 320 - targetA.x, y: 480 - targetA.y)
        guard near(sa.them, mirroredB) else {
            return .failed("A to see B's paddle at \(point(mirroredB))", point(sa.them))
        }
        guard near(sb.them, mirroredA) else {
            return .failed("B to see A's paddle at \(point(mirroredA))", point(sb.them))
        }
        return .pass
    }

    /// A paddle stays in its own half and on the table, and moves at most 40 px per tick, whatever the input asks.
    static let puckLimits = ConformanceCheck(
        id: "puck.limits", title: "paddles keep to their half and the table and move at most 40 px per tick",
        needs: .game(.puck), limit: .seconds(20)
    ) { context in
        let (pair, failure) = try await context.pair(game: .puck).players()
        guard let (a, _, b, _) = pair else { return failure! }
        defer { release(a, b) }
        // Inputs far outside what is allowed: the other half, off the table, across the table in one tick.
        let targets: [(x: Float, y: Float)] = [(160, 60), (-300, 900), (700, 100), (40, 440), (300, -50)]
        var step: UInt32 = 0
        let start = a.now.snapshots.count
        for target in targets {
            let until = ContinuousClock.now + .milliseconds(500)
            while ContinuousClock.now < until {
                step += 1
                a.send(.paddleState(PaddleState(inputStep: step, x: target.x, y: target.y, vx: 0, vy: 0)))
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let seen = Array(a.now.snapshots.dropFirst(start)).filter { $0.phase == .playing || $0.phase == .goalPause }
        guard seen.count >= 20 else { return .failed("at least 20 snapshots of play in 2.5 s", "\(seen.count)") }
        let box = (x: Float(40)...Float(280), y: Float(280)...Float(440))
        for snapshot in seen where !(box.x.contains(snapshot.me.x) && box.y.contains(snapshot.me.y)) {
            return .failed(
                "the paddle within x 40…280, y 280…440 (own half, on the table)",
                "\(point(snapshot.me)) at tick \(snapshot.tick)")
        }
        for (earlier, later) in zip(seen, seen.dropFirst()) where later.tick > earlier.tick {
            let moved = distance(earlier.me, later.me)
            let allowed = PuckConstants.maxPaddleStep * Float(later.tick - earlier.tick) + 0.01
            guard moved <= allowed else {
                return .failed(
                    "at most \(allowed) px in \(later.tick - earlier.tick) ticks",
                    "\(moved) px from tick \(earlier.tick) to \(later.tick)")
            }
        }
        guard seen.contains(where: { $0.me.y < 281 }), seen.contains(where: { $0.me.x < 41 }) else {
            return .failed("the paddle to follow input to the half line and the side wall", "it never got there")
        }
        return .pass
    }

    /// Both seats' snapshots agree with themselves (hash over their fields), with a replica running the shared rules,
    /// and with each other: the same tick seen from the other seat is mirrored, velocities negated, to the bit.
    ///
    /// Once the kick-off (a goal pause of ``PuckConstants/goalPauseTicks``) is over, seat 0 shoots up the middle
    /// into seat 1's open goal, so that the snapshots compared show the puck moving, a scoring tick and a goal pause;
    /// each seat's `GoalScored` must name the scorer and the scores in its own frame.
    static let puckReplica = ConformanceCheck(
        id: "puck.replica",
        title: "both seats' snapshots (and goals) match their hash, the replica and each other mirrored",
        needs: .game(.puck), limit: .seconds(25)
    ) { context in
        let (pair, failure) = try await context.pair(game: .puck).players()
        guard let (a, wa, b, wb) = pair else { return failure! }
        defer { release(a, b) }
        // A shot that scores, so that the snapshots compared show the puck moving, a scoring tick (its extra
        // snapshot) and a goal pause: seat 0 shoots straight up the middle into seat 1's goal, seat 1 stands aside.
        let (shooter, keeper) = wa.seat == 0 ? (a, b) : (b, a)
        var step: UInt32 = 0
        func aim(_ player: Player, _ x: Float, _ y: Float) {
            player.send(.paddleState(PaddleState(inputStep: step, x: x, y: y, vx: 0, vy: 0)))
        }
        // The match starts with a kick-off, a goal pause whose countdown (the puck's angle, in ticks) the snapshots
        // carry: the puck cannot be hit before play. Meanwhile the keeper goes to its far corner (its own frame's
        // (280, 440): out of the puck's path) and the shooter to 80 px below the puck, out of reach (contact is at
        // 60 px), so that it is not touching the puck when play starts.
        context.step("waiting for the kick-off to end")
        let pause = Duration.seconds(Double(PuckConstants.goalPauseTicks) / Double(PuckConstants.tickRate))
        let kickOff = ContinuousClock.now + pause + .seconds(3) * context.patience
        var playing = false
        while !playing, ContinuousClock.now < kickOff {
            step += 1
            aim(keeper, 280, 440)
            aim(shooter, 160, 320)
            try await Task.sleep(for: .milliseconds(20))
            playing = shooter.now.snapshots.last.map { $0.phase == .playing } ?? false
        }
        guard playing else {
            let last = shooter.now.snapshots.last
            return .failed(
                "play to start after the kick-off's pause (\(PuckConstants.goalPauseTicks) ticks)",
                "phase \(last.map { "\($0.phase)" } ?? "unknown"), countdown \(last?.puck.angle ?? 0)")
        }
        // The shot: one 40 px step up to the half line, which strikes the puck straight up at full speed. The
        // snapshots compared start at the first that shows the puck moving: from there on no input changes, and the
        // shared rules predict every state, the goal included.
        context.step("waiting for the shot")
        let before = shooter.now.snapshots.count
        for _ in 0..<5 {
            step += 1
            aim(shooter, 160, 280)
            try await Task.sleep(for: .milliseconds(20))
        }
        func moving(_ snapshot: TableSnapshot) -> Bool { snapshot.puck.vx != 0 || snapshot.puck.vy != 0 }
        guard
            let struck = await shooter.wait(
                .seconds(2) * context.patience, until: { $0.snapshots.dropFirst(before).contains(where: moving) }),
            let hit = struck.snapshots.dropFirst(before).first(where: moving)
        else { return .failed("the puck moving after seat 0's shot", "a puck at rest for 2 s") }
        let startOf = { (player: Player) in
            player.now.snapshots.firstIndex { $0.tick >= hit.tick } ?? player.now.snapshots.count
        }
        let start = (startOf(a), startOf(b))
        _ = await a.wait(.seconds(3)) { $0.snapshots.count >= start.0 + 60 }
        _ = await b.wait(.seconds(1)) { $0.snapshots.count >= start.1 + 60 }
        let seenA = Array(a.now.snapshots.dropFirst(start.0))
        let seenB = Array(b.now.snapshots.dropFirst(start.1))
        // The same tick from both seats: B's view is A's mirrored, whichever seat each holds.
        var ticksOfB: [UInt32: TableSnapshot] = [:]
        for snapshot in seenB { ticksOfB[snapshot.tick] = snapshot }
        var paired = 0
        for snapshot in seenA {
            guard let other = ticksOfB[snapshot.tick] else { continue }
            if let mismatch = mirrorMismatch(snapshot, other) {
                return .failed(
                    "seat \(wb.seat)'s snapshot of tick \(snapshot.tick) to mirror seat \(wa.seat)'s "
                        + "((x, y) → (320 − x, 480 − y), velocities negated, scores swapped)",
                    mismatch)
            }
            paired += 1
        }
        guard paired >= 20 else {
            return .failed("at least 20 ticks seen by both seats in 3 s", "\(paired)")
        }
        for (seen, welcome) in [(seenA, wa), (seenB, wb)] {
            if let failure = replicate(seen, seat: Int(welcome.seat)) { return failure }
        }
        // The goal, as each seat is told it: seat 0 scored, "me" to seat 0 and "them" to seat 1, each one's own score
        // first, at the tick of the snapshot that first shows the new score.
        for (player, seat, scorer) in [(shooter, 0, Side.me), (keeper, 1, Side.them)] {
            let expected = scorer == .me ? (1, 0) : (0, 1)
            let want =
                "GoalScored to seat \(seat) naming \(scorer == .me ? "0 (me)" : "1 (them)") as the scorer, "
                + "\(expected.0)-\(expected.1)"
            guard
                let goal = await player.wait(.seconds(2) * context.patience, until: { !$0.goals.isEmpty })?.goals.first
            else { return .failed(want + " (seat 0's shot up the middle)", "no goal within 2 s") }
            guard goal.scorer == scorer, goal.myScore == expected.0, goal.theirScore == expected.1 else {
                return .failed(want, "scorer \(goal.scorer.rawValue), \(goal.myScore)-\(goal.theirScore)")
            }
            let scoring = player.now.snapshots.first { Int($0.myScore) + Int($0.theirScore) == 1 }
            guard scoring?.tick == goal.tick else {
                return .failed(
                    "GoalScored's tick to be its scoring snapshot's (\(scoring.map { "\($0.tick)" } ?? "none"))",
                    "tick \(goal.tick)")
            }
        }
        return .pass
    }

    /// Snapshots come at the rate the Welcome announces: every second tick of its tick rate (30 Hz at 60), within
    /// 5 % over 5 s, to both seats, and each regular snapshot is two ticks after the one before.
    ///
    /// The 5 % is the rule's and does not grow with patience: the count is taken by the times the session read the
    /// snapshots, so a busy checker that reads late still counts what arrived within the window. The tick step is
    /// the rule of GameRules, *Snapshots and events*: 2 between snapshots of a stepping match (playing or in a goal
    /// pause, the kick-off's included), except next to a scoring tick's extra snapshot (1 on either side of it, or 0 for
    /// the regular snapshot of the same tick), and any step into the first snapshot of play or into the match's end.
    static let puckRate = ConformanceCheck(
        id: "puck.rate",
        title: "snapshots arrive at half the Welcome's tick rate, within 5 % over 5 s, two ticks apart",
        needs: .game(.puck), limit: .seconds(20)
    ) { context in
        let (pair, failure) = try await context.pair(game: .puck).players()
        guard let (a, wa, b, wb) = pair else { return failure! }
        defer { release(a, b) }
        let window = Duration.seconds(5)
        let tolerance = 0.05
        // One window for both, from the later of their first snapshots on, counted by the times the session read
        // them: a busy checker that reads its records late still counts what arrived within the window.
        var firsts: [Instant] = []
        for (player, name) in [(a, "A"), (b, "B")] {
            guard
                let first = await player.wait(.seconds(5) * context.patience, until: { !$0.snapshotTimes.isEmpty })?
                    .snapshotTimes.last
            else { return .failed("snapshots to \(name)", "none within 5 s") }
            firsts.append(first)
        }
        let players = [(a, wa, "A"), (b, wb, "B")]
        /// The snapshots each player read in the window of 5 s from `start`, or the failure of a player that stopped
        /// getting any.
        func count(from start: Instant) async -> (seen: [[TableSnapshot]], failure: CheckOutcome?) {
            let end = start.advanced(byNanoseconds: window.nanoseconds)
            var seen: [[TableSnapshot]] = []
            for (player, _, name) in players {
                guard
                    let record = await player.wait(
                        window + .seconds(3) * context.patience, until: { $0.snapshotTimes.last ?? .zero >= end })
                else {
                    let failure = CheckOutcome.failed(
                        "snapshots to \(name) for 5 s",
                        "\(player.now.snapshotTimes.filter { $0 >= start }.count), then none")
                    return ([], failure)
                }
                seen.append(zip(record.snapshots, record.snapshotTimes).filter { $0.1 >= start && $0.1 < end }.map(\.0))
            }
            return (seen, nil)
        }
        /// The first player whose count is outside the band: what was expected and seen.
        func offRate(_ seen: [[TableSnapshot]]) -> (expected: String, saw: String)? {
            for ((_, welcome, name), snapshots) in zip(players, seen) {
                let rate = Double(welcome.tickRate) / 2
                let expected = rate * window.seconds
                guard abs(Double(snapshots.count) - expected) > expected * tolerance else { continue }
                return (
                    "\(Int(expected)) ± \(Int(expected * tolerance)) snapshots in 5 s to \(name) (\(rate) Hz: every "
                        + "second tick of the Welcome's \(Int(rate * 2)) Hz)",
                    "\(snapshots.count) (\(Double(snapshots.count) / window.seconds) Hz)"
                )
            }
            return nil
        }
        context.step("counting snapshots for 5 s")
        var (seen, stopped) = await count(from: firsts.max()!)
        if let stopped { return stopped }
        if let first = offRate(seen) {
            // Once more, from the latest snapshot on: a server that lost a moment to a stall (its own, or a machine
            // busy with something else) keeps its rate over the next 5 s; one that runs at another rate does not.
            context.step("counting snapshots for 5 s more, after \(first.saw)")
            let latest = [a, b].compactMap { $0.now.snapshotTimes.last }.max() ?? firsts.max()!
            (seen, stopped) = await count(from: latest)
            if let stopped { return stopped }
            if let again = offRate(seen) {
                return .failed(first.expected + " (twice)", "\(first.saw), then \(again.saw)")
            }
        }
        for ((_, _, name), snapshots) in zip(players, seen) {
            if let wrong = tickStepFault(snapshots) {
                return .failed(
                    "each snapshot to \(name) two ticks after the one before (every second tick; 1 or 0 only beside a "
                        + "scoring tick's extra snapshot)",
                    wrong)
            }
        }
        return .pass
    }
}

/// The first pair of consecutive snapshots whose tick step breaks the snapshot rule, described, or `nil`.
///
/// A stepping match (playing, or in a goal pause) advances its tick once per server tick and is sent a snapshot every
/// second one: a step of 2. A scoring tick adds an extra snapshot of its own tick at once, which is 1 after the
/// snapshot before it (or 2, when the scoring tick is a snapshot tick: the regular snapshot that follows is then the
/// same payload again, a step of 0), and the regular snapshot after an extra one is 1 after it. A step into the first
/// stepped snapshot (from phase waiting) or into phase over (a forfeit's last snapshot) is not the rule's.
func tickStepFault(_ snapshots: [TableSnapshot]) -> String? {
    func scores(_ snapshot: TableSnapshot) -> Int { Int(snapshot.myScore) + Int(snapshot.theirScore) }
    var extra = false
    for (earlier, later) in zip(snapshots, snapshots.dropFirst()) {
        let scoring = scores(later) != scores(earlier)
        defer { extra = scoring }
        guard earlier.phase != .waiting, later.phase != .over, earlier.phase != .over else { continue }
        let step = Int64(later.tick) - Int64(earlier.tick)
        if step == 2 { continue }
        if step == 1, scoring || extra { continue }
        if step == 0, extra, later == earlier { continue }
        return "tick \(later.tick) after tick \(earlier.tick) (a step of \(step)), phase \(later.phase)"
    }
    return nil
}

/// Checks `seen`, one seat's snapshots, against their own hashes and against what the shared rules predict from the
/// one before; the failure, or `nil` when at least 20 were compared and all agreed.
private func replicate(_ seen: [TableSnapshot], seat: Int) -> CheckOutcome? {
    var replica = PuckReplica(seat: seat)
    var compared = 0
    var previous: TableSnapshot?
    for snapshot in seen {
        if case .desync(let part) = replica.apply(snapshot) {
            // The replica checks each snapshot against its own hash, and against what the shared rules predict
            // from the one before wherever no unknown input could have changed it: name which rule broke.
            guard part != "hash", let divergence = replica.divergence else {
                return .failed(
                    "seat \(seat)'s snapshots whose fields reproduce their state hash",
                    "a \(part) mismatch at tick \(snapshot.tick)")
            }
            return .failed(
                "the \(part) the shared rules predict from seat \(seat)'s previous snapshot: \(divergence.expected)",
                "\(divergence.observed) at tick \(snapshot.tick)")
        }
        defer { previous = snapshot }
        guard let earlier = previous, snapshot.tick > earlier.tick, snapshot.tick - earlier.tick <= 6,
            earlier.phase != .over, snapshot.phase != .over
        else { continue }
        var from = PuckReplica(seat: seat)
        _ = from.apply(earlier)
        guard let predicted = from.predict(ticks: Int(snapshot.tick - earlier.tick)) else { continue }
        guard predicted.stateHash == snapshot.stateHash else {
            return .failed(
                "seat \(seat)'s state of tick \(snapshot.tick) as the shared rules predict it from tick \(earlier.tick) "
                    + "(hash \(hex32(predicted.stateHash)))",
                "hash \(hex32(snapshot.stateHash))")
        }
        compared += 1
    }
    guard compared >= 20 else {
        return .failed(
            "at least 20 consecutive snapshots to seat \(seat) to compare in 3 s", "\(compared) from \(seen.count)")
    }
    return nil
}

/// What differs between `b` and `a` seen from the other seat, or `nil` when `b` is `a` mirrored to the bit.
private func mirrorMismatch(_ a: TableSnapshot, _ b: TableSnapshot) -> String? {
    func differs(_ what: String, _ expected: Float, _ got: Float) -> String? {
        expected.bitPattern == got.bitPattern
            ? nil : "\(what) \(got) (\(hex32(got.bitPattern))) instead of \(expected) (\(hex32(expected.bitPattern)))"
    }
    func mirrored(_ name: String, _ from: TableSnapshot.Paddle, _ to: TableSnapshot.Paddle) -> [String?] {
        [
            differs("\(name) x", 320 - from.x, to.x), differs("\(name) y", 480 - from.y, to.y),
            differs("\(name) vx", -from.vx, to.vx), differs("\(name) vy", -from.vy, to.vy),
        ]
    }
    let fields: [String?] =
        mirrored("my paddle", a.them, b.me) + mirrored("their paddle", a.me, b.them) + [
            differs("puck x", 320 - a.puck.x, b.puck.x), differs("puck y", 480 - a.puck.y, b.puck.y),
            differs("puck vx", -a.puck.vx, b.puck.vx), differs("puck vy", -a.puck.vy, b.puck.vy),
            differs("puck angle", a.puck.angle, b.puck.angle), differs("puck spin", a.puck.spin, b.puck.spin),
            a.myScore == b.theirScore && a.theirScore == b.myScore
                ? nil : "score \(b.myScore)-\(b.theirScore) instead of \(a.theirScore)-\(a.myScore)",
            a.phase == b.phase ? nil : "phase \(b.phase) instead of \(a.phase)",
            a.stateHash == b.stateHash
                ? nil : "state hash \(hex32(b.stateHash)) instead of the same \(hex32(a.stateHash))",
        ]
    return fields.compactMap { $0 }.first
}

/// Sends each player's target every 20 ms until `done` holds for both records or `limit` passes.
private func steer(
    _ a: Player, to targetA: (x: Float, y: Float), _ b: Player, to targetB: (x: Float, y: Float),
    within limit: Duration,
    done: (Player.Record, Player.Record) -> Bool
) async -> Bool {
    let end = ContinuousClock.now + limit
    var step: UInt32 = 0
    while ContinuousClock.now < end, !Task.isCancelled {
        step += 1
        a.send(.paddleState(PaddleState(inputStep: step, x: targetA.x, y: targetA.y, vx: 0, vy: 0)))
        b.send(.paddleState(PaddleState(inputStep: step, x: targetB.x, y: targetB.y, vx: 0, vy: 0)))
        if done(a.now, b.now) { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return false
}

private func near(_ paddle: TableSnapshot.Paddle, _ point: (x: Float, y: Float)) -> Bool {
    abs(paddle.x - point.x) < 0.01 && abs(paddle.y - point.y) < 0.01
}

private func distance(_ a: TableSnapshot.Paddle, _ b: TableSnapshot.Paddle) -> Float {
    ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
}

private func point(_ paddle: TableSnapshot.Paddle?) -> String {
    guard let paddle else { return "nowhere (no snapshot)" }
    return point((paddle.x, paddle.y))
}

private func point(_ xy: (x: Float, y: Float)) -> String { "(\(xy.x), \(xy.y))" }

func hex32(_ value: UInt32) -> String { "0x" + String(value, radix: 16) }
