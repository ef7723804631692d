import Logging
import NIOCore
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// All the bots one event loop owns, the clock that wakes them, and that loop's metrics.
///
/// A group ticks every millisecond on deadlines fixed in advance and wakes the bots whose time has come: a min-heap
/// holds each bot's next wake, the earlier of what its steps and brain want (``Bot/nextWake``) and when its session's
/// timers are due (``Bot/sessionDeadline``: resends, acks, keepalives, timeouts). A tick therefore costs the bots that
/// are due, never a sweep over all of them, which is what lets one loop hold tens of thousands of idle bots. Bots are
/// added and retired by the controller through ``setClosedTarget(_:now:)`` and ``arrive(_:now:)``; nothing here is
/// shared with another thread except through `EventLoop.submit`.
///
/// The group is its loop's ``DatagramDelegate`` and its sessions' ``StreamDelegate``: every datagram a bot's socket
/// reads arrives here with the bot's slot and socket generation, and goes to that bot without a lookup or a lock.
final class BotGroup: DatagramDelegate, StreamDelegate {
    let loop: ClientLoop
    let index: Int
    let groupCount: Int
    let context: SwarmContext
    let shard: MetricsShard
    /// A bot still handshaking after this long is counted as a failed handshake.
    let handshakeTimeout: TimeAmount = .seconds(6)

    private var meters: [Meters] = []
    private var bots: [Bot?] = []
    private var freeSlots: [Int32] = []
    private var closed: [Int: Int32] = [:]
    /// The closed-model target this loop last followed.
    private var closedTarget = 0
    private var openCount = 0
    private var queue = WakeQueue(capacity: 1_024)
    private var lastCompaction = NIODeadline.uptimeNanoseconds(0)
    private var stopped = false
    private var random: SeededRandom
    /// What the sessions' calls produce, reused call after call so nothing is allocated per packet.
    var actions = ClientConnection.Actions()
    /// What a bot's sends produce while it handles ``actions``.
    var sending = ClientConnection.Actions()
    /// Names one of the reused action buffers: ``actions`` (what the sessions' calls produce) or ``sending``.
    ///
    /// A bot takes a buffer out while it handles its events and gives it back after. This is a plain switch, not a
    /// key path: writing through a `ReferenceWritableKeyPath` allocates a box on every call, four per bot-tick.
    enum ActionBuffer { case received, sending }

    /// Runs `body` on the buffer `buffer` names, in place.
    private func withBuffer<Result>(
        _ buffer: ActionBuffer, _ body: (inout ClientConnection.Actions) -> Result
    ) -> Result {
        switch buffer {
        case .received: body(&actions)
        case .sending: body(&sending)
        }
    }

    /// Takes `buffer` out of the group, leaving an empty one, or empties it and returns nil when it has no events.
    func take(_ buffer: ActionBuffer) -> ClientConnection.Actions? {
        withBuffer(buffer) { stored in
            guard !stored.events.isEmpty else {
                stored.removeAll()
                return nil
            }
            var taken = ClientConnection.Actions()
            swap(&taken, &stored)
            return taken
        }
    }

    /// Empties `used` and puts it back as `buffer` if its storage is larger than what took its place.
    func giveBack(_ used: inout ClientConnection.Actions, to buffer: ActionBuffer) {
        used.removeAll()
        withBuffer(buffer) { stored in
            if stored.packets.capacity < used.packets.capacity { swap(&stored, &used) }
        }
    }

    /// Lent to each agent call for what the agent sends (see ``AgentContext``).
    var outbox: [AgentContext.Outgoing] = []
    let behaviors: BehaviorRegistry
    /// The run's logger with this loop's index (`loop`).
    let logger: Logger
    /// Bot events that can come from thousands of bots at once (a server restart fails every resume): one line per
    /// kind per 10 s on this loop, with how many it stands for.
    private var botEvents = LogRateLimiter<String>(interval: .seconds(10))

    init(loop: ClientLoop, index: Int, groupCount: Int, context: SwarmContext) {
        self.loop = loop
        self.index = index
        self.groupCount = groupCount
        self.context = context
        shard = MetricsShard(constantLabels: context.constantLabels)
        random = SeededRandom(seed: context.seed).derived(UInt64(0xB07_0000 + index))
        behaviors = context.behaviors
        outbox.reserveCapacity(8)
        var logger = context.logger
        logger[metadataKey: "loop"] = "\(index)"
        self.logger = logger
        meters = context.personas.personas.map { persona in
            Meters(shard: shard, spec: persona, logger: logger, episodes: context.episodes)
        }
    }

