import NIOCore
import NIOPosix
import SkirmishWire

/// The shell under every ``AsyncClientSession`` on one ``ClientLoop``: the loop's ``DatagramDelegate``, its sessions'
/// ``StreamDelegate``, and the runner of their timers.
///
/// It does for a few async clients what a swarm's bot group does for thousands of bots, without the group's clock:
/// each ``Session`` has at most one task scheduled on the loop, at its ``Session/nextDeadline``, re-armed after every
/// call that may have moved that deadline (an earlier deadline replaces the task, a later one lets it fire early and
/// find nothing due). It writes the packets each call leaves in its actions and turns the connection's events into
/// ``SessionEvent``s on the session's stream. A socket's token is its slot and socket generation, as in the swarm,
/// so a late datagram or stream event of a session's earlier socket, or of an earlier session in the same slot, is
/// ignored.
///
/// Confined to its loop. The loop keeps it alive (``ClientLoop/attachment``): stream events reach it through an
/// unowned link and may arrive after the last session closed.
final class SessionHost: DatagramDelegate, StreamDelegate {
    private struct Entry {
        var session: Session
        /// Names the ``AsyncClientSession`` that owns this slot: a call from an earlier owner of the slot finds
        /// another number and does nothing.
        let id: UInt64
        let continuation: AsyncStream<SessionEvent>.Continuation
        let selfTimed: Bool
        /// The state the stream last heard of.
        var reported = ClientConnection.State.idle
        var timer: Scheduled<Void>?
        var timerDue = NIODeadline.distantFuture
    }

    let loop: ClientLoop
    private var entries: [Entry?] = []
    private var freeSlots: [Int] = []
    /// Counts sessions: each one's id, and where it starts numbering its sockets (``Session/Configuration``'s
    /// `firstGeneration`), so that a reused slot never takes an old socket's event for its own.
    private var opened: UInt64 = 0
    /// What the sessions' calls produce, reused call after call.
    private var actions = ClientConnection.Actions()

    private init(loop: ClientLoop) {
        self.loop = loop
    }

    /// The host of `loop`, made and attached on first use; `nil` when the loop already serves another delegate (a
    /// swarm's bot group). Call on the loop.
    static func on(_ loop: ClientLoop) -> SessionHost? {
        loop.preconditionInEventLoop()
        if let host = loop.delegate as? SessionHost { return host }
        guard loop.delegate is NoDelegate else { return nil }
        let host = SessionHost(loop: loop)
        loop.delegate = host
        loop.attachment = host
        return host
    }

    // MARK: Calls from the sessions' owners

