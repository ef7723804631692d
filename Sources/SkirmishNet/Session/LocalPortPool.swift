import Foundation
import NIOCore
import SkirmishWire
import Synchronization

/// Local UDP ports for a process's many client sockets, none handed out again until ``quarantine`` after its
/// socket closed.
///
/// A server keeps sending to a departed client's address until it notices the silence (5 s) or the client comes back
/// from elsewhere. The kernel picks ephemeral ports at random, so on one host running thousands of bots a new socket
/// can inherit a port another bot closed a second ago — and with it the tail of that bot's stream: another match's
/// snapshots and reliable messages, which a replica rightly counts as a desync. Real players sit behind their own
/// addresses and never share a port like this, so the swarm must not either. Every bot socket of a process takes its
/// port from one pool, which keeps recently closed ports out of circulation.
///
/// Taking and returning a port locks a mutex, once per socket opened or closed, never per packet.
package final class LocalPortPool: Sendable {
    /// The ports handed out.
    package let range: ClosedRange<Int>
    /// How long a returned port rests before it is handed out again.
    package let quarantine: Duration

    private struct State {
        var inUse: [Bool]
        /// Uptime nanoseconds before which each port may not be handed out.
        var restingUntil: [UInt64]
        var random: SeededRandom
    }

    private let state: Mutex<State>

    /// The pool every client socket of this process shares (swarms, runners, tests running side by side): two pools
    /// in one process would hand out the same ports and collide on every bind. Seeded by the process id, so two
    /// processes on one host do not probe the same port sequence either.
    package static let shared = LocalPortPool(seed: 0x9017 ^ UInt64(UInt32(bitPattern: getpid())))

    /// A pool over `range` (default: the kernel's ephemeral range, so no other program's fixed port is taken).
    package init(range: ClosedRange<Int>? = nil, quarantine: Duration = .seconds(15), seed: UInt64 = 1) {
        let range = range ?? Self.systemEphemeralRange()
        self.range = range
        self.quarantine = quarantine
        state = Mutex(
            State(
                inUse: [Bool](repeating: false, count: range.count),
                restingUntil: [UInt64](repeating: 0, count: range.count),
                random: SeededRandom(seed: seed)))
    }

    /// A port free of this process's sockets and rested, or `nil` when every one is busy or resting.
    package func take(now: NIODeadline) -> Int? {
        let clock = now.uptimeNanoseconds
        return state.withLock { state -> Int? in
            let count = state.inUse.count
            // Random probes find a free port at once while the pool is mostly free; a scan settles the rest.
            for _ in 0..<32 {
                let slot = Int.random(in: 0..<count, using: &state.random)
                if !state.inUse[slot], state.restingUntil[slot] <= clock { return claim(slot, &state) }
            }
            let start = Int.random(in: 0..<count, using: &state.random)
            for offset in 0..<count {
                let slot = (start + offset) % count
                if !state.inUse[slot], state.restingUntil[slot] <= clock { return claim(slot, &state) }
            }
            return nil
        }
    }

    /// Returns a port whose socket closed; it rests for ``quarantine`` first.
    package func giveBack(_ port: Int, now: NIODeadline) {
        guard range.contains(port) else { return }
        let (seconds, attoseconds) = quarantine.components
        let rest = UInt64(max(seconds, 0)) &* 1_000_000_000 &+ UInt64(max(attoseconds, 0) / 1_000_000_000)
        let until = now.uptimeNanoseconds &+ rest
        state.withLock { state in
            let slot = port - range.lowerBound
            state.inUse[slot] = false
            state.restingUntil[slot] = until
        }
    }

    /// How many ports are held by open sockets now.
    package var inUse: Int {
        state.withLock { $0.inUse.reduce(0) { $0 + ($1 ? 1 : 0) } }
    }

    private func claim(_ slot: Int, _ state: inout State) -> Int {
        state.inUse[slot] = true
        return range.lowerBound + slot
    }

    /// The kernel's ephemeral port range (`/proc/sys/net/ipv4/ip_local_port_range`), or Linux's default.
    package static func systemEphemeralRange() -> ClosedRange<Int> {
        let fallback = 32_768...60_999
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        else { return fallback }
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        guard numbers.count == 2, numbers[0] >= 1_024, numbers[0] < numbers[1], numbers[1] <= 65_535 else {
            return fallback
        }
        return numbers[0]...numbers[1]
    }
}
