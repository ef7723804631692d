import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// The clients' side: sessions on one client loop, each keeping one Ping in flight while running.
///
/// The loop's ``DatagramDelegate``, as a swarm's bot group is: each datagram arrives with its session's index and
/// socket generation (the token), goes to that ``Session`` stored inline, and what the connection leaves is written
/// at once.
package final class PingDriver: DatagramDelegate, StreamDelegate {
    package struct Sample: Sendable {
        package var roundTrips: UInt64
        package var cpu: Int64
        package var allocations: UInt64
    }

    package let loop: ClientLoop
    private let threadAllocations: @Sendable () -> UInt64
    private var sessions: [Session] = []
    /// What the sessions' calls produce, reused call after call so nothing is allocated per packet.
    private var actions = ClientConnection.Actions()
    /// What a Ping sent while ``actions`` is being handled produces.
    private var sending = ClientConnection.Actions()
    private var sweep: Scheduled<Void>?
    /// Counts sessions, so each numbers its sockets apart from the one that had its index before.
    private var opened: UInt32 = 0
    package private(set) var connected = 0
    package private(set) var failures = 0
    /// Why sessions ended before the benchmark closed them, with counts.
    package private(set) var causes: [String: Int] = [:]
    private var roundTrips: UInt64 = 0
    private var running = false
    private var counts: [UInt32] = []

    package init(loop: ClientLoop, threadAllocations: @escaping @Sendable () -> UInt64) {
        self.loop = loop
        self.threadAllocations = threadAllocations
    }

    package func open(_ count: Int, target: Target) {
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
        let ping = Ping(player: UInt32(index), count: counts[index], sendTime: now.seconds)
        // A Ping is unreliable: sending it can produce no event, only the packet.
        sessions[index].send(.ping(ping), now: now, into: &sending)
        sessions[index].write(sending.packets, on: loop, now: now)
        sending.removeAll()
    }

    package func start() {
        running = true
        for index in sessions.indices { ping(index) }
    }

    package func sample() -> Sample {
        Sample(
            roundTrips: roundTrips, cpu: BenchSystem.threadCPUNanoseconds(), allocations: threadAllocations())
    }

    package func stopAndClose() {
        running = false
        closeAll()
    }

    package func closeAll() {
        let now = NIODeadline.now()
        for index in sessions.indices { sessions[index].close(reason: .quit, on: loop, now: now) }
        sessions.removeAll()
        sweep?.cancel()
        sweep = nil
    }

    // MARK: DatagramDelegate

    package func datagram(_ bytes: UnsafeRawBufferPointer, token: UInt32, now: NIODeadline) {
        let index = Int(token >> 8)
        guard index < sessions.count, sessions[index].generation & 0xFF == token & 0xFF else { return }
        sessions[index].receive(bytes, now: now, into: &actions)
        execute(index, now: now)
    }

    package func datagramError(_ code: Int32, token: UInt32, now: NIODeadline) {
        // ICMP errors for an earlier datagram: the connection's own timers decide.
    }

    // MARK: StreamDelegate (unused: the benchmark's sessions are UDP)

    package func streamOpened(_ channel: any Channel, token: UInt32, generation: UInt32, now: NIODeadline) {
        channel.close(promise: nil)
    }

    package func streamReceived(_ bytes: ByteBuffer, token: UInt32, generation: UInt32, now: NIODeadline) {}

    package func streamFailed(_ text: String, token: UInt32, generation: UInt32, now: NIODeadline) {}
}