    /// Opens a session and starts its handshake; returns its slot and id.
    func open(
        _ configuration: AsyncClientSession.Configuration, continuation: AsyncStream<SessionEvent>.Continuation,
        now: NIODeadline
    ) -> (slot: Int, id: UInt64) {
        opened &+= 1
        var settings = Session.Configuration(target: configuration.target, connection: configuration.connection)
        settings.link = configuration.link
        settings.seed = configuration.seed
        settings.streamLoops = configuration.streamLoops ?? MultiThreadedEventLoopGroup.singleton
        settings.firstGeneration = UInt32(truncatingIfNeeded: opened) &* 1_024
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = entries.count
            entries.append(nil)
        }
        entries[slot] = Entry(
            session: Session(configuration: settings, now: now), id: opened, continuation: continuation,
            selfTimed: configuration.selfTimed)
        entries[slot]!.session.connect(slot: UInt32(slot), on: loop, delegate: self, now: now, into: &actions)
        execute(slot, now: now)
        return (slot, opened)
    }

    func send(_ message: Message, slot: Int, id: UInt64) {
        guard isOwned(slot, by: id) else { return }
        let now = NIODeadline.now()
        entries[slot]!.session.send(message, now: now, into: &actions)
        execute(slot, now: now)
    }

    func sendRaw(_ bytes: [UInt8], slot: Int, id: UInt64) {
        guard isOwned(slot, by: id) else { return }
        entries[slot]!.session.writeRaw(bytes, on: loop, now: .now())
        rearm(slot)
    }

    func suspend(slot: Int, id: UInt64) {
        guard isOwned(slot, by: id) else { return }
        let now = NIODeadline.now()
        entries[slot]!.session.suspend(on: loop, now: now, into: &actions)
        execute(slot, now: now)
    }

    func resume(slot: Int, id: UInt64) {
        guard isOwned(slot, by: id) else { return }
        let now = NIODeadline.now()
        entries[slot]!.session.resume(slot: UInt32(slot), on: loop, delegate: self, now: now, into: &actions)
        execute(slot, now: now)
    }

    /// Says goodbye (when seated), closes the socket, ends the event stream and frees the slot.
    func close(reason: DisconnectReason, slot: Int, id: UInt64) {
        guard isOwned(slot, by: id) else { return }
        entries[slot]!.session.close(reason: reason, on: loop, now: .now())
        entries[slot]!.timer?.cancel()
        entries[slot]!.continuation.finish()
        entries[slot] = nil
        freeSlots.append(slot)
    }

    func state(slot: Int, id: UInt64) -> ClientConnection.State? {
        isOwned(slot, by: id) ? entries[slot]!.session.state : nil
    }

    func stats(slot: Int, id: UInt64) -> ClientConnection.Stats? {
        isOwned(slot, by: id) ? entries[slot]!.session.connection.stats : nil
    }

    /// Runs the session's timers as if the time were `now` (see ``AsyncClientSession/tick(now:)``).
    func tick(now: NIODeadline, slot: Int, id: UInt64) -> ClientConnection.State? {
        guard isOwned(slot, by: id) else { return nil }
        entries[slot]!.session.tick(now: now, on: loop, into: &actions)
        execute(slot, now: now)
        return entries[slot]?.session.state
    }

    private func isOwned(_ slot: Int, by id: UInt64) -> Bool {
        slot < entries.count && entries[slot]?.id == id
    }

    // MARK: Executing

    /// Writes what the last call left in ``actions``, reports its events, then re-arms the session's timer.
    private func execute(_ slot: Int, now: NIODeadline) {
        defer { actions.removeAll() }
        guard entries[slot] != nil else { return }
        entries[slot]!.session.write(actions.packets, on: loop, now: now)
        while let event = entries[slot]!.session.nextEvent(from: &actions) {
            switch event {
            case .seated(let welcome), .resumed(let welcome): report(.seated(welcome), slot: slot)
            case .closed(let cause): report(.closed(cause), slot: slot)
            case .message(let message): entries[slot]!.continuation.yield(.message(message, receivedAt: now))
            case .rtt(let sample): entries[slot]!.continuation.yield(.rtt(sample))
            }
        }
        // What the owner's own calls changed (handshaking, suspended, resuming) comes with no event of its own.
        let state = entries[slot]!.session.state
        if state != entries[slot]!.reported { report(state, slot: slot) }
        rearm(slot)
    }

    private func report(_ state: ClientConnection.State, slot: Int) {
        entries[slot]!.reported = state
        entries[slot]!.continuation.yield(.stateChanged(state))
    }

    // MARK: Timers

    /// Keeps one task on the loop at the session's next deadline: a deadline earlier than the task's replaces it,
    /// a later one lets it fire, find nothing due and re-arm; none cancels it.
    private func rearm(_ slot: Int) {
        guard entries[slot]!.selfTimed else { return }
        let due = entries[slot]!.session.nextDeadline
        if entries[slot]!.timer != nil {
            if entries[slot]!.timerDue <= due, due != .distantFuture { return }
            entries[slot]!.timer!.cancel()
            entries[slot]!.timer = nil
            entries[slot]!.timerDue = .distantFuture
        }
        guard due != .distantFuture else { return }
        let id = entries[slot]!.id
        entries[slot]!.timerDue = due
        entries[slot]!.timer = loop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            fire(slot: slot, id: id)
        }
    }

    private func fire(slot: Int, id: UInt64) {
        guard isOwned(slot, by: id) else { return }
        entries[slot]!.timer = nil
        entries[slot]!.timerDue = .distantFuture
        let now = NIODeadline.now()
        entries[slot]!.session.tick(now: now, on: loop, into: &actions)
        execute(slot, now: now)
    }

    // MARK: Datagrams and stream events

    /// The slot a socket event belongs to, if that socket is still its session's current one.
    private func slot(datagramToken token: UInt32) -> Int? {
        let slot = Int(token >> 8)
        guard slot < entries.count, let generation = entries[slot]?.session.generation,
            generation & 0xFF == token & 0xFF
        else { return nil }
        return slot
    }

    private func slot(streamToken token: UInt32, generation: UInt32) -> Int? {
        let slot = Int(token)
        guard slot < entries.count, entries[slot]?.session.isCurrent(generation) == true else { return nil }
        return slot
    }

    func datagram(_ bytes: UnsafeRawBufferPointer, token: UInt32, now: NIODeadline) {
        guard let slot = slot(datagramToken: token) else { return }
        entries[slot]!.session.receive(bytes, now: now, into: &actions)
        execute(slot, now: now)
    }

    func datagramError(_ code: Int32, token: UInt32, now: NIODeadline) {
        // ICMP port unreachable on a connected socket (the server is not there yet, or restarted): the handshake
        // keeps trying, and the connection's own timers decide when to give up.
    }

    func streamOpened(_ channel: any Channel, token: UInt32, generation: UInt32, now: NIODeadline) {
        guard let slot = slot(streamToken: token, generation: generation) else { return channel.close(promise: nil) }
        entries[slot]!.session.streamOpened(channel, now: now, into: &actions)
        execute(slot, now: now)
    }

    func streamReceived(_ bytes: ByteBuffer, token: UInt32, generation: UInt32, now: NIODeadline) {
        guard let slot = slot(streamToken: token, generation: generation) else { return }
        bytes.withUnsafeReadableBytes { entries[slot]!.session.receive($0, now: now, into: &actions) }
        execute(slot, now: now)
    }

    func streamFailed(_ text: String, token: UInt32, generation: UInt32, now: NIODeadline) {
        guard let slot = slot(streamToken: token, generation: generation) else { return }
        entries[slot]!.session.transportFailed(text, now: now, into: &actions)
        execute(slot, now: now)
    }
}
