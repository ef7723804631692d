import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench export`: serialisation cost per format, and whether pushing disturbs a running swarm.
package enum ExportBenchmark {
    package struct Configuration: Sendable {
        /// Series in the rendered snapshot (80 % counters, 15 % gauges, 5 % histograms).
        package var series = 10_000
        /// Renders per format (the mean is reported).
        package var repeats = 7
        /// Puck bots in each swarm run of part 2.
        package var bots = 300
        /// Seconds each swarm run of part 2 holds its bots.
        package var seconds = 12
        /// Runs of each kind (without and with pushing), interleaved.
        package var rounds = 2
        /// Milliseconds between pushes in part 2.
        package var pushIntervalMs = 250
        /// Only part 1 (serialisation).
        package var skipSwarm = false

        package init() {}
    }

    /// One format's render figures.
    package struct FormatRow: Sendable, Equatable {
        package var format: String
        package var bytes: Int
        package var measurement: Measurement

        package var milliseconds: Double { measurement.nanosecondsPerIteration / 1e6 }
        package var cpuMilliseconds: Double { measurement.cpuNanosecondsPerIteration / 1e6 }
        /// The budget is judged on CPU time: on a busy machine the wall time includes other processes' turns.
        package var withinBudget: Bool { cpuMilliseconds < 50 }

        package var line: String {
            pad(format, 12) + pad(fixed(milliseconds, 2), 11, left: true)
                + pad(fixed(cpuMilliseconds, 2), 9, left: true) + pad("\(bytes)", 12, left: true)
                + pad(fixed(measurement.allocationsPerIteration, 0), 15, left: true)
                + (withinBudget ? "  ok" : "  OVER")
        }

        package static let header =
            pad("format", 12) + pad("ms/render", 11, left: true) + pad("cpu ms", 9, left: true)
            + pad("bytes", 12, left: true) + pad("allocs/render", 15, left: true) + "  budget 50 ms"
    }

    /// One swarm run of part 2.
    package struct PushRun: Sendable, Equatable {
        package var pushing: Bool
        package var p50: Double
        package var p99: Double
        package var max: Double
        package var onTime: Double
        package var pushes: Int
        package var failures: Int
    }

    /// Part 2's verdict: the difference of the mean tick lateness p99 with and without pushing, against the spread
    /// between runs of the same kind.
    package struct PushingVerdict: Sendable, Equatable {
        package var withoutP99: Double
        package var withP99: Double
        package var spread: Double

        package init(without quiet: [Double], with loud: [Double]) {
            withoutP99 = Self.mean(quiet)
            withP99 = Self.mean(loud)
            spread = Swift.max(
                (quiet.max() ?? 0) - (quiet.min() ?? 0), (loud.max() ?? 0) - (loud.min() ?? 0))
        }

        package var difference: Double { withP99 - withoutP99 }
        /// Half a millisecond is below the 1 ms granularity of the bots' scheduler: nothing a bot could notice.
        package var unchanged: Bool { difference <= Swift.max(spread, 0.000_5) }

        private static func mean(_ values: [Double]) -> Double {
            values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
        }
    }

    package struct Result: Sendable {
        package var formats: [FormatRow]
        package var runs: [PushRun]
        /// `nil` without part 2, or with one run of each kind (no run-to-run spread to compare with).
        package var verdict: PushingVerdict?

        package var passed: Bool { formats.allSatisfy(\.withinBudget) && (verdict?.unchanged ?? true) }
    }

    /// Part 1, then part 2 unless `skipSwarm`, printing each line as it is measured.
    package static func run(_ configuration: Configuration, environment: BenchEnvironment) async throws -> Result {
        try Measurement.checkAllocationCounter(environment)
        let formats = renderFormats(configuration, environment: environment)
        var result = Result(formats: formats, runs: [], verdict: nil)
        if !configuration.skipSwarm {
            (result.runs, result.verdict) = try await comparePushing(configuration, environment: environment)
        }
        return result
    }

    // MARK: Part 1

    /// Renders the synthetic snapshot in every format.
    private static func renderFormats(_ configuration: Configuration, environment: BenchEnvironment) -> [FormatRow] {
        let snapshot = Self.syntheticSnapshot(series: configuration.series)
        environment.output(
            "export (1/2): render \(snapshot.series.count) series, mean of \(configuration.repeats) renders per format")
        environment.output(FormatRow.header)
        var renders: [(String, (MetricsSnapshot) -> [UInt8])] = MetricsFormat.allCases.map { format in
            (format.rawValue, { MetricsRenderer.render($0, as: format) })
        }
        renders.append(("openmetrics", { MetricsRenderer.renderOpenMetrics($0) }))
        var rows: [FormatRow] = []
        for (name, render) in renders {
            var bytes = 0
            let measurement = Measurement.run(iterations: configuration.repeats, environment: environment) { _ in
                bytes = render(snapshot).count
            }
            let row = FormatRow(format: name, bytes: bytes, measurement: measurement)
            environment.output(row.line)
            rows.append(row)
        }
        environment.output("")
        return rows
    }

    /// A snapshot shaped like a large swarm's: many personas, message types and histograms with real samples.
    package static func syntheticSnapshot(series: Int) -> MetricsSnapshot {
        let shard = MetricsShard(constantLabels: ["run": "bench", "shard": "0"], startTimeMs: 1_700_000_000_000)
        let histograms = max(1, series / 20)
        let gauges = max(1, series * 15 / 100)
        let counters = max(1, series - histograms - gauges)
        let types = ["PaddleState", "TableSnapshot", "Ping", "Pong", "Ack", "Chat", "Hello", "Welcome"]
        let deliveries = ["unreliable", "reliable", "handshake"]
        var random = SystemRandomNumberGenerator()
        for index in 0..<counters {
            let id = shard.counter(
                SkirmishMetrics.packetsSent,
                [
                    "game": "puck", "persona": "persona-\(index / (types.count * deliveries.count))",
                    "type": types[index % types.count], "delivery": deliveries[(index / types.count) % 3],
                ])
            shard.add(id, UInt64.random(in: 0..<10_000_000, using: &random))
        }
        for index in 0..<gauges {
            shard.set(
                shard.gauge(SkirmishMetrics.botsConnected, ["game": "snap", "persona": "persona-\(index)"]),
                Double(index % 400))
        }
        for index in 0..<histograms {
            let id = shard.histogram(SkirmishMetrics.rtt, ["game": "suns", "persona": "persona-\(index)"])
            for _ in 0..<200 { shard.record(id, seconds: Double.random(in: 0.0001..<0.3, using: &random)) }
        }
        return shard.snapshot(at: 1_700_000_060_000)
    }

    // MARK: Part 2

    /// Runs the swarm with and without pushing, interleaved.
    private static func comparePushing(
        _ configuration: Configuration, environment: BenchEnvironment
    ) async throws -> ([PushRun], PushingVerdict?) {
        let output = environment.output
        output(
            "export (2/2): \(configuration.bots) Puck bots at 30 Hz for \(configuration.seconds) s against the embedded "
                + "server, \(configuration.rounds)× without and \(configuration.rounds)× with pushing all 5 formats "
                + "every \(configuration.pushIntervalMs) ms")
        let sink = try await PushSink.start()
        var runs: [PushRun] = []
        for round in 0..<configuration.rounds {
            for pushing in [false, true] {
                let run = try await swarmRun(
                    pushing: pushing, sinkPort: sink.port, seed: UInt64(round + 1), configuration: configuration)
                runs.append(run)
                output(
                    "  run \(runs.count): " + (pushing ? "pushing   " : "no exporter")
                        + "  lateness p50 \(ms(run.p50))  p99 \(ms(run.p99))  max \(ms(run.max))"
                        + "  on time \(fixed(run.onTime * 100, 2)) %"
                        + (pushing ? "  pushes \(run.pushes), failures \(run.failures)" : ""))
            }
        }
        let requests = sink.requests
        try await sink.close()
        let verdict = PushingVerdict(
            without: runs.filter { !$0.pushing }.map(\.p99), with: runs.filter(\.pushing).map(\.p99))
        output(
            "  sink received \(requests) pushes; tick lateness p99 without \(ms(verdict.withoutP99)), with "
                + "\(ms(verdict.withP99)): difference \(ms(verdict.difference)) against a run-to-run spread of "
                + "\(ms(verdict.spread))")
        guard configuration.rounds > 1 else {
            output("  verdict: none (one run of each kind has no run-to-run spread to compare with; use --rounds 2)")
            return (runs, nil)
        }
        output(
            verdict.unchanged
                ? "  verdict: no measurable effect of pushing on tick lateness"
                : "  verdict: pushing raised tick lateness p99 beyond the run-to-run spread")
        return (runs, verdict)
    }

    private static func swarmRun(
        pushing: Bool, sinkPort: Int, seed: UInt64, configuration settings: Configuration
    ) async throws -> PushRun {
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let botGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ReferenceServer.start(configuration: ServerConfiguration(), group: serverGroup)
        guard let port = server.addresses.udp?.port else { throw BenchError("the embedded server has no UDP port") }
        let yaml = """
            name: export-bench
            profile: [{ramp: {to: \(settings.bots), over: 2s}}, {hold: {for: \(settings.seconds)s}}]
            personas:
              - {name: chaser, weight: 1, game: puck, behavior: chaser, input_rate: 30hz}
            """
        let script = try Catalogue.builtIn.scriptLoader.parse(yaml, file: "bench export")
        let plan = try LoadPlan(script: script)
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: seed,
            runID: "bench-export", loops: 1)
        let swarm = try await Swarm(configuration: configuration, group: botGroup)
        let targets = try MetricsFormat.allCases.map { format in
            try PushTarget(parsing: "http://127.0.0.1:\(sinkPort)/\(format.rawValue)", format: format)
        }
        let exporter: Exporter? =
            pushing
            ? Exporter(
                targets: targets, source: swarm.metricsSource, interval: .milliseconds(settings.pushIntervalMs),
                runID: "bench-export", shard: "0") : nil
        exporter?.start()
        let outcome = await swarm.run()
        await ExportBenchmark.offCooperativePool { exporter?.stop(finalPush: true) }
        await server.shutdown()
        try await botGroup.shutdownGracefully()
        try await serverGroup.shutdownGracefully()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "bench export", startedAt: Date(),
            exporter: exporter?.stats)
        let lateness = summary.latency.tickLateness
        return PushRun(
            pushing: pushing, p50: lateness?.p50 ?? 0, p99: lateness?.p99 ?? 0, max: lateness?.max ?? 0,
            onTime: summary.onTimeSendRate ?? 0, pushes: exporter?.stats.pushes ?? 0,
            failures: exporter?.stats.totalFailures ?? 0)
    }

    /// Runs blocking work (joining the exporter's threads) on a thread of its own, never on the cooperative pool.
    private static func offCooperativePool(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                body()
                done.resume()
            }.start()
        }
    }

    private static func ms(_ seconds: Double) -> String { fixed(seconds * 1_000, 2) + " ms" }
}
