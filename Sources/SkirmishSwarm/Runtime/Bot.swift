import Logging
import NIOCore
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// One bot: a persona's steps, a ``Session`` to the server, and the ``Agent`` that plays the current match.
///
/// A bot is a small state machine owned by one ``BotGroup`` and touched only on that group's loop. It never sleeps or
/// schedules its own timers: the group wakes it at ``nextWake`` and hands it every datagram and stream event, passing
/// itself in (``BotGroup`` is the bot's environment, not a link the bot keeps).
///
/// The connection's own state says whether the bot is seated, suspended or resuming; the bot's ``Phase`` says only
/// where it is in its steps.
final class Bot {
    enum Phase: Equatable {
        /// Between steps; advances at once.
        case ready
        /// Handshaking since the given time.
        case connecting(since: NIODeadline)
        /// In a match, optionally bounded in time (`play: 30s`).
        case playing(until: NIODeadline?)
        /// Thinking, or waiting out a reconnect backoff.
        case waiting(until: NIODeadline)
        /// Dropped on purpose by the reconnector, coming back at the given time.
        case offline(until: NIODeadline, since: NIODeadline)
        /// Its steps are done; it holds nothing.
        case done
    }

    let number: Int
    let slot: Int32
    let persona: Persona
    let meters: Meters
    var random: SeededRandom
    var generation: UInt32 = 0
    var scheduledWake: NIODeadline?
    private(set) var phase = Phase.ready
    private let steps: [Step]
    /// An open-model arrival (it plays its steps once), not one of the closed-model population.
    let oneShot: Bool
    private var stepIndex = 0
    private var repeats = 0
    private(set) var session: Session?
    /// The match of the bot's current seat (from its Welcome; 0 before the first), for logs.
    private(set) var match: UInt32 = 0
    /// Counts the sessions this bot has had: an event of a session the bot has since replaced is never delivered.
    private var sessionEpoch: UInt32 = 0
    private var agent: (any Agent)?
    /// The agent's ``Agent/nextWake`` and ``Agent/isMatchOver`` after its last call, read on every wake without
    /// opening (and copying) the existential.
    private var agentWake: NIODeadline?
    private var agentOver = false

    private func noteAgent() {
        agentWake = agent?.nextWake
        agentOver = agent?.isMatchOver ?? false
    }
    /// Counted in `skirmish_bots_connected` (seated, not suspended).
    private var counted = false
    private var reconnectBackoff = ReconnectBackoff()
    /// When this bot lost a match's connection it did not drop on purpose (server restart, silence), until it is
    /// playing again: the start of the reconnect time it records.
    private var outageSince: NIODeadline?
    private var resumeStarted: NIODeadline?
    private var pings: UInt32 = 0
    private var nextPing: NIODeadline?
    private var nextChat: NIODeadline?
    private var nextDrop: NIODeadline?
    private var pendingChat: [String] = []
    private var playUntil: NIODeadline?
    private(set) var smoothedRTT = 0.0
    private var latestRTT = 0.0
    private var rttSamples = 0
    private(set) var minimumRTT = 0.0
    /// The connection's loss and resend counts already reported.
    private var reportedLost: UInt64 = 0
    private var reportedResends: UInt64 = 0
    /// This bot's traffic, sampled once a second while it is seated (``sampleTraffic(now:)``).
    private var traffic = TrafficSampler()

    /// What a player started by an ``AgentRunner`` brings besides its persona: its own server, match and agent.
    struct Override {
        var target: Target
        /// The target's address, resolved off the loop (`nil`: the session resolves it).
        var address: SocketAddress?
        var match: UInt32
        var makeAgent: BehaviorRegistry.Factory
        var pingInterval: TimeAmount
    }

    let override: Override?

    init(
        number: Int, slot: Int32, persona: Persona, meters: Meters, random: SeededRandom, oneShot: Bool,
        override: Override? = nil
    ) {
        self.number = number
        self.slot = slot
        self.persona = persona
        self.meters = meters
        self.random = random
        self.oneShot = oneShot
        self.override = override
        steps =
            override != nil ? [.playUntilMatchOver, .quit] : persona.steps.isEmpty ? Self.defaultSteps : persona.steps
    }

    private var pingInterval: TimeAmount { override?.pingInterval ?? .seconds(1) }

