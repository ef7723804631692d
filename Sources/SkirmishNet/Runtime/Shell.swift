import NIOCore
import NIOPosix
import SkirmishWire

/// The one shell of the client runtime: the machines of one ``ClientLoop`` of one kind, their sockets, their emulated
/// links and the heap that wakes them.
///
/// As `ServerLoop` is to the server's core, the shell is thin: it calls a machine with bytes and time, then executes
/// what the machine left in its ``ShellIO`` — writes its packets, opens and closes its socket — and puts it back on
/// the heap at its next wake. Everything the packets mean is the machine's (and its connection's). A swarm's bots and
/// the ``AsyncClientSession``s run on the same shell; a machine type is fixed per shell.
///
/// Every call is specialised to the machine type: the hot path is `@inlinable`, and the loop reaches the shell
/// through closures made in ``init(loop:environment:settings:)`` (``LoopDelegate``), where that type is known — a
/// protocol witness on this generic class would run unspecialised code, with a metadata lookup and value-witness
/// copies on every packet. Machines live inline in one array, apart from the slots' sockets and heap bookkeeping,
/// which never touch the machine type. A socket's epoll tag names its slot and the slot's socket generation, so a
/// datagram or a stream event of a socket the slot has since closed is ignored, and the heap's entries carry a wake
/// generation, so an entry a later reschedule replaced is skipped when it surfaces.
///
/// Confined to its loop; owners reach it with `loop.execute` (`NIOLoopBound`). The loop holds it while registered.
/// Its storage is read and written on every packet, always on that one thread and never re-entered while a machine
/// runs (a machine's calls reach the shell only through its ``ShellIO``), so its exclusivity is not checked at run
/// time: the checks (a thread-local access set per access) measured as several percent of a swarm's CPU.
///
/// Runtime SPI (`@_spi(Runtime) public`), not public API: public so that its `@inlinable` hot path is specialised in
/// the modules that make shells (a `package` declaration's inlinable body is not, which measured as a metadata lookup
/// and copies of the machine on every packet); `@_spi` so that it stays out of the documented surface.
@_spi(Runtime)
public final class Shell<Machine: ShellMachine> {
    package let loop: ClientLoop
    @usableFromInline let datagrams: DatagramIO
    /// What every machine of the shell shares, passed to each call.
    public let environment: Machine.Environment
    @usableFromInline var settings: ShellSettings
    /// This shell's index among the loop's delegates (the top byte of its sockets' tags).
    @usableFromInline var index: UInt8 = 0
    /// The machines, inline, indexed by slot: initialised exactly where ``ShellSlot/occupied`` is set. Raw storage
    /// rather than `[Machine?]`: every access to an optional this size asked its tag through a call, and an array
    /// added a uniqueness and a bounds check, on every packet. Growing moves them, so a machine is never added while
    /// one runs: owners add from the loop's tasks and timers, never from inside a machine's call.
    @exclusivity(unchecked) @usableFromInline var machines: UnsafeMutablePointer<Machine>
    @exclusivity(unchecked) @usableFromInline var capacity: Int
    @exclusivity(unchecked) @usableFromInline var slots: [ShellSlot] = []
    @usableFromInline var freeSlots: [UInt32] = []
    @exclusivity(unchecked) @usableFromInline var queue = WakeQueue(capacity: 1_024)
    @exclusivity(unchecked) @usableFromInline var io = ShellIO<Machine.Connection>()
    @usableFromInline var stopped = false
    @usableFromInline var lastCompaction = Instant.zero
    @usableFromInline var live = 0
    /// Machines alive.
    public var count: Int { live }

    /// A shell on `loop`, not yet registered with it: ``attach()`` registers it, and must be called where the
    /// machine type is concrete. Call on the loop.
    package init(loop: ClientLoop, environment: Machine.Environment, settings: ShellSettings) {
        self.loop = loop
        datagrams = loop.datagrams
        self.environment = environment
        self.settings = settings
        capacity = 16
        machines = .allocate(capacity: capacity)
    }

