import SkirmishGames
import SkirmishWire
import Testing

@Suite struct PuckReplicaTests {
    /// A server match that has been played for a while with seeded inputs.
    static func warmedUp(seed: UInt64, ticks: Int) -> (PuckMatch, Inputs) {
        var inputs = Inputs(seed: seed)
        var match = PuckMatch()
        match.start()
        for _ in 0..<ticks {
            _ = match.step(inputs.target(seat: 0, match: match), inputs.target(seat: 1, match: match))
        }
        return (match, inputs)
    }

    @Test(arguments: [(1 as UInt64, 0), (2, 0), (3, 1), (4, 1)])
    func aReplicaFromAnExactSnapshotMatchesTheServerBitForBit(seed: UInt64, seat: Int) {
        var (server, inputs) = Self.warmedUp(seed: seed, ticks: 500)
        var replica = PuckMatch(snapshot: server.snapshot(for: seat, lastInputStep: 0), seat: seat)
        #expect(replica.hashes == server.hashes)
        var mismatches = 0
        var goals = 0
        for tick in 0..<5_000 {
            // The first step carries both targets: the replica cannot know the server's remembered ones.
            let t0 = tick == 0 ? inputs.finiteTarget() : inputs.target(seat: 0, match: server)
            let t1 = tick == 0 ? inputs.finiteTarget() : inputs.target(seat: 1, match: server)
            let a = server.step(t0, t1)
            let b = replica.step(t0, t1)
            goals += a.goal == nil ? 0 : 1
            if a != b
                || !bitEqual(
                    server.snapshot(for: seat, lastInputStep: 0), replica.snapshot(for: seat, lastInputStep: 0))
            {
                mismatches += 1
            }
            if server.phase == .over { break }
        }
        #expect(mismatches == 0)
        #expect(goals > 0)
    }

    @Test func bothSeatsViewsDescribeTheSameTable() {
        var (match, inputs) = Self.warmedUp(seed: 9, ticks: 0)
        var checked = 0
        for _ in 0..<20_000 {
            _ = match.step(inputs.target(seat: 0, match: match), inputs.target(seat: 1, match: match))
            let view0 = match.snapshot(for: 0, lastInputStep: 7)
            let view1 = match.snapshot(for: 1, lastInputStep: 8)
            let from0 = PuckMatch(snapshot: view0, seat: 0)
            let from1 = PuckMatch(snapshot: view1, seat: 1)
            let same =
                from0.hashes == match.hashes && from1.hashes == match.hashes && view0.stateHash == view1.stateHash
                && view1.me.x == 320 - view0.them.x && view1.me.y == 480 - view0.them.y
                && view1.puck.x == 320 - view0.puck.x && view1.puck.vy == -view0.puck.vy
                && view0.myScore == view1.theirScore && view0.phase == view1.phase
            checked += same ? 1 : 0
            if match.phase == .over {
                match = PuckMatch()
                match.start()
            }
        }
        #expect(checked == 20_000)
    }

    /// A fixed input script gives a fixed final state: determinism across runs, machines and toolchains.
    @Test func aFixedScriptGivesTheGoldenHash() {
        var inputs = Inputs(seed: 2_026)
        var match = PuckMatch()
        match.start()
        var goals = 0
        for _ in 0..<6_000 {
            let events = match.step(inputs.target(seat: 0, match: match), inputs.target(seat: 1, match: match))
            goals += events.goal == nil ? 0 : 1
        }
        #expect(match.phase == .over && match.tick == 3_786, "got tick \(match.tick)")
        #expect(match.score0 == 6 && match.score1 == 7 && goals == 13, "got \(match.score0)–\(match.score1)")
        #expect(match.hashes.combined == 0x8F17_D390, "got \(String(match.hashes.combined, radix: 16))")
    }

    @Test func snapshotsInOrderAreAdoptedAndStaleOnesIgnored() {
        var (server, inputs) = Self.warmedUp(seed: 5, ticks: 10)
        var replica = PuckReplica(seat: 1)
        var snapshots: [TableSnapshot] = []
        for _ in 0..<10 {
            _ = server.step(inputs.target(seat: 0, match: server), inputs.target(seat: 1, match: server))
            snapshots.append(server.snapshot(for: 1, lastInputStep: 3))
        }
        #expect(replica.apply(snapshots[5]) == .ok)
        #expect(replica.apply(snapshots[2]) == .ok)
        #expect(replica.apply(snapshots[5]) == .ok)
        #expect(replica.latest == snapshots[5])
        #expect(replica.apply(snapshots[9]) == .ok)
        #expect(replica.adopted == 2 && replica.stale == 2)
        #expect(replica.match?.hashes == server.hashes)
    }

    @Test func aSnapshotThatDoesNotReproduceItsHashIsADesync() {
        let (server, _) = Self.warmedUp(seed: 6, ticks: 100)
        var snapshot = server.snapshot(for: 0, lastInputStep: 0)
        snapshot.puck.x = snapshot.puck.x.nextUp
        var replica = PuckReplica(seat: 0)
        #expect(replica.apply(snapshot) == .desync(part: "hash"))
        #expect(replica.latest == nil)
    }

