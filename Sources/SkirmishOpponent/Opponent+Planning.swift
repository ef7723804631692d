import SkirmishGames
import SkirmishWire

/// The planner: from the predicted table to a target for the paddle, in the opponent's own frame.
extension Opponent {
    /// The puck-centre band (own frame) where the opponent meets the puck: from just inside its half to its goal.
    static let zone: ClosedRange<Float> = 285...455
    /// A slow puck is worth going for from here (a paddle at the top of its box reaches a puck centre down to 220).
    static let reachTop: Float = 226
    /// Above this the other paddle can reach the puck too (its box ends at 200, contact is 60): going up there for a
    /// slow puck invites a close-range shot that latency leaves no time to answer, so the opponent does so only when
    /// the other paddle is ``farEnough`` away, or once the puck has sat there for ``contestAfter`` seconds.
    static let safe: Float = 262
    static let farEnough: Float = 140
    static let contestAfter = 1.5
    /// The wait point is this far behind the puck's meeting point, plus the run-up.
    static let contactGap: Float = 54
    /// The longest run-up, in px: at 1.5 × the paddle's speed a 10 px/tick run already gives the 15 px/tick maximum.
    static let maxRunUp: Float = 36
    /// A puck centre below this is too deep to get behind (the paddle box ends at y = 440).
    static let deep: Float = 425
    /// Where the paddle stands when there is nothing to do (the spot `ai-eval`'s shots are drawn to stay clear of).
    static let home = Point(x: PuckShot.keeperSpot.x, y: PuckShot.keeperSpot.y)

    struct Decision {
        var plan: Plan
        var target: Point
        /// For a block: the server tick the shot crosses the line it is blocked on (held until then).
        var blockUntil: UInt32? = nil
    }

