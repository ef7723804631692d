import Logging
import NIOCore
import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// What a player does inside one match: the game-specific half of a behaviour, and the API for writing your own.
///
/// The swarm's runtime owns everything around an agent — the socket, the protocol (handshake, reliable delivery,
/// resume), the clock, the persona's steps and the metrics — and calls the agent only with events and the time. An
/// agent answers by sending through its ``AgentContext``; it never reads the clock, sleeps or schedules anything: it
/// says when it next wants to act (``nextWake``) and is woken then. Many thousands of agents share one loop, so every
/// call must return quickly and should allocate nothing on the per-tick path.
///
/// A match's agent is made fresh for each match by the ``BehaviorRegistry`` entry its persona names. Structs and
/// classes both work: the runtime stores the agent inline and calls its mutating methods in place.
public protocol Agent {
    /// The server granted the seat (`welcome`); the match may still be forming.
    mutating func seated(_ welcome: Welcome, context: inout AgentContext)
    /// A message from the server, delivered in order (reliable ones exactly once).
    mutating func received(_ message: Message, context: inout AgentContext)
    /// Called at or after ``nextWake``.
    mutating func wake(context: inout AgentContext)
    /// The seat was resumed after a deliberate drop (the `reconnector`): whatever fell due while away was skipped on
    /// purpose, not sent late. The default does nothing.
    mutating func resumed(context: inout AgentContext)
    /// The connection ended under the agent before its match did: the server refused or dropped the player, the
    /// handshake failed, the network went away. `reason` says which. A swarm's bot then retries after a backoff with
    /// a new agent; a player of an ``AgentRunner`` ends. The default does nothing.
    mutating func disconnected(_ reason: String, context: inout AgentContext)
    /// When the agent next wants ``wake(context:)``; `nil` when it only reacts to messages.
    var nextWake: NIODeadline? { get }
    /// The match is over for this player (won, lost, or the others left); the runtime then moves to the persona's
    /// next step.
    var isMatchOver: Bool { get }
}

extension Agent {
    /// Does nothing: an agent whose schedule survives a resume as it is need not implement it.
    public mutating func resumed(context: inout AgentContext) {}
    /// Does nothing: an agent with nothing to clean up when the connection drops need not implement it.
    public mutating func disconnected(_ reason: String, context: inout AgentContext) {}
}

/// Everything an ``Agent`` may use during one call: the time, what it sends, its random numbers and the figures it
/// reports.
///
/// Made by the runtime for each call and discarded after it; what the agent sent leaves once the call returns.
public struct AgentContext {
    /// The time of the event being handled (for a message: when its datagram was read).
    public let now: NIODeadline
    /// The bot's seeded generator: the same seed replays the same run.
    public var random: SeededRandom
    /// The persona this bot plays.
    public var persona: Persona { meters.spec }
    /// The bot's number in the run (unique across shards).
    public let botNumber: Int
    /// The smoothed round trip to the server, in seconds (0 before the first Pong).
    public let smoothedRTT: Double
    /// The smallest round trip seen, in seconds (0 before the first Pong).
    public let minimumRTT: Double
    /// The newest round-trip sample, in seconds (0 before the first Pong), and how many samples there have been: an
    /// agent that keeps its own estimate feeds it each new sample once.
    public let latestRTT: Double
    /// How many round-trip samples there have been; when it grows, ``latestRTT`` is a new sample.
    public let rttSamples: Int
    let meters: Meters
    var outbox: [Outgoing]
    /// The match the player is seated in (0 before its Welcome), for the desync log line.
    let match: UInt32

    enum Outgoing {
        case message(Message)
        case raw([UInt8])
    }

    init(
        now: NIODeadline, random: SeededRandom, botNumber: Int, smoothedRTT: Double,
        minimumRTT: Double, latestRTT: Double = 0, rttSamples: Int = 0, meters: Meters, outbox: [Outgoing],
        match: UInt32 = 0
    ) {
        self.match = match
        self.latestRTT = latestRTT
        self.rttSamples = rttSamples
        self.now = now
        self.random = random
        self.botNumber = botNumber
        self.smoothedRTT = smoothedRTT
        self.minimumRTT = minimumRTT
        self.meters = meters
        self.outbox = outbox
    }

    /// Sends a message with its type's delivery class (reliable types are resent until acknowledged).
    public mutating func send(_ message: Message) {
        outbox.append(.message(message))
    }

    /// How many messages (and raw packets) this call has sent so far: lets an agent that wraps another count what the
    /// inner one sent.
    public var sentCount: Int { outbox.count }

    /// Sends bytes exactly as given, bypassing the codec (hostile traffic for testing a server's defences); counted
    /// as sent, never as legitimate traffic of a decoded type.
    public mutating func sendRaw(_ bytes: [UInt8]) {
        outbox.append(.raw(bytes))
    }

    /// Seconds since an arbitrary fixed point, for Ping send times and game clocks.
    public func seconds(_ deadline: NIODeadline) -> Double { deadline.seconds }

