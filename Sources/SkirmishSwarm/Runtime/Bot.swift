import Logging
@_spi(Runtime) import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// One bot as a value machine: a persona's steps, a connection of its protocol, the ``Agent`` that plays the current
/// match, backoff and reconnects — every entry point a `mutating` function of the time that appends what to do to a
/// ``ShellIO``.
///
/// A bot never reads a clock, sleeps or schedules anything: its ``Shell`` wakes it at ``nextWake``, hands it every
/// datagram and stream event, and executes what it asked for (packets, opening and closing its socket). Nothing in
/// it points back at the shell or at other bots; what the bots of one kind share (their personas' meters, settings
/// and factories) comes in as the ``BotEnvironment``. That is what lets the tests drive backoff, resume, outages and
/// every step by hand with an injected clock, without a socket.
///
/// Where the bot is lives in one place, its ``Phase``: whether it counts as connected, when its outage began, when
/// its match must end and whether a resume is in flight are all carried by the phase.
struct Bot<A: Agent>: ShellMachine {
    typealias Connection = A.Connection
    typealias Environment = BotEnvironment<A>

    /// Where the bot is in its steps and its connection.
    enum Phase: Equatable {
        /// Between steps; advances at once. `outage`: when the connection it is coming back from was lost.
        case ready(outage: Instant?)
        /// A match's connection is opening or handshaking since `since`; the match ends at `until`, if given.
        case connecting(since: Instant, until: Instant?, outage: Instant?)
        /// In a match. `resuming`: when a resume's handshake started, while it is in flight.
        case playing(until: Instant?, resuming: Instant?, outage: Instant?)
        /// Dropped on purpose (``AgentContext/suspend(for:)``), coming back at `until`; `fresh` when the protocol
        /// cannot resume, so the return is a new connection.
        case offline(until: Instant, since: Instant, playUntil: Instant?, fresh: Bool)
        /// Thinking, or waiting out a reconnect backoff.
        case waiting(until: Instant, outage: Instant?)
        /// Its steps are done; it holds nothing.
        case done

        /// Whether a bot in this phase counts in `skirmish_bots_connected`: seated, not resuming.
        var isConnected: Bool {
            if case .playing(_, nil, _) = self { return true }
            return false
        }
    }

    /// The bot's number in the run (unique across loops and shards).
    let number: Int
    /// Its profile in the environment: persona, meters, connection settings, agent factory.
    let profile: Int
    /// The profile's meters, kept here so that the hot path reads them without going through the environment.
    let meters: Meters
    /// An open-model arrival (it plays its steps once), not one of the closed-model population.
    let oneShot: Bool
    private(set) var phase = Phase.ready(outage: nil)
    private var random: SeededRandom
    private var stepIndex = 0
    private var repeats = 0
    private(set) var connection: Connection?
    private(set) var agent: A?
    /// Whether a connection is open, set wherever ``connection`` is: reading the optional's tag is a call for a
    /// payload this size, and the hot path asks several times per packet.
    private var hasConnection = false
    /// Whether an agent plays (kept as ``hasConnection``).
    private var hasAgent = false
    /// Counts the connections this bot has had: an event of one it has since closed is never delivered.
    private var epoch: UInt32 = 0
    private var backoff = ReconnectBackoff()
    private var roundTrip = RoundTrip()
    /// This bot's traffic, sampled once a second while it is connected.
    private var traffic = TrafficSampler()
    /// Chat lines of `chat:` steps, sent once the next match's connection is established.
    private var pendingChat: [String] = []

    init(number: Int, profile: Int, meters: Meters, random: SeededRandom, oneShot: Bool) {
        self.number = number
        self.profile = profile
        self.meters = meters
        self.random = random
        self.oneShot = oneShot
    }

    /// `mutating get`, as every read the shell makes in place: a plain getter of this generic struct, called through
    /// the shell's in-place access, copied the whole bot (its agent and connection) to a temporary first.
    var isFinished: Bool {
        mutating get { phase == .done }
    }

