import SkirmishGames
import SkirmishWire
import Testing

/// The Puck replica's prediction check, without sockets: a server loop that works like the reference server's
/// (inputs applied at the next tick, newest step wins, a snapshot every second tick and on each goal), two clients
/// whose inputs and snapshots cross a link with latency, jitter, loss, duplication and reordering, and replicas that
/// predict each snapshot from the one before.
///
/// An honest server must never be flagged, whatever the link; a server whose state drifted, and which hashes its
/// drifted state honestly, must be flagged at every snapshot the prediction compares, with the right part.
@Suite struct PuckPredictionTests {
    /// A link: each packet is delayed 0…`jitter` ticks beyond `latency`, lost with `loss`, sent twice with
    /// `duplicate` (in 1/1000).
    struct Link: CustomStringConvertible {
        var latency: Int
        var jitter: Int
        var loss: Int
        var duplicate: Int
        var description: String { "\(latency)+\(jitter) ticks, loss \(loss)‰, duplicate \(duplicate)‰" }
    }

    /// What tampering a server's snapshot to one seat does.
    enum Tamper: String, CaseIterable, CustomStringConvertible {
        case puckVelocity, puckPosition, paddle, score
        var description: String { rawValue }
        var part: String {
            switch self {
            case .puckVelocity, .puckPosition: "puck"
            case .paddle: "paddles"
            case .score: "score"
            }
        }
    }

    struct Outcome {
        var snapshots = 0
        var desyncs: [String: Int] = [:]
        var compared = ComparedParts()
        var tampered = 0
        var detected = 0
        var wrongPart: [String] = []
    }