    /// Logs a bot event that many bots may have at once (`kind`: `resume_failed`, `handshake_failed`, …) as a
    /// warning, at most one line per kind per 10 s on this loop: the line shows the bot it came from and `count`, the
    /// events of this kind it stands for (itself and those suppressed since the previous line).
    func warnLimited(_ kind: String, _ message: Logger.Message, now: NIODeadline, metadata: () -> Logger.Metadata) {
        guard logger.logLevel <= .warning else { return }
        guard let count = botEvents.record(kind, now: .nanoseconds(Int64(now.uptimeNanoseconds))) else { return }
        var fields = metadata()
        fields["event"] = "\(kind)"
        fields["count"] = "\(count)"
        fields["suppressed"] = "\(count - 1)"
        logger.warning(message, metadata: fields)
    }

    /// Writes what ``warnLimited(_:_:now:metadata:)`` owes for windows that have ended: once a second from the
    /// tick, and at the end of a run (`final`) for every window, ended or not, so the counts add up to the counters.
    private func flushLimitedWarnings(now: NIODeadline, final: Bool = true) {
        let instant = Duration.nanoseconds(Int64(now.uptimeNanoseconds))
        for (kind, count) in botEvents.due(now: final ? instant + botEvents.interval : instant) {
            logger.warning(
                "bot events since the last line",
                metadata: ["event": "\(kind)", "count": "\(count)", "suppressed": "\(count)"])
        }
    }

    /// Bots alive on this loop (closed-model and open-model).
    var liveBots: Int { closed.count + openCount }

    /// CPU time this loop's thread has used so far, in seconds; call it on the loop.
    ///
    /// Compared with the wall clock it tells whether the generator kept up: a loop busy nearly all the time delays
    /// its own sends and reads, whatever the server does.
    func threadCPUSeconds() -> Double { WallTime.threadCPUSeconds() }

    // MARK: Clock

    /// Starts waking bots: the loop asks ``nextTick`` before it sleeps and calls ``tick(now:)`` when it is due.
    func start() {
        started = true
    }

    private var started = false
    private var lastTick: UInt64 = 0

    /// When the loop should next call ``tick(now:)``: the earliest bot due, but at most one tick a millisecond, so
    /// ten thousand bots whose inputs fall due microseconds apart share a wake-up (as the C client's 1 ms quantum
    /// does) instead of costing one `epoll_wait` each. Nothing is due while the heap is empty: an idle loop sleeps.
    func nextTick() -> UInt64 {
        guard started, !stopped, let earliest = queue.earliest else { return .max }
        return max(earliest, lastTick &+ 1_000_000)
    }

    func tick(now: NIODeadline) {
        let nowNanos = now.uptimeNanoseconds
        lastTick = nowNanos
        while let entry = queue.popDue(now: nowNanos) {
            guard Int(entry.slot) < bots.count, let bot = bots[Int(entry.slot)], bot.generation == entry.generation
            else {
                continue
            }
            bot.scheduledWake = nil
            bot.wake(now: now, in: self)
            afterActivity(bot)
        }
        if now - lastCompaction >= .seconds(1) {
            lastCompaction = now
            flushLimitedWarnings(now: now, final: false)
            if queue.count > 4 * max(bots.count, 256) {
                queue.compact { [bots] entry in
                    Int(entry.slot) < bots.count && bots[Int(entry.slot)]?.generation == entry.generation
                }
            }
        }
    }

    /// Puts `bot` back on the heap at its next wake time, or frees its slot when it is done.
    func reschedule(_ bot: Bot) { afterActivity(bot) }

    private func afterActivity(_ bot: Bot) {
        guard !bot.isDone else { return release(bot) }
        // A wake that comes early (the session's deadline moved later meanwhile) finds nothing due and reschedules:
        // entries are pushed only when a wake moves earlier, not on every packet.
        guard let wake = bot.nextWake(handshakeTimeout: handshakeTimeout) else {
            bot.scheduledWake = nil
            bot.generation &+= 1
            return
        }
        if let scheduled = bot.scheduledWake, scheduled <= wake { return }
        bot.generation &+= 1
        bot.scheduledWake = wake
        queue.push(.init(due: wake.uptimeNanoseconds, slot: bot.slot, generation: bot.generation))
    }

