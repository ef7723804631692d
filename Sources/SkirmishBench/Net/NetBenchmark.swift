import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench net`: what the client side of SkirmishNet costs per packet and per open session.
package enum NetBenchmark {
    package struct Configuration: Sendable {
        /// Seconds each scenario is measured for (after its sessions have connected).
        package var duration = 3
        /// Sessions in the many-clients scenario, each with its own UDP socket.
        package var clients = 1_000
        /// Pin the responder's loop to core 0 and the clients' to core 1 (when the machine has two).
        package var pin = true

        package init() {}
    }

    package struct Outcome: Sendable {
        package var clients: Int
        package var single: Result
        package var many: Result
        package var rssBefore: Int
        /// Why sessions ended before the benchmark closed them, with counts.
        package var causes: [String: Int]

        /// Resident-set growth per open session, in bytes.
        package var bytesPerSession: Double { Double(many.rssAfterOpen - rssBefore) / Double(clients) }
        package var failures: Int { single.failures + many.failures }
        package var passed: Bool { failures == 0 }

        package var lines: [String] {
            var lines =
                [
                    pad("scenario", 14) + pad("round trips/s", 15, left: true) + pad("packets/s", 12, left: true)
                        + pad("client CPU", 12, left: true) + pad("pkts/s/core", 13, left: true)
                        + pad("allocs/pkt", 12, left: true) + pad("echo CPU", 10, left: true)
                        + pad("echo pkts/s/core", 18, left: true)
                ] + [single.row, many.row]
            lines.append(
                "packets/s counts the clients' side (each round trip is one Ping sent and one Pong received); "
                    + "pkts/s/core = those packets / CPU seconds of the clients' loop thread.")
            lines.append(
                "many/1 ratio: round trips/s \(fixed(many.roundTripsPerSecond / single.roundTripsPerSecond, 1))×, "
                    + "CPU per packet \(fixed(many.cpuPerPacket / single.cpuPerPacket, 2))×")
            lines.append(
                "memory: \(clients) open sessions grew the resident set by "
                    + "\(fixed(Double(many.rssAfterOpen - rssBefore) / 1_048_576, 1)) MiB = "
                    + "\(fixed(bytesPerSession / 1_024, 2)) KiB per session; opening one made "
                    + "\(fixed(Double(many.openAllocations) / Double(clients), 1)) heap allocations on the clients' loop "
                    + "(RSS delta from /proc/self/statm, user space only; budget: single-digit KiB per bot)")
            if failures > 0 {
                let listed = causes.sorted { $0.value > $1.value }.map { "\($0.value) × \($0.key)" }
                    .joined(separator: ", ")
                lines.append("FAIL: \(failures) sessions disconnected during the run: \(listed)")
            }
            return lines
        }
    }

    package static func run(_ configuration: Configuration, environment: BenchEnvironment) async throws -> Outcome {
        let clients = configuration.clients
        let pinned = configuration.pin && BenchSystem.onlineCores >= 2
        let responderGroup = pinned ? BenchSystem.pinnedGroup(core: 0) : MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let responderLoop = responderGroup.next()
        let clientLoop = try ClientLoop(name: "skirmish-bench-clients")
        if pinned { try await clientLoop.submit { try clientLoop.pinThread(toCore: 1) }.get() }
        let responder = try await EchoResponder.start(on: responderLoop)
        let threadAllocations = environment.threadAllocations
        let driver = try await clientLoop.submit {
            NIOLoopBound(PingDriver(loop: clientLoop, threadAllocations: threadAllocations), eventLoop: clientLoop)
        }.get()
        environment.output(
            "net: Ping round trips through SnapConnection in the client Shell on an epoll ClientLoop over loopback UDP; "
                + "\(configuration.duration) s per scenario; "
                + "clients' loop \(pinned ? "pinned to core 1" : "unpinned"), echo responder's loop "
                + "\(pinned ? "pinned to core 0" : "unpinned"); \(BenchSystem.onlineCores) cores online, "
                + "load average \(fixed(BenchSystem.loadAverage(), 2))")

        let single = try await scenario(
            "1 client", sessions: 1, driver: driver, loop: clientLoop, responder: responder, target: responder.target,
            duration: configuration.duration, environment: environment)
        let rssBefore = BenchSystem.residentBytes()
        let many = try await scenario(
            "\(clients) clients", sessions: clients, driver: driver, loop: clientLoop, responder: responder,
            target: responder.target, duration: configuration.duration, environment: environment)

        let causes = try await clientLoop.submit { driver.value.causes }.get()
        try await clientLoop.submit { driver.value.closeAll() }.get()
        await responder.close()
        clientLoop.stop()
        withExtendedLifetime(driver) {}
        try await responderGroup.shutdownGracefully()
        return Outcome(clients: clients, single: single, many: many, rssBefore: rssBefore, causes: causes)
    }

    package struct Result: Sendable, Equatable {
        package var name: String
        package var roundTripsPerSecond: Double
        package var clientCPUFraction: Double
        package var cpuPerPacket: Double
        package var allocationsPerPacket: Double
        package var echoCPUFraction: Double
        package var echoCPUPerPacket: Double
        package var rssAfterOpen: Int
        package var openAllocations: UInt64
        package var failures: Int

        package var row: String {
            pad(name, 14) + pad(fixed(roundTripsPerSecond, 0), 15, left: true)
                + pad(fixed(2 * roundTripsPerSecond, 0), 12, left: true)
                + pad(fixed(100 * clientCPUFraction, 0) + " %", 12, left: true)
                + pad(fixed(1e9 / cpuPerPacket, 0), 13, left: true)
                + pad(fixed(allocationsPerPacket, 2), 12, left: true)
                + pad(fixed(100 * echoCPUFraction, 0) + " %", 10, left: true)
                + pad(fixed(1e9 / echoCPUPerPacket, 0), 18, left: true)
        }
    }

    private static func scenario(
        _ name: String, sessions: Int, driver: NIOLoopBound<PingDriver>, loop: any EventLoop,
        responder: EchoResponder, target: Target, duration: Int,
        environment: BenchEnvironment
    ) async throws -> Result {
        let openStart = try await loop.submit { environment.threadAllocations() }.get()
        try await loop.submit { driver.value.open(sessions, target: target) }.get()
        let deadline = ContinuousClock.now + .seconds(30)
        while try await loop.submit({ driver.value.connected + driver.value.failures }).get() < sessions {
            guard ContinuousClock.now < deadline else {
                throw BenchError("only some of \(sessions) sessions connected within 30 s; is the machine overloaded?")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let openAllocations = try await loop.submit { environment.threadAllocations() }.get() - openStart
        let rssAfterOpen = BenchSystem.residentBytes()

        try await loop.submit { driver.value.start() }.get()
        try await Task.sleep(for: .milliseconds(300)) // warm-up
        let clientStart = try await loop.submit { driver.value.sample() }.get()
        let echoStart = try await responder.sample()
        let wallStart = ContinuousClock.now
        try await Task.sleep(for: .seconds(duration))
        let clientEnd = try await loop.submit { driver.value.sample() }.get()
        let echoEnd = try await responder.sample()
        let wall = wallStart.duration(to: ContinuousClock.now)
        try await loop.submit { driver.value.stopAndClose() }.get()

        let seconds = wall.seconds
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