    /// A persona without steps plays match after match with a short think between them.
    static let defaultSteps: [Step] = [
        .playUntilMatchOver, .think(.milliseconds(500)...(.milliseconds(1_500))), .repeat(times: nil),
    ]

    var isDone: Bool { phase == .done }

    /// Whether the current socket has this generation (its low 8 bits: a datagram token carries no more).
    func hasSocket(generationBits bits: UInt32) -> Bool {
        session != nil && session!.socketGeneration() & 0xFF == bits
    }

    /// Whether the current socket has exactly this generation (stream events carry all of it).
    func hasSocket(generation: UInt32) -> Bool { session != nil && session!.socketGeneration() == generation }

    private var isResuming: Bool { session != nil && session!.status().isResuming }

    // MARK: Waking

    /// The earliest time this bot needs the loop: its steps, its agent, its extras and its session's timers.
    func nextWake(handshakeTimeout: TimeAmount) -> NIODeadline? {
        var wake: NIODeadline?
        // One status read serves both the session's deadline and whether a resume is in flight.
        var resuming = false
        if session != nil {
            let status = session!.status()
            resuming = status.isResuming
            if status.deadline != .distantFuture { wake = status.deadline }
        }
        func consider(_ time: NIODeadline?) {
            guard let time else { return }
            wake = wake.map { min($0, time) } ?? time
        }
        switch phase {
        case .ready: consider(.uptimeNanoseconds(0))
        case .connecting(let since): consider(since + handshakeTimeout)
        case .playing(let until):
            consider(until)
            // While a resume's handshake is in flight the agent waits: what it sent could not leave yet.
            if !resuming { consider(agentWake) }
            consider(nextPing)
            consider(traffic.nextSample)
            consider(nextChat)
            consider(nextDrop)
        case .waiting(let until): consider(until)
        case .offline(let until, _): consider(until)
        case .done: break
        }
        return wake
    }

    func wake(now: NIODeadline, in group: BotGroup) {
        switch phase {
        case .ready:
            advance(now: now, in: group)
        case .connecting(let since):
            if now - since >= group.handshakeTimeout {
                meters.shard.add(meters.handshakeFailures)
                meters.error("handshake_timeout")
                if override != nil {
                    // A runner's player plays one match: it ends, and its agent hears why.
                    runAgent(now: now, in: group, .disconnected("the handshake timed out"))
                    return finish(in: group, now: now)
                }
                closeSession(in: group, now: now)
                backoff(now: now)
            }
        case .playing(let until):
            if let until, now >= until { return finishMatch(now: now, in: group) }
            if let ping = nextPing, ping <= now { sendPing(now: now, in: group) }
            if let due = traffic.nextSample, due <= now { sampleTraffic(now: now) }
            if let chat = nextChat, chat <= now { sendChat(now: now, in: group) }
            if let drop = nextDrop, drop <= now { return goOffline(now: now, in: group) }
            if !isResuming, let due = agentWake, due <= now { runAgent(now: now, in: group, .wake) }
            if agentOver { finishMatch(now: now, in: group) }
        case .waiting(let until):
            if now >= until {
                phase = .ready
                advance(now: now, in: group)
            }
        case .offline(let until, let since):
            if now >= until { comeBack(now: now, offlineSince: since, in: group) }
        case .done:
            break
        }
        // After the bot's own sends (a Ping resets the keepalive clock), so a keepalive is sent only when due.
        if session != nil, now >= session!.status().deadline {
            session!.tick(now: now, on: group.loop, into: &group.actions)
            execute(now: now, in: group)
        }
    }

    // MARK: Steps

    /// Runs steps until one of them waits (a match, a think) or the steps end.
    private func advance(now: NIODeadline, in group: BotGroup) {
        var budget = steps.count * 2 + 2
        while phase == .ready, budget > 0 {
            budget -= 1
            guard stepIndex < steps.count else { return finish(in: group, now: now) }
            let step = steps[stepIndex]
            stepIndex += 1
            switch step {
            case .chat(let text):
                pendingChat.append(text)
            case .playUntilMatchOver:
                startMatch(now: now, until: nil, in: group)
            case .play(let length):
                startMatch(now: now, until: now + TimeAmount(length), in: group)
            case .think(let range):
                phase = .waiting(until: now + .nanoseconds(randomNanoseconds(in: range)))
            case .reconnect:
                // Outside a match there is nothing to resume: the next match's session is new anyway.
                break
            case .repeat(let times):
                if oneShot { return finish(in: group, now: now) }
                if times.map({ repeats < $0 }) ?? true {
                    repeats += 1
                    stepIndex = 0
                }
            case .quit:
                return finish(in: group, now: now)
            }
        }
    }