    /// ``now`` in seconds since an arbitrary fixed point.
    public var seconds: Double { seconds(now) }

    /// Counts a desync: two views of state that must agree do not. `part` names what differs (`puck`, `piles`, ...).
    ///
    /// Each call is also a warning in the run's log, with the bot, its match and `tick` (the server tick of the
    /// message that disagreed, when it names one): call it once per episode (``check(_:episode:tick:)`` does), not on
    /// every message that still disagrees. ``recordDesync(_:detectionSeconds:)`` records the values too.
    public func recordDesync(part: String, tick: UInt32? = nil) {
        recordDesync(ReplicaDivergence(part: part, tick: tick, expected: "", observed: ""))
    }

    /// Counts one desync episode in detail: `divergence` says which part, from which tick, and the replica's and the
    /// server's values; `detectionSeconds` is the time from that tick (on the server's clock) to now, when known.
    ///
    /// The episode is counted in `skirmish_desyncs_total{part}`, its delay in `skirmish_desync_detection_seconds`,
    /// written as one warning line in the run's log, and kept in full in `summary.json` (the run's first 100).
    /// Call it once per episode.
    public func recordDesync(_ divergence: ReplicaDivergence, detectionSeconds: Double? = nil) {
        meters.desync(part: divergence.part)
        if let detectionSeconds { meters.record(meters.desyncDetection, seconds: detectionSeconds) }
        let episode = DesyncEpisode(
            bot: botNumber, persona: meters.persona, game: meters.spec.gameName, match: match, part: divergence.part,
            tick: divergence.tick, since: divergence.since, detectionSeconds: detectionSeconds,
            rttSeconds: smoothedRTT, expected: divergence.expected, observed: divergence.observed)
        if meters.isLegit { meters.episodes.record(episode) }
        logDesync(episode)
    }

    /// One warning per desync episode: which bot, match, tick and part, the two values and the detection delay (the
    /// persona and game are the logger's).
    private func logDesync(_ episode: DesyncEpisode) {
        var metadata: Logger.Metadata = [
            "bot.id": "\(episode.bot)", "match.id": "\(episode.match)",
            "tick": "\(episode.tick.map { "\($0)" } ?? "none")", "part": "\(episode.part)",
        ]
        if let since = episode.since { metadata["since.tick"] = "\(since)" }
        if !episode.expected.isEmpty || !episode.observed.isEmpty {
            metadata["expected"] = "\(episode.expected)"
            metadata["observed"] = "\(episode.observed)"
        }
        if let delay = episode.detectionSeconds { metadata["detection.seconds"] = "\(delay)" }
        metadata["rtt.seconds"] = "\(episode.rttSeconds)"
        meters.logger.warning("desync: the replica disagrees with the server", metadata: metadata)
    }

    /// Counts an error of this kind (`skirmish_errors_total{kind}`).
    public func recordError(_ kind: String) { meters.error(kind) }

    /// Counts a match this player started (`skirmish_matches_started_total`).
    public func recordMatchStarted() { meters.shard.add(meters.matchesStarted) }

    /// Counts a match this player saw to its end (`skirmish_matches_completed_total`).
    public func recordMatchCompleted() { meters.shard.add(meters.matchesCompleted) }

    /// Judges one reply from the server against a rule of the protocol or the game (a check, as in k6 or Gatling):
    /// counted in `skirmish_checks_total{check}`, and when `passed` is false in `skirmish_checks_failed_total{check}`,
    /// which the `checks_failed` and `check_failure_rate` thresholds read. Name checks with a fixed word
    /// (`score_monotonic`); a persona keeps series for at most 32 names.
    public func check(_ name: String, passed: Bool) { meters.check(name, passed: passed) }

    /// Judges one reply against a built-in check (``ReplyCheck``).
    public func check(_ check: ReplyCheck, passed: Bool) { meters.check(check, passed: passed) }

    /// Records one replica check; a run of failed checks is one desync episode, counted when it starts. `tick` is
    /// the server tick of the message checked, for the episode's log line.
    public func check(_ result: ReplicaCheck, episode: inout Bool, tick: UInt32? = nil) {
        check(result, episode: &episode, divergence: nil, tick: tick)
    }

    /// Records one replica check with the replica's account of a failure (`divergence`, e.g.
    /// ``PuckReplica/divergence``) and the detection delay; a run of failed checks is one episode.
    public func check(
        _ result: ReplicaCheck, episode: inout Bool, divergence: ReplicaDivergence?, tick: UInt32? = nil,
        detectionSeconds: Double? = nil
    ) {
        switch result {
        case .ok:
            episode = false
        case .desync(let part):
            if !episode {
                var detail = divergence ?? ReplicaDivergence(part: part, tick: tick, expected: "", observed: "")
                detail.part = part
                if detail.tick == nil { detail.tick = tick }
                recordDesync(detail, detectionSeconds: detectionSeconds)
            }
            episode = true
        }
    }
}
