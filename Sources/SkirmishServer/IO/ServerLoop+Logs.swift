import Logging
import NIOCore
import SkirmishGames
import SkirmishTelemetry
import SkirmishWire

extension ServerLoop {
    /// Logs what the core rejected since the last look, at most one line per reason per interval, and the desyncs
    /// the server itself sees (a game's rules reporting two players' accounts that disagree, e.g. Suns tallies).
    ///
    /// Runs once a second from the tick, never per packet: the core only counts (as it does for the metrics), and
    /// this compares the counters with the last look. A line carries the reason, how many rejections it stands for
    /// (`count`, since the previous line of that reason) and how many lines that saved (`suppressed`). `final`
    /// writes every count still owed, at shutdown.
    func logRejections(now: NIODeadline, final: Bool = false) {
        let instant = Duration.nanoseconds(Int64(now.uptimeNanoseconds))
        var lines: [(reason: Rejection, count: Int)] = []
        let counts = core.stats.rejected
        for reason in Rejection.allCases {
            let delta = Int(counts[reason.rawValue] &- loggedRejections[reason.rawValue])
            if delta > 0, let count = rejectionLog.record(reason, count: delta, now: instant) {
                lines.append((reason, count))
            }
        }
        loggedRejections = counts
        for (game, counters) in core.stats.games where counters.desyncs > loggedDesyncs[game, default: 0] {
            logger.warning(
                "desync: players' accounts disagree",
                metadata: [
                    "count": "\(counters.desyncs - loggedDesyncs[game, default: 0])",
                    "game": "\(core.configuration.games[game]?.name ?? game.description)",
                ])
            loggedDesyncs[game] = counters.desyncs
        }
        // At shutdown every count still owed is written, whether or not its interval is over.
        for (reason, count) in rejectionLog.due(now: final ? instant + rejectionLog.interval : instant) {
            lines.append((reason, count))
        }
        for (reason, count) in lines {
            logger.log(
                level: Self.level(of: reason), "rejected input",
                metadata: [
                    "reason": "\(reason.label)", "count": "\(count)", "suppressed": "\(count - 1)",
                    "window.seconds": "\(rejectionLog.interval.components.seconds)",
                ])
        }
    }

    /// How loud a rejection is: the server at a capacity limit is a warning (an operator may need to act), routine
    /// network artefacts (a resend, a reordered packet) are debug, and the rest (malformed, hostile or misbehaving
    /// input) is a notice.
    static func level(of reason: Rejection) -> Logger.Level {
        switch reason {
        case .serverFull, .hostSessionsFull, .prefixSessionsFull, .tooManyConnections, .hostConnectionsFull,
            .acceptBackoff, .queueFull:
            .warning
        case .stale, .duplicate:
            .debug
        default:
            .notice
        }
    }
}
