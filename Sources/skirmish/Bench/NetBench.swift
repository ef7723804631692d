import ArgumentParser
import CAllocCounter
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench net`: what the client side of SkirmishNet costs per packet and per open session.
struct NetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "net",
        abstract: "Measure Ping round trips through the client runtime over loopback UDP, and memory per open session.",
        discussion: """
            Two event loops, each a single thread: the clients' epoll ClientLoop, pinned to core 1, and an echo \
            responder's NIO loop, pinned to core 0 (with --no-pin neither is pinned). The responder is stateless — \
            it answers the cookie handshake and turns each Ping into a Pong in place — so what the clients' loop \
            spends is the cost of the path a swarm's bots take: a Session per client carrying a ClientConnection \
            (the protocol state machine and its ReliableEndpoint), the codec, and a connected UDP socket the \
            ClientLoop reads and writes from fixed buffers. The sessions' timers run from one sweep every 5 ms \
            (acks owed are sent as packets arrive).

            Two scenarios, each measured for --duration seconds after every session has connected:
              1 client       one session, one Ping in flight: latency-bound round trips
              N clients      --clients sessions on the one loop, one Ping in flight each: throughput-bound

            "per core" figures divide by the CPU time the clients' loop thread actually used (its \
            CLOCK_THREAD_CPUTIME_ID), so they hold even when that thread was not busy all the time. Allocations are \
            the heap allocations made on that thread (and on the responder's). Memory per open session is the \
            growth of this process's resident set (/proc/self/statm) from before the N sessions were opened to \
            when all had connected, divided by N: user-space memory only (kernel socket buffers are not in it), and \
            the stateless responder keeps nothing per client.
            """
    )

    @Option(help: "Seconds each scenario is measured for (after its sessions have connected).")
    var duration = 3

    @Option(help: "Sessions in the many-clients scenario, each with its own UDP socket.")
    var clients = 1_000

    @Flag(help: "Do not pin the two loops to cores 0 and 1.")
    var noPin = false

    func validate() throws {
        guard (1...60).contains(duration) else {
            throw ValidationError("--duration must be 1 to 60 seconds, got \(duration)")
        }
        guard (1...15_000).contains(clients) else {
            throw ValidationError("--clients must be 1 to 15000 (one socket each), got \(clients)")
        }
    }

    func run() async throws {
        try Measurement.checkAllocationCounter()
        if let note = try OpenFileLimit.ensure(clients + 256) { Console.note(note) }
        let pinned = !noPin && BenchSystem.onlineCores >= 2
        let responderGroup = pinned ? Self.pinnedGroup(core: 0) : MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let responderLoop = responderGroup.next()
        let clientLoop = try ClientLoop(name: "skirmish-bench-clients")
        if pinned { try await clientLoop.submit { try clientLoop.pinThread(toCore: 1) }.get() }
        let responder = try await EchoResponder.start(on: responderLoop)
        let driver = try await clientLoop.submit {
            let driver = PingDriver(loop: clientLoop)
            clientLoop.delegate = driver
            return NIOLoopBound(driver, eventLoop: clientLoop)
        }.get()
        print(
            "net: Ping round trips through Session/ClientConnection on an epoll ClientLoop over loopback UDP; "
                + "\(duration) s per scenario; "
                + "clients' loop \(pinned ? "pinned to core 1" : "unpinned"), echo responder's loop "
                + "\(pinned ? "pinned to core 0" : "unpinned"); \(BenchSystem.onlineCores) cores online, "
                + "load average \(fixed(BenchSystem.loadAverage(), 2))")

        let single = try await scenario(
            "1 client", sessions: 1, driver: driver, loop: clientLoop, responder: responder, target: responder.target)
        let rssBefore = BenchSystem.residentBytes()
        let many = try await scenario(
            "\(clients) clients", sessions: clients, driver: driver, loop: clientLoop, responder: responder,
            target: responder.target)

        print(
            pad("scenario", 14) + pad("round trips/s", 15, left: true) + pad("packets/s", 12, left: true)
                + pad("client CPU", 12, left: true) + pad("pkts/s/core", 13, left: true)
                + pad("allocs/pkt", 12, left: true) + pad("echo CPU", 10, left: true)
                + pad("echo pkts/s/core", 18, left: true))
        for result in [single, many] { print(result.row) }
        print(
            "packets/s counts the clients' side (each round trip is one Ping sent and one Pong received); "
                + "pkts/s/core = those packets / CPU seconds of the clients' loop thread.")
        print(
            "many/1 ratio: round trips/s \(fixed(many.roundTripsPerSecond / single.roundTripsPerSecond, 1))×, "
                + "CPU per packet \(fixed(many.cpuPerPacket / single.cpuPerPacket, 2))×")

        let perSession = Double(many.rssAfterOpen - rssBefore) / Double(clients)
        print(
            "memory: \(clients) open sessions grew the resident set by "
                + "\(fixed(Double(many.rssAfterOpen - rssBefore) / 1_048_576, 1)) MiB = "
                + "\(fixed(perSession / 1_024, 2)) KiB per session; opening one made "
                + "\(fixed(Double(many.openAllocations) / Double(clients), 1)) heap allocations on the clients' loop "
                + "(RSS delta from /proc/self/statm, user space only; budget: single-digit KiB per bot)")

        let causes = try await clientLoop.submit { driver.value.causes }.get()
        try await clientLoop.submit { driver.value.closeAll() }.get()
        await responder.close()
        clientLoop.stop()
        withExtendedLifetime(driver) {}
        try await responderGroup.shutdownGracefully()
        if many.failures > 0 || single.failures > 0 {
            let listed = causes.sorted { $0.value > $1.value }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
            print("FAIL: \(many.failures + single.failures) sessions disconnected during the run: \(listed)")
            throw ExitCode(1)
        }
    }

    private static func pinnedGroup(core: Int) -> MultiThreadedEventLoopGroup {
        #if os(Linux)
            MultiThreadedEventLoopGroup(pinnedCPUIDs: [core])
        #else
            MultiThreadedEventLoopGroup(numberOfThreads: 1)
        #endif
    }

    struct Result {
        var name: String
        var roundTripsPerSecond: Double
        var clientCPUFraction: Double
        var cpuPerPacket: Double
        var allocationsPerPacket: Double
        var echoCPUFraction: Double
        var echoCPUPerPacket: Double
        var rssAfterOpen: Int
        var openAllocations: UInt64
        var failures: Int

        var row: String {
            pad(name, 14) + pad(fixed(roundTripsPerSecond, 0), 15, left: true)
                + pad(fixed(2 * roundTripsPerSecond, 0), 12, left: true)
                + pad(fixed(100 * clientCPUFraction, 0) + " %", 12, left: true)
                + pad(fixed(1e9 / cpuPerPacket, 0), 13, left: true)
                + pad(fixed(allocationsPerPacket, 2), 12, left: true)
                + pad(fixed(100 * echoCPUFraction, 0) + " %", 10, left: true)
                + pad(fixed(1e9 / echoCPUPerPacket, 0), 18, left: true)
        }
    }

    private func scenario(
        _ name: String, sessions: Int, driver: NIOLoopBound<PingDriver>, loop: any EventLoop,
        responder: EchoResponder, target: Target
    ) async throws -> Result {
        let openStart = try await loop.submit { skirmish_thread_allocations() }.get()
        try await loop.submit { driver.value.open(sessions, target: target) }.get()
        let deadline = ContinuousClock.now + .seconds(30)
        while try await loop.submit({ driver.value.connected + driver.value.failures }).get() < sessions {
            guard ContinuousClock.now < deadline else {
                throw BenchError("only some of \(sessions) sessions connected within 30 s; is the machine overloaded?")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let openAllocations = try await loop.submit { skirmish_thread_allocations() }.get() - openStart
        let rssAfterOpen = BenchSystem.residentBytes()

        try await loop.submit { driver.value.start() }.get()
        try await Task.sleep(for: .milliseconds(300)) // warm-up
        let clientStart = try await loop.submit { driver.value.sample() }.get()
        let echoStart = try await responder.sample()
        let wallStart = ContinuousClock.now
        try await Task.sleep(for: .seconds(self.duration))
        let clientEnd = try await loop.submit { driver.value.sample() }.get()
        let echoEnd = try await responder.sample()
        let wall = wallStart.duration(to: ContinuousClock.now)
        try await loop.submit { driver.value.stopAndClose() }.get()

        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let roundTrips = Double(clientEnd.roundTrips - clientStart.roundTrips)
        let packets = max(2 * roundTrips, 1)
        let clientCPU = Double(clientEnd.cpu - clientStart.cpu)
        let echoCPU = Double(echoEnd.cpu - echoStart.cpu)
        let echoPackets = max(Double(echoEnd.packets - echoStart.packets), 1)
        return Result(
            name: name, roundTripsPerSecond: roundTrips / seconds, clientCPUFraction: clientCPU / 1e9 / seconds,
            cpuPerPacket: clientCPU / packets,
            allocationsPerPacket: Double(clientEnd.allocations - clientStart.allocations) / packets,
            echoCPUFraction: echoCPU / 1e9 / seconds, echoCPUPerPacket: echoCPU / echoPackets,
            rssAfterOpen: rssAfterOpen, openAllocations: openAllocations,
            failures: try await loop.submit { driver.value.failures }.get())
    }
}

/// The clients' side: sessions on one client loop, each keeping one Ping in flight while running.
///
/// The loop's ``DatagramDelegate``, as a swarm's bot group is: each datagram arrives with its session's index and
/// socket generation (the token), goes to that ``Session`` stored inline, and what the connection leaves is written
/// at once.
final class PingDriver: DatagramDelegate, StreamDelegate {
    struct Sample: Sendable {
        var roundTrips: UInt64
        var cpu: Int64
        var allocations: UInt64
    }

    let loop: ClientLoop
    private var sessions: [Session] = []
    /// What the sessions' calls produce, reused call after call so nothing is allocated per packet.
    private var actions = ClientConnection.Actions()
    /// What a Ping sent while ``actions`` is being handled produces.
    private var sending = ClientConnection.Actions()
    private var sweep: Scheduled<Void>?
    /// Counts sessions, so each numbers its sockets apart from the one that had its index before.
    private var opened: UInt32 = 0
    private(set) var connected = 0
    private(set) var failures = 0
    /// Why sessions ended before the benchmark closed them, with counts.
    private(set) var causes: [String: Int] = [:]
    private var roundTrips: UInt64 = 0
    private var running = false
    private var counts: [UInt32] = []

    init(loop: ClientLoop) {
        self.loop = loop
    }

    func open(_ count: Int, target: Target) {
        connected = 0
        failures = 0
        sessions.reserveCapacity(count)
        counts = [UInt32](repeating: 0, count: count)
        let now = NIODeadline.now()
        let resolved = try? SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
        for index in 0..<count {
            var connection = ClientConnection.Configuration(
                game: .suns, seats: 2, name: "bench\(index)", mode: .datagram)
            connection.handshakeTimeout = .seconds(20)
            var configuration = Session.Configuration(target: target, connection: connection)
            configuration.seed = UInt64(index + 1)
            configuration.resolvedAddress = resolved
            opened &+= 1
            configuration.firstGeneration = opened &* 1_024
            sessions.append(Session(configuration: configuration, now: now))
            sessions[index].connect(slot: UInt32(index), on: loop, delegate: self, now: now, into: &actions)
            execute(index, now: now)
        }
        if sweep == nil { scheduleSweep() }
    }

    /// Runs the timers (Hello resends, keepalives, timeouts) of every session that has one due, every 5 ms.
    private func scheduleSweep() {
        sweep = loop.assumeIsolated().scheduleTask(in: .milliseconds(5)) { [self] in
            let now = NIODeadline.now()
            for index in sessions.indices where sessions[index].nextDeadline <= now {
                sessions[index].tick(now: now, on: loop, into: &actions)
                execute(index, now: now)
            }
            scheduleSweep()
        }
    }

    /// Writes what the last call on session `index` produced and handles its events.
    private func execute(_ index: Int, now: NIODeadline) {
        sessions[index].write(actions.packets, on: loop, now: now)
        while let event = sessions[index].nextEvent(from: &actions) {
            switch event {
            case .seated:
                connected += 1
                if running { ping(index) }
            case .closed(let cause):
                failures += 1
                causes["\(cause)", default: 0] += 1
            case .rtt:
                roundTrips &+= 1
                if running { ping(index) }
            case .resumed, .message:
                break
            }
        }
        actions.removeAll()
    }

    private func ping(_ index: Int) {
        counts[index] &+= 1
        let now = NIODeadline.now()
        let ping = Ping(player: UInt32(index), count: counts[index], sendTime: Double(now.uptimeNanoseconds) / 1e9)
        // A Ping is unreliable: sending it can produce no event, only the packet.
        sessions[index].send(.ping(ping), now: now, into: &sending)
        sessions[index].write(sending.packets, on: loop, now: now)
        sending.removeAll()
    }

    func start() {
        running = true
        for index in sessions.indices { ping(index) }
    }

    func sample() -> Sample {
        Sample(
            roundTrips: roundTrips, cpu: BenchSystem.threadCPUNanoseconds(), allocations: skirmish_thread_allocations())
    }

    func stopAndClose() {
        running = false
        closeAll()
    }

    func closeAll() {
        let now = NIODeadline.now()
        for index in sessions.indices { sessions[index].close(reason: .quit, on: loop, now: now) }
        sessions.removeAll()
        sweep?.cancel()
        sweep = nil
    }

    // MARK: DatagramDelegate

    func datagram(_ bytes: UnsafeRawBufferPointer, token: UInt32, now: NIODeadline) {
        let index = Int(token >> 8)
        guard index < sessions.count, sessions[index].generation & 0xFF == token & 0xFF else { return }
        sessions[index].receive(bytes, now: now, into: &actions)
        execute(index, now: now)
    }

    func datagramError(_ code: Int32, token: UInt32, now: NIODeadline) {
        // ICMP errors for an earlier datagram: the connection's own timers decide.
    }

    // MARK: StreamDelegate (unused: the benchmark's sessions are UDP)

    func streamOpened(_ channel: any Channel, token: UInt32, generation: UInt32, now: NIODeadline) {
        channel.close(promise: nil)
    }

    func streamReceived(_ bytes: ByteBuffer, token: UInt32, generation: UInt32, now: NIODeadline) {}

    func streamFailed(_ text: String, token: UInt32, generation: UInt32, now: NIODeadline) {}
}

/// A stateless UDP echo for the client benchmark: Hello → Challenge, Hello with the cookie → Welcome, Ping → Pong
/// (the same bytes with the type changed, written back from the buffer it arrived in). It keeps nothing per client.
final class EchoResponder: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<Handler>

    struct Sample: Sendable {
        var packets: UInt64
        var cpu: Int64
    }

    private init(channel: any Channel, handler: NIOLoopBound<Handler>) {
        self.channel = channel
        self.handler = handler
    }

    static func start(on loop: any EventLoop) async throws -> EchoResponder {
        let handler = try await loop.submit { NIOLoopBound(Handler(), eventLoop: loop) }.get()
        let channel = try await DatagramBootstrap(group: loop)
            .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
            .channelOption(.socketOption(.so_sndbuf), value: 4 << 20)
            .channelOption(.maxMessagesPerRead, value: 64)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(handler.value)
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return EchoResponder(channel: channel, handler: handler)
    }

    var target: Target { Target(transport: .udp, host: "127.0.0.1", port: channel.localAddress?.port ?? 0) }

    func sample() async throws -> Sample {
        try await channel.eventLoop.submit { [handler] in
            Sample(packets: handler.value.packets, cpu: BenchSystem.threadCPUNanoseconds())
        }.get()
    }

    func close() async {
        try? await channel.close()
    }

    final class Handler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>

        static let cookie = Cookie(high: 0x5348_4F52_5443_5554, low: 0x0BEE_F00D_CAFE_D00D)
        private(set) var packets: UInt64 = 0
        private var welcomes: UInt32 = 0

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var envelope = unwrapInboundIn(data)
            packets &+= 1
            let start = envelope.data.readerIndex
            guard let type = envelope.data.getInteger(at: start + 8, as: UInt16.self) else { return }
            switch type {
            case MessageType.ping.rawValue:
                envelope.data.setInteger(MessageType.pong.rawValue, at: start + 8)
                context.write(wrapOutboundOut(envelope), promise: nil)
            case MessageType.hello.rawValue:
                let decoded = envelope.data.withUnsafeReadableBytes { bytes in
                    try? Packet.decode(bytes, maxSize: WireLimits.maxDatagram)
                }
                guard case .hello(let hello) = decoded?.message else { return }
                let reply: Packet
                if hello.cookie == Self.cookie {
                    welcomes &+= 1
                    reply = Packet(
                        number: 1,
                        .welcome(Welcome(peer: welcomes, match: 1, seat: 0, tickRate: 60, resumeToken: 1)))
                } else {
                    reply = Packet(.challenge(Challenge(cookie: Self.cookie)))
                }
                guard let bytes = try? reply.encoded() else { return }
                let out = AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: ByteBuffer(bytes: bytes))
                context.write(wrapOutboundOut(out), promise: nil)
            default:
                break // Acks and anything else need no answer.
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.flush()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A closed client port answers with ICMP, which surfaces here; the socket stays usable.
        }
    }
}