    @Test func goalsAgreeWithSnapshotsInAnyArrivalOrder() {
        var match = PuckMatch()
        match.start()
        var snapshots: [TableSnapshot] = []
        var goals: [GoalScored] = []
        var inputs = Inputs(seed: 11)
        for _ in 0..<3_000 where match.phase != .over {
            let events = match.step(inputs.target(seat: 0, match: match), inputs.target(seat: 1, match: match))
            if let goal = events.goal { goals.append(goal.message(for: 1)) }
            // The inputs came from elsewhere: a step this replica never sent, so it does not predict its own paddle.
            if match.tick % 2 == 0 { snapshots.append(match.snapshot(for: 1, lastInputStep: match.tick)) }
        }
        #expect(goals.count >= 2)
        // Deliver the reliable goals late, interleaved with snapshots, some of them reordered.
        var replica = PuckReplica(seat: 1)
        var desyncs = 0
        var nextGoal = 0
        for (i, snapshot) in snapshots.enumerated() {
            let shuffled = i % 7 == 3 && i + 1 < snapshots.count ? snapshots[i + 1] : snapshot
            desyncs += replica.apply(shuffled) == .ok ? 0 : 1
            while nextGoal < goals.count && goals[nextGoal].tick + 20 <= snapshot.tick {
                desyncs += replica.apply(goals[nextGoal]) == .ok ? 0 : 1
                nextGoal += 1
            }
        }
        #expect(desyncs == 0)
        var wrong = goals[0]
        wrong.myScore += 1
        var fresh = PuckReplica(seat: 1)
        #expect(fresh.apply(wrong) == .desync(part: "score"))
    }

    @Test func predictionFollowsTheServerInFreeFlight() {
        var replica = PuckReplica(seat: 0)
        var server = PuckMatch.kickedOff()
        // Hit the puck with seat 0's paddle, then hold both paddles.
        for _ in 0..<6 {
            _ = server.step(PuckTarget(x: 140, y: 250), nil)
        }
        let hold0 = PuckTarget(x: server.paddle0.x, y: server.paddle0.y)
        let hold1 = PuckTarget(x: 320 - server.paddle1.x, y: 480 - server.paddle1.y)
        _ = server.step(hold0, hold1)
        #expect(replica.apply(server.snapshot(for: 0, lastInputStep: 0)) == .ok)
        let predicted = replica.predictPuck(ticks: 40)
        for _ in 0..<40 {
            _ = server.step(hold0, hold1)
        }
        #expect(predicted == server.puck)
        #expect(server.puck.vx != 0 || server.puck.vy != 0)
    }
}

@Suite struct PuckReplicaEndTests {
    /// Plays a whole seeded match, returning seat 1's messages in server order.
    static func wholeMatch() -> (snapshots: [TableSnapshot], goals: [GoalScored], over: PuckMatchOver?) {
        var match = PuckMatch()
        match.start()
        var inputs = Inputs(seed: 2_026)
        var snapshots: [TableSnapshot] = []
        var goals: [GoalScored] = []
        for _ in 0..<10_000 where match.phase != .over {
            let events = match.step(inputs.target(seat: 0, match: match), inputs.target(seat: 1, match: match))
            if let goal = events.goal { goals.append(goal.message(for: 1)) }
            if match.tick % 2 == 0 || match.phase == .over {
                // Steps this replica never sent (the inputs came from elsewhere): its own paddle is not predicted.
                snapshots.append(match.snapshot(for: 1, lastInputStep: match.tick))
            }
        }
        return (snapshots, goals, match.matchOver(for: 1))
    }

    @Test func theEndOfAMatchChecksOut() throws {
        let (snapshots, goals, over) = Self.wholeMatch()
        let end = try #require(over)
        #expect(end == PuckMatchOver(winner: .me, myScore: 7, theirScore: 6))
        var replica = PuckReplica(seat: 1)
        var results = snapshots.map { replica.apply($0) }
        results += goals.map { replica.apply($0) }
        results.append(replica.apply(end))
        #expect(results.allSatisfy { $0 == .ok })
        #expect(replica.latest?.phase == .over)

        var liar = PuckReplica(seat: 1)
        _ = goals.map { liar.apply($0) }
        #expect(
            liar.apply(PuckMatchOver(winner: .them, myScore: end.myScore, theirScore: end.theirScore))
                == .desync(part: "phase"))
        var early = PuckReplica(seat: 1)
        #expect(early.apply(end) == .desync(part: "score"))
    }

    @Test func deadReckoningMovesTheOpponentAlongItsLastVelocity() throws {
        var match = PuckMatch()
        match.start()
        _ = match.step(nil, PuckTarget(x: 100, y: 400))
        var replica = PuckReplica(seat: 0)
        #expect(replica.apply(match.snapshot(for: 0, lastInputStep: 0)) == .ok)
        let velocity = match.paddle1
        let held = try #require(replica.predict(ticks: 1))
        let reckoned = try #require(replica.predict(ticks: 1, deadReckonOpponent: true))
        #expect(held.paddle1.x == velocity.x && held.paddle1.y == velocity.y)
        #expect(reckoned.paddle1.x == velocity.x + velocity.vx && reckoned.paddle1.y == velocity.y + velocity.vy)
        #expect(
            PuckReplica(seat: 0).predictPuck(ticks: 5)
                == TableSnapshot.Puck(x: 160, y: 240, vx: 0, vy: 0, angle: 0, spin: 0))
    }
}
