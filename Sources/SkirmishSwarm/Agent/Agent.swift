import Logging
import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// What a player does inside one match: the game-specific half of a behaviour, and the API for writing your own.
///
/// An agent belongs to a protocol: it receives and sends that protocol's ``ClientProtocol/Message``s and learns what
/// the protocol says when the server accepts the player (``ClientProtocol/Established``). The swarm's runtime owns
/// everything around it — the socket, the connection (handshake, delivery, keep-alives), the clock, the persona's
/// steps, backoff, reconnects and the metrics — and calls the agent only with events and the time. An agent answers
/// by sending through its ``AgentContext``; it never reads the clock, sleeps or schedules anything: it says when it
/// next wants to act (``nextWake``) and is woken then. Many thousands of agents share one loop, so every call must
/// return quickly and should allocate nothing on the per-tick path.
///
/// A match's agent is made fresh for each match by the catalogue entry its persona names (``Catalogue``). The runtime
/// stores agents of one type contiguously and calls them through their concrete type: no existential, no reference
/// count per call.
public protocol Agent<Connection>: SendableMetatype {
    /// The protocol this agent speaks.
    associatedtype Connection: ClientProtocol

    /// The server accepted the player; what the protocol learnt comes with it (SNAP: the `Welcome`).
    mutating func established(_ established: Connection.Established, context: inout AgentContext<Connection>)
    /// A message from the server, in the order the protocol delivers it.
    mutating func received(_ message: Connection.Message, context: inout AgentContext<Connection>)
    /// Called at or after ``nextWake``.
    mutating func wake(context: inout AgentContext<Connection>)
    /// The player's seat came back after a deliberate drop (``AgentContext/suspend(for:)``): whatever fell due while
    /// away was skipped on purpose, not sent late. The default does nothing.
    mutating func resumed(context: inout AgentContext<Connection>)
    /// The connection ended under the agent before its match did: the server refused or dropped the player, the
    /// handshake failed, the network went away; `reason` says which. A swarm's bot then retries after a backoff with
    /// a new agent; a player of an ``AgentRunner`` ends. The default does nothing.
    mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<Connection>)
    /// When the agent next wants ``wake(context:)``; `nil` when it only reacts to messages.
    var nextWake: Instant? { get }
    /// The match is over for this player (won, lost, or the others left); the runtime then moves to the persona's
    /// next step.
    var isMatchOver: Bool { get }
}

extension Agent {
    /// Does nothing: an agent whose schedule survives a resume as it is need not implement it.
    public mutating func resumed(context: inout AgentContext<Connection>) {}
    /// Does nothing: an agent with nothing to clean up when the connection drops need not implement it.
    public mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<Connection>) {}
}

/// Everything an ``Agent`` may use during one call: the time, what it sends, its random numbers, the round trip and
/// the figures it reports.
///
/// Made by the runtime for each call and discarded after it; what the agent sent leaves once the call returns.
public struct AgentContext<Connection: ClientProtocol> {
    /// The time of the event being handled (for a message: when its packet was read).
    public let now: Instant
    /// The bot's seeded generator: the same seed replays the same run.
    public var random: SeededRandom
    /// The persona this bot plays.
    public var persona: Persona { meters.spec }
    /// The bot's number in the run (unique across shards).
    public let botNumber: Int
    /// The round trip as the protocol measures it: smoothed, smallest, newest (each in seconds, 0 before the first
    /// sample), and how many samples there have been — an agent that keeps its own estimate feeds it each new sample
    /// once.
    public let roundTrip: RoundTrip
    let meters: Meters
    var outbox: [Outgoing]
    /// The match label the desync log line carries (0 when the protocol has none).
    let match: UInt32

    /// What the agent asked the runtime to do.
    enum Outgoing {
        case message(Connection.Message)
        case raw([UInt8])
        case suspend(Duration)
    }