    deinit {
        for slot in slots.indices where slots[slot].occupied { (machines + slot).deinitialize(count: 1) }
        machines.deallocate()
    }

    /// Room for one more slot: the occupied machines move to storage twice the size.
    @usableFromInline
    func grow() {
        let larger = UnsafeMutablePointer<Machine>.allocate(capacity: capacity * 2)
        for slot in slots.indices where slots[slot].occupied {
            (larger + slot).moveInitialize(from: machines + slot, count: 1)
        }
        machines.deallocate()
        machines = larger
        capacity *= 2
    }

    /// Registers the shell with its loop. Inlined where it is called, so that the closures the loop calls are made
    /// where the machine type is concrete and run code specialised to it.
    @inlinable
    @inline(__always)
    public func attach() {
        index = register(delegate())
    }

    @usableFromInline
    func register(_ delegate: LoopDelegate) -> UInt8 { loop.register(delegate) }

    /// What the loop calls: closures made here, inlined where the shell is made, so that where the machine type is
    /// concrete they are specialised to it. The loop holds the shell through them until ``stop()`` unregisters it
    /// or the loop's thread ends.
    @inlinable
    @inline(__always)
    func delegate() -> LoopDelegate {
        LoopDelegate(
            nextTick: { [self] in nextTick() }, tick: { [self] in tick(now: $0) },
            readable: { [self] in readable(slot: $0, generation: $1, now: $2) },
            streamOpened: { [self] in streamOpened($0, transport: $1, slot: $2, generation: $3, now: $4) },
            streamReceived: { [self] in streamReceived($0, slot: $1, generation: $2, now: $3) },
            streamFailed: { [self] in streamFailed($0, slot: $1, generation: $2, now: $3) })
    }

    /// Where the shell's settings say sockets come from.
    public var currentSettings: ShellSettings { settings }

    // MARK: Owners' calls

