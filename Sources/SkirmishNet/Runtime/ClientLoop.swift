import CClientIO
import Dispatch
import NIOCore
import SkirmishWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One client I/O thread: an `EventLoop` that owns its bots' UDP sockets and drives them with epoll.
///
/// SwiftNIO gives each socket a channel, a pipeline and a buffer allocator; that is what a server wants, but a swarm
/// holds one socket per bot and ten thousand bots per core, and NIO's per-channel machinery (retains, the pipeline,
/// the pending-writes manager) costs more than the `sendto` it wraps. This loop does what a hand-written C client
/// does instead: non-blocking connected UDP sockets in one level-triggered epoll set, one `recv` into a fixed buffer
/// per ready socket, one `send` per packet from a fixed buffer — nothing allocated, retained or locked per packet.
///
/// It is also a full `EventLoop` (tasks, timers, futures), so everything else a bot does — its wake clock, a
/// controller's `submit`, TCP and WebSocket sessions whose channels live on NIO loops and hop here — uses the
/// ordinary NIO API.
///
/// Thread safety: the state marked loop-confined is touched only on the loop's thread; `execute`, `scheduleTask`
/// and shutdown from other threads go through `shared` (a mutex) and wake the loop with an eventfd.
package final class ClientLoop: EventLoop, @unchecked Sendable {
    // @unchecked: every stored `var` below is either loop-confined (read and written only on `thread`, which is
    // fixed before any task runs) or inside `shared`, a Mutex.

    /// The shells whose sockets this loop owns, by the index in their sockets' epoll tags. Loop-confined; the loop
    /// holds them strongly until its thread ends (they hold the loop too: that cycle is broken at the end).
    /// Unchecked exclusivity (as the shells' storage): read on every event, only on the loop's thread, and never
    /// mutated while a delegate runs except by appending or clearing a slot of another index.
    @exclusivity(unchecked) private var delegates: [LoopDelegate?] = []
    /// The same delegates, unretained, for the calls on every event: the strong references above keep them alive, so
    /// a call borrows its delegate instead of retaining and releasing it (and its closures) per event.
    @exclusivity(unchecked) private var calls: [Unmanaged<LoopDelegate>?] = []
    /// Delegates unregistered during this round of the loop, released at the start of the next.
    private var unregistered: [LoopDelegate] = []
    /// The shell of the ``AsyncClientSession``s on this loop, made on first use. Loop-confined; released when the
    /// thread ends.
    package var sessionShell: AnyObject?

    private struct Shared {
        var tasks: [@Sendable () -> Void] = []
        var stopping = false
        var woken = false
        /// The thread has ended: nothing queued now would ever run.
        var ended = false
    }

    private struct Timer {
        var due: UInt64
        var sequence: UInt64
        var task: () -> Void
        /// Fails the timer's promise when the loop stops before it is due.
        var abandon: () -> Void
    }

    private let shared = Mutex(Shared())
    private let epollFD: Int32
    private let eventFD: Int32
    private let name: String
    private var threadID = pthread_t()
    private var started = false
    /// The loop thread's kernel id (its entry in /proc/self/task), set before the initialiser returns.
    package private(set) var kernelThreadID: Int32 = 0
    // Loop-confined.
    private var timers: [Timer] = []
    private var cancelled: Set<UInt64> = []
    private var sequence: UInt64 = 0
    private var running: [@Sendable () -> Void] = []
    private let events: UnsafeMutablePointer<skirmish_ready>
    private let eventCapacity = 256
    /// One datagram read at a time into this buffer, one byte over the largest legal datagram (so an oversized one
    /// is seen as such).
    package let receiveBuffer: UnsafeMutableRawBufferPointer
    /// One packet encoded at a time into this buffer before `send`.
    package let sendBuffer: UnsafeMutableRawBufferPointer
    private let finished = Mutex(false)
    private let finishedSemaphore = Semaphore()

    /// Creates the loop and starts its thread.
    package init(name: String = "skirmish-client") throws {
        self.name = name
        epollFD = skirmish_epoll_create()
        guard epollFD >= 0 else { throw ClientLoopError.system("epoll_create1", -epollFD) }
        eventFD = skirmish_eventfd()
        guard eventFD >= 0 else {
            Glibc.close(epollFD)
            throw ClientLoopError.system("eventfd", -eventFD)
        }
        _ = skirmish_epoll_add(epollFD, eventFD, UInt64.max)
        events = .allocate(capacity: eventCapacity)
        receiveBuffer = .allocate(byteCount: 65_536, alignment: 16)
        sendBuffer = .allocate(byteCount: 65_536 + 16, alignment: 16)
        timers.reserveCapacity(256)
        let ready = Semaphore()
        let box = Unmanaged.passRetained(StartBox(loop: self, ready: ready))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<StartBox>.fromOpaque(raw!).takeRetainedValue()
                box.loop.threadID = pthread_self()
                // Named for `top -H`, `perf` and /proc (the kernel keeps 15 bytes).
                skirmish_name_current_thread(box.loop.name)
                box.loop.kernelThreadID = skirmish_current_thread_id()
                box.loop.started = true
                box.ready.signal()
                box.loop.run()
                return nil
            }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw ClientLoopError.system("pthread_create", result)
        }
        pthread_detach(thread)
        ready.wait()
    }

    deinit {
        events.deallocate()
        receiveBuffer.deallocate()
        sendBuffer.deallocate()
        Glibc.close(epollFD)
        Glibc.close(eventFD)
    }

    // MARK: EventLoop

    /// On the loop's thread — or any thread once that thread has ended: a stopped loop has no owner left, so whoever
    /// completes its last futures (a task that fails a promise, a caller awaiting one) does so in its place.
    package var inEventLoop: Bool {
        started && (pthread_equal(pthread_self(), threadID) != 0 || ended.load(ordering: .acquiring))
    }

    private let ended = Atomic<Bool>(false)

    package func execute(_ task: @escaping @Sendable () -> Void) {
        let wake = shared.withLock { state -> Bool? in
            guard !state.ended else { return nil }
            state.tasks.append(task)
            defer { state.woken = true }
            return !state.woken
        }
        switch wake {
        case nil:
            // The loop's thread has ended, so nothing else can touch its state: run the task here. (NIO resolves a
            // promise on its loop through `execute`; dropping the task would leave a future pending forever.)
            task()
        case true?:
            signal()
        case false?:
            break
        }
    }

    package var now: NIODeadline { .now() }

    @discardableResult
    package func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise = makePromise(of: T.self)
        guard !hasEnded else {
            promise.fail(EventLoopError.shutdown)
            return Scheduled(promise: promise) {}
        }
        let identity = ScheduledIdentity()
        let schedule: @Sendable () -> Void = { [self] in
            // Cancelled before it reached the loop: never pushed.
            guard identity.state == .waiting else { return }
            sequence &+= 1
            identity.state = .pushed(sequence)
            push(
                Timer(
                    due: deadline.uptimeNanoseconds, sequence: sequence,
                    task: {
                        identity.state = .done
                        // On the loop: the promise is completed in its isolation, so `T` need not be Sendable.
                        do { promise.assumeIsolated().succeed(try task()) } catch { promise.fail(error) }
                    },
                    abandon: {
                        identity.state = .done
                        promise.fail(EventLoopError.shutdown)
                    }))
        }
        if inEventLoop { schedule() } else { execute(schedule) }
        return Scheduled(promise: promise) { [self] in
            let cancel: @Sendable () -> Void = { [self] in
                switch identity.state {
                case .waiting:
                    identity.state = .done
                case .pushed(let sequence):
                    identity.state = .done
                    cancelled.insert(sequence)
                case .done:
                    // Fired, cancelled or abandoned already: nothing to remember.
                    return
                }
                promise.fail(EventLoopError.cancelled)
            }
            if inEventLoop { cancel() } else { execute(cancel) }
        }
    }

    package func submit<T>(_ task: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        guard !hasEnded else { return makeFailedFuture(EventLoopError.shutdown) }
        let promise = makePromise(of: T.self)
        execute {
            do { promise.assumeIsolated().succeed(try task()) } catch { promise.fail(error) }
        }
        return promise.futureResult
    }

    /// Whether the loop's thread has ended (after ``stop()``).
    private var hasEnded: Bool { ended.load(ordering: .acquiring) }

    @discardableResult
    package func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: .now() + delay, task)
    }

    package func preconditionInEventLoop(file: StaticString, line: UInt) {
        precondition(inEventLoop, "not on \(name)", file: file, line: line)
    }

    package func preconditionNotInEventLoop(file: StaticString, line: UInt) {
        precondition(!inEventLoop, "on \(name)", file: file, line: line)
    }

    package func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
        stop()
        queue.async { callback(nil) }
    }

    /// Stops the thread after the tasks already queued; returns once it has stopped (called on the loop itself, it
    /// only asks: the thread ends when the current task returns).
    package func stop() {
        let own = inEventLoop
        let already = shared.withLock { state -> Bool in
            defer { state.stopping = true }
            return state.stopping
        }
        signal()
        if !already, !own { finishedSemaphore.wait() }
    }

    /// Pins the loop's thread to CPU `core`, for benchmarks that keep the client side off the server's core. Call
    /// on the loop.
    package func pinThread(toCore core: Int) throws(ClientLoopError) {
        preconditionInEventLoop()
        let result = skirmish_pin_current_thread(Int32(core))
        guard result == 0 else { throw .system("sched_setaffinity", -result) }
    }

    // MARK: Delegates and sockets

    /// Registers a delegate and returns its index (the top byte of its sockets' tags). Call on the loop.
    package func register(_ delegate: LoopDelegate) -> UInt8 {
        preconditionInEventLoop()
        if let free = delegates.firstIndex(where: { $0 == nil }) {
            delegates[free] = delegate
            calls[free] = Unmanaged.passUnretained(delegate)
            return UInt8(free)
        }
        precondition(delegates.count < 256, "more than 256 shells on one client loop")
        delegates.append(delegate)
        calls.append(Unmanaged.passUnretained(delegate))
        return UInt8(delegates.count - 1)
    }

    /// Forgets a delegate registered with ``register(_:)``; its sockets must be closed already. Call on the loop.
    package func unregister(_ index: UInt8) {
        preconditionInEventLoop()
        guard Int(index) < delegates.count else { return }
        calls[Int(index)] = nil
        // Kept alive until the loop's next round: the delegate may be the one whose call is running now.
        if let delegate = delegates[Int(index)] { unregistered.append(delegate) }
        delegates[Int(index)] = nil
    }

    /// The delegate registered at `index`, if it still is. Call on the loop.
    package func delegate(at index: UInt8) -> LoopDelegate? {
        Int(index) < delegates.count ? delegates[Int(index)] : nil
    }

    /// Opens a non-blocking UDP socket connected to `remote` (bound to `localPort` first when given) and adds it to
    /// this loop's epoll set; its readiness reaches the delegate its `tag` names. Call on the loop.
    package func openDatagram(to remote: SocketAddress, localPort: Int?, tag: SocketTag) throws(ClientLoopError)
        -> Int32
    {
        let family = remote.protocol == .inet6 ? AF_INET6 : AF_INET
        let fd = remote.withSockAddr { address, length in
            skirmish_udp_open(family, address, socklen_t(length), Int32(localPort ?? 0))
        }
        guard fd >= 0 else { throw .system(localPort == nil ? "connect" : "bind or connect", -fd) }
        let added = skirmish_epoll_add(epollFD, fd, tag.rawValue)
        guard added == 0 else {
            Glibc.close(fd)
            throw .system("epoll_ctl", -added)
        }
        return fd
    }

    /// Closes a socket from ``openDatagram(to:localPort:tag:)`` (the kernel drops it from the epoll set).
    package func closeDatagram(_ fd: Int32) {
        Glibc.close(fd)
    }

    /// What a shell's inlined hot path needs of the loop: its receive buffer and the two system calls.
    package var datagrams: DatagramIO { DatagramIO(receiveBuffer: receiveBuffer) }

    /// Sends `bytes` on `fd` as one datagram; false when the kernel refused (a full socket buffer, or an ICMP error
    /// from an earlier datagram), which UDP treats as loss.
    @inline(__always)
    package func sendDatagram(_ fd: Int32, bytes: UnsafeRawBufferPointer) -> Bool {
        send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT)) == bytes.count
    }

    /// Reads one datagram from `fd` into ``receiveBuffer``: its length, `nil` when there is none (`EAGAIN`), or the
    /// error code.
    @inline(__always)
    package func receiveDatagram(_ fd: Int32) -> Result<Int, ClientLoopError>? {
        let received = recv(fd, receiveBuffer.baseAddress, receiveBuffer.count, Int32(MSG_DONTWAIT))
        if received >= 0 { return .success(received) }
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return nil }
        return .failure(.system("recv", code))
    }

    // MARK: The loop

    private func signal() {
        skirmish_eventfd_signal(eventFD)
    }

    private func run() {
        defer {
            calls.removeAll()
            delegates.removeAll()
            unregistered.removeAll()
            sessionShell = nil
            finished.withLock { $0 = true }
            finishedSemaphore.signal()
        }
        while true {
            if !unregistered.isEmpty { unregistered.removeAll() }
            runDueTimers()
            tickDue(now: NIODeadline.now())
            let stopping = shared.withLock { state -> Bool in
                swap(&running, &state.tasks)
                state.woken = false
                return state.stopping
            }
            for task in running { task() }
            running.removeAll(keepingCapacity: true)
            if stopping {
                // Tasks queued while stopping still run once.
                let late = shared.withLock { state -> [@Sendable () -> Void] in
                    defer { state.tasks.removeAll() }
                    return state.tasks
                }
                for task in late { task() }
                // What was still scheduled fails instead of waiting forever, and nothing queued later is kept.
                shared.withLock { $0.ended = true }
                ended.store(true, ordering: .releasing)
                for timer in timers { timer.abandon() }
                timers.removeAll()
                cancelled.removeAll()
                let stranded = shared.withLock { state -> [@Sendable () -> Void] in
                    defer { state.tasks.removeAll() }
                    return state.tasks
                }
                for task in stranded { task() }
                return
            }
            wait()
        }
    }

    private func wait() {
        var timeout: Int64 = 1_000_000_000
        let pendingTasks = shared.withLock { !$0.tasks.isEmpty || $0.stopping }
        if pendingTasks {
            timeout = 0
        } else {
            var due = timers.first?.due ?? .max
            for index in calls.indices {
                guard let delegate = calls[index] else { continue }
                due = min(due, delegate._withUnsafeGuaranteedRef { $0.nextTick() })
            }
            if due != .max {
                let now = NIODeadline.now().uptimeNanoseconds
                timeout = due > now ? Int64(min(due - now, 1_000_000_000)) : 0
            }
        }
        let count = skirmish_epoll_wait(epollFD, events, Int32(eventCapacity), timeout)
        guard count > 0 else { return }
        var now = NIODeadline.now()
        for index in 0..<Int(count) {
            // A full batch of reads (a server's snapshot burst) takes a millisecond or more: every few sockets the
            // clock is read again, so machines see the time they run at, and shells whose sends are due go first,
            // so a send is never late by a whole batch.
            if index > 0, index % Self.readsBetweenTicks == 0 {
                now = NIODeadline.now()
                tickDue(now: now)
            }
            let tag = events[index].tag
            if tag == UInt64.max {
                skirmish_eventfd_clear(eventFD)
                continue
            }
            let socket = SocketTag(rawValue: tag)
            if Int(socket.delegate) < calls.count, let delegate = calls[Int(socket.delegate)] {
                delegate._withUnsafeGuaranteedRef { $0.readable(socket.slot, socket.generation, now) }
            }
        }
    }

    /// How many ready sockets the loop reads before it looks at the clock and the shells' due sends again: a few
    /// microseconds each, so sends wait at most some tens of microseconds behind a burst of reads.
    private static let readsBetweenTicks = 16

    /// Ticks every shell whose next wake is due by `now`.
    @inline(__always)
    private func tickDue(now: NIODeadline) {
        for index in calls.indices {
            guard let delegate = calls[index] else { continue }
            delegate._withUnsafeGuaranteedRef { delegate in
                if delegate.nextTick() <= now.uptimeNanoseconds { delegate.tick(now) }
            }
        }
    }

    private func runDueTimers() {
        let now = NIODeadline.now().uptimeNanoseconds
        while let first = timers.first, first.due <= now {
            let timer = popTimer()
            if cancelled.remove(timer.sequence) != nil { continue }
            timer.task()
        }
    }

    private func push(_ timer: Timer) {
        timers.append(timer)
        var child = timers.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.earlier(timers[child], timers[parent]) else { break }
            timers.swapAt(child, parent)
            child = parent
        }
    }

    private func popTimer() -> Timer {
        let first = timers[0]
        let last = timers.removeLast()
        guard !timers.isEmpty else { return first }
        timers[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < timers.count else { break }
            var smallest = left
            if left + 1 < timers.count, Self.earlier(timers[left + 1], timers[left]) { smallest = left + 1 }
            guard Self.earlier(timers[smallest], timers[parent]) else { break }
            timers.swapAt(smallest, parent)
            parent = smallest
        }
        return first
    }

    private static func earlier(_ first: Timer, _ second: Timer) -> Bool {
        first.due != second.due ? first.due < second.due : first.sequence < second.sequence
    }

    // MARK: EventLoopGroup

    package func next() -> any EventLoop { self }

    package func any() -> any EventLoop { self }

    package func makeIterator() -> EventLoopIterator { EventLoopIterator([self]) }

    package func syncShutdownGracefully() throws { stop() }
}