    private func release(_ bot: Bot) {
        // After ``stop()`` the slots are gone; a late session event for a retired bot finds nothing to release.
        guard Int(bot.slot) < bots.count, bots[Int(bot.slot)] === bot else { return }
        bots[Int(bot.slot)] = nil
        freeSlots.append(bot.slot)
        bot.generation &+= 1
        // The next bot in this slot numbers its heap entries on from here, so the old ones never match it.
        if slotGenerations.count <= Int(bot.slot) {
            slotGenerations.append(contentsOf: repeatElement(0, count: Int(bot.slot) + 1 - slotGenerations.count))
        }
        slotGenerations[Int(bot.slot)] = bot.generation
        if bot.oneShot {
            openCount -= 1
        } else if closed[bot.number] == bot.slot {
            // A closed-model bot whose steps ended keeps its place in the count but holds nothing.
            closed[bot.number] = -1
        }
    }

    // MARK: Population

    /// Makes the closed-model bots numbered below `total` that belong to this loop alive, and retires the others.
    func setClosedTarget(_ total: Int, now: NIODeadline) {
        // Called every 100 ms; only a change of target costs anything, and then only the bots that come or go.
        guard !stopped, total != closedTarget else { return }
        if total > closedTarget {
            var number = firstNumber(atLeast: closedTarget)
            while number < total {
                if closed[number] == nil { spawn(number: number, oneShot: false, now: now) }
                number += groupCount
            }
        } else {
            var number = firstNumber(atLeast: total)
            while number < closedTarget {
                if let slot = closed[number] {
                    if slot >= 0, let bot = bots[Int(slot)] {
                        bot.retire(in: self, now: now)
                        release(bot)
                    }
                    closed[number] = nil
                }
                number += groupCount
            }
        }
        closedTarget = total
    }

    /// The smallest bot number at or above `number` that this loop owns (bots are dealt round-robin over loops).
    private func firstNumber(atLeast number: Int) -> Int {
        number + ((index - number % groupCount) % groupCount + groupCount) % groupCount
    }

    /// Starts an open-model arrival unless this loop already holds its share of the stage's cap.
    func arrive(_ arrival: LoadPlan.Arrival, now: NIODeadline) {
        guard !stopped else { return }
        let cap = max(1, arrival.cap / groupCount)
        guard openCount < cap else {
            meters[context.personas.index(for: arrival.number)].error("arrival_capped")
            return
        }
        openCount += 1
        spawn(number: arrival.number, oneShot: true, now: now)
    }

    /// A free slot for a new bot: one a retired bot left, or a new one at the end.
    private func takeSlot() -> Int32 {
        if let free = freeSlots.popLast() { return free }
        bots.append(nil)
        return Int32(bots.count - 1)
    }

    /// The last heap generation of each slot's previous bot.
    private var slotGenerations: [UInt32] = []

    /// Puts a new bot in its slot, its heap generation continuing the previous occupant's.
    private func place(_ bot: Bot) {
        if Int(bot.slot) < slotGenerations.count { bot.generation = slotGenerations[Int(bot.slot)] &+ 1 }
        bots[Int(bot.slot)] = bot
    }

    private func spawn(number: Int, oneShot: Bool, now: NIODeadline) {
        let personaIndex = context.personas.index(for: number)
        let slot = takeSlot()
        let bot = Bot(
            number: number, slot: slot, persona: context.personas.personas[personaIndex], meters: meters[personaIndex],
            random: SeededRandom(seed: context.seed).derived(UInt64(number)), oneShot: oneShot)
        place(bot)
        if !oneShot { closed[number] = slot }
        bot.wake(now: now, in: self)
        afterActivity(bot)
    }

    /// Starts one player outside the script (see ``AgentRunner``); returns its slot, which names it to ``retire(slot:)``.
    func spawn(persona: Persona, override: Bot.Override, number: Int, now: NIODeadline) -> Int32 {
        let meters =
            adHocMeters[persona] ?? Meters(shard: shard, spec: persona, logger: logger, episodes: context.episodes)
        adHocMeters[persona] = meters
        let slot = takeSlot()
        let bot = Bot(
            number: number, slot: slot, persona: persona, meters: meters,
            random: SeededRandom(seed: context.seed).derived(UInt64(number)), oneShot: true, override: override)
        place(bot)
        openCount += 1
        bot.wake(now: now, in: self)
        afterActivity(bot)
        return slot
    }

