import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SkirmishServer
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench server`: how many Puck matches the reference server runs on one core within the DESIGN budget.
package enum ServerBenchmark {
    package struct Configuration: Sendable {
        /// Matches in the first step.
        package var start = 125
        /// Never try more matches than this.
        package var maxMatches = 6_000
        /// PaddleState inputs per second per client.
        package var inputRate = 30
        /// Seconds of warm-up in each step, after every client is welcomed.
        package var warmup = 1
        /// Seconds measured in each step.
        package var window = 3
        /// Seconds the whole search may take; no step starts that would end after it.
        package var timeLimit = 60
        /// Pin the server to core 0 and the load generator to core 1 (when the machine has two).
        package var pin = true
        /// Exactly these match counts instead of a search.
        package var steps: [Int]?
        /// Only profile the server core without sockets.
        package var coreOnly = false

        package init() {}
    }

    package struct Result: Sendable {
        package var inputRate: Int
        package var profile: ServerCoreProfile.Result
        /// Every step run, in order (none with `coreOnly`).
        package var steps: [StepResult]
        package var search: Search
        package var seconds: Int64

        /// What the search found, after the step table.
        package var summaryLines: [String] {
            var lines = [""]
            if let best = search.best {
                var ceiling = search.worst.map { "; \($0.matches) failed" } ?? ""
                if let generatorBound = search.generatorBound, generatorBound <= (search.worst?.matches ?? .max) {
                    ceiling +=
                        "; at \(generatorBound) the load generator could not keep its own schedule, so the "
                        + "server's ceiling lies at or above \(best.matches) on this machine and was not reached"
                }
                lines.append(
                    "most matches within budget: \(best.matches) (\(2 * best.matches) clients) at 60 Hz, snapshot age "
                        + "p99 \(fixed(best.ageP99, 2)) ms\(ceiling)")
                lines.append(
                    "at \(best.matches) matches: \(fixed(best.packetsIn, 0)) packets/s in, \(fixed(best.packetsOut, 0)) "
                        + "out, server loop \(fixed(100 * best.serverCPU, 0)) % of one core = "
                        + "\(fixed((best.packetsIn + best.packetsOut) / max(best.serverCPU, 0.001), 0)) packets/s per core "
                        + "(in + out), \(fixed(best.microsecondsPerPacket, 2)) µs of server CPU per packet")
                lines.append("budget (DESIGN §9): ≥ 4,000 matches — \(best.matches >= 4_000 ? "met" : "NOT met")")
            } else {
                lines.append("no step met the budget")
            }
            lines.append("search took \(seconds) s")
            return lines
        }
    }

    /// The search's state: the best pass, the smallest failure, and the smallest step at which the load generator
    /// itself fell behind (the search stays below it: such a step proves nothing about the server).
    package struct Search: Sendable, Equatable {
        package var best: StepResult?
        package var worst: StepResult?
        package var generatorBound: Int?

        package init() {}

        package mutating func record(_ result: StepResult) {
            if result.generatorOverloaded {
                generatorBound = min(generatorBound ?? .max, result.matches)
            } else if result.passed {
                if best.map({ $0.matches < result.matches }) ?? true { best = result }
            } else if worst.map({ $0.matches > result.matches }) ?? true {
                worst = result
            }
        }

        /// The next match count to try, or `nil` when the search is done.
        package func next(max limit: Int) -> Int? {
            let ceiling = [worst?.matches, generatorBound].compactMap { $0 }.min()
            return ServerBenchmark.nextStep(pass: best?.matches, fail: ceiling, max: limit)
        }
    }

    /// `--steps` text: match counts 2…9000 separated by commas; `nil` when it is not that.
    package static func parseSteps(_ text: String) -> [Int]? {
        let values = text.split(separator: ",").map { Int($0.trimmingSpaces) }
        guard !values.isEmpty, values.allSatisfy({ $0.map { (2...9_000).contains($0) } ?? false }) else { return nil }
        return values.compactMap { $0 }
    }

    /// The line `run` prints first: the server core's cost per packet without sockets.
    package static func profileLine(_ profile: ServerCoreProfile.Result, inputRate: Int) -> String {
        "core only (ServerCore without sockets, 500 matches, \(inputRate) Hz inputs, 10 simulated s, CPU time of this thread): "
            + "\(fixed(profile.inputNanoseconds, 0)) ns and \(fixed(profile.inputAllocations, 2)) allocations per "
            + "PaddleState received; \(fixed(profile.tickNanosecondsPerMatch, 0)) ns and "
            + "\(fixed(profile.tickAllocationsPerMatch, 2)) allocations per match per tick (step, snapshots, "
            + "encoding \(fixed(profile.packetsOutPerTick / 500, 2)) packets per match per tick); one core's "
            + "worth: \(fixed(profile.matchesPerCore(inputRate: inputRate), 0)) matches before any socket work"
    }

    /// Profiles the core, then (unless `coreOnly`) runs the steps, printing each row as it is measured.
    package static func run(_ configuration: Configuration, environment: BenchEnvironment) async throws -> Result {
        let inputRate = configuration.inputRate
        try Measurement.checkAllocationCounter(environment)
        let profile = try ServerCoreProfile(matches: 500, ticks: 600, inputRate: inputRate).run(
            environment: environment)
        environment.output(profileLine(profile, inputRate: inputRate))
        var result = Result(inputRate: inputRate, profile: profile, steps: [], search: Search(), seconds: 0)
        guard !configuration.coreOnly else { return result }
        let pinned = configuration.pin && BenchSystem.onlineCores >= 2
        let serverGroup = pinned ? BenchSystem.pinnedGroup(core: 0) : MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let generatorGroup = pinned ? BenchSystem.pinnedGroup(core: 1) : MultiThreadedEventLoopGroup(numberOfThreads: 1)
        environment.output(
            "server: Puck matches on one server event loop \(pinned ? "pinned to core 0" : "(unpinned)"); "
                + "load generator \(pinned ? "pinned to core 1" : "(unpinned)"); inputs \(inputRate) Hz per client, "
                + "snapshots 30 Hz; warm-up \(configuration.warmup) s, window \(configuration.window) s per step, "
                + "time limit \(configuration.timeLimit) s; "
                + "\(BenchSystem.onlineCores) cores, load average \(fixed(BenchSystem.loadAverage(), 2))")
        environment.output(StepResult.header)
        let began = ContinuousClock.now
        var plan = configuration.steps ?? []
        var next: Int? = plan.isEmpty ? configuration.start : plan.removeFirst()
        while let matches = next {
            let elapsed = began.duration(to: .now).components.seconds
            let estimate = Int64(configuration.warmup + configuration.window + 3 + matches / 500)
            guard elapsed + estimate <= configuration.timeLimit else {
                environment.note("stopping: another step would pass --time-limit \(configuration.timeLimit) s")
                break
            }
            let step = try await step(
                matches: matches, settings: configuration, serverGroup: serverGroup, generatorGroup: generatorGroup,
                environment: environment)
            result.steps.append(step)
            environment.output(step.row)
            if configuration.steps != nil {
                next = plan.isEmpty ? nil : plan.removeFirst()
                continue
            }
            result.search.record(step)
            next = result.search.next(max: configuration.maxMatches)
        }
        result.seconds = began.duration(to: .now).components.seconds
        try await serverGroup.shutdownGracefully()
        try await generatorGroup.shutdownGracefully()
        return result
    }

    /// Doubles until a failure, then bisects to within 5 % (at least 10 matches).
    package static func nextStep(pass: Int?, fail: Int?, max limit: Int) -> Int? {
        switch (pass, fail) {
        case (nil, nil): return nil
        case (let pass?, nil): return pass >= limit ? nil : min(2 * pass, limit)
        case (nil, let fail?): return fail <= 10 ? nil : fail / 2
        case (let pass?, let fail?):
            guard fail - pass > Swift.max(10, pass / 20) else { return nil }
            return (pass + fail) / 2
        }
    }

    package struct StepResult: Sendable, Equatable {
        package var matches: Int
        package var welcomed: Int
        package var packetsIn: Double
        package var packetsOut: Double
        package var serverCPU: Double
        package var ageP50: Double
        package var ageP99: Double
        package var ageMax: Double
        package var delivered: Double
        package var inputsDelivered: Double
        package var reanchored: UInt64
        package var generatorCPU: Double
        package var generatorLatenessP99: Double
        /// Heap allocations on the generator's thread per datagram it sent or received in the window.
        package var generatorAllocationsPerPacket: Double
        package var generatorOverloaded: Bool
        package var passed: Bool

        /// A step passes when every client was welcomed, snapshot age p99 stayed under one 60 Hz tick, at least
        /// 99 % of the expected snapshots and of the inputs arrived, and the server never re-anchored its schedule.
        package static func passes(
            clients: Int, welcomed: Int, ageP99: Double, delivered: Double, inputsDelivered: Double,
            reanchored: UInt64, anchorMoved: Bool
        ) -> Bool {
            welcomed == clients && ageP99 < 1_000.0 / 60 && delivered >= 0.99 && inputsDelivered >= 0.99
                && reanchored == 0 && !anchorMoved
        }

        package var microsecondsPerPacket: Double { serverCPU * 1e6 / max(packetsIn + packetsOut, 1) }

        package static let header =
            pad("matches", 8, left: true) + pad("in pkt/s", 10, left: true) + pad("out pkt/s", 10, left: true)
            + pad("srv CPU", 9, left: true) + pad("µs/pkt", 8, left: true) + pad("age p50", 9, left: true)
            + pad("p99", 8, left: true) + pad("max", 8, left: true) + pad("snaps", 8, left: true)
            + pad("inputs", 8, left: true)
            + pad("late", 6, left: true) + pad("gen CPU", 9, left: true) + pad("gen p99", 9, left: true)
            + pad("gen a/pkt", 10, left: true) + "  verdict"

        package var row: String {
            pad("\(matches)", 8, left: true) + pad(fixed(packetsIn, 0), 10, left: true)
                + pad(fixed(packetsOut, 0), 10, left: true) + pad(fixed(100 * serverCPU, 0) + " %", 9, left: true)
                + pad(fixed(microsecondsPerPacket, 2), 8, left: true) + pad(fixed(ageP50, 2), 9, left: true)
                + pad(fixed(ageP99, 2), 8, left: true) + pad(fixed(ageMax, 1), 8, left: true)
                + pad(fixed(100 * delivered, 1) + "%", 8, left: true)
                + pad(fixed(100 * inputsDelivered, 1) + "%", 8, left: true) + pad("\(reanchored)", 6, left: true)
                + pad(fixed(100 * generatorCPU, 0) + " %", 9, left: true)
                + pad(fixed(generatorLatenessP99, 2), 9, left: true)
                + pad(fixed(generatorAllocationsPerPacket, 2), 10, left: true)
                + "  " + (generatorOverloaded ? "generator overloaded" : passed ? "pass" : "FAIL")
        }
    }

    private static func step(
        matches: Int, settings: Configuration, serverGroup: MultiThreadedEventLoopGroup,
        generatorGroup: MultiThreadedEventLoopGroup, environment: BenchEnvironment
    ) async throws -> StepResult {
        let inputRate = settings.inputRate
        var configuration = ServerConfiguration()
        configuration.tcp = nil
        configuration.http = nil
        configuration.maxSessions = 2 * matches + 64
        configuration.maxMatches = matches + 32
        configuration.maxForming = matches + 32
        configuration.packetRate = Double(4 * inputRate + 100)
        let server = try await ReferenceServer.start(configuration: configuration, group: serverGroup)
        let serverLoop = serverGroup.next()
        guard let port = server.addresses.udp?.port else { throw BenchError("the server did not report its UDP port") }

        let clients = 2 * matches
        let control = NIOLockedValueBox(LoadGenerator.Control())
        let threadAllocations = environment.threadAllocations
        let report = generatorGroup.next().submit {
            // This loop thread is the generator's for the step: no channel lives on this group.
            LoadGenerator(
                serverPort: port, clients: clients, inputRate: inputRate, control: control,
                threadAllocations: threadAllocations
            ).run()
        }
        defer { control.withLockedValue { $0.stop = true } }
        let deadline = ContinuousClock.now + .seconds(20 + clients / 1_000)
        while control.withLockedValue({ $0.welcomed + $0.failed }) < clients {
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .seconds(settings.warmup))
        let before = try await Self.sample(server, loop: serverLoop)
        control.withLockedValue { $0.recording = true }
        try await Task.sleep(for: .seconds(settings.window))
        control.withLockedValue { $0.recording = false }
        let after = try await Self.sample(server, loop: serverLoop)
        let welcomed = control.withLockedValue { control in
            control.stop = true
            return control.welcomed
        }
        let generated = try await report.get()
        // Every socket is closed now; what the server has not read of them by now it never will.
        try await Task.sleep(for: .milliseconds(100))
        let final = try await server.stats()
        await server.shutdown()
        if let error = generated.error { throw BenchError("the load generator failed: \(error)") }

        let seconds = Double(after.wall - before.wall) / 1e9
        let packetsIn = Double(after.received - before.received) / seconds
        let packetsOut = Double(after.sent - before.sent) / seconds
        let ages = Self.snapshotAges(generated.samples, anchor: Int64(after.stats.tickAnchor))
        let percentiles = Percentiles(ages)
        let expected = Double(welcomed) * 30 * Double(generated.windowNanoseconds) / 1e9
        let delivered = expected > 0 ? Double(generated.snapshotsInWindow) / expected : 0
        let reanchored = after.stats.lateTicks - before.stats.lateTicks
        let ageP99 = percentiles.at(0.99)
        // Inputs the server decoded against those the kernel took from the generator, over the whole step: what is
        // missing was dropped from the server's full socket buffer.
        let decoded = Double(final.packetsReceived[MessageType.paddleState.index])
        let inputsDelivered = generated.inputsAccepted > 0 ? decoded / Double(generated.inputsAccepted) : 0
        let passed = StepResult.passes(
            clients: clients, welcomed: welcomed, ageP99: ageP99, delivered: delivered,
            inputsDelivered: inputsDelivered, reanchored: reanchored,
            anchorMoved: before.stats.tickAnchor != after.stats.tickAnchor)
        return StepResult(
            matches: matches, welcomed: welcomed, packetsIn: packetsIn, packetsOut: packetsOut,
            serverCPU: Double(after.cpu - before.cpu) / 1e9 / seconds, ageP50: percentiles.at(0.5), ageP99: ageP99,
            ageMax: percentiles.max, delivered: delivered, inputsDelivered: inputsDelivered, reanchored: reanchored,
            generatorCPU: Double(generated.cpuNanoseconds) / Double(max(generated.windowNanoseconds, 1)),
            generatorLatenessP99: generated.latenessMilliseconds(0.99),
            generatorAllocationsPerPacket: generated.allocationsPerPacket, generatorOverloaded: generated.overloaded,
            passed: passed)
    }

    private struct ServerSample {
        var stats: ServerStats
        var cpu: Int64
        var wall: Int64
        var received: UInt64 { stats.packetsReceived.reduce(0, &+) + stats.totalRejected }
        var sent: UInt64 { stats.packetsSent.reduce(0, &+) }
    }

    private static func sample(_ server: ReferenceServer, loop: any EventLoop) async throws -> ServerSample {
        let cpu = try await loop.submit { BenchSystem.threadCPUNanoseconds() }.get()
        let stats = try await server.stats()
        return ServerSample(stats: stats, cpu: cpu, wall: LoadGenerator.monotonic())
    }

    /// Each in-window snapshot's age in milliseconds: arrival minus the due time of the server tick that made it.
    ///
    /// A snapshot of match tick T was made at server tick T + c, where c is fixed per match (the tick the match
    /// started at); c is the smallest whole number of ticks between the schedule and any of that client's arrivals,
    /// which holds as long as one snapshot per client arrived within a tick of its due time.
    package static func snapshotAges(_ samples: [LoadGenerator.Sample], anchor: Int64) -> [Double] {
        var offsets: [UInt32: Int64] = [:]
        for sample in samples {
            let index = (sample.arrival - anchor) * 60 / 1_000_000_000 - Int64(sample.tick)
            offsets[sample.client] = min(offsets[sample.client] ?? .max, index)
        }
        var ages: [Double] = []
        ages.reserveCapacity(samples.count)
        for sample in samples where sample.inWindow {
            guard let offset = offsets[sample.client] else { continue }
            let due = anchor + (Int64(sample.tick) + offset) * 1_000_000_000 / 60
            ages.append(Double(sample.arrival - due) / 1e6)
        }
        return ages
    }
}