    private func finish(in group: BotGroup, now: NIODeadline) {
        closeSession(in: group, now: now)
        phase = .done
    }

    // MARK: Matches

    private func startMatch(now: NIODeadline, until: NIODeadline?, in group: BotGroup) {
        guard !group.windingDown else {
            phase = .done
            return
        }
        var context = makeContext(now: now, in: group)
        agent =
            override.map { $0.makeAgent(&context) }
            ?? group.behaviors.makeAgent(for: persona.behavior.rawValue, context: &context)
        noteAgent()
        random = context.random
        context.outbox.removeAll()
        group.outbox = context.outbox
        session = Session(configuration: group.sessionConfiguration(for: self), now: now)
        sessionEpoch &+= 1
        reportedLost = 0
        reportedResends = 0
        phase = .connecting(since: now)
        playUntil = until
        session!.connect(
            slot: UInt32(bitPattern: slot), on: group.loop, delegate: group, now: now, into: &group.actions)
        execute(now: now, in: group)
    }

    private func finishMatch(now: NIODeadline, in group: BotGroup) {
        closeSession(in: group, now: now)
        phase = .ready
        reconnectBackoff.reset()
        advance(now: now, in: group)
    }

    /// Closes the session (a goodbye if it is still seated; nothing if the connection already ended by itself) and
    /// forgets the match.
    private func closeSession(in group: BotGroup, now: NIODeadline) {
        uncount()
        session?.close(reason: .quit, on: group.loop, now: now) { [self] in countSent($0, bytes: $1) }
        session = nil
        sessionEpoch &+= 1
        agent = nil
        noteAgent()
        nextPing = nil
        nextChat = nil
        nextDrop = nil
    }

    private func uncount() {
        if counted { meters.shard.add(meters.botsConnected, -1) }
        counted = false
        traffic.stop()
    }

    /// One second of this bot's traffic, each way, into `skirmish_bot_bytes_per_second`.
    private func sampleTraffic(now: NIODeadline) {
        guard let rates = traffic.sample(now: now) else { return }
        meters.record(meters.bytesSentPerSecond, value: rates.sent)
        meters.record(meters.bytesReceivedPerSecond, value: rates.received)
    }

    /// After a failed handshake or a lost connection: try the same step again after a ``ReconnectBackoff`` delay
    /// (full jitter, 1 s window doubling to 30 s), so a restarted server does not meet a synchronised storm.
    private func backoff(now: NIODeadline) {
        let delay = reconnectBackoff.next(using: &random)
        stepIndex = max(0, stepIndex - 1)
        phase = .waiting(until: now + TimeAmount(delay))
    }

    // MARK: Traffic

    /// A datagram (or a stream packet) for this bot's current socket.
    func received(_ bytes: UnsafeRawBufferPointer, now: NIODeadline, in group: BotGroup) {
        guard session != nil else { return }
        traffic.received &+= UInt64(bytes.count)
        if bytes.count >= 10, let type = MessageType(rawValue: UInt16(bytes[8]) << 8 | UInt16(bytes[9])) {
            meters.received(type, bytes: bytes.count)
        } else {
            meters.shard.add(meters.bytesReceived, UInt64(bytes.count))
        }
        session!.receive(bytes, now: now, into: &group.actions)
        execute(now: now, in: group)
    }

    /// The stream channel for the current socket is up.
    func streamOpened(_ channel: any Channel, now: NIODeadline, in group: BotGroup) {
        guard session != nil else { return channel.close(promise: nil) }
        session!.streamOpened(channel, now: now, into: &group.actions)
        execute(now: now, in: group)
    }

    /// The transport failed under the current socket.
    func transportFailed(_ text: String, now: NIODeadline, in group: BotGroup) {
        guard session != nil else { return }
        session!.transportFailed(text, now: now, into: &group.actions)
        execute(now: now, in: group)
    }