    /// Retires the player in `slot` (a polite goodbye if it is seated); nothing if it is gone already.
    func retire(slot: Int32, number: Int, now: NIODeadline) {
        guard Int(slot) < bots.count, let bot = bots[Int(slot)], bot.number == number else { return }
        bot.retire(in: self, now: now)
        release(bot)
    }

    private var adHocMeters: [Persona: Meters] = [:]
    /// Counts sessions, so that each starts its socket numbers apart from the last (see `Session.firstGeneration`).
    private var sessionsOpened: UInt32 = 0

    /// No bot starts another match from now on: the first step of stopping a run, taken on every group before any
    /// bot says goodbye. Otherwise the goodbyes of one group's bots end their tables for another group's, whose
    /// bots would join new tables in the moments before their own group stops.
    private(set) var windingDown = false

    func windDown() { windingDown = true }

    /// Retires every bot (a polite ClientQuit from those in a match) and stops the clock.
    func stop() {
        stopped = true
        let now = NIODeadline.now()
        for case let bot? in bots { bot.retire(in: self, now: now) }
        flushLimitedWarnings(now: now)
        bots.removeAll()
        queue = WakeQueue()
        closed.removeAll()
        openCount = 0
    }

    // MARK: Sessions

    func sessionConfiguration(for bot: Bot) -> Session.Configuration {
        let target = bot.override?.target ?? context.target(for: bot.persona)
        var connection = ClientConnection.Configuration(
            game: bot.persona.game, seats: UInt8(bot.persona.seats),
            name: String(bot.persona.name.prefix(WireLimits.maxName)),
            mode: target.transport == .udp ? .datagram : .stream)
        connection.handshakeTimeout = .seconds(5)
        connection.match = bot.override?.match ?? 0
        var configuration = Session.Configuration(target: target, connection: connection)
        configuration.seed = context.seed ^ UInt64(bot.number) &* 0x9E37_79B9
        configuration.link = bot.persona.link
        configuration.resolvedAddress = bot.override?.address ?? context.resolved[target]
        configuration.localPorts = context.localPorts
        configuration.streamLoops = context.streamLoops
        sessionsOpened &+= 1
        // Apart in the low byte too, which is all a datagram token carries.
        configuration.firstGeneration = sessionsOpened &* 1_024 &+ (sessionsOpened & 0x7F) &* 2
        return configuration
    }

    // MARK: Datagrams and stream events

    /// The bot a socket event belongs to, if that socket is still its current one.
    @inline(__always)
    private func bot(token: UInt32) -> Bot? {
        let slot = Int(token >> 8)
        guard slot < bots.count, let bot = bots[slot], bot.hasSocket(generationBits: token & 0xFF) else { return nil }
        return bot
    }

    func datagram(_ bytes: UnsafeRawBufferPointer, token: UInt32, now: NIODeadline) {
        guard let bot = bot(token: token) else { return }
        bot.received(bytes, now: now, in: self)
        afterActivity(bot)
    }

    func datagramError(_ code: Int32, token: UInt32, now: NIODeadline) {
        // ICMP port unreachable on a connected socket (the server is not there yet, or restarted): the handshake
        // keeps trying and the connection's own timers decide when to give up.
    }

    private func bot(slot token: UInt32, generation: UInt32) -> Bot? {
        let slot = Int(token)
        guard slot < bots.count, let bot = bots[slot], bot.hasSocket(generation: generation) else { return nil }
        return bot
    }

    func streamOpened(_ channel: any Channel, token: UInt32, generation: UInt32, now: NIODeadline) {
        guard let bot = bot(slot: token, generation: generation) else { return channel.close(promise: nil) }
        bot.streamOpened(channel, now: now, in: self)
        afterActivity(bot)
    }

    func streamReceived(_ bytes: ByteBuffer, token: UInt32, generation: UInt32, now: NIODeadline) {
        guard let bot = bot(slot: token, generation: generation) else { return }
        bytes.withUnsafeReadableBytes { bot.received($0, now: now, in: self) }
        afterActivity(bot)
    }

    func streamFailed(_ text: String, token: UInt32, generation: UInt32, now: NIODeadline) {
        guard let bot = bot(slot: token, generation: generation) else { return }
        bot.transportFailed(text, now: now, in: self)
        afterActivity(bot)
    }
}
