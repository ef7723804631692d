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

    init(plain: Bool) {
        live = !plain && Console.isTerminal
    }

    func update(_ progress: SwarmProgress) {
        let line = progress.line
        if live {
            Console.error("\r\u{1B}[2K" + line)
            drawn.withLock { $0 = true }
        } else {
            let elapsed = Double(progress.elapsed.components.seconds)
            let due = lastPlain.withLock { last -> Bool in
                guard elapsed - last >= 5 else { return false }
                last = elapsed
                return true
            }
            if due { Console.error(line + "\n") }
        }
    }

    /// Ends the live line so the summary starts on a fresh one.
    func finish() {
        if drawn.withLock({ $0 }) { Console.error("\n") }
    }
}