    /// Plays one match (to 7 or `ticks`) through `link`; with `tamper`, one in every `every` snapshots to seat 0 that
    /// the replica will compare is changed and must be flagged.
    static func play(
        seed: UInt64, link: Link, ticks: Int = 6_000, tamper: Tamper? = nil, every: Int = 5, unnumbered: Bool = false
    ) -> Outcome {
        var rng = Inputs(seed: seed)
        var match = PuckMatch()
        match.start()
        var pending: [PuckTarget?] = [nil, nil]
        var lastStep: [UInt32] = [0, 0]
        var replicas = [PuckReplica(seat: 0), PuckReplica(seat: 1)]
        var steps: [UInt32] = [0, 0]
        // In flight: (arrival tick, seat, message).
        var toServer: [(Int, Int, PaddleState)] = []
        var toClient: [(Int, Int, TableSnapshot)] = []
        var outcome = Outcome()
        var candidates = 0

        func send<T>(_ queue: inout [(Int, Int, T)], _ item: T, seat: Int, now: Int, rng: inout Inputs) {
            if rng.below(1000) < UInt64(link.loss) { return }
            let copies = rng.below(1000) < UInt64(link.duplicate) ? 2 : 1
            for _ in 0..<copies {
                let delay = link.latency + (link.jitter > 0 ? rng.below(UInt64(link.jitter) + 1) : 0)
                queue.append((now + delay, seat, item))
            }
        }

        for now in 0..<ticks where match.phase != .over {
            // Inputs that arrived since the last tick, in arrival order; the newest step wins.
            toServer.sort { $0.0 < $1.0 }
            while let first = toServer.first, first.0 <= now {
                toServer.removeFirst()
                let (_, seat, input) = first
                if lastStep[seat] != 0, !SerialNumber.follows(input.inputStep, lastStep[seat]) { continue }
                lastStep[seat] = input.inputStep
                pending[seat] = PuckTarget(input)
            }
            let events = match.step(pending[0], pending[1])
            pending = [nil, nil]
            if match.tick % 2 == 0 || events.goal != nil {
                for seat in 0..<2 {
                    send(
                        &toClient, match.snapshot(for: seat, lastInputStep: lastStep[seat]), seat: seat, now: now,
                        rng: &rng)
                }
            }
            // Clients: snapshots that arrived, then (every other tick) one input each.
            toClient.sort { $0.0 < $1.0 }
            while let first = toClient.first, first.0 <= now {
                toClient.removeFirst()
                var (_, seat, snapshot) = first
                outcome.snapshots += 1
                var changed = false
                if let tamper, seat == 0 {
                    var probe = replicas[0]
                    let before = probe.compared
                    _ = probe.apply(snapshot)
                    let compares: Bool
                    switch tamper {
                    case .puckVelocity, .puckPosition: compares = probe.compared.puck > before.puck
                    case .paddle: compares = probe.compared.paddles > before.paddles
                    case .score: compares = probe.compared.score > before.score
                    }
                    if compares {
                        candidates += 1
                        if candidates % every == 0 {
                            changed = true
                            switch tamper {
                            case .puckVelocity: snapshot.puck.vx = snapshot.puck.vx.nextUp
                            case .puckPosition: snapshot.puck.y = snapshot.puck.y + PuckConstants.quantum
                            case .paddle: snapshot.me.x = snapshot.me.x + PuckConstants.quantum
                            case .score: snapshot.myScore &+= 1
                            }
                            snapshot.stateHash = PuckMatch(snapshot: snapshot, seat: 0).stateHash
                        }
                    }
                }
                let result = replicas[seat].apply(snapshot)
                if changed {
                    outcome.tampered += 1
                    if case .desync(let part) = result {
                        outcome.detected += 1
                        if part != tamper!.part { outcome.wrongPart.append(part) }
                    }
                } else if case .desync(let part) = result {
                    outcome.desyncs[part, default: 0] += 1
                }
            }
            if now % 2 == 1 {
                for seat in 0..<2 {
                    if !unnumbered { steps[seat] &+= 1 }
                    let wild = rng.below(10) == 0
                    let target =
                        wild
                        ? rng.finiteTarget()
                        : {
                            let puck = PuckMatch.view(x: match.puck.x, y: match.puck.y, seat: seat)
                            return PuckTarget(x: puck.x + (rng.unit() - 0.5) * 80, y: puck.y + rng.unit() * 60)
                        }()
                    let input = PaddleState(inputStep: steps[seat], x: target.x, y: target.y, vx: 0, vy: 0)
                    replicas[seat].sent(input)
                    send(&toServer, input, seat: seat, now: now, rng: &rng)
                }
            }
        }
        outcome.compared = replicas[0].compared
        return outcome
    }

    static let links: [Link] = [
        Link(latency: 0, jitter: 0, loss: 0, duplicate: 0),
        Link(latency: 3, jitter: 0, loss: 0, duplicate: 0),
        Link(latency: 6, jitter: 12, loss: 0, duplicate: 0),
        Link(latency: 1, jitter: 2, loss: 250, duplicate: 0),
        Link(latency: 1, jitter: 1, loss: 0, duplicate: 250),
        Link(latency: 6, jitter: 6, loss: 100, duplicate: 100),
    ]

    @Test(arguments: links)
    func anHonestServerIsNeverFlaggedOnAnyLink(link: Link) {
        var compared = ComparedParts()
        for seed in 1...12 as ClosedRange<UInt64> {
            let outcome = Self.play(seed: seed &* 7919, link: link)
            #expect(outcome.desyncs.isEmpty, "seed \(seed): \(outcome.desyncs)")
            compared.puck += outcome.compared.puck
            compared.paddles += outcome.compared.paddles
            compared.score += outcome.compared.score
        }
        print(
            "PuckPredictionTests: \(link): seat 0 compared puck \(compared.puck), paddle \(compared.paddles), score \(compared.score) times"
        )
        // The check is not vacuous: it compared the puck, the paddle and the score many times.
        #expect(compared.puck > 500, "\(compared)")
        #expect(compared.paddles > 500, "\(compared)")
        #expect(compared.score > 500, "\(compared)")
    }

