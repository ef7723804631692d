import SkirmishWire

/// Runs one authoritative Puck match: inputs in, 60 Hz steps, 30 Hz snapshots out in each seat's own frame.
///
/// A seat whose player dropped pauses the match (the table freezes, snapshots continue for the other player) until it
/// resumes or the resume window passes, when the absent player forfeits.
package struct PuckRunner: Sendable {
    private(set) var match = PuckMatch()
    /// The newest target per seat not yet given to the match (the match keeps the last one it was given).
    private var target0: PuckTarget?
    private var target1: PuckTarget?
    private var lastInputStep: [UInt32] = [0, 0]
    private var present: [Bool] = [false, false]
    private var detachedTicks: [Int?] = [nil, nil]
    private var serverTicks: UInt64 = 0
    /// Ticks a detached seat may stay away before it forfeits.
    let resumeWindowTicks: Int
    /// The evaluation hook: serves shots instead of open play (`ServerConfiguration.shotMachine`).
    private var shots: ShotMachine?

    package init(resumeWindowTicks: Int, shots: ShotMachine? = nil) {
        self.resumeWindowTicks = resumeWindowTicks
        self.shots = shots
    }

    package var isOver: Bool { match.phase == .over }

    package mutating func seatFilled(_ seat: Int) { present[seat] = true }

    package mutating func seatDetached(_ seat: Int) {
        present[seat] = false
        detachedTicks[seat] = 0
    }

    package mutating func seatAttached(_ seat: Int) {
        present[seat] = true
        detachedTicks[seat] = nil
    }

    /// A player left for good: it forfeits a running match, or leaves a waiting one.
    package mutating func seatLeft(_ seat: Int, into out: inout MatchOutputs) {
        present[seat] = false
        detachedTicks[seat] = nil
        guard match.phase != .over, match.phase != .waiting else { return }
        _ = match.forfeit(loser: seat)
        out.report(.forfeited(seat: seat))
        announceOver(winner: 1 - seat, into: &out)
    }

    package mutating func receive(_ message: Message, from seat: Int) -> MatchVerdict {
        guard case .paddleState(let input) = message else { return .outOfState }
        guard input.x.isFinite, input.y.isFinite else { return .badValue }
        guard match.phase != .over else { return .outOfState }
        if lastInputStep[seat] != 0, !SerialNumber.follows(input.inputStep, lastInputStep[seat]) {
            return .accepted
        }
        lastInputStep[seat] = input.inputStep
        if seat == 0 { target0 = PuckTarget(input) } else { target1 = PuckTarget(input) }
        return .accepted
    }

    /// One 60 Hz server tick.
    package mutating func tick(into out: inout MatchOutputs) {
        serverTicks &+= 1
        if match.phase == .waiting, present[0], present[1] {
            match.start()
            out.report(.started)
        }
        var paused = false
        for seat in 0..<2 {
            guard let away = detachedTicks[seat] else { continue }
            paused = true
            detachedTicks[seat] = away + 1
            if away + 1 >= resumeWindowTicks, match.phase != .over {
                detachedTicks[seat] = nil
                _ = match.forfeit(loser: seat)
                out.report(.forfeited(seat: seat))
                announceOver(winner: 1 - seat, into: &out)
                return
            }
        }
        if !paused, match.phase == .playing || match.phase == .goalPause {
            if shots != nil { shots!.beforeStep(&match, into: &out) }
            let events = match.step(target0, target1)
            if shots != nil { shots!.afterStep(match, events: events, into: &out) }
            target0 = nil
            target1 = nil
            if let goal = events.goal {
                for seat in 0..<2 where present[seat] {
                    // The snapshot of the scoring tick first, so a replica sees the score change with its state.
                    out.append(
                        MatchOutput(
                            seat: seat,
                            .tableSnapshot(match.snapshot(for: seat, lastInputStep: lastInputStep[seat]))))
                    out.append(MatchOutput(seat: seat, .goalScored(goal.message(for: seat))))
                }
            }
            if let winner = events.winner {
                announceOver(winner: winner, into: &out)
                return
            }
        }
        if serverTicks % UInt64(PuckConstants.snapshotEvery) == 0 {
            for seat in 0..<2 where present[seat] {
                out.append(
                    MatchOutput(
                        seat: seat, .tableSnapshot(match.snapshot(for: seat, lastInputStep: lastInputStep[seat])))
                )
            }
        }
    }

    private mutating func announceOver(winner: Int, into out: inout MatchOutputs) {
        for seat in 0..<2 where present[seat] {
            let view = match.snapshot(for: seat, lastInputStep: lastInputStep[seat])
            out.append(MatchOutput(seat: seat, .tableSnapshot(view)))
            let side: Side = winner == seat ? .me : .them
            out.append(
                MatchOutput(
                    seat: seat,
                    .puckMatchOver(PuckMatchOver(winner: side, myScore: view.myScore, theirScore: view.theirScore))))
        }
        out.report(.completed)
    }
}