    /// Adds `machine` in a free slot and wakes it at its ``ShellMachine/nextWake``; returns the slot.
    @inlinable
    @discardableResult
    public func add(_ machine: Machine, now: Instant) -> UInt32 {
        let slot: UInt32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = UInt32(slots.count)
            if slots.count == capacity { grow() }
            slots.append(ShellSlot())
        }
        (machines + Int(slot)).initialize(to: machine)
        slots[Int(slot)].occupied = true
        live += 1
        if let wake = machines[Int(slot)].nextWake, wake <= now {
            machines[Int(slot)].wake(now: now, environment: environment, io: &io)
            execute(slot, now: now)
        }
        afterActivity(slot, now: now)
        return slot
    }

    /// Calls `body` on the machine in `slot` (if one is there), then executes what it asked for.
    @inlinable
    @discardableResult
    public func update<Result>(
        _ slot: UInt32, now: Instant,
        _ body: (inout Machine, Machine.Environment, inout ShellIO<Machine.Connection>) -> Result
    ) -> Result? {
        guard Int(slot) < slots.count, slots[Int(slot)].occupied else { return nil }
        let result = body(&machines[Int(slot)], environment, &io)
        execute(slot, now: now)
        afterActivity(slot, now: now)
        return result
    }

    /// Reads the machine in `slot`, if one is there.
    @inlinable
    public func read<Result>(_ slot: UInt32, _ body: (Machine) -> Result) -> Result? {
        guard Int(slot) < slots.count, slots[Int(slot)].occupied else { return nil }
        return body(machines[Int(slot)])
    }

    /// Calls `body` on every machine, then executes what each asked for.
    @inlinable
    public func updateAll(
        now: Instant, _ body: (inout Machine, Machine.Environment, inout ShellIO<Machine.Connection>) -> Void
    ) {
        for slot in slots.indices where slots[slot].occupied {
            update(UInt32(slot), now: now, body)
        }
    }

    /// Frees `slot` at once: its socket closes without another word.
    public func remove(_ slot: UInt32, now: Instant) {
        guard Int(slot) < slots.count, slots[Int(slot)].occupied else { return }
        release(slot, now: now)
    }

    /// Closes every socket and forgets every machine and entry; the shell leaves the loop. Call ``updateAll(now:_:)``
    /// first for goodbyes.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        let now = Instant.now()
        for slot in slots.indices where slots[slot].occupied { release(UInt32(slot), now: now) }
        slots.removeAll()
        freeSlots.removeAll()
        queue = WakeQueue()
        loop.unregister(index)
    }

    // MARK: Executing

    /// Writes the packets and runs the socket operations the last call left in ``io``, in order; then tells the
    /// machine about a socket that opened (or could not), which may ask for more.
    @inlinable
    func execute(_ slot: UInt32, now: Instant) {
        // The common case — packets only, no socket operation — in one pass.
        if io.operations.isEmpty {
            if io.actions.packetCount > 0 { write(slot, packets: 0..<io.actions.packetCount, now: now) }
            io.removeAll()
            return
        }
        executeOperations(slot, now: now)
    }

    @usableFromInline
    func executeOperations(_ slot: UInt32, now: Instant) {
        var rounds = 0
        while true {
            var opened = false
            var failure: String?
            var written = 0
            for (after, operation) in io.operations {
                write(slot, packets: written..<after, now: now)
                written = after
                switch operation {
                case .close:
                    closeSocket(slot, now: now)
                    opened = false
                case .open(let request):
                    closeSocket(slot, now: now)
                    switch openSocket(slot, request, now: now) {
                    case .success(let now): opened = now
                    case .failure(let error):
                        opened = false
                        failure = "\(error)"
                    }
                }
            }
            write(slot, packets: written..<io.actions.packetCount, now: now)
            io.removeAll()
            rounds += 1
            guard rounds < 16, slots[Int(slot)].occupied else { return }
            if let failure {
                machines[Int(slot)].transportFailed(failure, now: now, environment: environment, io: &io)
            } else if opened {
                machines[Int(slot)].transportOpened(now: now, environment: environment, io: &io)
            } else {
                return
            }
            if io.operations.isEmpty {
                write(slot, packets: 0..<io.actions.packetCount, now: now)
                io.removeAll()
                return
            }
        }
    }

    @inlinable
    func write(_ slot: UInt32, packets: Range<Int>, now: Instant) {
        for packet in packets {
            io.actions.withPacket(packet) { bytes in
                if slots[Int(slot)].outbound != nil {
                    slots[Int(slot)].outbound!.hold(bytes, now: now)
                } else {
                    put(bytes, on: slots[Int(slot)].socket)
                }
            }
        }
    }

    @inlinable
    func put(_ bytes: UnsafeRawBufferPointer, on socket: ShellSocket) {
        switch socket {
        case .datagram(let fd, _):
            _ = datagrams.send(fd, bytes)
        case .stream(let channel, let transport):
            StreamConnector.write(bytes, to: channel, transport: transport)
        case .none, .opening:
            break
        }
    }

    /// Opens a socket for `slot`: `true` when it is open now (UDP), `false` when a stream connection is under way.
    func openSocket(_ slot: UInt32, _ request: SocketRequest, now: Instant) -> Result<Bool, ClientLoopError> {
        slots[Int(slot)].generation &+= 1
        let generation = slots[Int(slot)].generation
        if request.link.isPerfect {
            slots[Int(slot)].outbound = nil
            slots[Int(slot)].inbound = nil
        } else {
            let ordered = request.target.transport != .udp
            slots[Int(slot)].outbound = ShellLink(
                emulator: LinkEmulator(profile: request.link, seed: request.seed), ordered: ordered)
            slots[Int(slot)].inbound = ShellLink(
                emulator: LinkEmulator(profile: request.link, seed: request.seed ^ 0x5EED_1111), ordered: ordered)
        }
        let target = request.target
        switch target.transport {
        case .udp:
            let address: SocketAddress
            if let known = settings.resolved[target] {
                address = known
            } else {
                do {
                    address = try SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
                } catch {
                    return .failure(.system("cannot resolve \(target.host): \(error)", 0))
                }
                settings.resolved[target] = address
            }
            let tag = SocketTag(delegate: index, slot: slot, generation: generation)
            var lastError = ClientLoopError.system("socket", 0)
            // A pooled port some other program holds is skipped for another (up to 8 tries).
            for _ in 0..<8 {
                let port = settings.localPorts?.take(now: NIODeadline(now))
                do {
                    let fd = try loop.openDatagram(to: address, localPort: port, tag: tag)
                    slots[Int(slot)].socket = .datagram(fd: fd, port: port)
                    return .success(true)
                } catch {
                    lastError = error
                    if let port { settings.localPorts?.giveBack(port, now: NIODeadline(now)) }
                    if port == nil { break }
                }
            }
            return .failure(lastError)
        case .tcp, .webSocket:
            guard let group = settings.streamLoops else {
                return .failure(.system("no event loop for \(target.transport.rawValue) connections", 0))
            }
            slots[Int(slot)].socket = .opening
            StreamConnector.connect(
                target: target, group: group, timeout: .seconds(5),
                link: StreamLink(loop: loop, delegate: index, slot: slot, generation: generation))
            return .success(false)
        }
    }

    func closeSocket(_ slot: UInt32, now: Instant) {
        slots[Int(slot)].generation &+= 1
        // What the emulated link still holds on the way out leaves now: a goodbye written just before the close
        // must reach the server, not vanish with the socket (the server would hold the seat until its timeout).
        if let held = slots[Int(slot)].outbound?.held, !held.isEmpty {
            for packet in held { packet.bytes.withUnsafeBytes { put($0, on: slots[Int(slot)].socket) } }
        }
        switch slots[Int(slot)].socket {
        case .datagram(let fd, let port):
            loop.closeDatagram(fd)
            if let port { settings.localPorts?.giveBack(port, now: NIODeadline(now)) }
        case .stream(let channel, _):
            channel.close(promise: nil)
        case .none, .opening:
            break
        }
        slots[Int(slot)].socket = .none
        // What the link still held belonged to the old socket.
        slots[Int(slot)].outbound?.held.removeAll()
        slots[Int(slot)].inbound?.held.removeAll()
    }

    @usableFromInline
    func release(_ slot: UInt32, now: Instant) {
        closeSocket(slot, now: now)
        (machines + Int(slot)).deinitialize(count: 1)
        slots[Int(slot)].occupied = false
        slots[Int(slot)].outbound = nil
        slots[Int(slot)].inbound = nil
        slots[Int(slot)].wakeGeneration &+= 1
        slots[Int(slot)].scheduled = .max
        freeSlots.append(slot)
        live -= 1
    }

    // MARK: The clock

    /// The earliest slot due; the loop sleeps until then (to the nanosecond: sends are scheduled to the
    /// microsecond, and a coarser clock shows up as lateness).
    @inlinable
    func nextTick() -> UInt64 {
        guard !stopped, let earliest = queue.earliest else { return .max }
        return earliest
    }

    @inlinable
    func tick(now deadline: NIODeadline) {
        let now = Instant(deadline)
        while let entry = queue.popDue(now: now.nanoseconds) {
            let slot = entry.slot
            guard Int(slot) < slots.count, slots[Int(slot)].wakeGeneration == entry.generation,
                slots[Int(slot)].occupied
            else { continue }
            slots[Int(slot)].scheduled = .max
            if slots[Int(slot)].isHolding { runDelayed(slot, now: now) }
            if let wake = machines[Int(slot)].nextWake, wake <= now {
                machines[Int(slot)].wake(now: now, environment: environment, io: &io)
                execute(slot, now: now)
            }
            afterActivity(slot, now: now)
        }
        if now.nanoseconds(since: lastCompaction) >= 1_000_000_000 { compact(now: now) }
    }

    /// Drops stale heap entries when they outnumber the slots by far, so the heap stays bounded.
    @usableFromInline
    func compact(now: Instant) {
        lastCompaction = now
        guard queue.count > 4 * max(slots.count, 256) else { return }
        queue.compact { [slots] entry in
            Int(entry.slot) < slots.count && slots[Int(entry.slot)].wakeGeneration == entry.generation
        }
    }

    /// Delivers and writes what the emulated link held back until now.
    @usableFromInline
    func runDelayed(_ slot: UInt32, now: Instant) {
        while let first = slots[Int(slot)].inbound?.held.first, first.due <= now, slots[Int(slot)].occupied {
            slots[Int(slot)].inbound!.held.removeFirst()
            first.bytes.withUnsafeBytes { bytes in
                machines[Int(slot)].received(bytes, now: now, environment: environment, io: &io)
            }
            execute(slot, now: now)
        }
        while let first = slots[Int(slot)].outbound?.held.first, first.due <= now {
            slots[Int(slot)].outbound!.held.removeFirst()
            first.bytes.withUnsafeBytes { put($0, on: slots[Int(slot)].socket) }
        }
    }

    /// Frees a finished machine's slot, or puts it back on the heap when its next wake moved earlier than its entry
    /// (a later one lets the entry fire, find nothing due and come back here).
    @inlinable
    func afterActivity(_ slot: UInt32, now: Instant) {
        guard slots[Int(slot)].occupied else { return }
        if machines[Int(slot)].isFinished { return release(slot, now: now) }
        var wake = machines[Int(slot)].nextWake?.nanoseconds ?? .max
        if slots[Int(slot)].isHolding { wake = min(wake, slots[Int(slot)].heldDue) }
        guard wake != .max, wake < slots[Int(slot)].scheduled else { return }
        slots[Int(slot)].wakeGeneration &+= 1
        slots[Int(slot)].scheduled = wake
        queue.push(.init(due: wake, slot: slot, generation: slots[Int(slot)].wakeGeneration))
    }

    // MARK: Socket events

    /// Whether `slot` holds a machine and its socket is still the one of `generation`.
    @inlinable
    func current(_ slot: UInt32, _ generation: UInt32) -> Bool {
        Int(slot) < slots.count && slots[Int(slot)].generation == generation && slots[Int(slot)].occupied
    }

    @inlinable
    func readable(slot: UInt32, generation: UInt32, now deadline: NIODeadline) {
        guard current(slot, generation), case .datagram(let fd, _) = slots[Int(slot)].socket else { return }
        let now = Instant(deadline)
        // Nothing read: nothing there, or an ICMP error for an earlier datagram (port unreachable: the server is not
        // there yet, or restarted) — the connection's own timers decide when to give up.
        guard let bytes = datagrams.receive(fd) else { return }
        deliver(bytes, to: slot, now: now)
        afterActivity(slot, now: now)
    }

    /// Hands what a socket read to the slot's machine, or to its emulated link when it has one.
    @inlinable
    func deliver(_ bytes: UnsafeRawBufferPointer, to slot: UInt32, now: Instant) {
        if slots[Int(slot)].inbound != nil {
            slots[Int(slot)].inbound!.hold(bytes, now: now)
        } else {
            machines[Int(slot)].received(bytes, now: now, environment: environment, io: &io)
            execute(slot, now: now)
        }
    }

    @inlinable
    func streamOpened(_ channel: any Channel, transport: Transport, slot: UInt32, generation: UInt32, now: Instant) {
        guard current(slot, generation) else { return channel.close(promise: nil) }
        slots[Int(slot)].socket = .stream(channel, transport)
        machines[Int(slot)].transportOpened(now: now, environment: environment, io: &io)
        execute(slot, now: now)
        afterActivity(slot, now: now)
    }

    @inlinable
    func streamReceived(_ bytes: ByteBuffer, slot: UInt32, generation: UInt32, now: Instant) {
        guard current(slot, generation) else { return }
        bytes.withUnsafeReadableBytes { deliver($0, to: slot, now: now) }
        afterActivity(slot, now: now)
    }

    @inlinable
    func streamFailed(_ reason: String, slot: UInt32, generation: UInt32, now: Instant) {
        guard current(slot, generation) else { return }
        slots[Int(slot)].socket = .none
        machines[Int(slot)].transportFailed(reason, now: now, environment: environment, io: &io)
        execute(slot, now: now)
        afterActivity(slot, now: now)
    }
}

