import NIOConcurrencyHelpers
import SkirmishNet
import SkirmishWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The Puck load for `skirmish bench server`: thousands of UDP clients driven by one thread in batches of datagrams,
/// so that the server — not the client library — is what runs out of time.
///
/// Every client is a ``SnapConnection``, the SNAP plug-in the swarm's bots run, driven through its allocation-free
/// entry points with one reused ``ClientActions``: the cookie handshake, the acks (with their bitfield), the session
/// trailer and the answers to the server's Pings are the plug-in's, so the server is measured against the protocol
/// as a real client speaks it, not against a second implementation of it. The generator owns only what is around the
/// connections. Each sends a `PaddleState` at the input rate, spread evenly over each input period (client j of n at
/// j/n of it), and is ticked at that slot when its own timers are due. Paddles sweep their own half (y 360–440 in
/// their own frame) and never reach the resting puck, so every match keeps running for the whole step. Snapshot
/// arrival times are the kernel's (`SO_TIMESTAMPNS`), so how often this thread polls does not change the measured
/// snapshot age.
///
/// All clients share one UDP socket, each with its own loopback source address (client i is 127.64.0.0 + i + 1, set
/// per datagram with `IP_PKTINFO`; the destination address of a reply, also from `IP_PKTINFO`, says whose it is), so
/// that a millisecond's sends go out with one `sendmmsg` and its replies come in with one `recvmmsg` — with a socket per
/// client, the system calls alone held one core at 2,000 clients. The socket is bound to the wildcard address, which
/// the replies to 127.64/16 need (connecting it would pin its local address to 127.0.0.1), tied to the loopback
/// interface where the kernel allows it (`SO_BINDTODEVICE`), and keeps only datagrams from the server's address.
/// Once every connection and the batches have their working storage, nothing is allocated per packet; the report says
/// how many allocations the recording window took (``Report/allocations``).
package final class LoadGenerator {
    /// Shared with the controlling task; the generator takes the lock about once a millisecond.
    package struct Control: Sendable {
        /// Set by the controller: record snapshot samples from now on (warm-up samples are kept apart).
        package var recording = false
        /// Set by the controller: send Disconnect, close every socket and return.
        package var stop = false
        /// Written by the generator: clients the server seated (including any it later disconnected), and those
        /// whose handshake ended without a seat.
        package var welcomed = 0
        package var failed = 0

        package init() {}
    }

    /// One snapshot's arrival.
    package struct Sample: Sendable, Equatable {
        package var client: UInt32
        package var tick: UInt32
        /// Arrival, kernel timestamp converted to this process's monotonic clock (`NIODeadline` uptime).
        package var arrival: Int64
        package var inWindow: Bool

        package init(client: UInt32, tick: UInt32, arrival: Int64, inWindow: Bool) {
            self.client = client
            self.tick = tick
            self.arrival = arrival
            self.inWindow = inWindow
        }
    }

    package struct Report: Sendable {
        package var samples: [Sample] = []
        /// Inputs sent while recording, and how late against their fixed schedule (10 µs buckets).
        package var inputsSent = 0
        /// Inputs the kernel accepted over the whole step (warm-up included), to set against what the server decoded.
        package var inputsAccepted = 0
        package var sendLateness = [Int](repeating: 0, count: 20_001)
        package var sendDrops = 0
        package var snapshotsInWindow = 0
        package var windowNanoseconds: Int64 = 0
        package var cpuNanoseconds: Int64 = 0
        /// Datagrams sent and received while recording, and the heap allocations this thread made meanwhile (0 unless
        /// the generator was given an allocation counter).
        package var packetsInWindow = 0
        package var allocations: UInt64 = 0
        /// Connections that ended before the step did: refused, timed out, or disconnected by the server.
        package var closed = 0
        package var overloaded = false
        package var error: String?

        package init() {}

        /// A percentile of the send lateness in milliseconds.
        package func latenessMilliseconds(_ fraction: Double) -> Double {
            let total = sendLateness.reduce(0, +)
            guard total > 0 else { return 0 }
            var seen = 0
            for (bucket, count) in sendLateness.enumerated() {
                seen += count
                if Double(seen) >= fraction * Double(total) { return Double(bucket) * 0.01 }
            }
            return 200
        }

        /// Heap allocations per datagram sent or received while recording.
        package var allocationsPerPacket: Double { Double(allocations) / Double(max(packetsInWindow, 1)) }
    }

    private let port: UInt16
    private let clientCount: Int
    private let inputPeriod: Int64
    private let control: NIOLockedValueBox<Control>
    private let threadAllocations: @Sendable () -> UInt64

    /// - Parameter threadAllocations: the calling thread's allocation count (``BenchEnvironment/threadAllocations``),
    ///   read when recording starts and stops.
    package init(
        serverPort: Int, clients: Int, inputRate: Int, control: NIOLockedValueBox<Control>,
        threadAllocations: @escaping @Sendable () -> UInt64 = { 0 }
    ) {
        port = UInt16(serverPort)
        clientCount = clients
        inputPeriod = 1_000_000_000 / Int64(inputRate)
        self.control = control
        self.threadAllocations = threadAllocations
    }

    package static func monotonic() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    private static func realtime() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// A reading of ``monotonic()`` as the connections take time (the same clock).
    private static func instant(_ monotonic: Int64) -> Instant { Instant(nanoseconds: UInt64(monotonic)) }

    /// Runs until the controller sets `stop`; blocks the calling thread.
    package func run() -> Report {
        var crowd: Crowd
        do {
            crowd = try Crowd(port: port, clients: clientCount)
        } catch {
            var report = Report()
            report.error = "\(error)"
            return report
        }
        let count = crowd.connections.count
        var started = 0
        let start = Self.monotonic()
        var roundStart: Int64 = 0
        var cursor = 0
        var playing = false
        var nextPoll: Int64 = 0
        var nextControl: Int64 = 0
        var nextSweep: Int64 = 0
        var windowStart: Int64 = 0
        var cpuStart: Int64 = 0
        var allocationsStart: UInt64 = 0
        while true {
            var now = Self.monotonic()
            // Connections start (send their first Hello) at 50 per millisecond, so a burst of thousands does not
            // overflow the server's socket.
            while started < count, Int64(started) * 20_000 <= now - start {
                crowd.start(started, now: now)
                started += 1
            }
            if !playing, now >= nextSweep {
                // Until play starts, a sweep runs the connections' timers: Hello resends, and keep-alives for those
                // seated early. Once it starts, each connection is ticked at its input slot instead.
                for index in 0..<started { crowd.tickIfDue(index, now: now) }
                nextSweep = now + 10_000_000
            }
            if playing {
                while true {
                    let due = roundStart + Int64(cursor) * inputPeriod / Int64(count)
                    guard due <= now else { break }
                    let late = now - due
                    if late > 200_000_000 {
                        // More than 200 ms behind: this thread cannot keep up; restart the schedule from now.
                        crowd.report.overloaded = crowd.report.overloaded || crowd.recording
                        roundStart = now
                        cursor = 0
                        continue
                    }
                    crowd.sendInput(cursor, now: now, lateness: late)
                    cursor += 1
                    if cursor == count {
                        cursor = 0
                        roundStart += inputPeriod
                    }
                }
            }
            crowd.flushSends()
            if now >= nextPoll {
                crowd.receiveAll(now: now)
                crowd.flushSends()
                nextPoll = now + 1_000_000
            }
            if now >= nextControl {
                let (welcomed, failed) = (crowd.seated, crowd.refused)
                let wanted = control.withLockedValue { control in
                    control.welcomed = welcomed
                    control.failed = failed
                    return (control.recording, control.stop)
                }
                if wanted.1 { break }
                if !playing, welcomed + failed == count, started == count {
                    playing = true
                    roundStart = now
                    cursor = 0
                }
                if wanted.0 != crowd.recording {
                    crowd.recording = wanted.0
                    if crowd.recording {
                        windowStart = now
                        cpuStart = BenchSystem.threadCPUNanoseconds()
                        allocationsStart = threadAllocations()
                    } else {
                        crowd.report.windowNanoseconds += now - windowStart
                        crowd.report.cpuNanoseconds += BenchSystem.threadCPUNanoseconds() - cpuStart
                        crowd.report.allocations += threadAllocations() - allocationsStart
                    }
                }
                nextControl = now + 10_000_000
            }
            now = Self.monotonic()
            var wake = nextPoll
            if playing { wake = min(wake, roundStart + Int64(cursor) * inputPeriod / Int64(max(count, 1))) }
            if started < count { wake = min(wake, now + 1_000_000) }
            if wake > now {
                // Naps of at least 100 µs: sends then go out a few at a time instead of this thread spinning on the
                // clock between them (their lateness is measured and reported).
                var pause = timespec(tv_sec: 0, tv_nsec: Int(min(max(wake - now, 100_000), 2_000_000)))
                nanosleep(&pause, nil)
            }
        }
        if crowd.recording {
            crowd.report.windowNanoseconds += Self.monotonic() - windowStart
            crowd.report.cpuNanoseconds += BenchSystem.threadCPUNanoseconds() - cpuStart
            crowd.report.allocations += threadAllocations() - allocationsStart
            crowd.recording = false
        }
        crowd.closeAll()
        return crowd.report
    }

    // MARK: Clients

    /// What a client's connection has reported so far (from its events: the connection's own state is its own).
    private enum Standing {
        case joining
        case seated
        /// The handshake ended without a seat (a Reject, a handshake timeout).
        case refused
        /// Seated, then closed (the server disconnected it, or it went silent).
        case dropped
    }

    /// The socket, the batches and every client, with what the step has measured so far.
    ///
    /// A value held by ``run()`` on its thread rather than properties of the generator: a class's stored properties
    /// are checked for exclusive access at run time on every access (several per datagram here, about a tenth of
    /// this thread's user time when they were properties), a local value's by the compiler.
    private struct Crowd {
        let server: DatagramAddress
        let fd: Int32
        /// Client i's connection, what it reported, its last input step and the phase of its paddle's sweep: arrays
        /// side by side rather than one of structs, so that reading a client's standing never copies its connection.
        var connections: [SnapConnection] = []
        var standings: [Standing]
        var steps: [UInt32]
        let phases: [Float]
        /// The one buffer every call into a connection appends to; emptied (its storage kept) after each.
        var actions = ClientActions<SnapConnection>()
        var report = Report()
        /// Clients seated (ever), and refused.
        var seated = 0
        var refused = 0
        var recording = false
        /// Datagrams waiting for the next `sendmmsg`, each with its client's source address.
        let outgoing = DatagramBatch(capacity: 256, slotSize: WireLimits.maxDatagram, controlSize: 32)
        let incoming = DatagramBatch(capacity: 256, slotSize: 2_048, controlSize: 128)
        /// Which queued datagrams are inputs: those the kernel refuses are taken back out of `inputsAccepted`.
        var queuedInputs = [Bool](repeating: false, count: 256)
        let packetInfo = PacketInfo()
        /// Monotonic minus real time, to bring the kernel's CLOCK_REALTIME receive stamps onto the monotonic clock.
        let realToMonotonic: Int64

        /// Client i sends from 127.64.0.0 + i + 1.
        static let firstAddress: UInt32 = 0x7F40_0001
        /// SO_TIMESTAMPNS (asm-generic and x86: 35); Glibc hides the name behind a time64 switch Swift cannot import.
        static let timestampOption: Int32 = 35

        /// Opens the socket and makes `count` idle connections.
        init(port: UInt16, clients count: Int) throws(SocketError) {
            guard count < 1 << 16 else { throw SocketError(description: "at most 65,535 clients (127.64/16)") }
            server = DatagramAddress(ipv4: 0x7F00_0001, port: port)
            realToMonotonic = LoadGenerator.monotonic() - LoadGenerator.realtime()
            fd = try Self.openSocket()
            var configuration = SnapConnection.Configuration(game: .puck, seats: 2)
            // Round trips are not what this generator measures: no Pings of its own (the server's are still
            // answered).
            configuration.pingInterval = nil
            // The controller decides how long joining may take (it waits 20 s and more for thousands of clients);
            // until then a connection keeps resending its Hello.
            configuration.handshakeTimeout = .seconds(120)
            connections = (0..<count).map { index in
                let setup = ConnectionSetup(transport: .udp, player: index, name: "gen\(index)", seed: UInt64(index))
                return SnapConnection(configuration: configuration, setup: setup)
            }
            standings = [Standing](repeating: .joining, count: count)
            steps = [UInt32](repeating: 0, count: count)
            phases = (0..<count).map { Float($0 % 97) * 0.37 }
        }

        /// Starts client `index`'s connection: its first Hello.
        mutating func start(_ index: Int, now: Int64) {
            connections[index].start(now: LoadGenerator.instant(now), into: &actions)
            settle(index, arrival: now)
        }

        /// When `connection` next wants a tick, read in place: through a getter, an element of the array would be
        /// copied first (its storage retained and released), once per input.
        static func deadline(of connection: inout SnapConnection) -> Instant { connection.nextDeadline }

        /// Runs client `index`'s timers if one is due.
        mutating func tickIfDue(_ index: Int, now: Int64) {
            let instant = LoadGenerator.instant(now)
            guard Self.deadline(of: &connections[index]) <= instant else { return }
            connections[index].tick(now: instant, into: &actions)
            settle(index, arrival: now)
        }

        /// Client `index`'s input for its slot of the schedule, `lateness` after the slot; its timers run first.
        mutating func sendInput(_ index: Int, now: Int64, lateness: Int64) {
            tickIfDue(index, now: now)
            guard standings[index] == .seated else { return }
            steps[index] &+= 1
            let step = steps[index]
            let angle = phases[index] + Float(step) * 0.05
            let x = (160 + 90 * sin(angle)).rounded()
            let y = (400 + 40 * cos(angle * 0.7)).rounded()
            connections[index].send(
                .paddleState(PaddleState(inputStep: step, x: x, y: y, vx: 0, vy: 0)),
                now: LoadGenerator.instant(now), into: &actions)
            // Counted as accepted when queued: a batch the kernel refuses is subtracted in `flushSends`.
            let queued = settle(index, arrival: now, input: true)
            report.inputsAccepted += queued
            guard recording else { return }
            report.inputsSent += 1
            report.sendLateness[Int(min(lateness / 10_000, 20_000))] += 1
        }

        /// Hands what the last call into client `index`'s connection left in ``actions`` on: its datagrams to the
        /// send batch (marked as inputs when `input`), its events to the client's standing and the report (a
        /// snapshot's sample taken at `arrival`, the kernel's receive time). Returns how many datagrams were queued.
        @discardableResult
        mutating func settle(_ index: Int, arrival: Int64, input: Bool = false) -> Int {
            var queued = 0
            for packet in 0..<actions.packetCount {
                if queue(packet, from: index, input: input) { queued += 1 }
            }
            while let event = actions.nextEvent() {
                switch event {
                case .established:
                    guard standings[index] == .joining else { break }
                    standings[index] = .seated
                    seated += 1
                case .message(.tableSnapshot(let snapshot)):
                    report.samples.append(
                        Sample(client: UInt32(index), tick: snapshot.tick, arrival: arrival, inWindow: recording))
                    if recording { report.snapshotsInWindow += 1 }
                case .closed:
                    report.closed += 1
                    if standings[index] == .joining {
                        standings[index] = .refused
                        refused += 1
                    } else {
                        standings[index] = .dropped
                    }
                case .resumed, .message:
                    break
                }
            }
            actions.removeAll()
            return queued
        }

        /// Hands every datagram waiting from the server to its client's connection, with `now` as the connections'
        /// time and the kernel's receive time as the snapshot samples'.
        mutating func receiveAll(now: Int64) {
            let instant = LoadGenerator.instant(now)
            // A bounded drain: at most 64 batches (16,384 datagrams, tens of milliseconds of replies) per call.
            for _ in 0..<64 {
                guard case .transferred(let count) = incoming.receive(from: fd) else { return }
                for slot in 0..<count where incoming.address(slot) == server {
                    let (destination, arrival) = readControl(incoming.control(slot))
                    guard destination >= Self.firstAddress, Int(destination - Self.firstAddress) < connections.count
                    else {
                        continue
                    }
                    let index = Int(destination - Self.firstAddress)
                    if recording { report.packetsInWindow += 1 }
                    connections[index].receive(incoming.payload(slot), now: instant, into: &actions)
                    settle(index, arrival: arrival)
                }
                if count < incoming.capacity { return }
            }
        }

        /// Says goodbye from every seated client and closes the socket.
        mutating func closeAll() {
            let now = LoadGenerator.monotonic()
            for index in connections.indices where standings[index] == .seated {
                connections[index].close(now: LoadGenerator.instant(now), into: &actions)
                settle(index, arrival: now)
            }
            flushSends()
            close(fd)
            connections.removeAll()
        }

        // MARK: Sockets

        private static func openSocket() throws(SocketError) -> Int32 {
            var local = wildcardIPv4Address()
            let length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { throw SocketError(description: "socket() failed: errno \(errno)") }
            var on: Int32 = 1
            let size = socklen_t(MemoryLayout<Int32>.size)
            setsockopt(fd, SOL_SOCKET, Self.timestampOption, &on, size)
            setsockopt(fd, Int32(IPPROTO_IP), IP_PKTINFO, &on, size)
            // Don't fragment (as the server): the kernel then skips a per-destination IP identification per datagram.
            var discover = IP_PMTUDISC_DO
            setsockopt(fd, Int32(IPPROTO_IP), IP_MTU_DISCOVER, &discover, size)
            // Every client's replies queue on this one socket: room for a few tens of milliseconds of them.
            var buffer: Int32 = 16 << 20
            if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, size) != 0 {
                buffer = 4 << 20
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, size)
            }
            buffer = 4 << 20
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, size)
            _ = "lo".withCString { setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0, 3) }
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            guard bound == 0 else {
                let error = errno
                close(fd)
                throw SocketError(description: "bind failed: errno \(error)")
            }
            return fd
        }

        /// Copies packet `packet` of ``actions`` into the send batch as a datagram from client `index`'s address;
        /// false when the batch did not take it.
        mutating func queue(_ packet: Int, from index: Int, input: Bool) -> Bool {
            if outgoing.isFull { flushSends() }
            packetInfo.source = Self.firstAddress + UInt32(index)
            let (outgoing, server, packetInfo) = (outgoing, server, packetInfo)
            let queued = actions.withPacket(packet) { bytes in
                outgoing.append(to: server, control: packetInfo.write) { slot in
                    guard bytes.count <= slot.count else { return 0 }
                    slot.copyMemory(from: bytes)
                    return bytes.count
                }
            }
            if queued { queuedInputs[outgoing.count - 1] = input }
            return queued
        }

        mutating func flushSends() {
            guard outgoing.count > 0 else { return }
            var next = 0
            while next < outgoing.count {
                guard case .transferred(let count) = outgoing.send(on: fd, from: next) else {
                    for slot in next..<outgoing.count where queuedInputs[slot] {
                        report.inputsAccepted -= 1
                        report.sendDrops += 1
                    }
                    break
                }
                next += count
            }
            if recording { report.packetsInWindow += next }
            outgoing.reset()
        }

        /// The reply's destination address (which client it is for) and its kernel arrival time, from its control
        /// data.
        func readControl(_ control: UnsafeRawBufferPointer) -> (destination: UInt32, arrival: Int64) {
            // cmsghdr: size_t len, int level, int type, then the data at the next 8-byte boundary (16 on 64-bit).
            var arrival = LoadGenerator.monotonic()
            var destination: UInt32 = 0
            var offset = 0
            let headerSize = MemoryLayout<Int>.size + 8
            while offset + headerSize <= control.count {
                let length = control.load(fromByteOffset: offset, as: Int.self)
                let level = control.load(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self)
                let type = control.load(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self)
                guard length >= headerSize else { break }
                if level == SOL_SOCKET, type == Self.timestampOption, length >= headerSize + 16 {
                    let seconds = control.load(fromByteOffset: offset + headerSize, as: Int.self)
                    let nanoseconds = control.load(fromByteOffset: offset + headerSize + 8, as: Int.self)
                    arrival = Int64(seconds) * 1_000_000_000 + Int64(nanoseconds) + realToMonotonic
                } else if level == Int32(IPPROTO_IP), type == IP_PKTINFO, length >= headerSize + 12 {
                    // in_pktinfo: int ifindex, in_addr spec_dst, in_addr addr (the datagram's destination).
                    destination = UInt32(
                        bigEndian: control.load(fromByteOffset: offset + headerSize + 8, as: UInt32.self))
                }
                offset += (length + 7) & ~7
            }
            return (destination, arrival)
        }
    }

    /// The `IP_PKTINFO` control message that picks the source address of the datagram being queued.
    ///
    /// An object, so that the batch's `control` closure (an escaping one) can be its method: a closure whose only
    /// capture is one object uses the object as its context and allocates nothing, where a closure capturing the
    /// address itself would box it on the heap for every datagram.
    private final class PacketInfo {
        var source: UInt32 = 0

        /// Writes the control message into `buffer`; returns its length.
        func write(into buffer: UnsafeMutableRawBufferPointer) -> Int {
            let header = MemoryLayout<cmsghdr>.size
            let space = header + (MemoryLayout<in_pktinfo>.size + 7) & ~7
            guard buffer.count >= space else { return 0 }
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            // cmsghdr: size_t len, int level, int type; then in_pktinfo: int ifindex, spec_dst, addr (network order).
            buffer.storeBytes(of: header + MemoryLayout<in_pktinfo>.size, toByteOffset: 0, as: Int.self)
            buffer.storeBytes(of: Int32(IPPROTO_IP), toByteOffset: MemoryLayout<Int>.size, as: Int32.self)
            buffer.storeBytes(of: IP_PKTINFO, toByteOffset: MemoryLayout<Int>.size + 4, as: Int32.self)
            buffer.storeBytes(of: source.bigEndian, toByteOffset: header + 4, as: UInt32.self)
            return space
        }
    }

    private struct SocketError: Error, CustomStringConvertible {
        var description: String
    }
}