/// What a ``ClientLoop`` calls on one of its shells, which owns some of its sockets and a clock of its own.
///
/// Closures, not a protocol: a shell makes them where its machine type is known, so every call runs code specialised
/// to that type. A protocol's witness on a generic class would run the unspecialised code, with a metadata lookup and
/// value-witness copies per packet. Called on the loop.
///
/// A class of constants: the loop calls it through an unretained reference, and a constant closure of a borrowed
/// object is called without retaining its context.
@usableFromInline
package final class LoopDelegate {
    /// When the shell next wants `tick`, in `NIODeadline` nanoseconds (`UInt64.max`: not until a socket or a task
    /// changes that). Asked before every sleep, so it must be cheap.
    package let nextTick: () -> UInt64
    /// Called at or after `nextTick`, with no task or timer allocated per tick.
    package let tick: (NIODeadline) -> Void
    /// The socket tagged with this slot and generation is readable.
    package let readable: (_ slot: UInt32, _ generation: UInt32, _ now: NIODeadline) -> Void
    /// The stream channel for a slot is connected (for WebSocket: upgraded).
    package let streamOpened: (any Channel, Transport, _ slot: UInt32, _ generation: UInt32, Instant) -> Void
    /// Bytes a slot's stream channel read: a run of TCP bytes, or one WebSocket binary message.
    package let streamReceived: (ByteBuffer, _ slot: UInt32, _ generation: UInt32, Instant) -> Void
    /// A slot's stream channel failed or closed; the text says why.
    package let streamFailed: (String, _ slot: UInt32, _ generation: UInt32, Instant) -> Void

    @usableFromInline
    package init(
        nextTick: @escaping () -> UInt64, tick: @escaping (NIODeadline) -> Void,
        readable: @escaping (UInt32, UInt32, NIODeadline) -> Void,
        streamOpened: @escaping (any Channel, Transport, UInt32, UInt32, Instant) -> Void,
        streamReceived: @escaping (ByteBuffer, UInt32, UInt32, Instant) -> Void,
        streamFailed: @escaping (String, UInt32, UInt32, Instant) -> Void
    ) {
        self.nextTick = nextTick
        self.tick = tick
        self.readable = readable
        self.streamOpened = streamOpened
        self.streamReceived = streamReceived
        self.streamFailed = streamFailed
    }
}