    /// What to do, given the snapshot the opponent acts on.
    func makePlan(from snapshot: TableSnapshot, now: Double, contested: Bool) -> Decision {
        var lookahead = 0
        // Ticks from the snapshot until the decision takes effect, however far that is beyond the horizon.
        var effectAhead = 0
        if configuration.predicts, let tick = estimator.serverTick(at: now - configuration.reactionDelay) {
            // The decision takes effect when it reaches the server, on the tick after it arrives.
            let effect = tick + estimator.meanOneWay * Double(PuckConstants.tickRate) + 1
            effectAhead = max(Int((effect - Double(snapshot.tick)).rounded()), 0)
            lookahead = min(effectAhead, configuration.predictionHorizon)
        }
        let table = predictTable(from: snapshot, ticks: lookahead, stopBeforeGoal: true)
        let effectTick = snapshot.tick &+ UInt32(lookahead)
        guard table.phase == .playing else {
            let plan = Plan(
                mode: .waiting, target: PuckTarget(x: Self.home.x, y: Self.home.y), crossingX: Self.home.x,
                crossingPredicted: false, crossingTick: nil, bounces: 0, snapshotTick: snapshot.tick,
                lookahead: lookahead)
            return Decision(plan: plan, target: Self.home)
        }
        let mine = ownView(table.paddle(of: seat))
        let them = ownView(table.paddle(of: 1 - seat))
        let scanTicks = configuration.predicts ? max(configuration.predictionHorizon - lookahead, 0) : 0
        let scan = self.scan(from: table.puck, ticks: scanTicks, mine: mine, them: them, contested: contested)
        let present = ownView(table.puck)
        let presentPoint = Point(x: present.x, y: present.y)
        var mode: Plan.Mode
        var target: Point
        var aim: Point?
        var blockUntil: UInt32?
        // The snapshot's puck followed with no paddle in the way: where a shot is blocked, and the crossing reported.
        let free = configuration.predicts ? freeCrossing(from: snapshot, ticks: configuration.predictionHorizon) : nil
        let seen = snapshot.puck // the snapshot is in this seat's frame
        let incoming = seen.vy > 0 && seen.vx * seen.vx + seen.vy * seen.vy >= Self.shotSpeed2
        // A shot is struck back only over a quick link; otherwise it is stopped first and played from rest.
        if incoming, estimator.meanOneWay >= Self.blockLatency, let free,
            let block = blockSpot(crossing: free, after: effectAhead, paddle: commanded ?? mine)
        {
            // A shot is met standing on its line, not struck: a strike's timing rests on the latency estimate, a
            // block's only on being there first.
            mode = .blocking
            target = Point(x: block.spot.x + positionOffset, y: block.spot.y)
            blockUntil = snapshot.tick &+ UInt32(block.ticks + Self.blockGrace)
        } else if var meet = scan.intercept {
            let themTouching = (them - meet.puck).length < PuckConstants.contactDistance
            if let direction = shotDirection(from: meet.puck, them: them, themTouching: themTouching) {
                aim = direction
                meet.direction = direction
                meet.wait = (meet.puck - direction * (Self.contactGap + runUp)).confined()
            }
            let slow = present.vx * present.vx + present.vy * present.vy < 4
            if meet.ticks <= driveTicks || slow && (mine - meet.wait).length < 8 {
                mode = .striking
                target = aimedDrive(on: table, meet: meet, from: commanded ?? mine)
            } else {
                mode = .intercepting
                target = slow ? route(from: mine, to: meet.wait, around: meet.puck) : meet.wait
            }
        } else if let crossing = scan.crossing {
            mode = .blocking
            target = Point(x: crossing.x + positionOffset, y: 430)
        } else if present.vy > 0.3, let last = scan.last, last.y > presentPoint.y {
            // Coming, but the crossing is beyond the horizon: stand in the shadow of where the puck will be then.
            mode = .guarding
            target = Self.shadow(of: last) + Point(x: positionOffset, y: 0)
        } else {
            mode = .guarding
            target = Self.shadow(of: presentPoint) + Point(x: positionOffset, y: 0)
        }
        // Only a slow puck is pushed into the goal by a careless move; a fast one is met or blocked where it goes.
        if mode != .striking, mode != .intercepting, present.vx * present.vx + present.vy * present.vy < 9 {
            target = route(from: mine, to: target.confined(), around: presentPoint)
        }
        target = target.confined()
        // The reported crossing is the undisturbed one: the snapshot's puck followed with no paddle in the way (the
        // table at the effect tick may already show this opponent's own committed inputs touching it).
        let crossing =
            free.map { (x: $0.x, tick: snapshot.tick &+ UInt32($0.ticks), bounces: $0.bounces) }
            ?? scan.crossing.map { (x: $0.x, tick: effectTick &+ UInt32($0.ticks), bounces: $0.bounces) }
        var plan = Plan(
            mode: mode, target: PuckTarget(x: target.x, y: target.y), crossingX: crossing?.x ?? target.x,
            crossingPredicted: crossing != nil, crossingTick: crossing?.tick, bounces: crossing?.bounces ?? 0,
            snapshotTick: snapshot.tick, lookahead: lookahead)
        plan.aim = aim.map { PuckTarget(x: $0.x, y: $0.y) }
        return Decision(plan: plan, target: target, blockUntil: blockUntil)
    }

    /// A puck at least this fast (squared, px per tick) coming down the table is a shot, blocked on its line.
    static let shotSpeed2: Float = 9
    /// Ticks a block is still tried for a crossing estimated before its inputs arrive, and held past the crossing.
    static let blockGrace = 4
    /// From this one-way latency (seconds) on, a shot is blocked rather than struck back. Below it a strike's
    /// timing holds and returning the shot with pace wins matches (a block leaves the puck slow in front of the
    /// goal, often by a wall where the only strike left runs up that wall into the rival); above it a strike timed
    /// a tick wrong is a goal, and blocking saves more.
    static let blockLatency = 0.075