    init(
        now: Instant, random: SeededRandom, botNumber: Int, roundTrip: RoundTrip, meters: Meters, outbox: [Outgoing],
        match: UInt32 = 0
    ) {
        self.now = now
        self.random = random
        self.botNumber = botNumber
        self.roundTrip = roundTrip
        self.meters = meters
        self.outbox = outbox
        self.match = match
    }

    /// The smoothed round trip in seconds (0 before the first sample).
    public var smoothedRTT: Double { roundTrip.smoothed }
    /// The smallest round trip in seconds (0 before the first sample).
    public var minimumRTT: Double { roundTrip.minimum }

    /// Sends a message with the delivery its protocol gives it.
    public mutating func send(_ message: Connection.Message) {
        outbox.append(.message(message))
    }

    /// How many messages (and raw packets) this call has sent so far: lets an agent that wraps another count what the
    /// inner one sent.
    public var sentCount: Int { outbox.count }

    /// Sends bytes exactly as given, bypassing the codec (hostile traffic for testing a server's defences); counted
    /// as sent, never as legitimate traffic of a decoded type. A protocol that authenticates its packets seals them.
    public mutating func sendRaw(_ bytes: [UInt8]) {
        outbox.append(.raw(bytes))
    }

    /// Drops the socket without a goodbye, as when a phone changes networks, and comes back after `duration` asking
    /// for the seat back (the protocol's resume, or a new connection when it has none); the agent hears
    /// ``Agent/resumed(context:)``. What the agent's schedule would have sent meanwhile is not sent.
    public mutating func suspend(for duration: Duration) {
        outbox.append(.suspend(duration))
    }

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
        meters.desync(
            Desync(
                part: divergence.part, tick: divergence.tick, expected: divergence.expected,
                observed: divergence.observed),
            since: divergence.since, detectionSeconds: detectionSeconds, bot: botNumber, match: match,
            rttSeconds: roundTrip.smoothed)
    }

    /// Counts an error of this kind (`skirmish_errors_total{kind}`).
    public func recordError(_ kind: String) { meters.error(kind) }

    /// Counts a match this player started (`skirmish_matches_started_total`).
    public func recordMatchStarted() { meters.shard.add(meters.matchesStarted) }

    /// Counts a match this player saw to its end (`skirmish_matches_completed_total`).
    public func recordMatchCompleted() { meters.shard.add(meters.matchesCompleted) }

    /// Records how old a snapshot was on arrival (`skirmish_snapshot_age_seconds`).
    public func recordSnapshotAge(seconds: Double) { meters.record(meters.snapshotAge, seconds: seconds) }

    /// Records the round trip of one of the agent's own requests, from its send to the reply that names it (an
    /// echoed sequence number), in `skirmish_request_rtt_seconds`.
    ///
    /// It is kept apart from ``roundTrip``'s `skirmish_rtt_seconds`, the protocol's own measure of the line: a
    /// request's round trip also holds the server's work, resends and waits for order. A behaviour that records it
    /// lists ``Figures/requestRoundTrip`` in its ``BehaviorSeries``.
    public func recordRequestRoundTrip(seconds: Double) { meters.record(meters.requestRTT, seconds: seconds) }

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

/// A bot's round-trip estimate from its protocol's samples (``ClientMetric/roundTrip(_:)``), in seconds.
public struct RoundTrip: Sendable, Hashable {
    /// The smoothed round trip (RFC 6298's ⅞ weighting); 0 before the first sample.
    public private(set) var smoothed = 0.0
    /// The smallest sample; 0 before the first.
    public private(set) var minimum = 0.0
    /// The newest sample; 0 before the first.
    public private(set) var latest = 0.0
    /// How many samples there have been.
    public private(set) var samples = 0

    /// No samples yet.
    public init() {}

    /// Takes one sample.
    mutating func record(seconds: Double) {
        latest = seconds
        samples += 1
        smoothed = smoothed == 0 ? seconds : smoothed * 0.875 + seconds * 0.125
        minimum = minimum == 0 ? seconds : min(minimum, seconds)
    }
}