extension LoopDelegate {
    /// A delegate with a clock and no sockets: `tick` at or after each `nextTick` (a plan's controller, say).
    package static func timer(nextTick: @escaping () -> UInt64, tick: @escaping (NIODeadline) -> Void) -> LoopDelegate {
        LoopDelegate(
            nextTick: nextTick, tick: tick, readable: { _, _, _ in },
            streamOpened: { channel, _, _, _, _ in
                channel.close(promise: nil)
            }, streamReceived: { _, _, _, _ in }, streamFailed: { _, _, _, _ in })
    }
}

/// A loop's datagram system calls and receive buffer, for code inlined where a shell's machine type is concrete (see
/// ``Shell``): plain calls on the loop's fixed buffer, no reference to the loop itself.
@usableFromInline
package struct DatagramIO: @unchecked Sendable {
    // @unchecked: the buffer belongs to the loop and is only touched on the loop's thread, as every shell is.
    @usableFromInline let receiveBuffer: UnsafeMutableRawBufferPointer

    @usableFromInline
    init(receiveBuffer: UnsafeMutableRawBufferPointer) { self.receiveBuffer = receiveBuffer }

    /// Sends `bytes` on `fd` as one datagram; false when the kernel refused (a full buffer, an ICMP error).
    @inlinable
    func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT)) == bytes.count
    }

    /// Reads one datagram from `fd` into the buffer: its bytes, or `nil` when there is none or the read failed (an
    /// ICMP error for an earlier datagram, which UDP treats as loss).
    @inlinable
    func receive(_ fd: Int32) -> UnsafeRawBufferPointer? {
        let received = Glibc.recv(fd, receiveBuffer.baseAddress, receiveBuffer.count, Int32(MSG_DONTWAIT))
        guard received >= 0 else { return nil }
        return UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<received])
    }
}

