import NIOCore
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire

/// One bot: a persona's steps, a session to the server, and the brain that plays the current match.
///
/// A bot is a small state machine owned by one ``BotGroup`` and touched only on that group's event loop. It never
/// sleeps or schedules its own timers: the group wakes it at ``nextWake`` and hands it every session event.
final class Bot: BotHandle {
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
    private unowned let group: BotGroup
    private let steps: [Step]
    /// An open-model arrival (it plays its steps once), not one of the closed-model population.
    let oneShot: Bool
    private var stepIndex = 0
    private var repeats = 0
    private var session: ClientSession?
    private var brain: (any Brain)?
    private var connected = false
    private var resuming = false
    private var reconnectBackoff = ReconnectBackoff()
    /// When this bot lost a match's connection it did not drop on purpose (server restart, silence), until it is
    /// playing again: the start of the reconnect time it records.
    private var outageSince: NIODeadline?
    private var pings: UInt32 = 0
    private var nextPing: NIODeadline?
    private var nextChat: NIODeadline?
    private var nextDrop: NIODeadline?
    private var pendingChat: [String] = []
    private(set) var smoothedRTT = 0.0
    private(set) var minimumRTT = 0.0

    init(
        number: Int, slot: Int32, persona: Persona, meters: Meters, random: SeededRandom, group: BotGroup,
        oneShot: Bool
    ) {
        self.number = number
        self.slot = slot
        self.persona = persona
        self.meters = meters
        self.random = random
        self.group = group
        self.oneShot = oneShot
        steps = persona.steps.isEmpty ? Self.defaultSteps : persona.steps
    }

    /// A persona without steps plays match after match with a short think between them.
    static let defaultSteps: [Step] = [
        .playUntilMatchOver, .think(.milliseconds(500)...(.milliseconds(1_500))), .repeat(times: nil),
    ]

    var isDone: Bool { phase == .done }

    // MARK: Waking

    /// The earliest time this bot needs the loop.
    var nextWake: NIODeadline? {
        var wake: NIODeadline?
        func consider(_ time: NIODeadline?) {
            guard let time else { return }
            wake = wake.map { min($0, time) } ?? time
        }
        switch phase {
        case .ready: consider(.uptimeNanoseconds(0))
        case .connecting(let since): consider(since + group.handshakeTimeout)
        case .playing(let until):
            consider(until)
            // While a resume's handshake is in flight the brain waits: what it sent could not leave yet.
            if !resuming { consider(brain?.nextWake) }
            consider(nextPing)
            consider(nextChat)
            consider(nextDrop)
        case .waiting(let until): consider(until)
        case .offline(let until, _): consider(until)
        case .done: break
        }
        return wake
    }

    func wake(now: NIODeadline) {
        switch phase {
        case .ready:
            advance(now: now)
        case .connecting(let since):
            if now - since >= group.handshakeTimeout {
                meters.shard.add(meters.handshakeFailures)
                meters.error("handshake_timeout")
                closeSession()
                backoff(now: now)
            }
        case .playing(let until):
            if let until, now >= until { return finishMatch(now: now) }
            if let ping = nextPing, ping <= now { sendPing(now: now) }
            if let chat = nextChat, chat <= now { sendChat(now: now) }
            if let drop = nextDrop, drop <= now { return goOffline(now: now) }
            if !resuming, let due = brain?.nextWake, due <= now { brain?.wake(now: now) }
            if brain?.isMatchOver == true { finishMatch(now: now) }
        case .waiting(let until):
            if now >= until {
                phase = .ready
                advance(now: now)
            }
        case .offline(let until, let since):
            if now >= until { comeBack(now: now, offlineSince: since) }
        case .done:
            break
        }
    }

    // MARK: Steps

    /// Runs steps until one of them waits (a match, a think) or the steps end.
    private func advance(now: NIODeadline) {
        var budget = steps.count * 2 + 2
        while phase == .ready, budget > 0 {
            budget -= 1
            guard stepIndex < steps.count else { return finish() }
            let step = steps[stepIndex]
            stepIndex += 1
            switch step {
            case .chat(let text):
                pendingChat.append(text)
            case .playUntilMatchOver:
                startMatch(now: now, until: nil)
            case .play(let length):
                startMatch(now: now, until: now + .nanoseconds(Int64(length.nanoseconds)))
            case .think(let range):
                phase = .waiting(until: now + .nanoseconds(randomNanoseconds(in: range)))
            case .reconnect:
                // Outside a match there is nothing to resume: the next match's session is new anyway.
                break
            case .repeat(let times):
                if oneShot { return finish() }
                if times.map({ repeats < $0 }) ?? true {
                    repeats += 1
                    stepIndex = 0
                }
            case .quit:
                return finish()
            }
        }
    }

    private func finish() {
        closeSession()
        phase = .done
    }