    /// The earliest time this bot needs the shell: its steps, its agent, its traffic sample and its connection.
    /// (`mutating get`, as ``isFinished``: read in place, never through a copy of the bot.)
    var nextWake: Instant? {
        mutating get { earliestWake() }
    }

    private mutating func earliestWake() -> Instant? {
        var wake = Instant.distantFuture
        if hasConnection { wake = min(wake, connection!.nextDeadline) }
        switch phase {
        case .ready: return .zero
        case .connecting(let since, _, _): wake = min(wake, since + BotEnvironment<A>.handshakeTimeout)
        case .playing(let until, let resuming, _):
            if let until { wake = min(wake, until) }
            // While a resume's handshake is in flight the agent waits: what it sent could not leave yet.
            if resuming == nil, let agentWake = agent?.nextWake { wake = min(wake, agentWake) }
            if agent?.isMatchOver == true { return .zero }
            if let sample = traffic.nextSample { wake = min(wake, sample) }
        case .waiting(let until, _): wake = min(wake, until)
        case .offline(let until, _, _, _): wake = min(wake, until)
        case .done: return nil
        }
        return wake == .distantFuture ? nil : wake
    }

    // MARK: The shell's calls

    mutating func wake(now: Instant, environment: Environment, io: inout ShellIO<Connection>) {
        switch phase {
        case .ready:
            advance(now: now, environment, &io)
        case .connecting(let since, _, let outage):
            // The protocol's own handshake timeout normally ends it first; this catches a stream that never opens.
            if now >= since + BotEnvironment<A>.handshakeTimeout {
                meters.shard.add(meters.handshakeFailures)
                meters.error("handshake_timeout")
                if environment.profiles[profile].single {
                    runAgent(now: now, environment, &io) { $0.disconnected(.handshakeTimeout(), context: &$1) }
                    finish(now: now, environment, &io)
                } else {
                    closeConnection(now: now, environment, &io)
                    retryLater(now: now, outage: outage)
                }
            }
        case .playing(let until, let resuming, _):
            if let until, now >= until { return finishMatch(now: now, environment, &io) }
            if let due = traffic.nextSample, due <= now { sampleTraffic(now: now, environment) }
            if resuming == nil, let due = agent?.nextWake, due <= now {
                runAgent(now: now, environment, &io) { $0.wake(context: &$1) }
            }
            if agent?.isMatchOver == true, case .playing = phase { finishMatch(now: now, environment, &io) }
        case .waiting(let until, let outage):
            if now >= until {
                phase = .ready(outage: outage)
                advance(now: now, environment, &io)
            }
        case .offline(let until, _, let playUntil, let fresh):
            if now >= until { comeBack(now: now, playUntil: playUntil, fresh: fresh, environment, &io) }
        case .done:
            break
        }
        // After the bot's own sends (which reset a keep-alive clock), so a keep-alive is sent only when due.
        if hasConnection, now >= connection!.nextDeadline {
            connection!.tick(now: now, into: &io.actions)
            drain(now: now, environment, &io)
        }
        countWritten(environment, &io)
    }

    mutating func transportOpened(now: Instant, environment: Environment, io: inout ShellIO<Connection>) {
        guard hasConnection else { return }
        switch phase {
        case .connecting:
            connection!.start(now: now, into: &io.actions)
        case .playing(_, .some, _):
            connection!.resume(now: now, into: &io.actions)
        default:
            return
        }
        drain(now: now, environment, &io)
        countWritten(environment, &io)
    }

    mutating func received(
        _ bytes: UnsafeRawBufferPointer, now: Instant, environment: Environment, io: inout ShellIO<Connection>
    ) {
        guard hasConnection else { return }
        traffic.received &+= UInt64(bytes.count)
        meters.shard.add(meters.bytesReceived, UInt64(bytes.count))
        connection!.receive(bytes, now: now, into: &io.actions)
        drain(now: now, environment, &io)
        countWritten(environment, &io)
    }