/// Where a ``Shell``'s sockets come from, the same for every slot.
@_spi(Runtime)
public struct ShellSettings: Sendable {
    /// Every UDP socket's local port, so no bot inherits the tail of another's stream (see ``LocalPortPool``).
    package var localPorts: LocalPortPool?
    /// The NIO loops that carry TCP and WebSocket channels.
    public var streamLoops: (any EventLoopGroup)?
    /// Targets resolved off the loop; a target missing here is resolved on first use and remembered.
    public var resolved: [Target: SocketAddress] = [:]

    package init(localPorts: LocalPortPool? = .shared, streamLoops: (any EventLoopGroup)? = nil) {
        self.localPorts = localPorts
        self.streamLoops = streamLoops
    }
}

/// One slot's socket.
@usableFromInline
enum ShellSocket {
    case none
    case datagram(fd: Int32, port: Int?)
    case opening
    case stream(any Channel, Transport)
}

/// A packet the emulated link holds until `due`.
@usableFromInline
struct ShellDelayed {
    @usableFromInline var due: Instant
    @usableFromInline var bytes: [UInt8]
}

/// One direction's emulation and the packets it holds, earliest first (bounded by the link's rate times its delay).
@usableFromInline
struct ShellLink {
    @usableFromInline var emulator: LinkEmulator
    /// A stream's bytes are delayed but never lost, duplicated or reordered: TCP delivers them all, in order, and a
    /// loss shows only as a later arrival.
    @usableFromInline var ordered: Bool
    @usableFromInline var held: [ShellDelayed] = []