    // MARK: Matches

    private func startMatch(now: NIODeadline, until: NIODeadline?) {
        let configuration = group.sessionConfiguration(for: self)
        let session = ClientSession(configuration: configuration, eventLoop: group.loop) { [unowned self] event in
            self.handle(event)
        }
        session.observer = meters
        self.session = session
        brain = makeBrain()
        connected = false
        phase = .connecting(since: now)
        playUntil = until
        session.connect()
    }

    private var playUntil: NIODeadline?

    private func makeBrain() -> any Brain {
        switch persona.behavior {
        case .chaser: PuckPlayer(bot: self, style: .chaser, inputRate: persona.inputRate)
        case .defender: PuckPlayer(bot: self, style: .defender, inputRate: persona.inputRate)
        case .ai: group.makeOpponent(for: self)
        case .rogue: Rogue(bot: self)
        case .idle where persona.game == .puck: PuckPlayer(bot: self, style: .idle, inputRate: persona.inputRate)
        case .idle: IdlePlayer()
        case .chatter, .reconnector:
            switch persona.game {
            case .puck: PuckPlayer(bot: self, style: .chaser, inputRate: persona.inputRate)
            case .snap: SnapPlayer(bot: self)
            case .suns: SunsPlayer(bot: self)
            }
        case .snapPlayer: SnapPlayer(bot: self)
        case .sunsPlayer: SunsPlayer(bot: self)
        }
    }

    private func finishMatch(now: NIODeadline) {
        closeSession()
        phase = .ready
        reconnectBackoff.reset()
        advance(now: now)
    }

    private func closeSession() {
        if connected { meters.shard.add(meters.botsConnected, -1) }
        connected = false
        resuming = false
        session?.disconnect(reason: .quit)
        session = nil
        brain = nil
        nextPing = nil
        nextChat = nil
        nextDrop = nil
    }

    /// After a failed handshake or a lost connection: try the same step again after a ``ReconnectBackoff`` delay
    /// (full jitter, 1 s window doubling to 30 s), so a restarted server does not meet a synchronised storm.
    private func backoff(now: NIODeadline) {
        let delay = reconnectBackoff.next(using: &random)
        stepIndex = max(0, stepIndex - 1)
        phase = .waiting(until: now + .nanoseconds(delay.nanoseconds))
    }

    // MARK: Session events

    private func handle(_ event: SessionEvent) {
        let now = NIODeadline.now()
        switch event {
        case .stateChanged(let state):
            switch state {
            case .connected(let welcome): didConnect(welcome, now: now)
            case .disconnected(let cause): didDisconnect(cause, now: now)
            case .idle, .connecting: break
            }
        case .message(let message, let receivedAt):
            guard case .playing = phase, let brain else { break }
            if case .serverQuit = message { return lostServer(now: now) }
            brain.received(message, at: receivedAt)
            if brain.isMatchOver { finishMatch(now: now) }
        case .rtt(let sample):
            let seconds = Double(sample.nanoseconds) / 1e9
            meters.record(meters.rtt, seconds: seconds)
            meters.shard.add(meters.pongsReceived)
            smoothedRTT = smoothedRTT == 0 ? seconds : smoothedRTT * 0.875 + seconds * 0.125
            minimumRTT = minimumRTT == 0 ? seconds : min(minimumRTT, seconds)
        }
        group.reschedule(self)
    }

    private func didConnect(_ welcome: Welcome, now: NIODeadline) {
        if !connected { meters.shard.add(meters.botsConnected, 1) }
        connected = true
        switch phase {
        case .connecting(let since):
            meters.shard.add(meters.handshakes)
            meters.record(meters.handshake, seconds: Double((now - since).nanoseconds) / 1e9)
            phase = .playing(until: playUntil)
            recordReconnect(since: outageSince, now: now)
            brain?.connected(welcome, now: now)
            for text in pendingChat { session?.send(.chat(Chat(text: text))) }
            pendingChat.removeAll()
        case .playing:
            // A resume re-attached the seat; the brain carries on with the same match.
            if resuming {
                resuming = false
                // Inputs resume from now: the ones due while away (and during the handshake) were never sent, so
                // they count neither as sent nor as late.
                brain?.resumed(now: now)
                recordReconnect(since: outageSince ?? resumeStarted, now: now)
            }
        default:
            break
        }
        nextPing = now + .seconds(1)
        if persona.behavior == .chatter { nextChat = now + randomDelay(persona.chatEvery, default: 1...2) }
        if persona.behavior == .reconnector { nextDrop = now + randomDelay(persona.reconnectEvery, default: 5...10) }
    }

    private var resumeStarted: NIODeadline?