    mutating func transportFailed(
        _ reason: String, now: Instant, environment: Environment, io: inout ShellIO<Connection>
    ) {
        guard hasConnection else { return }
        connection!.transportFailed(reason, now: now, into: &io.actions)
        drain(now: now, environment, &io)
        countWritten(environment, &io)
    }

    /// Retires the bot: a polite goodbye if it is connected, then nothing more.
    mutating func retire(now: Instant, environment: Environment, io: inout ShellIO<Connection>) {
        finish(now: now, environment, &io)
        countWritten(environment, &io)
    }

    // MARK: Steps

    /// Runs steps until one of them waits (a match, a think) or the steps end.
    private mutating func advance(now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>) {
        let steps = environment.profiles[profile].steps
        var budget = steps.count * 2 + 2
        while case .ready(let outage) = phase, budget > 0 {
            budget -= 1
            guard stepIndex < steps.count else { return finish(now: now, environment, &io) }
            let step = steps[stepIndex]
            stepIndex += 1
            switch step {
            case .chat(let text):
                pendingChat.append(text)
            case .playUntilMatchOver:
                startMatch(now: now, until: nil, outage: outage, environment, &io)
            case .play(let length):
                startMatch(now: now, until: now + length, outage: outage, environment, &io)
            case .think(let range):
                phase = .waiting(until: now.advanced(byNanoseconds: randomNanoseconds(in: range)), outage: nil)
            case .reconnect:
                // Outside a match there is nothing to resume: the next match's connection is new anyway.
                break
            case .repeat(let times):
                if oneShot { return finish(now: now, environment, &io) }
                if times.map({ repeats < $0 }) ?? true {
                    repeats += 1
                    stepIndex = 0
                }
            case .quit:
                return finish(now: now, environment, &io)
            }
        }
    }

    private mutating func finish(now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>) {
        closeConnection(now: now, environment, &io)
        markDone(environment)
    }

    /// The bot's steps are over: its group stops counting it, and a runner player's profile is freed.
    private mutating func markDone(_ environment: Environment) {
        guard phase != .done else { return }
        phase = .done
        environment.group.botEnded(number: number, oneShot: oneShot)
        if environment.profiles[profile].single { environment.remove(profile) }
    }

    // MARK: Matches

    private mutating func startMatch(
        now: Instant, until: Instant?, outage: Instant?, _ environment: Environment, _ io: inout ShellIO<Connection>
    ) {
        guard !environment.group.windingDown else { return markDone(environment) }
        let settings = environment.profiles[profile]
        var context = makeContext(now: now, environment)
        agent = settings.make(&context)
        hasAgent = true
        random = context.random
        context.outbox.removeAll()
        environment.outbox = context.outbox
        openConnection(environment)
        phase = .connecting(since: now, until: until, outage: outage)
        io.openSocket(socketRequest(environment))
    }

    /// A new connection of the profile's protocol (its socket is asked for separately), seeded by the run, the bot
    /// and how many connections it had.
    private mutating func openConnection(_ environment: Environment) {
        let settings = environment.profiles[profile]
        connection = Connection(
            configuration: settings.configuration,
            setup: ConnectionSetup(
                transport: settings.target.transport, player: number, name: settings.persona.name,
                seed: environment.group.seed ^ UInt64(number) &* 0x9E37_79B9 &+ UInt64(epoch)))
        epoch &+= 1
        hasConnection = true
    }

    private func socketRequest(_ environment: Environment) -> SocketRequest {
        let settings = environment.profiles[profile]
        return SocketRequest(
            target: settings.target, link: settings.persona.link,
            seed: environment.group.seed ^ UInt64(number) &* 0x9E37_79B9)
    }

    private mutating func finishMatch(now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>) {
        closeConnection(now: now, environment, &io)
        phase = .ready(outage: nil)
        backoff.reset()
        advance(now: now, environment, &io)
    }

