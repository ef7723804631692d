import CClientIO
import Foundation

/// Keeps a process's other threads from preempting its client loops on their cores.
///
/// A bot loop's sends are due to the microsecond; everything else in a swarm's process (the run's controller, the
/// progress line, the exporter, the metrics endpoint) is throughput work that can wait a moment. Under the default
/// policy, a thread that wakes preempts the one running on its core: with the process pinned to one core (as the
/// bench pins it, or as a container's CPU limit squeezes it), the controller waking to put a metric read together
/// stopped the loop for about a millisecond every second, and the bots' sends paid for it as lateness.
///
/// ``yield(toLoops:)`` moves every other thread of the process from SCHED_OTHER to SCHED_BATCH: the same share of
/// the CPU, but its wakeups no longer preempt a loop. Threads under any other policy (a real-time run under `chrt`,
/// say) are left as they are. New threads inherit the policy of the thread that made them, but a thread pool may
/// start threads from anywhere, so call it again from time to time. Linux only; elsewhere nothing moves.
package enum LoopPrecedence {
    /// Moves every thread of this process except `loops`' threads that runs under the default policy to
    /// SCHED_BATCH; returns how many moved.
    @discardableResult
    package static func yield(toLoops loops: [ClientLoop]) -> Int {
        let keep = Set(loops.map(\.kernelThreadID))
        return threadIDs().filter { !keep.contains($0) }.reduce(0) { moved, thread in
            moved + (skirmish_thread_to_batch(thread) == 1 ? 1 : 0)
        }
    }

    /// The kernel ids of this process's threads now (its entries in /proc/self/task).
    package static func threadIDs() -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return entries.compactMap { Int32($0) }
    }

    /// Whether thread `id` runs under SCHED_BATCH (see ``yield(toLoops:)``).
    package static func isBatch(_ id: Int32) -> Bool {
        skirmish_thread_is_batch(id) == 1
    }
}