    /// Where to stand to block a shot whose free path crosses the defence line at `crossing` (from
    /// ``freeCrossing(from:ticks:)``), and the ticks after the snapshot until it gets there: when a paddle now at
    /// `paddle` can be there at the speed cap in the ticks between the decision taking effect (`after` ticks after
    /// the snapshot, less ``blockGrace``) and the crossing; `nil` otherwise — then the shot is met, or guarded
    /// against, the other ways.
    ///
    /// The path is the snapshot's puck touched by nobody, not the predicted table's: a paddle on that path stops the
    /// shot whatever happens on the way, and the inputs already sent (a guard spot it grazes) are no reason to stand
    /// anywhere else. A crossing up to the grace before the estimate of the effect tick is still worth running for:
    /// inputs arrive with the link's jitter, and the puck is a few ticks more from the line into the goal.
    func blockSpot(
        crossing: (x: Float, ticks: Int, bounces: Int), after: Int, paddle: Point
    ) -> (spot: Point, ticks: Int)? {
        // A puck already on or past the line is not blocked there.
        guard crossing.ticks > 0 else { return nil }
        let spot = Point(x: min(max(crossing.x, 40), 280), y: Self.defenceLine)
        let time = crossing.ticks + Self.blockGrace - after
        guard time >= 0, (spot - paddle).length <= configuration.speedCap * Float(time) else { return nil }
        return (spot, crossing.ticks)
    }

    /// Where `snapshot`'s puck, touched by nobody, first crosses the defence line toward this opponent's goal within
    /// `ticks`, with the side-wall bounces on the way.
    func freeCrossing(from snapshot: TableSnapshot, ticks: Int) -> (x: Float, ticks: Int, bounces: Int)? {
        guard snapshot.phase == .playing, snapshot.puck.vy > 0 || snapshot.puck.y >= Self.defenceLine else {
            return nil
        }
        var puck = ownView(snapshot.puck) // the half turn is its own inverse: own frame → canonical
        var bounces = 0
        for k in 0...max(ticks, 0) {
            if k > 0 {
                let vxBefore = puck.vx
                if PuckMatch.advanceFreePuck(&puck) != nil { return nil }
                if vxBefore != 0, (vxBefore < 0) != (puck.vx < 0) { bounces += 1 }
            }
            let own = ownView(puck)
            if own.y >= Self.defenceLine, own.vy > 0 { return (own.x, k, bounces) }
            if own.vy <= 0 { return nil }
        }
        return nil
    }

    /// Ticks of the final run through the puck: enough for the run-up at the speed cap.
    var driveTicks: Int {
        let cap = max(configuration.speedCap, 1)
        return max(1, Int((runUp / cap).rounded(.up)))
    }

    var runUp: Float { min(configuration.speedCap * 2, Self.maxRunUp) }

    struct Meeting {
        /// Ticks after the decision takes effect.
        var ticks: Int
        var puck: Point
        var direction: Point
        var wait: Point
    }

    struct Scan {
        var intercept: Meeting?
        var crossing: (x: Float, ticks: Int, bounces: Int)?
        /// The last position scanned (the horizon's end, or where the scan stopped).
        var last: Point?
    }