    /// Writes what the connection produced and handles its events, in order; an event that ends the session (the
    /// match is over) ends the delivery of the rest: they belong to no session any more.
    private func execute(now: NIODeadline, in group: BotGroup) {
        guard session != nil else { return group.actions.removeAll() }
        session!.write(group.actions.packets, on: group.loop, now: now) { [self] in countSent($0, bytes: $1) }
        let counts = session!.status()
        if counts.lost > reportedLost {
            meters.lost(Int(counts.lost - reportedLost))
            reportedLost = counts.lost
        }
        if counts.resends > reportedResends {
            meters.resent(Int(counts.resends - reportedResends))
            reportedResends = counts.resends
        }
        handleEvents(of: .received, now: now, in: group)
    }

    /// Hands the events of `buffer` (one of the group's reused action buffers) to ``handle(_:now:in:)`` in order,
    /// then empties it. The buffer is taken out of the group while its events are handled — a handler may start the
    /// next match, which uses the group's buffers again — and moved, not copied, so its storage is reused and nothing
    /// is allocated. An event of a session this bot has since replaced or closed is not delivered.
    private func handleEvents(of buffer: BotGroup.ActionBuffer, now: NIODeadline, in group: BotGroup) {
        guard var current = group.take(buffer) else { return }
        let epoch = sessionEpoch
        while sessionEpoch == epoch, session != nil, let event = session!.nextEvent(from: &current) {
            handle(event, now: now, in: group)
        }
        group.giveBack(&current, to: buffer)
    }

    private func handle(_ event: ClientConnection.Event, now: NIODeadline, in group: BotGroup) {
        switch event {
        case .seated(let welcome):
            didConnect(welcome, resumed: false, now: now, in: group)
        case .resumed(let welcome):
            didConnect(welcome, resumed: true, now: now, in: group)
        case .closed(let cause):
            didDisconnect(cause, now: now, in: group)
        case .message(let message):
            meters.check(
                .replyType, passed: Meters.expected(message.type, game: meters.game, from: .server))
            guard case .playing = phase, agent != nil else { return }
            if case .serverQuit = message { return lostServer(now: now, in: group) }
            runAgent(now: now, in: group, .received(message))
            if agentOver { finishMatch(now: now, in: group) }
        case .rtt(let sample):
            let seconds = sample.seconds
            meters.record(meters.rtt, seconds: seconds)
            meters.shard.add(meters.pongsReceived)
            latestRTT = seconds
            rttSamples += 1
            smoothedRTT = smoothedRTT == 0 ? seconds : smoothedRTT * 0.875 + seconds * 0.125
            minimumRTT = minimumRTT == 0 ? seconds : min(minimumRTT, seconds)
        }
    }

    // MARK: The agent

    private func makeContext(now: NIODeadline, in group: BotGroup) -> AgentContext {
        // The group's outbox is lent to the context (and given back in `runAgent`), so its storage is reused.
        let outbox = group.outbox
        group.outbox = []
        return AgentContext(
            now: now, random: random, botNumber: number, smoothedRTT: smoothedRTT,
            minimumRTT: minimumRTT, latestRTT: latestRTT, rttSamples: rttSamples, meters: meters, outbox: outbox,
            match: match)
    }

    /// Calls the agent in place with a fresh context, then sends what it sent.
    /// One call into the agent.
    private enum AgentCall {
        case seated(Welcome)
        case received(Message)
        case wake
        case resumed
        case disconnected(String)
    }

    /// Makes `call` on the agent opened to its concrete type, so the agent is mutated and read in place: reaching
    /// it through the optional existential copies the whole agent (its replica included) on every access.
    private static func perform<A: Agent>(_ call: AgentCall, on agent: inout A, context: inout AgentContext) -> (
        wake: NIODeadline?, over: Bool
    ) {
        switch call {
        case .seated(let welcome): agent.seated(welcome, context: &context)
        case .received(let message): agent.received(message, context: &context)
        case .wake: agent.wake(context: &context)
        case .resumed: agent.resumed(context: &context)
        case .disconnected(let reason): agent.disconnected(reason, context: &context)
        }
        return (agent.nextWake, agent.isMatchOver)
    }

    private func runAgent(now: NIODeadline, in group: BotGroup, _ call: AgentCall) {
        guard agent != nil else { return }
        var context = makeContext(now: now, in: group)
        (agentWake, agentOver) = Self.perform(call, on: &agent!, context: &context)
        random = context.random
        for outgoing in context.outbox {
            switch outgoing {
            case .message(let message): send(message, now: now, in: group)
            case .raw(let bytes):
                meters.sentRaw(bytes: bytes.count)
                traffic.sent &+= UInt64(bytes.count)
                session?.writeRaw(bytes, on: group.loop, now: now)
            }
        }
        context.outbox.removeAll(keepingCapacity: true)
        group.outbox = context.outbox
    }

