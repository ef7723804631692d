#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The per-process open-file limit: each bot holds one socket, so a big swarm needs it raised.
enum OpenFileLimit {
    struct TooLow: Error, CustomStringConvertible {
        var needed: Int
        var hard: Int
        var description: String {
            """
            this run needs about \(needed) open files (one socket per bot plus the server and files), but the \
            hard limit of this process is \(hard). Run fewer bots (--bots \(max(1, hard - 256))), split the run \
            over several processes with --shard i/n, or raise the hard limit (`ulimit -Hn`, or LimitNOFILE= in a \
            systemd unit) and try again.
            """
        }
    }

    /// Raises the soft limit to at least `needed` when the hard limit allows; returns a note when it changed it.
    static func ensure(_ needed: Int) throws -> String? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let soft = Int(clamping: limit.rlim_cur)
        let hard = Int(clamping: limit.rlim_max) // RLIM_INFINITY (all ones) clamps to Int.max
        guard needed > soft else { return nil }
        guard needed <= hard else { throw TooLow(needed: needed, hard: hard) }
        limit.rlim_cur = rlim_t(needed)
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw TooLow(needed: needed, hard: soft)
        }
        return "raised the open-file limit from \(soft) to \(needed) for \(needed) sockets and files"
    }

    /// Raises the soft limit to the hard limit (a server holds one descriptor per TCP or WebSocket connection) and
    /// says what it got.
    static func raiseToHard() -> String {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            return "could not read the open-file limit (errno \(errno)); connections may be refused early"
        }
        let soft = limit.rlim_cur
        let hard = limit.rlim_max
        let shown = { (value: rlim_t) in value == rlim_t.max ? "unlimited" : "\(value)" }
        guard soft < hard else { return "open-file limit \(shown(soft)) (already the hard limit)" }
        limit.rlim_cur = hard
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            return "open-file limit \(shown(soft)); raising it to the hard limit \(shown(hard)) failed (errno \(errno))"
        }
        return "raised the open-file limit from \(shown(soft)) to the hard limit \(shown(hard))"
    }
}