    /// Closes the connection (a goodbye if the protocol has one; nothing more if it already ended) and the socket,
    /// and forgets the match.
    private mutating func closeConnection(now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>) {
        setConnected(false, now: now, environment)
        if hasConnection {
            connection!.close(now: now, into: &io.actions)
            io.actions.discardPendingEvents()
            drainMetrics(environment, &io)
            io.closeSocket()
        }
        connection = nil
        agent = nil
        hasConnection = false
        hasAgent = false
        epoch &+= 1
    }

    /// Counts the bot in or out of `skirmish_bots_connected`, and starts or stops its traffic samples.
    private mutating func setConnected(_ connected: Bool, now: Instant, _ environment: Environment) {
        guard connected != traffic.isSampling else { return }
        meters.shard.add(meters.botsConnected, connected ? 1 : -1)
        if connected { traffic.start(now: now) } else { traffic.stop() }
    }

    /// One second of this bot's traffic, each way, into `skirmish_bot_bytes_per_second`.
    private mutating func sampleTraffic(now: Instant, _ environment: Environment) {
        guard let rates = traffic.sample(now: now) else { return }
        meters.record(meters.bytesSentPerSecond, value: rates.sent)
        meters.record(meters.bytesReceivedPerSecond, value: rates.received)
    }

    /// After a failed handshake or a lost connection: the same step again after a ``ReconnectBackoff`` delay (full
    /// jitter, a window doubling to 30 s), so a restarted server does not meet a synchronised storm.
    private mutating func retryLater(now: Instant, outage: Instant?) {
        let delay = backoff.next(using: &random)
        stepIndex = max(0, stepIndex - 1)
        phase = .waiting(until: now + delay, outage: outage)
    }

    // MARK: What the connection reports

    /// Counts the connection's metric events, then hands its events over in order. An event that ends the
    /// connection (the match is over, the agent left) ends the delivery of the rest: they belong to no connection any
    /// more.
    private mutating func drain(now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>) {
        drainMetrics(environment, &io)
        let current = epoch
        while let event = io.actions.nextEvent() {
            guard epoch == current, hasConnection else {
                io.actions.discardPendingEvents()
                break
            }
            handle(event, now: now, environment, &io)
            drainMetrics(environment, &io)
        }
        drainMetrics(environment, &io)
    }

    private mutating func drainMetrics(_ environment: Environment, _ io: inout ShellIO<Connection>) {
        while let metric = io.actions.nextMetric() {
            switch metric {
            case .sent(let kind, let bytes): meters.sent(kind: kind, bytes: bytes)
            case .received(let kind, let bytes): meters.received(kind: kind, bytes: bytes)
            case .probeSent: meters.shard.add(meters.pingsSent)
            case .roundTrip(let duration):
                let seconds = duration.seconds
                meters.record(meters.rtt, seconds: seconds)
                meters.shard.add(meters.pongsReceived)
                roundTrip.record(seconds: seconds)
            case .resent(let count): meters.resent(count)
            case .lost(let count): meters.lost(count)
            case .handshake(let duration): meters.record(meters.handshake, seconds: duration.seconds)
            case .snapshotAge(let duration): meters.record(meters.snapshotAge, seconds: duration.seconds)
            case .snapshotInterval(let duration): meters.record(meters.snapshotInterval, seconds: duration.seconds)
            case .desync(let desync):
                meters.desync(
                    desync, detectionSeconds: nil, bot: number, match: connection?.matchID ?? 0,
                    rttSeconds: roundTrip.smoothed)
            case .check(let name, let passed): meters.check(name, passed: passed)
            case .error(let kind): meters.error(kind)
            case .event(let index, let count): meters.event(index, count: count)
            }
        }
    }