    private func didDisconnect(_ cause: ClientSession.Cause, now: NIODeadline) {
        if connected { meters.shard.add(meters.botsConnected, -1) }
        connected = false
        switch phase {
        case .connecting:
            meters.shard.add(meters.handshakeFailures)
            meters.error(Self.errorKind(cause))
            session = nil
            brain = nil
            backoff(now: now)
        case .playing:
            let resumeFailed = resuming
            if resuming {
                // The seat was not held (server restarted, window passed): join a new match after a backoff.
                resuming = false
                meters.error("resume_failed")
            } else {
                meters.error(Self.errorKind(cause))
                if Self.isOutage(cause) { outageSince = outageSince ?? now }
            }
            if resumeFailed { outageSince = outageSince ?? resumeStarted }
            session = nil
            brain = nil
            backoff(now: now)
        default:
            break
        }
    }

    /// The server said it is going away (a restart or a deploy): rejoin after a backoff, timed as a reconnect.
    private func lostServer(now: NIODeadline) {
        meters.error("server_quit")
        outageSince = outageSince ?? now
        closeSession()
        backoff(now: now)
        group.reschedule(self)
    }

    /// Counts a return to play after an outage (or a resume) and its time; nothing when there was none.
    private func recordReconnect(since: NIODeadline?, now: NIODeadline) {
        outageSince = nil
        guard let since else { return }
        meters.shard.add(meters.reconnects)
        meters.record(meters.reconnect, seconds: Double((now - since).nanoseconds) / 1e9)
    }

    /// Causes that mean the server or the network went away (the bot's return is timed as a reconnect), as opposed to
    /// the server sending this player away (a matchmaking timeout, a rejection).
    static func isOutage(_ cause: ClientSession.Cause) -> Bool {
        switch cause {
        case .silence, .unacknowledged, .transportError, .remote(.serverShutdown): true
        case .rejected, .remote, .handshakeTimeout, .local: false
        }
    }

    static func errorKind(_ cause: ClientSession.Cause) -> String {
        switch cause {
        case .rejected(let reason): "rejected_\(reason)"
        case .remote(let reason): "disconnected_\(reason)"
        case .silence: "silence_timeout"
        case .unacknowledged: "ack_timeout"
        case .handshakeTimeout: "handshake_timeout"
        case .local: "local"
        case .transportError: "transport"
        }
    }

    // MARK: Extras: pings, chat, reconnects

    private func sendPing(now: NIODeadline) {
        pings &+= 1
        session?.send(.ping(Ping(player: UInt32(truncatingIfNeeded: number), count: pings, sendTime: seconds(now))))
        meters.shard.add(meters.pingsSent)
        nextPing = now + .seconds(1)
    }

    private func sendChat(now: NIODeadline) {
        session?.send(.chat(Chat(text: "gl hf from \(persona.name) #\(number)")))
        nextChat = now + randomDelay(persona.chatEvery, default: 1...2)
    }

    /// The reconnector's drop: the socket goes away without a goodbye, as when a phone changes networks.
    private func goOffline(now: NIODeadline) {
        nextDrop = nil
        nextPing = nil
        if connected { meters.shard.add(meters.botsConnected, -1) }
        connected = false
        session?.suspend()
        phase = .offline(until: now + randomDelay(persona.offlineFor, default: 1...3), since: now)
    }

    private func comeBack(now: NIODeadline, offlineSince: NIODeadline) {
        guard let session else { return backoff(now: now) }
        resuming = true
        resumeStarted = now
        phase = .playing(until: playUntil)
        session.resume()
    }

    // MARK: BotHandle

    func send(_ message: Message) { session?.send(message) }

    func sendRaw(_ bytes: [UInt8]) { session?.sendRaw(bytes) }

    /// Retires the bot: a polite goodbye (`Disconnect(quit)`) if it is connected, then nothing more.
    func retire() {
        finish()
    }

    private func randomNanoseconds(in range: ClosedRange<Duration>) -> Int64 {
        let low = Int64(range.lowerBound.nanoseconds)
        let high = Int64(range.upperBound.nanoseconds)
        return high > low ? Int64.random(in: low...high, using: &random) : low
    }

    private func randomDelay(_ range: ClosedRange<Duration>?, default seconds: ClosedRange<Int64>) -> TimeAmount {
        if let range { return .nanoseconds(randomNanoseconds(in: range)) }
        return .nanoseconds(
            Int64.random(in: seconds.lowerBound * 1_000_000_000...seconds.upperBound * 1_000_000_000, using: &random))
    }

    /// When the session's timers (resends, acks, keepalives, timeouts) next need running; the group wakes the bot
    /// at the earlier of this and ``nextWake``.
    var sessionDeadline: NIODeadline? { session?.nextDeadline }

    /// Runs the session's timers when they are due.
    func tickSession(now: NIODeadline) {
        guard let session, now >= session.nextDeadline else { return }
        session.tick(now: now)
    }
}