/// What a socket's epoll entry carries: the index of the delegate that owns it, its slot there and the slot's socket
/// generation (so that an event of a socket closed earlier in the same batch is recognised and ignored).
package struct SocketTag: Sendable, Hashable {
    package var rawValue: UInt64

    package init(rawValue: UInt64) { self.rawValue = rawValue }

    package init(delegate: UInt8, slot: UInt32, generation: UInt32) {
        precondition(slot < 1 << 24, "a shell holds at most 16,777,216 slots")
        rawValue = UInt64(delegate) << 56 | UInt64(slot) << 32 | UInt64(generation)
    }

    package var delegate: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 56) }
    package var slot: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) & 0xFF_FFFF }
    package var generation: UInt32 { UInt32(truncatingIfNeeded: rawValue) }
}

/// A system call a ``ClientLoop`` made failed.
package enum ClientLoopError: Error, Sendable, Hashable, CustomStringConvertible {
    case system(String, Int32)

    package var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        }
    }
}

private final class StartBox {
    let loop: ClientLoop
    let ready: Semaphore
    init(loop: ClientLoop, ready: Semaphore) {
        self.loop = loop
        self.ready = ready
    }
}

/// The sequence number a scheduled task got on the loop (0 until it is pushed); touched only on the loop.
private final class ScheduledIdentity: @unchecked Sendable {
    // @unchecked: written and read only on the owning ClientLoop's thread (the push, the firing and the cancel all
    // run there).
    enum State: Equatable {
        /// Not on the loop's heap yet (scheduled from another thread).
        case waiting
        /// On the heap under this sequence number.
        case pushed(UInt64)
        /// Fired, cancelled or abandoned.
        case done
    }

    var state = State.waiting
}

/// A counting semaphore over a POSIX one.
final class Semaphore: @unchecked Sendable {
    // @unchecked: sem_t is designed for use from any thread.
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    init() { sem_init(semaphore, 0, 0) }
    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }
    func signal() { sem_post(semaphore) }
    func wait() { while sem_wait(semaphore) != 0, errno == EINTR {} }
}
