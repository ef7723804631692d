import CClientIO
import Foundation
import NIOCore

/// Keeps a process's other threads from preempting its client loops on their cores.
///
/// A bot loop's sends are due to the microsecond; everything else in a swarm's process (the run's controller, the
/// progress line, the exporter, the metrics endpoint) is throughput work that can wait a moment. Under the default
/// policy, a thread that wakes preempts the one running on its core: with the process pinned to one core (as the
/// bench pins it, or as a container's CPU limit squeezes it), the controller waking to put a metric read together
/// stopped the loop for about a millisecond every second, and the bots' sends paid for it as lateness.
///
/// ``yield(toLoops:threads:)`` moves every other thread of the process from SCHED_OTHER to SCHED_BATCH: the same
/// share of the CPU, but its wakeups no longer preempt a loop. Threads under any other policy (a real-time run under
/// `chrt`, say) are left as they are. New threads inherit the policy of the thread that made them, but a thread pool
/// may start threads from anywhere, so call it again from time to time. Linux only.
///
/// Thread ids come from /proc/self/task; one that ends between the listing and the call is skipped (the call fails),
/// and the kernel does not hand a freed id out again at once, so another process's thread is not touched.
package enum LoopPrecedence {
    /// Moves every thread of this process except `loops`' threads and `threads` (kernel ids of other threads that
    /// carry bots, such as a NIO group's for stream sessions) from the default policy to SCHED_BATCH, and puts any of
    /// those kept that run under SCHED_BATCH (made by a thread already moved) back; returns how many moved to batch.
    @discardableResult
    package static func yield(toLoops loops: [ClientLoop], threads: [Int32] = []) -> Int {
        let keep = Set(loops.map(\.kernelThreadID) + threads)
        for thread in keep { _ = skirmish_thread_set_batch(thread, 0) }
        return threadIDs().filter { !keep.contains($0) }.reduce(0) { moved, thread in
            moved + (skirmish_thread_set_batch(thread, 1) == 1 ? 1 : 0)
        }
    }

    /// The kernel ids of the threads of `group`'s event loops.
    package static func threadIDs(of group: any EventLoopGroup) async -> [Int32] {
        var ids: [Int32] = []
        for loop in group.makeIterator() {
            if let id = try? await loop.submit({ skirmish_current_thread_id() }).get() { ids.append(id) }
        }
        return ids
    }

    /// The kernel ids of this process's threads now (its entries in /proc/self/task).
    package static func threadIDs() -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return entries.compactMap { Int32($0) }
    }
}