    private mutating func handle(
        _ event: ClientEvent<Connection>, now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>
    ) {
        switch event {
        case .established(let established):
            didConnect(established, resumed: false, now: now, environment, &io)
        case .resumed(let established):
            didConnect(established, resumed: true, now: now, environment, &io)
        case .closed(let reason):
            didDisconnect(reason, now: now, environment, &io)
        case .message(let message):
            guard case .playing = phase, hasAgent else { return }
            runAgent(now: now, environment, &io) { $0.received(message, context: &$1) }
            if agent?.isMatchOver == true, case .playing = phase { finishMatch(now: now, environment, &io) }
        }
    }

    private mutating func didConnect(
        _ established: Connection.Established, resumed: Bool, now: Instant, _ environment: Environment,
        _ io: inout ShellIO<Connection>
    ) {
        switch phase {
        case .connecting(_, let until, let outage):
            meters.shard.add(meters.handshakes)
            phase = .playing(until: until, resuming: nil, outage: nil)
            setConnected(true, now: now, environment)
            recordReconnect(since: outage, now: now, environment)
            runAgent(now: now, environment, &io) { $0.established(established, context: &$1) }
            let lines = pendingChat
            pendingChat.removeAll()
            if let chat = environment.profiles[profile].chat {
                for text in lines {
                    guard hasConnection else { break }
                    connection!.send(chat(text), now: now, into: &io.actions)
                }
            }
        case .playing(let until, let resuming?, let outage):
            phase = .playing(until: until, resuming: nil, outage: nil)
            setConnected(true, now: now, environment)
            recordReconnect(since: outage ?? resuming, now: now, environment)
            // A protocol without resume came back with a new connection: the agent hears of its new seat.
            if resumed {
                runAgent(now: now, environment, &io) { $0.resumed(context: &$1) }
            } else {
                runAgent(now: now, environment, &io) { $0.established(established, context: &$1) }
            }
        default:
            break
        }
    }

    private mutating func didDisconnect(
        _ reason: CloseReason, now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>
    ) {
        setConnected(false, now: now, environment)
        if case .offline(let until, let since, let playUntil, _) = phase {
            // The protocol ended the connection when the bot dropped its socket: it comes back with a new one.
            phase = .offline(until: until, since: since, playUntil: playUntil, fresh: true)
            return
        }
        runAgent(now: now, environment, &io) { $0.disconnected(reason, context: &$1) }
        if environment.profiles[profile].single {
            // A runner's player plays one match: a failure ends it, and its agent has been told why.
            meters.error(reason.kind)
            if case .connecting = phase { meters.shard.add(meters.handshakeFailures) }
            environment.group.warnLimited("player_ended", "player's connection ended before its match", now: now) {
                [
                    "bot.id": "\(number)", "match.id": "\(connection?.matchID ?? 0)", "cause": "\(reason)",
                    "persona": "\(environment.profiles[profile].persona.name)",
                ]
            }
            return finish(now: now, environment, &io)
        }
        switch phase {
        case .connecting(_, _, let outage):
            meters.shard.add(meters.handshakeFailures)
            meters.error(reason.kind)
            environment.group.warnLimited("handshake_failed", "handshake failed; retrying after a backoff", now: now) {
                [
                    "bot.id": "\(number)", "cause": "\(reason)",
                    "persona": "\(environment.profiles[profile].persona.name)",
                ]
            }
            closeConnection(now: now, environment, &io)
            retryLater(now: now, outage: outage)
        case .playing(_, let resuming, let outage):
            var since = outage
            if let resuming {
                // The seat was not held (server restarted, window passed): join a new match after a backoff.
                meters.error("resume_failed")
                since = since ?? resuming
                environment.group.warnLimited(
                    "resume_failed", "resume failed; joining a new match after a backoff", now: now
                ) {
                    [
                        "bot.id": "\(number)", "match.id": "\(connection?.matchID ?? 0)", "cause": "\(reason)",
                        "persona": "\(environment.profiles[profile].persona.name)",
                    ]
                }
            } else {
                meters.error(reason.kind)
                if reason.isOutage { since = since ?? now }
            }
            closeConnection(now: now, environment, &io)
            retryLater(now: now, outage: since)
        default:
            break
        }
    }