    /// A packet this bot wrote: the persona's counters and the bot's own byte count (its bandwidth samples).
    private func countSent(_ type: MessageType, bytes: Int) {
        meters.sent(type, bytes: bytes)
        traffic.sent &+= UInt64(bytes)
    }

    private func send(_ message: Message, now: NIODeadline, in group: BotGroup) {
        guard session != nil else { return }
        if !session!.status().acceptsSends { meters.error("send_while_disconnected") }
        session!.send(message, now: now, into: &group.sending)
        session!.write(group.sending.packets, on: group.loop, now: now) { [self] in countSent($0, bytes: $1) }
        // A send can end the connection (its reliable queue is full): handled like any other end.
        handleEvents(of: .sending, now: now, in: group)
    }

    // MARK: Session events

    private func didConnect(_ welcome: Welcome, resumed: Bool, now: NIODeadline, in group: BotGroup) {
        if GameKind.builtIn.contains(meters.game) {
            meters.check(.welcomeTickRate, passed: welcome.tickRate == ReplyCheck.expectedTickRate)
        }
        match = welcome.match
        if !counted {
            meters.shard.add(meters.botsConnected, 1)
            traffic.start(now: now)
        }
        counted = true
        switch phase {
        case .connecting(let since):
            meters.shard.add(meters.handshakes)
            meters.record(meters.handshake, seconds: (now - since).seconds)
            phase = .playing(until: playUntil)
            recordReconnect(since: outageSince, now: now)
            runAgent(now: now, in: group, .seated(welcome))
            let chat = pendingChat
            pendingChat.removeAll()
            for text in chat { send(.chat(Chat(text: text)), now: now, in: group) }
        case .playing where resumed:
            // Inputs resume from now: the ones due while away (and during the handshake) were never sent, so they
            // count neither as sent nor as late.
            runAgent(now: now, in: group, .resumed)
            recordReconnect(since: outageSince ?? resumeStarted, now: now)
        default:
            break
        }
        nextPing = now + pingInterval
        if persona.behavior == .chatter { nextChat = now + randomDelay(persona.chatEvery, default: 1...2) }
        if persona.behavior == .reconnector { nextDrop = now + randomDelay(persona.reconnectEvery, default: 5...10) }
    }

    private func didDisconnect(_ cause: ClientConnection.Cause, now: NIODeadline, in group: BotGroup) {
        uncount()
        runAgent(now: now, in: group, .disconnected("\(cause)"))
        if override != nil {
            // A runner's player plays one match: a failure ends it, and its agent has been told why.
            meters.error(Self.errorKind(cause))
            if case .connecting = phase { meters.shard.add(meters.handshakeFailures) }
            group.warnLimited("player_ended", "player's connection ended before its match", now: now) {
                ["bot.id": "\(number)", "match.id": "\(match)", "cause": "\(cause)", "persona": "\(persona.name)"]
            }
            return finish(in: group, now: now)
        }
        switch phase {
        case .connecting:
            meters.shard.add(meters.handshakeFailures)
            meters.error(Self.errorKind(cause))
            group.warnLimited("handshake_failed", "handshake failed; retrying after a backoff", now: now) {
                ["bot.id": "\(number)", "cause": "\(cause)", "persona": "\(persona.name)"]
            }
            closeSession(in: group, now: now)
            backoff(now: now)
        case .playing:
            if resumeStarted != nil {
                // The seat was not held (server restarted, window passed): join a new match after a backoff.
                meters.error("resume_failed")
                outageSince = outageSince ?? resumeStarted
                group.warnLimited("resume_failed", "resume failed; joining a new match after a backoff", now: now) {
                    ["bot.id": "\(number)", "match.id": "\(match)", "cause": "\(cause)", "persona": "\(persona.name)"]
                }
            } else {
                meters.error(Self.errorKind(cause))
                if Self.isOutage(cause) { outageSince = outageSince ?? now }
            }
            closeSession(in: group, now: now)
            backoff(now: now)
        default:
            break
        }
        resumeStarted = nil
    }