    @Test(arguments: Tamper.allCases, [links[0], links[2], links[5]])
    func aDriftedServerThatHashesHonestlyIsFlaggedEveryTime(tamper: Tamper, link: Link) {
        var tampered = 0
        for seed in 1...6 as ClosedRange<UInt64> {
            let outcome = Self.play(seed: seed &* 104_729, link: link, tamper: tamper)
            tampered += outcome.tampered
            #expect(outcome.detected == outcome.tampered, "seed \(seed): \(outcome.detected) of \(outcome.tampered)")
            #expect(outcome.wrongPart.isEmpty, "seed \(seed): named \(outcome.wrongPart) for \(tamper.part)")
            #expect(outcome.desyncs.isEmpty, "the other seat, seed \(seed): \(outcome.desyncs)")
        }
        #expect(tampered >= 20)
    }

    /// A client may number every input 0: the server then applies each at once without moving `lastInputStep`, so
    /// the replica cannot know which target its paddle followed and must not predict it.
    @Test(arguments: [links[0], links[5]])
    func unnumberedInputsAreNeverFlagged(link: Link) {
        let outcome = Self.play(seed: 7, link: link, unnumbered: true)
        #expect(outcome.desyncs.isEmpty, "\(outcome.desyncs) on \(link)")
        #expect(outcome.snapshots > 500)
    }

    @Test func aDivergenceSaysWhereAndByHowMuch() throws {
        // Two exact snapshots two ticks apart with nobody near the puck; the second drifted by one ulp.
        var match = PuckMatch.kickedOff()
        var replica = PuckReplica(seat: 0)
        _ = match.step(nil, nil)
        _ = match.step(nil, nil)
        #expect(replica.apply(match.snapshot(for: 0, lastInputStep: 0)) == .ok)
        _ = match.step(nil, nil)
        _ = match.step(nil, nil)
        var drifted = match.snapshot(for: 0, lastInputStep: 0)
        drifted.puck.angle = drifted.puck.angle.nextUp
        drifted.stateHash = PuckMatch(snapshot: drifted, seat: 0).stateHash
        #expect(replica.apply(drifted) == .desync(part: "puck"))
        let divergence = try #require(replica.divergence)
        let kickOff = UInt32(PuckConstants.goalPauseTicks)
        #expect(divergence.tick == kickOff + 4)
        #expect(divergence.since == kickOff + 3)
        #expect(divergence.expected.contains("angle=0.0"))
        #expect(divergence.observed.contains("angle=\(Float(0).nextUp)"))
        // The next snapshot re-syncs: adopted without comparison, and the one after that is compared again.
        _ = match.step(nil, nil)
        _ = match.step(nil, nil)
        #expect(replica.apply(match.snapshot(for: 0, lastInputStep: 0)) == .ok)
        #expect(replica.divergence == nil)
    }

    @Test func aStepSentTwiceWithDifferentTargetsIsNotPredicted() {
        var match = PuckMatch.kickedOff()
        var replica = PuckReplica(seat: 0)
        _ = match.step(nil, nil)
        _ = match.step(nil, nil)
        #expect(replica.apply(match.snapshot(for: 0, lastInputStep: 0)) == .ok)
        // The bot sends step 1 twice with different targets; the server keeps the first (the copy is not newer).
        let first = PaddleState(inputStep: 1, x: 100, y: 380, vx: 0, vy: 0)
        let second = PaddleState(inputStep: 1, x: 220, y: 380, vx: 0, vy: 0)
        replica.sent(first)
        replica.sent(second)
        _ = match.step(PuckTarget(first), nil)
        _ = match.step(nil, nil)
        #expect(replica.apply(match.snapshot(for: 0, lastInputStep: 1)) == .ok)
        _ = match.step(nil, nil)
        _ = match.step(nil, nil)
        #expect(replica.apply(match.snapshot(for: 0, lastInputStep: 1)) == .ok)
        #expect(replica.compared.paddles == 0)
    }
}
