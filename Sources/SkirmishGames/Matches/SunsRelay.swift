import SkirmishWire

/// Relays one Suns race between its two players and compares their tallies at the end.
///
/// The server never computes the race: it forwards each start, strike and capture to the other player, holds the
/// starts until both players are present, and counts a desync when the two tallies disagree.
package struct SunsRelay: Sendable {
    private var present: [Bool]
    private var peers: [UInt32]
    private var heldStarts: [SunsStart?]
    private var tallies: [SunsTally?]
    package private(set) var isOver = false
    private var started = false

    package init(seats: Int = 2) {
        present = Array(repeating: false, count: seats)
        peers = Array(repeating: 0, count: seats)
        heldStarts = Array(repeating: nil, count: seats)
        tallies = Array(repeating: nil, count: seats)
    }

    package mutating func seatFilled(
        _ seat: Int, peer: UInt32, into out: inout MatchOutputs
    ) {
        present[seat] = true
        peers[seat] = peer
        guard !started, !present.contains(false) else { return }
        started = true
        out.report(.started)
        for (from, start) in heldStarts.enumerated() {
            guard let start else { continue }
            relay(.sunsStart(start), from: from, into: &out)
        }
        heldStarts = heldStarts.map { _ in nil }
    }

    package mutating func receive(
        _ message: Message, from seat: Int, into out: inout MatchOutputs
    ) -> MatchVerdict {
        guard !isOver else { return .outOfState }
        switch message {
        case .sunsStart(let start):
            if started {
                relay(message, from: seat, into: &out)
            } else {
                heldStarts[seat] = start
            }
        case .sunsStrike, .sunsCapture:
            guard started else { return .outOfState }
            relay(message, from: seat, into: &out)
        case .sunsTally(let tally):
            guard started, tallies[seat] == nil else { return .outOfState }
            tallies[seat] = tally
            let all = tallies.compactMap { $0 }
            guard all.count == tallies.count else { return .accepted }
            let agreed = zip(all, all.dropFirst()).allSatisfy { SunsTallyComparison.agree($0, $1) }
            out.report(.compared(agreed: agreed))
            out.report(.completed)
            isOver = true
        default:
            return .outOfState
        }
        return .accepted
    }

    /// A player left. One that already sent its tally is done, not gone: the race waits for the other tally.
    package mutating func seatLeft(_ seat: Int, into out: inout MatchOutputs) {
        present[seat] = false
        guard !isOver, tallies[seat] == nil else { return }
        isOver = true
        for other in present.indices where other != seat && present[other] {
            out.append(MatchOutput(seat: other, .otherClientQuit(PeerRef(peer: peers[seat]))))
        }
    }

    private func relay(_ message: Message, from seat: Int, into out: inout MatchOutputs) {
        for other in present.indices where other != seat && present[other] {
            out.append(MatchOutput(seat: other, message))
        }
    }
}