    /// Counts a return to play after an outage (or a resume) and its time; nothing when there was none.
    private func recordReconnect(since: Instant?, now: Instant, _ environment: Environment) {
        guard let since else { return }
        meters.shard.add(meters.reconnects)
        meters.record(meters.reconnect, seconds: (now - since).seconds)
    }

    // MARK: Drops on purpose

    /// The socket goes away without a goodbye, as when a phone changes networks; the bot comes back at `now` +
    /// `duration` asking for its seat.
    private mutating func goOffline(
        for duration: Duration, now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>
    ) {
        guard case .playing(let until, nil, _) = phase, hasConnection else { return }
        setConnected(false, now: now, environment)
        phase = .offline(until: now + duration, since: now, playUntil: until, fresh: false)
        connection!.suspend(now: now, into: &io.actions)
        io.closeSocket()
        drain(now: now, environment, &io)
    }

    private mutating func comeBack(
        now: Instant, playUntil: Instant?, fresh: Bool, _ environment: Environment, _ io: inout ShellIO<Connection>
    ) {
        guard hasConnection else {
            phase = .ready(outage: nil)
            return retryLater(now: now, outage: nil)
        }
        if fresh {
            openConnection(environment)
            phase = .connecting(since: now, until: playUntil, outage: now)
        } else {
            phase = .playing(until: playUntil, resuming: now, outage: nil)
        }
        io.openSocket(socketRequest(environment))
    }

    // MARK: The agent

    private func makeContext(now: Instant, _ environment: Environment) -> AgentContext<Connection> {
        // The environment's outbox is lent to the context (and given back after the call), so its storage is reused.
        let outbox = environment.outbox
        environment.outbox = []
        return AgentContext(
            now: now, random: random, botNumber: number, roundTrip: roundTrip, meters: meters,
            outbox: outbox, match: connection?.matchID ?? 0)
    }

    /// Calls the agent in place with a fresh context (`call` is one of its entry points: a closure, not an enum of
    /// calls, so a received message is passed on where it lies instead of being copied into the enum), then sends
    /// what it sent.
    @inline(__always)
    private mutating func runAgent(
        now: Instant, _ environment: Environment, _ io: inout ShellIO<Connection>,
        _ call: (inout A, inout AgentContext<Connection>) -> Void
    ) {
        guard hasAgent else { return }
        var context = makeContext(now: now, environment)
        call(&agent!, &context)
        random = context.random
        var suspension: Duration?
        for outgoing in context.outbox {
            guard hasConnection else { break }
            switch outgoing {
            case .message(let message):
                if case .playing = phase {} else { meters.error("send_while_disconnected") }
                connection!.send(message, now: now, into: &io.actions)
            case .raw(let bytes):
                bytes.withUnsafeBytes { connection!.sendRaw($0, now: now, into: &io.actions) }
            case .suspend(let duration):
                suspension = duration
            }
        }
        context.outbox.removeAll(keepingCapacity: true)
        environment.outbox = context.outbox
        if let suspension { goOffline(for: suspension, now: now, environment, &io) }
    }

    /// Counts what this call produced that nobody has counted yet: the connection's metric events (an agent's
    /// sends record theirs after the last drain) and the bytes written, the persona's total and the bot's own (its
    /// bandwidth samples).
    private mutating func countWritten(_ environment: Environment, _ io: inout ShellIO<Connection>) {
        drainMetrics(environment, &io)
        let bytes = io.takeWrittenBytes()
        guard bytes > 0 else { return }
        meters.shard.add(meters.bytesSent, UInt64(bytes))
        traffic.sent &+= UInt64(bytes)
    }

    private mutating func randomNanoseconds(in range: ClosedRange<Duration>) -> Int64 {
        let low = range.lowerBound.nanoseconds
        let high = range.upperBound.nanoseconds
        return high > low ? Int64.random(in: low...high, using: &random) : low
    }
}