    init(emulator: LinkEmulator, ordered: Bool) {
        self.emulator = emulator
        self.ordered = ordered
    }

    @usableFromInline
    mutating func hold(_ bytes: UnsafeRawBufferPointer, now: Instant) {
        let fate = emulator.fate()
        if ordered {
            var due = now.advanced(byNanoseconds: (fate.first ?? emulator.delay()).nanoseconds)
            if let last = held.last, last.due > due { due = last.due }
            held.append(ShellDelayed(due: due, bytes: Array(bytes)))
            return
        }
        for delay in [fate.first, fate.second] {
            guard let delay else { continue }
            let packet = ShellDelayed(due: now.advanced(byNanoseconds: delay.nanoseconds), bytes: Array(bytes))
            var index = held.count
            while index > 0, held[index - 1].due > packet.due { index -= 1 }
            held.insert(packet, at: index)
        }
    }
}

/// A slot's socket and heap bookkeeping, apart from its machine so that reading them never touches the machine type.
@usableFromInline
struct ShellSlot {
    /// Whether a machine lives in the slot: checked here rather than on the machine's optional, whose comparison
    /// with `nil` copied the whole machine.
    @usableFromInline var occupied = false
    @usableFromInline var socket = ShellSocket.none
    /// Counts sockets: an event of an earlier one is ignored.
    @usableFromInline var generation: UInt32 = 0
    /// Counts heap entries: an entry with another number is stale.
    @usableFromInline var wakeGeneration: UInt32 = 0
    /// When the live heap entry is due (`UInt64.max`: none).
    @usableFromInline var scheduled = UInt64.max
    @usableFromInline var outbound: ShellLink?
    @usableFromInline var inbound: ShellLink?

    @usableFromInline
    init() {}

    /// Whether the emulated link holds packets either way.
    @inlinable
    var isHolding: Bool {
        (inbound.map { !$0.held.isEmpty } ?? false) || (outbound.map { !$0.held.isEmpty } ?? false)
    }

    /// When the first packet the link holds is due (`UInt64.max`: none).
    @inlinable
    var heldDue: UInt64 {
        min(inbound?.held.first?.due.nanoseconds ?? .max, outbound?.held.first?.due.nanoseconds ?? .max)
    }
}
