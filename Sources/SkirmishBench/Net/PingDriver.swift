import NIOCore
import NIOPosix
@_spi(Runtime) import SkirmishNet
import SkirmishTelemetry
import SkirmishWire

/// The clients' side of `skirmish bench net`: SNAP connections in one ``Shell`` on one client loop, each keeping one
/// Ping in flight while running — the swarm's own runtime with a machine that only pings.
package final class PingDriver {
    package struct Sample: Sendable {
        package var roundTrips: UInt64
        package var cpu: Int64
        package var allocations: UInt64
    }

    package let loop: ClientLoop
    private let threadAllocations: @Sendable () -> UInt64
    private var shell: Shell<PingMachine>?
    private var slots: [UInt32] = []
    package internal(set) var connected = 0
    package internal(set) var failures = 0
    /// Why sessions ended before the benchmark closed them, with counts.
    package internal(set) var causes: [String: Int] = [:]
    var roundTrips: UInt64 = 0
    var running = false

    /// A driver on `loop` (call on the loop).
    package init(loop: ClientLoop, threadAllocations: @escaping @Sendable () -> UInt64) {
        self.loop = loop
        self.threadAllocations = threadAllocations
    }

    /// Opens `count` connections to `target` (call on the loop).
    package func open(_ count: Int, target: Target) {
        connected = 0
        failures = 0
        var settings = ShellSettings(localPorts: .shared)
        settings.resolved[target] = try? SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
        let shell: Shell<PingMachine>
        if let existing = self.shell {
            shell = existing
        } else {
            shell = Shell(loop: loop, environment: self, settings: settings)
            shell.attach()
        }
        self.shell = shell
        let now = Instant.now()
        slots.reserveCapacity(count)
        for index in 0..<count {
            var configuration = SnapConnection.Configuration(game: .suns, seats: 2)
            configuration.name = "bench\(index)"
            configuration.handshakeTimeout = .seconds(20)
            configuration.pingInterval = nil
            let machine = PingMachine(
                index: index,
                connection: SnapConnection(
                    configuration: configuration,
                    setup: ConnectionSetup(
                        transport: .udp, player: index, name: "bench\(index)", seed: UInt64(index + 1))),
                request: SocketRequest(target: target, seed: UInt64(index + 1)))
            let slot = shell.add(machine, now: now)
            slots.append(slot)
            shell.update(slot, now: now) { machine, _, io in io.openSocket(machine.request) }
        }
    }

    /// Every connection sends its first Ping; each answer sends the next.
    package func start() {
        running = true
        let now = Instant.now()
        shell?.updateAll(now: now) { machine, _, io in machine.ping(now: now, io: &io) }
    }

    package func sample() -> Sample {
        Sample(roundTrips: roundTrips, cpu: BenchSystem.threadCPUNanoseconds(), allocations: threadAllocations())
    }

    package func stopAndClose() {
        running = false
        closeAll()
    }

    package func closeAll() {
        let now = Instant.now()
        shell?.updateAll(now: now) { machine, _, io in machine.close(now: now, io: &io) }
        shell?.stop()
        shell = nil
        slots.removeAll()
    }
}

/// One benchmark connection: a ``SnapConnection`` that sends its next Ping as soon as the last one is answered.
struct PingMachine: ShellMachine {
    typealias Connection = SnapConnection
    typealias Environment = PingDriver

    let index: Int
    private(set) var connection: SnapConnection
    let request: SocketRequest
    private var count: UInt32 = 0
    private(set) var isFinished = false

    init(index: Int, connection: SnapConnection, request: SocketRequest) {
        self.index = index
        self.connection = connection
        self.request = request
    }

    var nextWake: Instant? {
        let deadline = connection.nextDeadline
        return deadline == .distantFuture ? nil : deadline
    }

    mutating func wake(now: Instant, environment: PingDriver, io: inout ShellIO<SnapConnection>) {
        connection.tick(now: now, into: &io.actions)
        handle(now: now, environment, &io)
    }

    mutating func transportOpened(now: Instant, environment: PingDriver, io: inout ShellIO<SnapConnection>) {
        connection.start(now: now, into: &io.actions)
        handle(now: now, environment, &io)
    }

    mutating func received(
        _ bytes: UnsafeRawBufferPointer, now: Instant, environment: PingDriver, io: inout ShellIO<SnapConnection>
    ) {
        connection.receive(bytes, now: now, into: &io.actions)
        handle(now: now, environment, &io)
    }

    mutating func transportFailed(
        _ reason: String, now: Instant, environment: PingDriver, io: inout ShellIO<SnapConnection>
    ) {
        connection.transportFailed(reason, now: now, into: &io.actions)
        handle(now: now, environment, &io)
    }

    mutating func ping(now: Instant, io: inout ShellIO<SnapConnection>) {
        count &+= 1
        connection.send(
            .ping(Ping(player: UInt32(index), count: count, sendTime: now.seconds)), now: now, into: &io.actions)
    }

    mutating func close(now: Instant, io: inout ShellIO<SnapConnection>) {
        connection.close(now: now, into: &io.actions)
        io.closeSocket()
        isFinished = true
    }

    private mutating func handle(now: Instant, _ driver: PingDriver, _ io: inout ShellIO<SnapConnection>) {
        var answered = false
        while let metric = io.actions.nextMetric() {
            if case .roundTrip = metric {
                driver.roundTrips &+= 1
                answered = true
            }
        }
        while let event = io.actions.nextEvent() {
            switch event {
            case .established:
                driver.connected += 1
                answered = true
            case .closed(let reason):
                driver.failures += 1
                driver.causes[reason.description, default: 0] += 1
            case .resumed, .message:
                break
            }
        }
        if answered, driver.running { ping(now: now, io: &io) }
    }
}
