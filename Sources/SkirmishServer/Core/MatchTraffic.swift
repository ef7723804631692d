import NIOCore
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire

/// The bandwidth of each running match: bytes it received from and sent to its players, turned into one bytes-per-
/// second sample per direction about once a second (`skirmish_server_match_bytes_per_second{game,direction}`).
///
/// A value type the ``ServerCore`` owns, with time as a parameter like the core. A match's window opens on the tick
/// it starts (its players seated, play under way; only when they are all on UDP, whose sizes the core is told); each ``sample(now:isRunning:)`` closes every window at least
/// ``minimumWindow`` long into a sample (bytes over the window's length) and opens the next one. The part of a window
/// left when a match ends is not sampled, so every sample covers between ``minimumWindow`` and about a second and a
/// half of play. Counting is an addition to a dictionary entry the match already has: nothing is allocated per packet.
package struct MatchTraffic: Sendable {
    /// Bytes since a match's last sample.
    struct Window: Sendable {
        var game: GameKind
        var since: NIODeadline
        var received: UInt64 = 0
        var sent: UInt64 = 0
    }

    /// Shorter windows wait for the next pass: a sample over a few milliseconds would be one burst, not a rate.
    package static let minimumWindow = TimeAmount.milliseconds(500)

    private var windows: [UInt32: Window] = [:]
    /// One distribution per game and direction: sent, then received.
    private var rates: [GameKind: [HistogramValue]] = [:]
    private var finished: [UInt32] = []

    /// Counts the matches of `games` (the server's registry); others are counted once they start.
    package init(games: [GameKind] = GameKind.builtIn) {
        for game in games { rates[game] = Self.empty }
    }

    private static let empty = [HistogramValue](repeating: HistogramValue(scale: .bytesPerSecond), count: 2)

    /// Matches whose bytes are being counted.
    package var count: Int { windows.count }

    /// The match started at `now`: its bytes count from here.
    package mutating func started(_ match: UInt32, game: GameKind, now: NIODeadline) {
        windows[match] = Window(game: game, since: now)
    }

    /// Bytes a player of `match` sent the server (a match not started, or over, counts nothing).
    package mutating func received(_ bytes: Int, match: UInt32) {
        guard let index = windows.index(forKey: match) else { return }
        windows.values[index].received &+= UInt64(bytes)
    }

    /// Bytes the server wrote to a player of `match`.
    package mutating func sent(_ bytes: Int, match: UInt32) {
        guard let index = windows.index(forKey: match) else { return }
        windows.values[index].sent &+= UInt64(bytes)
    }

    /// Closes every running match's window that is at least ``minimumWindow`` long into one sample per direction,
    /// and forgets the windows of matches that are no longer running (their last, partial window unsampled).
    package mutating func sample(now: NIODeadline, isRunning: (UInt32) -> Bool) {
        finished.removeAll(keepingCapacity: true)
        var index = windows.startIndex
        while index != windows.endIndex {
            let match = windows.keys[index]
            if !isRunning(match) {
                finished.append(match)
            } else if now - windows.values[index].since >= Self.minimumWindow {
                let window = windows.values[index]
                let seconds = (now - window.since).seconds
                rates[window.game, default: Self.empty][0].record(Double(window.sent) / seconds)
                rates[window.game, default: Self.empty][1].record(Double(window.received) / seconds)
                windows.values[index] = Window(game: window.game, since: now)
            }
            windows.formIndex(after: &index)
        }
        for match in finished { windows[match] = nil }
    }

    /// The samples of `game`'s matches in one direction (`sent` true: server to players).
    package func rates(_ game: GameKind, sent: Bool) -> HistogramValue {
        (rates[game] ?? Self.empty)[sent ? 0 : 1]
    }
}