    /// Follows the puck's free path from the effect tick: the first point where the paddle can be waiting behind it
    /// in time (within the speed cap), and where the path crosses the defence line.
    func scan(from canonical: TableSnapshot.Puck, ticks: Int, mine: Point, them: Point, contested: Bool) -> Scan {
        var result = Scan()
        var puck = canonical
        var bounces = 0
        let cap = configuration.speedCap
        let drive = driveTicks
        let run = runUp
        for k in 0...ticks {
            if k > 0 {
                let vxBefore = puck.vx
                let scored = PuckMatch.advanceFreePuck(&puck) != nil
                if vxBefore != 0, (vxBefore < 0) != (puck.vx < 0) { bounces += 1 }
                if scored {
                    let own = ownView(puck)
                    if result.crossing == nil, own.vy > 0 { result.crossing = (own.x, k, bounces) }
                    result.last = Point(x: own.x, y: own.y)
                    break
                }
            }
            let own = ownView(puck)
            let point = Point(x: own.x, y: own.y)
            result.last = point
            if result.crossing == nil, own.y >= Self.defenceLine, own.vy > 0 {
                result.crossing = (own.x, k, bounces)
            }
            let speed2 = own.vx * own.vx + own.vy * own.vy
            // The other paddle touching the puck cannot hit it again before they part: a puck it holds in the band
            // both paddles reach is there to be taken.
            let held = k <= 8 && own.y >= Self.reachTop && (them - point).length < PuckConstants.contactDistance
            let inZone =
                speed2 < 9
                ? own.y >= Self.reachTop && own.y <= Self.zone.upperBound
                    && (own.y >= Self.safe || contested || held || (them - point).length > Self.farEnough)
                // A fast puck deeper than the paddle can get behind is blocked, not met.
                : Self.zone.contains(own.y) && own.y <= Self.deep || held
            if result.intercept == nil, inZone, own.vy > -1.5 || speed2 < 6 {
                let direction = aimDirection(from: point, them: them)
                let wait = (point - direction * (Self.contactGap + run)).confined()
                let available = cap * Float(max(k - drive, 0)) + 4
                if (wait - mine).length <= available {
                    result.intercept = Meeting(ticks: k, puck: point, direction: direction, wait: wait)
                }
            }
            if result.intercept != nil, result.crossing != nil || own.vy <= 0 { break }
            if own.y < 200, own.vy < 0 { break }
        }
        // A slow puck still in reach at the end of the scan stays about there: go for it, however long it takes
        // (with prediction off this is the only way to meet a puck at all).
        if result.intercept == nil, let last = result.last, last.y >= Self.reachTop, last.y <= Self.zone.upperBound,
            last.y >= Self.safe || contested || (them - last).length > Self.farEnough
        {
            let own = ownView(puck)
            if own.vx * own.vx + own.vy * own.vy < 9 {
                let direction = aimDirection(from: last, them: them)
                let wait = (last - direction * (Self.contactGap + run)).confined()
                let ticks = ticks + drive + Int(((wait - mine).length / max(cap, 1)).rounded(.up))
                result.intercept = Meeting(ticks: ticks, puck: last, direction: direction, wait: wait)
            }
        }
        return result
    }

    /// The next point on the way from `mine` to `target` that does not hit `puck` toward the opponent's own goal.
    ///
    /// A straight move that would touch the puck from its far side (the paddle above it, nearer the other goal)
    /// pushes it toward this goal; then the paddle goes around instead, stepping up to a radian at a time along a
    /// circle 78 px from the puck toward the target's side — the way that stays on the table. Touching it from the
    /// goal side is harmless (it sends the puck up the table) and a strike goes straight through on purpose.
    func route(from mine: Point, to target: Point, around puck: Point) -> Point {
        let ab = target - mine
        let l2 = ab.dot(ab)
        let t = l2 > 0 ? min(max((puck - mine).dot(ab) / l2, 0), 1) : 0
        let closest = mine + ab * t
        guard (puck - closest).length < PuckConstants.contactDistance + 4, closest.y < puck.y + 20 else {
            return target
        }
        let from = (mine - puck).normalised(or: Point(x: 0, y: 1))
        let to = (target - puck).normalised(or: Point(x: 0, y: 1))
        let turn: Float = from.x * to.y - from.y * to.x >= 0 ? 1 : -1
        for flip in 0..<2 {
            let sign = flip == 0 ? turn : -turn
            let (sine, cosine) = (Self.sine(sign), Self.cosine(sign))
            let around = Point(x: from.x * cosine - from.y * sine, y: from.x * sine + from.y * cosine)
            let waypoint = puck + around * 78
            if (waypoint.confined() - waypoint).length < 10 { return waypoint }
        }
        return target
    }

    /// The guard spot: on the line from the middle of the goal to `puck`, at the paddle's depth.
    static func shadow(of puck: Point) -> Point {
        let depth: Float = 55
        let along = max(PuckConstants.height - puck.y, depth)
        let x = 160 + (puck.x - 160) * depth / along
        return Point(x: min(max(x, 100), 220), y: PuckConstants.height - depth)
    }
}
