import Testing

@testable import SkirmishBench

/// The tables the commands print: columns, decimals and verdict lines, character for character.
@Suite struct TableFormattingTests {
    @Test func codecTableAndItsVerdict() {
        let quiet = Measurement(iterations: 4, nanoseconds: 2_000, cpuNanoseconds: 1_000, allocations: 0)
        var result = CodecBenchmark.Result(
            iterations: 4, rows: [CodecBenchmark.Row(message: "Ping", bytes: 26, measurement: quiet)])
        #expect(result.passed)
        #expect(
            result.lines == [
                "codec: encode + decode round trips, 4 per message",
                "message          bytes  ns/round trip   cpu ns  allocs/packet",
                "Ping                26          500.0    250.0          0.000",
            ])
        result.rows[0].measurement.allocations = 4
        #expect(!result.passed)
        #expect(result.lines[2] == "Ping                26          500.0    250.0          1.000")
        #expect(result.lines.last == "FAIL: a fixed-size message allocated on the hot path")
    }

    @Test func gamesRatiosAndClosingLines() {
        func row(_ name: String, _ nanoseconds: Double) -> GamesBenchmark.Row {
            GamesBenchmark.Row(
                operation: name,
                measurement: Measurement(
                    iterations: 1, nanoseconds: nanoseconds, cpuNanoseconds: nanoseconds, allocations: 0))
        }
        let result = GamesBenchmark.Result(
            iterations: 1_000,
            rows: [
                row(GamesBenchmark.Result.puckStep, 100), row(GamesBenchmark.Result.serverTick, 250),
                row(GamesBenchmark.Result.snapTurn, 400), row(GamesBenchmark.Result.snapTurnHash, 1_000),
            ])
        #expect(result.lines[2] == "Puck step (one match tick)             100.0      10000000      0.0000")
        #expect(
            result.lines.suffix(2) == [
                "one core steps about 66667 Puck matches at 60 Hz on rules alone "
                    + "(budget: ≥ 500 matches per core including the network)",
                "ratio: server tick / bare step = 2.50; Snap turn + hash / turn = 2.50",
            ])
    }

    @Test func serverStepRow() {
        let step = ServerBenchmark.StepResult(
            matches: 250, welcomed: 500, packetsIn: 15_000, packetsOut: 15_000, serverCPU: 0.5, ageP50: 0.25,
            ageP99: 2.5, ageMax: 7.25, delivered: 0.75, inputsDelivered: 1, reanchored: 0, generatorCPU: 0.2,
            generatorLatenessP99: 0.5, generatorAllocationsPerPacket: 0.25, generatorOverloaded: false, passed: true)
        #expect(
            ServerBenchmark.StepResult.header
                == " matches  in pkt/s out pkt/s  srv CPU  µs/pkt  age p50     p99     max   snaps  inputs  late"
                + "  gen CPU  gen p99 gen a/pkt  verdict")
        #expect(
            step.row
                == "     250     15000     15000     50 %   16.67     0.25    2.50     7.3   75.0%  100.0%     0"
                + "     20 %     0.50      0.25  pass")
        var overloaded = step
        overloaded.generatorOverloaded = true
        #expect(overloaded.row.hasSuffix("  generator overloaded"))
        overloaded.generatorOverloaded = false
        overloaded.passed = false
        #expect(overloaded.row.hasSuffix("  FAIL"))
    }

    @Test func serverSummaryNamesTheBestStepAndTheGeneratorBound() {
        var search = ServerBenchmark.Search()
        search.record(
            ServerBenchmark.StepResult(
                matches: 1_000, welcomed: 2_000, packetsIn: 60_000, packetsOut: 60_000, serverCPU: 0.6, ageP50: 1,
                ageP99: 3.25, ageMax: 9, delivered: 1, inputsDelivered: 1, reanchored: 0, generatorCPU: 0.5,
                generatorLatenessP99: 1, generatorAllocationsPerPacket: 0, generatorOverloaded: false, passed: true))
        search.generatorBound = 2_000
        let profile = ServerCoreProfile.Result(
            inputNanoseconds: 0, inputAllocations: 0, tickNanosecondsPerMatch: 0, tickAllocationsPerMatch: 0,
            packetsOutPerTick: 0, welcomed: 0, resends: 0)
        let result = ServerBenchmark.Result(inputRate: 30, profile: profile, steps: [], search: search, seconds: 42)
        #expect(
            result.summaryLines == [
                "",
                "most matches within budget: 1000 (2000 clients) at 60 Hz, snapshot age p99 3.25 ms; at 2000 the load "
                    + "generator could not keep its own schedule, so the server's ceiling lies at or above 1000 on "
                    + "this machine and was not reached",
                "at 1000 matches: 60000 packets/s in, 60000 out, server loop 60 % of one core = 200000 packets/s per "
                    + "core (in + out), 5.00 µs of server CPU per packet",
                "budget (DESIGN §9): ≥ 4,000 matches — NOT met",
                "search took 42 s",
            ])
    }

    @Test func netFailuresListTheirCausesMostFirst() {
        let result = NetBenchmark.Result(
            name: "10 clients", roundTripsPerSecond: 1_000, clientCPUFraction: 0.25, cpuPerPacket: 10_000,
            allocationsPerPacket: 0, echoCPUFraction: 0.5, echoCPUPerPacket: 20_000, rssAfterOpen: 1_040_960,
            openAllocations: 96, failures: 3)
        let outcome = NetBenchmark.Outcome(
            clients: 10, single: result, many: result, rssBefore: 1_000_000, causes: ["refused": 1, "timeout": 2])
        #expect(outcome.bytesPerSession == 4_096)
        #expect(
            result.row
                == "10 clients               1000        2000        25 %       100000        0.00      50 %"
                + "             50000")
        #expect(outcome.lines.contains { $0.contains("= 4.00 KiB per session; opening one made 9.6 heap allocations") })
        #expect(outcome.lines.last == "FAIL: 6 sessions disconnected during the run: 2 × timeout, 1 × refused")
        #expect(!outcome.passed)
    }
}