    /// The server said it is going away (a restart or a deploy): rejoin after a backoff, timed as a reconnect.
    private func lostServer(now: NIODeadline, in group: BotGroup) {
        meters.error("server_quit")
        if override != nil {
            runAgent(now: now, in: group, .disconnected("the server is shutting down"))
            return finish(in: group, now: now)
        }
        outageSince = outageSince ?? now
        closeSession(in: group, now: now)
        backoff(now: now)
    }

    /// Counts a return to play after an outage (or a resume) and its time; nothing when there was none.
    private func recordReconnect(since: NIODeadline?, now: NIODeadline) {
        outageSince = nil
        resumeStarted = nil
        guard let since else { return }
        meters.shard.add(meters.reconnects)
        meters.record(meters.reconnect, seconds: (now - since).seconds)
    }

    /// Causes that mean the server or the network went away (the bot's return is timed as a reconnect), as opposed to
    /// the server sending this player away (a matchmaking timeout, a rejection).
    static func isOutage(_ cause: ClientConnection.Cause) -> Bool {
        switch cause {
        case .silence, .unacknowledged, .transportError, .remote(.serverShutdown): true
        case .rejected, .remote, .handshakeTimeout, .handshakeLoop, .local: false
        }
    }

    /// The `kind` label of `skirmish_errors_total` for `cause`: a closed set, whatever the server sends — a reason
    /// code this build does not name is `rejected_unknown` or `disconnected_unknown`, so a hostile server cannot mint
    /// a new series per invented code.
    static func errorKind(_ cause: ClientConnection.Cause) -> String {
        switch cause {
        case .rejected(let reason): reason.isKnown ? "rejected_\(reason)" : "rejected_unknown"
        case .remote(let reason): reason.isKnown ? "disconnected_\(reason)" : "disconnected_unknown"
        case .silence: "silence_timeout"
        case .unacknowledged: "ack_timeout"
        case .handshakeTimeout: "handshake_timeout"
        case .handshakeLoop: "handshake_loop"
        case .local: "local"
        case .transportError: "transport"
        }
    }

    // MARK: Extras: pings, chat, reconnects

    private func sendPing(now: NIODeadline, in group: BotGroup) {
        pings &+= 1
        let ping = Ping(
            player: UInt32(truncatingIfNeeded: number), count: pings, sendTime: now.seconds)
        send(.ping(ping), now: now, in: group)
        meters.shard.add(meters.pingsSent)
        nextPing = now + pingInterval
    }

    private func sendChat(now: NIODeadline, in group: BotGroup) {
        send(.chat(Chat(text: "gl hf from \(persona.name) #\(number)")), now: now, in: group)
        nextChat = now + randomDelay(persona.chatEvery, default: 1...2)
    }

    /// The reconnector's drop: the socket goes away without a goodbye, as when a phone changes networks.
    private func goOffline(now: NIODeadline, in group: BotGroup) {
        nextDrop = nil
        nextPing = nil
        uncount()
        session?.suspend(on: group.loop, now: now, into: &group.actions)
        group.actions.removeAll()
        phase = .offline(until: now + randomDelay(persona.offlineFor, default: 1...3), since: now)
    }

    private func comeBack(now: NIODeadline, offlineSince: NIODeadline, in group: BotGroup) {
        guard session != nil else { return backoff(now: now) }
        resumeStarted = now
        phase = .playing(until: playUntil)
        session!.resume(slot: UInt32(bitPattern: slot), on: group.loop, delegate: group, now: now, into: &group.actions)
        execute(now: now, in: group)
    }

    /// Retires the bot: a polite goodbye (`Disconnect(quit)`) if it is connected, then nothing more.
    func retire(in group: BotGroup, now: NIODeadline) {
        finish(in: group, now: now)
    }

    private func randomNanoseconds(in range: ClosedRange<Duration>) -> Int64 {
        let low = range.lowerBound.nanoseconds
        let high = range.upperBound.nanoseconds
        return high > low ? Int64.random(in: low...high, using: &random) : low
    }

    private func randomDelay(_ range: ClosedRange<Duration>?, default seconds: ClosedRange<Int64>) -> TimeAmount {
        .nanoseconds(randomNanoseconds(in: range ?? .seconds(seconds.lowerBound) ... .seconds(seconds.upperBound)))
    }
}
