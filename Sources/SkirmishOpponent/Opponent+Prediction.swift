import SkirmishGames
import SkirmishWire

/// The predictor: the shared Puck physics run forward from an exact snapshot.
extension Opponent {
    /// Ticks the other paddle is extrapolated along its last velocity before it is assumed to stop.
    static let deadReckoningTicks = 6

    /// Where this opponent's predictor puts the puck at server tick `tick` (own frame), from the newest snapshot;
    /// `nil` before the first snapshot or for a tick not after it (at most 600 ticks ahead).
    ///
    /// This is the prediction a client checks against the authoritative snapshot of that tick (misprediction, DESIGN
    /// §4).
    public func predictedPuck(atTick tick: UInt32) -> TableSnapshot.Puck? {
        guard let newest = snapshots.newest?.snapshot, SerialNumber.follows(tick, newest.tick) else { return nil }
        return predictPuck(from: newest, ticks: Int(tick &- newest.tick))
    }

    /// The puck `ticks` after `snapshot` (own frame, at most 600 ticks), with this opponent's own paddle following
    /// the inputs it sent (as they are estimated to reach the server) and the other paddle dead-reckoned.
    public func predictPuck(from snapshot: TableSnapshot, ticks: Int) -> TableSnapshot.Puck {
        let table = predictTable(from: snapshot, ticks: min(max(ticks, 0), 600))
        return ownView(table.puck)
    }

    /// The canonical table `ticks` after `snapshot`: the server's state as far as this opponent can know it. With
    /// `stopBeforeGoal` the table stops at the tick before a predicted goal.
    func predictTable(from snapshot: TableSnapshot, ticks: Int, stopBeforeGoal: Bool = false) -> PuckMatch {
        var table = PuckMatch(snapshot: snapshot, seat: seat)
        guard ticks > 0 else { return table }
        let other = 1 - seat
        let them = table.paddle(of: other)
        // The server holds the target of the last input it applied; newer inputs take over as they arrive.
        var index = inputs.count - 1
        while index >= 0, SerialNumber.follows(inputs[index].step, snapshot.lastInputStep) { index -= 1 }
        var mine: PuckTarget?
        if index >= 0, inputs[index].step == snapshot.lastInputStep {
            mine = PuckTarget(x: inputs[index].x, y: inputs[index].y)
        }
        var next = index + 1
        let start = Double(snapshot.tick)
        for k in 1...ticks {
            let tick = start + Double(k)
            while next < inputs.count, inputs[next].arrivalTick <= tick {
                mine = PuckTarget(x: inputs[next].x, y: inputs[next].y)
                next += 1
            }
            let ahead = Float(min(k, Self.deadReckoningTicks))
            let theirs = PuckMatch.view(x: them.x + them.vx * ahead, y: them.y + them.vy * ahead, seat: other)
            let target = PuckTarget(x: theirs.x, y: theirs.y)
            var next = table
            let events = seat == 0 ? next.step(mine, target) : next.step(target, mine)
            // The planner wants the last moment it can still act on, not the table after a goal it may yet stop.
            if stopBeforeGoal, events.goal != nil { break }
            table = next
        }
        return table
    }

    /// A canonical puck in this opponent's frame.
    func ownView(_ puck: TableSnapshot.Puck) -> TableSnapshot.Puck {
        guard seat != 0 else { return puck }
        return TableSnapshot.Puck(
            x: PuckConstants.width - puck.x, y: PuckConstants.height - puck.y, vx: -puck.vx, vy: -puck.vy,
            angle: puck.angle, spin: puck.spin)
    }

    /// A canonical paddle position in this opponent's frame.
    func ownView(_ paddle: TableSnapshot.Paddle) -> Point {
        let p = PuckMatch.view(x: paddle.x, y: paddle.y, seat: seat)
        return Point(x: p.x, y: p.y)
    }
}
