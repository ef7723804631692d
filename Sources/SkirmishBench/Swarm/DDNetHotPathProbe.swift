import Foundation
import NIOPosix
import SkirmishDDNet
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `skirmish bench swarm --part ddnet`: heap allocations on the bots' loop per bot-tick for DDNet bots in the game,
/// against a local DDNet-Server — the plug-in's "no allocation per bot-tick on the input and snapshot path" measured
/// on the real thing.
///
/// Optional: it needs Debian's `ddnet-server` and `ddnet-data` (`/usr/games/DDNet-Server`), and says it was skipped
/// without them. The server is started on a free loopback port in a temporary directory (IPv4 only, no master-server
/// registration, room for every bot from one address) and stopped by its PID at the end. Half the bots are `runner`s
/// (an agent woken every server tick, inputs changing a few times a second), half `idle`; one client loop drives
/// them all. After the ramp and a warm-up (every bot in the game, buffers grown) the loop thread's allocation count is
/// read before and after a window and divided by the inputs sent in it (one per bot per 20 ms tick: a bot-tick). The
/// metric reads of the run's controller (one a second) and of this probe allocate on that thread; their cost is
/// measured and set apart as the SNAP probe does (``HotPathProbe``).
package enum DDNetHotPathProbe {
    /// Where Debian installs the server.
    package static let executable = "/usr/games/DDNet-Server"

    package struct Result: Sendable, Equatable, AllocationFigures {
        package var bots: Int
        package var seconds: Double
        /// Inputs sent in the window: one per bot per server tick.
        package var botTicks: UInt64
        package var snapshots: UInt64
        package var allocations: UInt64
        /// Bots that (re)joined in the window: a join allocates (a connection, an agent) and is not a bot-tick.
        package var joins: UInt64
        package var perMetricsRead: UInt64

    }

    /// Whether the server is installed.
    package static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    /// The part's closing line: the figure, or why it was skipped.
    package static func line(bots: Int = 48, environment: BenchEnvironment) async throws -> String {
        guard isAvailable else {
            return "ddnet allocations: skipped — no DDNet-Server at \(executable) "
                + "(apt-get install ddnet-server ddnet-data to measure the DDNet plug-in's hot path)"
        }
        try Measurement.checkAllocationCounter(environment)
        environment.output(
            "ddnet allocations: \(bots) DDNet bots (half runner, half idle) against a local DDNet-Server; heap "
                + "allocations on the bots' loop")
        return resultLine(try await run(bots: bots, environment: environment))
    }

    /// The figure as one line.
    package static func resultLine(_ result: Result) -> String {
        "ddnet allocations: \(result.allocations) on the bots' loop over \(result.botTicks) bot-ticks and "
            + "\(result.snapshots) snapshot messages in \(fixed(result.seconds, 1)) s: \(fixed(result.perBotTick, 3)) per "
            + "bot-tick; \(fixed(result.perBotTickExcludingReads, 4)) once the metric reads "
            + "(\(result.perMetricsRead) allocations each, one a second) are set apart; \(result.joins) joins in the "
            + "window"
    }

    /// Runs `bots` bots against a fresh server: `warmup` seconds after the ramp, then a `window` measured.
    package static func run(
        bots: Int, warmup: Int = 5, window: Int = 5, environment: BenchEnvironment
    ) async throws -> Result {
        let server = try Server.start(maxClients: max(bots, 1))
        defer { server.stop() }
        var catalogue = Catalogue.builtIn
        catalogue.registerDDNet()
        let yaml = """
            name: bench-ddnet-allocations
            protocol: ddnet
            profile: [{ramp: {to: \(bots), over: 2s}}, {hold: {for: \(warmup + window + 3)s}}]
            personas:
              - {name: runner, weight: 1, behavior: runner}
              - {name: idle, weight: 1, behavior: idle}
            """
        let script = try catalogue.scriptLoader.parse(yaml, file: "bench-ddnet-allocations.yaml")
        let plan = try LoadPlan(script: script)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: Int(server.port)),
            seed: 1, runID: "bench-ddnet", loops: 1)
        configuration.catalogue = catalogue
        let swarm = try await Swarm(configuration: configuration, group: group)
        let measured = try await AllocationWindow.measure(
            swarm, warmup: .seconds(2 + warmup), window: .seconds(window), environment: environment
        ) { snapshot in
            (
                inputs: snapshot.counterTotal(SkirmishMetrics.packetsSent, where: ["type": "sys_input"]),
                snapshots: ["snap", "snap_single", "snap_empty"].reduce(UInt64(0)) {
                    $0 + snapshot.counterTotal(SkirmishMetrics.packetsReceived, where: ["type": $1])
                },
                joins: snapshot.counterTotal(SkirmishMetrics.handshakes, where: ["outcome": "ok"])
            )
        }
        try? await group.shutdownGracefully()
        let (before, after) = (measured.before, measured.after)
        guard after.inputs > before.inputs else {
            throw BenchError("no DDNet bot sent an input in the window: none reached the game")
        }
        return Result(
            bots: bots, seconds: measured.seconds, botTicks: after.inputs &- before.inputs,
            snapshots: after.snapshots &- before.snapshots, allocations: measured.allocations,
            joins: after.joins &- before.joins, perMetricsRead: measured.perMetricsRead)
    }

    /// A DDNet-Server on a free loopback port, in a temporary directory of its own.
    private final class Server: @unchecked Sendable {
        // @unchecked: `text` is read and written only under `lock`; the rest is set in `start` and then only read.
        let process = Process()
        let port: UInt16
        let directory: URL
        private let lock = NSLock()
        private var text = ""

        private init(port: UInt16, directory: URL) {
            self.port = port
            self.directory = directory
        }

        /// Starts the server and waits (at most 30 s) for its socket to be bound.
        static func start(maxClients: Int) throws -> Server {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "skirmish-bench-ddnet-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try "add_path $CURRENTDIR\nadd_path $DATADIR\n".write(
                to: directory.appendingPathComponent("storage.cfg"), atomically: true, encoding: .utf8)
            let port = try freePort()
            let server = Server(port: port, directory: directory)
            let clients = min(maxClients, 64)
            server.process.executableURL = URL(fileURLWithPath: executable)
            server.process.arguments = [
                "sv_ipv4only 1;bindaddr 127.0.0.1;sv_port \(port);sv_register 0;sv_map dm1;"
                    + "sv_max_clients \(clients);sv_max_clients_per_ip \(clients)"
            ]
            server.process.currentDirectoryURL = directory
            let pipe = Pipe()
            server.process.standardOutput = pipe
            server.process.standardError = pipe
            server.process.standardInput = FileHandle.nullDevice
            pipe.fileHandleForReading.readabilityHandler = { [server] handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil
                } else {
                    server.append(String(decoding: data, as: UTF8.self))
                }
            }
            try server.process.run()
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                let output = server.output
                if output.contains("server name is") { return server }
                if output.contains("couldn't open socket") || !server.process.isRunning { break }
                usleep(20_000)
            }
            let output = server.output
            server.stop()
            throw BenchError("DDNet-Server did not start on port \(port): \(output.suffix(300))")
        }

        private func append(_ chunk: String) {
            lock.lock()
            defer { lock.unlock() }
            // Only readiness is looked for: keep the start of the log, not all of it.
            if text.utf8.count < 65_536 { text += chunk }
        }

        private var output: String {
            lock.lock()
            defer { lock.unlock() }
            return text
        }

        /// Stops the server by its PID and removes its directory.
        func stop() {
            if process.isRunning {
                kill(process.processIdentifier, SIGTERM)
                let deadline = Date().addingTimeInterval(5)
                while process.isRunning && Date() < deadline { usleep(10_000) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
            try? FileManager.default.removeItem(at: directory)
        }

        /// A UDP port on 127.0.0.1 that was free a moment ago.
        private static func freePort() throws -> UInt16 {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            guard bound == 0 else { throw BenchError("bind: errno \(errno)") }
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else { throw BenchError("getsockname: errno \(errno)") }
            return UInt16(bigEndian: address.sin_port)
        }
    }
}
