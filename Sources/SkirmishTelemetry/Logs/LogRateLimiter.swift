/// Decides which of many repeated events get a log line: at most one line per key per ``interval``, each saying how
/// many events it stands for.
///
/// The first event of a key is logged at once. Events of the key within ``interval`` of its last line are counted,
/// not logged; the next event after the interval (or ``due(now:)``, once the interval is over) gives a line with
/// their count. Every event is thus in exactly one line's count, and a flood of one kind costs one line per
/// interval. Time is a parameter (any fixed origin), so the limiter is a value tested without a clock.
package struct LogRateLimiter<Key: Hashable & Sendable>: Sendable {
    /// The shortest time between two lines of one key.
    package let interval: Duration
    private var keys: [Key: Window] = [:]

    private struct Window: Sendable {
        /// When the key's last line was written.
        var lastLine: Duration
        /// Events since then that no line counted yet.
        var pending: Int
    }

    package init(interval: Duration) {
        self.interval = interval
    }

    /// Records `count` events of `key` at `now`; returns how many events the line to write now stands for (these and
    /// any suppressed before them), or `nil` when no line is due.
    package mutating func record(_ key: Key, count: Int = 1, now: Duration) -> Int? {
        guard count > 0 else { return nil }
        if var window = keys[key], now - window.lastLine < interval {
            window.pending += count
            keys[key] = window
            return nil
        }
        let total = count + (keys[key]?.pending ?? 0)
        keys[key] = Window(lastLine: now, pending: 0)
        return total
    }

    /// Lines owed at `now`: for each key whose interval has passed with suppressed events, its key and their
    /// count (sorted by count, largest first). Each starts a new interval.
    package mutating func due(now: Duration) -> [(key: Key, count: Int)] {
        var owed: [(key: Key, count: Int)] = []
        for (key, window) in keys where window.pending > 0 && now - window.lastLine >= interval {
            owed.append((key, window.pending))
            keys[key] = Window(lastLine: now, pending: 0)
        }
        return owed.sorted { $0.count > $1.count }
    }

    /// Events counted but not yet in a line, per key.
    package var suppressed: [Key: Int] { keys.compactMapValues { $0.pending > 0 ? $0.pending : nil } }
}
