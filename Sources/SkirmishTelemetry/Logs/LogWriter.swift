import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes lines to a file descriptor from a thread of its own, so that a reader who stops reading (a pipe nobody
/// drains, a stalled terminal) costs lines, never the program's progress or its stop.
///
/// A caller only queues its line, in order. At most ``capacity`` bytes wait; a line that would go past that is
/// dropped and counted, and once the reader takes bytes again a line says how many were lost, where they were lost.
/// The thread starts with the first line. ``drain(within:)`` waits a bounded time for the queue to be written: the
/// program calls it before it exits, so nothing queued is lost to an exit while the reader keeps up.
package final class LogWriter: @unchecked Sendable {
    /// Standard error, as every log line, note and progress line of the command line reaches it.
    package static let standardError = LogWriter(descriptor: STDERR_FILENO)

    /// The most bytes queued at once; further lines are dropped until the thread has taken them.
    package let capacity: Int
    private let descriptor: Int32
    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [String] = []
    private var queuedBytes = 0
    private var dropped = 0
    private var writing = false
    private var started = false

    /// A writer to `descriptor` (not owned: never closed) that queues at most `capacity` bytes.
    package init(descriptor: Int32, capacity: Int = 1 << 20) {
        self.descriptor = descriptor
        self.capacity = capacity
    }

    /// Queues `text` to be written after every line queued before it, or drops and counts it when the queue is full.
    /// Never blocks on the descriptor.
    package func write(_ text: String) {
        let bytes = text.utf8.count
        condition.lock()
        defer { condition.unlock() }
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "skirmish-log-writer"
            thread.start()
        }
        guard queuedBytes + bytes <= capacity else {
            dropped += 1
            return
        }
        queue.append(text)
        queuedBytes += bytes
        condition.broadcast()
    }

    /// Waits until every queued line is written, at most `limit`; returns whether it was.
    @discardableResult
    package func drain(within limit: Duration) -> Bool {
        let deadline = Date(
            timeIntervalSinceNow: Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        // The notice of lines dropped counts as queued: a drain that returned before it would lose it at the exit.
        while !queue.isEmpty || writing || dropped > 0 {
            if !condition.wait(until: deadline) { return queue.isEmpty && !writing && dropped == 0 }
        }
        return true
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && dropped == 0 { condition.wait() }
            let batch = queue
            let lost = dropped
            queue.removeAll(keepingCapacity: true)
            dropped = 0
            writing = true
            condition.unlock()
            for line in batch { LogOutput.writeAll(line, to: descriptor) }
            if lost > 0 {
                let lines = lost == 1 ? "line" : "lines"
                LogOutput.writeAll(
                    "skirmish: \(lost) log \(lines) dropped here: the output was not read fast enough\n", to: descriptor
                )
            }
            condition.lock()
            // The batch's bytes count until they are written: at most `capacity` bytes are ever held.
            queuedBytes -= batch.reduce(0) { $0 + $1.utf8.count }
            writing = false
            condition.broadcast()
            condition.unlock()
        }
    }
}
