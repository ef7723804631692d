import NIOCore
import SkirmishGames
import SkirmishTelemetry
import SkirmishWire

/// What a bot does inside one match: the game-specific part of a behaviour.
///
/// A brain is told when its seat is granted, sees every message the server sends, and is woken at the time it
/// asked for to send what is due. It talks to the world only through its ``BotHandle`` — sending, measuring,
/// reporting replica checks — so a new game's behaviour is one new brain and nothing else changes.
protocol Brain: AnyObject {
    /// The seat is granted; the match may still be forming.
    func connected(_ welcome: Welcome, now: NIODeadline)
    /// A message from the server.
    func received(_ message: Message, at now: NIODeadline)
    /// Called at or after ``nextWake``.
    func wake(now: NIODeadline)
    /// When the brain next wants to act; `nil` when it only reacts to messages.
    var nextWake: NIODeadline? { get }
    /// The match has ended for this bot (over, or the other players left).
    var isMatchOver: Bool { get }
    /// The bot is back from a deliberate drop (the reconnector) and resuming its seat: whatever fell due while it was
    /// away was skipped on purpose, not sent late.
    func resumed(now: NIODeadline)
}

extension Brain {
    func resumed(now: NIODeadline) {}
}

/// The part of a bot a brain may use.
protocol BotHandle: AnyObject {
    var meters: Meters { get }
    var random: SeededRandom { get set }
    var persona: Persona { get }
    /// Sends through the bot's session (a no-op while disconnected).
    func send(_ message: Message)
    /// Sends bytes exactly as given, bypassing the codec (rogue traffic).
    func sendRaw(_ bytes: [UInt8])
    /// The newest round-trip estimate, seconds (0 before the first sample).
    var smoothedRTT: Double { get }
    /// The smallest round trip seen, seconds (0 before the first sample).
    var minimumRTT: Double { get }
}

extension BotHandle {
    /// Records one replica check; a run of failed checks is one desync episode, counted when it starts.
    func check(_ result: ReplicaCheck, episode: inout Bool) {
        switch result {
        case .ok:
            episode = false
        case .desync(let part):
            if !episode { meters.desync(part: part) }
            episode = true
        }
    }

    /// Seconds since an arbitrary fixed point, for Ping send times and game clocks.
    func seconds(_ deadline: NIODeadline) -> Double { Double(deadline.uptimeNanoseconds) / 1e9 }
}
