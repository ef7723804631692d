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
        let settled = await steer(a, to: targetA, b, to: targetB, within: .seconds(6)) { ra, rb in
            guard let sa = ra.snapshots.last, let sb = rb.snapshots.last else { return false }
            return near(sa.me, targetA) && near(sb.me, targetB)
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

    /// The snapshots agree with themselves (hash over their fields) and with a replica running the shared rules.
    static let puckReplica = ConformanceCheck(
        id: "puck.replica", title: "snapshots match their state hash and the replica's prediction",
        needs: .game(.puck), limit: .seconds(25)
    ) { context in
        let (pair, failure) = try await context.pair(game: .puck).players()
        guard let (a, wa, b, _) = pair else { return failure! }
        defer { release(a, b) }
        // Set the puck moving: both players chase it for a while, then let go.
        var step: UInt32 = 0
        let chase = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < chase {
            step += 1
            for player in [a, b] {
                guard let puck = player.now.snapshots.last?.puck else { continue }
                player.send(.paddleState(PaddleState(inputStep: step, x: puck.x, y: puck.y + 20, vx: 0, vy: 0)))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // With no more input, the paddles come to rest at their last targets within a few ticks.
        try await Task.sleep(for: .milliseconds(400))
        let start = a.now.snapshots.count
        _ = await a.wait(.seconds(3)) { $0.snapshots.count >= start + 60 }
        let seen = Array(a.now.snapshots.dropFirst(start))
        var replica = PuckReplica(seat: Int(wa.seat))
        var compared = 0
        var previous: TableSnapshot?
        for snapshot in seen {
            if case .desync(let part) = replica.apply(snapshot) {
                // The replica checks each snapshot against its own hash, and against what the shared rules predict
                // from the one before wherever no unknown input could have changed it: name which rule broke.
                guard part != "hash", let divergence = replica.divergence else {
                    return .failed(
                        "snapshots whose fields reproduce their state hash",
                        "a \(part) mismatch at tick \(snapshot.tick)")
                }
                return .failed(
                    "the \(part) the shared rules predict from the previous snapshot: \(divergence.expected)",
                    "\(divergence.observed) at tick \(snapshot.tick)")
            }
            defer { previous = snapshot }
            guard let earlier = previous, snapshot.tick > earlier.tick, snapshot.tick - earlier.tick <= 6,
                earlier.phase != .over, snapshot.phase != .over
            else { continue }
            var from = PuckReplica(seat: Int(wa.seat))
            _ = from.apply(earlier)
            guard let predicted = from.predict(ticks: Int(snapshot.tick - earlier.tick)) else { continue }
            guard predicted.stateHash == snapshot.stateHash else {
                return .failed(
                    "the state of tick \(snapshot.tick) as the shared rules predict it from tick \(earlier.tick) "
                        + "(hash \(hex32(predicted.stateHash)))",
                    "hash \(hex32(snapshot.stateHash))")
            }
            compared += 1
        }
        guard compared >= 20 else {
            return .failed("at least 20 consecutive snapshots to compare in 3 s", "\(compared) from \(seen.count)")
        }
        return .pass
    }
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
