import SkirmishScript
import SkirmishSwarm
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Shows a run's progress: one line rewritten in place on a terminal, a plain line every 5 s otherwise (logs, CI).
final class ProgressPrinter: Sendable {
    private let live: Bool
    private let lastPlain = Mutex<Double>(-5)
    private let drawn = Mutex(false)
    private let lastStatus = Mutex<String?>(nil)

    init(plain: Bool) {
        // With JSON logs stderr holds only JSON objects, even on a terminal: no live line redrawn in place.
        live = !plain && Console.isTerminal && !Console.notesAreLogs.load(ordering: .relaxed)
    }

    /// Shows `progress`, with `condition` after the figures while it lasts (a collector failing right now); `nil`
    /// means all is well and shows nothing.
    func update(_ progress: SwarmProgress, status condition: String?) {
        let line = progress.line + (condition.map { " | \($0)" } ?? "")
        // In plain mode a collector starting or stopping to fail is printed at once, not at the next 5 s line.
        let changed = lastStatus.withLock { last -> Bool in
            defer { last = condition }
            return last != condition
        }
        if live {
            // Clipped to the terminal's width: a wrapped line would leave its first half behind at every update.
            let width = Console.terminalColumns
            let shown = width > 1 && line.count >= width ? String(line.prefix(width - 2)) + "…" : line
            Console.live(shown)
            drawn.withLock { $0 = true }
        } else {
            let elapsed = Double(progress.elapsed.components.seconds)
            let due = lastPlain.withLock { last -> Bool in
                guard elapsed - last >= 5 else { return false }
                last = elapsed
                return true
            }
            if due || changed { Console.progress(line) }
        }
    }

    /// Ends the live line so the summary starts on a fresh one.
    func finish() {
        if drawn.withLock({ $0 }) { Console.endLive() }
    }
}
