import ArgumentParser
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

/// `--log-level` and `--log-format`, shared by every long-running command (serve, swarm, soak, practice, ai-eval).
///
/// Logs go to stderr, beside the notes; stdout keeps what scripts read (the `listening` lines, the summary table).
struct LogOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The least severe log lines written: trace, debug, info, notice, warning, error or critical.",
            discussion: """
                info (the default) logs start and stop with their settings, desync episodes, failed resumes, \
                collector outages and recoveries, rejected input (at most one line per reason per 10 s) and \
                threshold aborts; nothing per packet. debug adds sessions and streams opening and closing.
                """,
            valueName: "level"))
    var logLevel: Level = .info

    /// swift-log's levels by name, as the command line takes them.
    enum Level: String, CaseIterable, ExpressibleByArgument {
        case trace, debug, info, notice, warning, error, critical

        var level: Logger.Level { Logger.Level(rawValue: rawValue) ?? .info }
    }

    @Option(
        help: ArgumentHelp(
            "text (for people) or json (one object per line, for log collectors).", valueName: "format"))
    var logFormat: LogFormat = .text

    /// A logger labelled `label` whose lines carry the run's id (`run`).
    func logger(_ label: String, run: String? = nil) -> Logger {
        var logger = Logger(label: label)
        if let run {
            logger[metadataKey: "run"] = "\(run)"
            Console.run.withLock { $0 = run }
        }
        return logger
    }

    /// Makes every logger of the process write lines of this format at this level to stderr.
    ///
    /// Called once, before the command runs. SIGPIPE is ignored from here on: a log collector or pager that closes
    /// its end of the pipe must cost the lines, not the process (writes then fail with EPIPE and are dropped).
    func bootstrap() {
        signal(SIGPIPE, SIG_IGN)
        let level = logLevel.level
        let format = logFormat
        Console.notesAreLogs.store(format == .json, ordering: .relaxed)
        LoggingSystem.bootstrap { label in
            LogLineHandler(
                label: label, format: format, level: level, output: Console.logOutput, sourceLocation: level <= .debug)
        }
    }

    /// What commands without these options log: warnings and worse, as text (a benchmark's embedded server).
    static let quiet = try! LogOptions.parse(["--log-level", "warning"])
}

/// A command that takes ``LogOptions``; the entry point bootstraps logging from them.
protocol LoggingCommand {
    var logs: LogOptions { get }
}

extension Serve: LoggingCommand {}
extension PracticeCommand: LoggingCommand {}
extension AIEvalCommand: LoggingCommand {}
extension SwarmCommand: LoggingCommand { var logs: LogOptions { options.logs } }
extension SoakCommand: LoggingCommand { var logs: LogOptions { options.logs } }

extension LogFormat: ExpressibleByArgument {}
