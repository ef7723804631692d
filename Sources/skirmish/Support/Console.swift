import Logging
import SkirmishTelemetry
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Output for people and scripts: results on stdout (flushed per line, so a pipe sees them at once), notes on stderr.
enum Console {
    /// A line of output scripts may read, flushed at once.
    static func line(_ text: String) {
        print(text)
        fflush(nil)
    }

    /// Set when logs are JSON (`--log-format json`): notes and plain progress lines are then written as log events
    /// too, so that stderr holds one JSON object per line for a log collector.
    static let notesAreLogs = Atomic<Bool>(false)

    /// The run these notes belong to, once the command has made its id (`LogOptions.logger(_:run:)` records it): as
    /// log events, notes carry it as `run` like every other line.
    static let run = Mutex<String?>(nil)

    /// A note for the person watching: what the tool decided or noticed.
    static func note(_ text: String) {
        if notesAreLogs.load(ordering: .relaxed) { return logger("skirmish").notice("\(text)") }
        error("skirmish: \(text)\n")
    }

    /// A progress line written whole when stderr is not a terminal (a log, CI).
    static func progress(_ line: String) {
        if notesAreLogs.load(ordering: .relaxed) { return logger("skirmish.progress").info("\(line)") }
        error(line + "\n")
    }

    private static func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        if let run = run.withLock({ $0 }) { logger[metadataKey: "run"] = "\(run)" }
        return logger
    }

    /// Writes to stderr through the log writer: queued in order from any thread, written by the writer's own thread,
    /// so a stderr nobody reads costs lines, never the run (its stop, its summary).
    static func error(_ text: String) {
        LogWriter.standardError.write(text)
    }

    /// Gives stderr up to two seconds to take what is queued; called before the process exits.
    static func finish() {
        LogWriter.standardError.drain(within: .seconds(2))
    }

    /// The progress line drawn in place on the terminal, while there is one.
    private static let liveLine = Mutex<String?>(nil)

    /// Draws `line` as the live progress line (rewritten in place, no newline); with JSON logs, a progress event.
    static func live(_ line: String) {
        if notesAreLogs.load(ordering: .relaxed) { return progress(line) }
        liveLine.withLock { live in
            live = line
            error("\r\u{1B}[2K" + line)
        }
    }

    /// Ends the live progress line so what follows starts on a fresh one.
    static func endLive() {
        liveLine.withLock { live in
            if live != nil { error("\n") }
            live = nil
        }
    }

    /// Erases the live progress line (no newline) and forgets it.
    static func clearLive() {
        liveLine.withLock { live in
            if live != nil { error("\r\u{1B}[2K") }
            live = nil
        }
    }

    /// Where log lines go: stderr, and while a progress line is live, above it (the line is cleared, the log line
    /// written, the progress line drawn again), so a log line never lands in the middle of the progress line.
    static let logOutput = LogOutput { text in
        liveLine.withLock { live in
            guard let live else { return error(text) }
            error("\r\u{1B}[2K" + text + live)
        }
    }

    /// Whether stderr is a terminal (live progress) or a file or pipe (plain periodic lines).
    static var isTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// The width of the terminal on stderr, in columns (0 when unknown).
    static var terminalColumns: Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0 else { return 0 }
        return Int(size.ws_col)
    }
}
