import Foundation
import NIOCore
import NIOPosix
import SkirmishGames
import SkirmishNet
import SkirmishServer
import SkirmishWire
import Testing

@testable import SkirmishConformance

/// The conformance suite against the real reference server, and against a proxy that breaks one rule at a time.
///
/// Serialized: each test runs a whole server and several players, and the checks' time limits are generous but
/// real; two suites at once on a two-core machine would only measure each other.
@Suite(.serialized)
struct ConformanceTests {
    /// The checks' limits are hang guards here: this process shares two busy cores with the rest of `make test`,
    /// and was seen to stall for over half a minute under `make test-under-load` (a 15 s check then failed a correct
    /// server for being slow). Every fault still has to make its check fail.
    static let patience = 4.0

    @Test("the reference server passes every check", arguments: Transport.allCases)
    func referenceServerPasses(_ transport: Transport) async throws {
        let report = try await Self.withServer { server in
            await ConformanceSuite(patience: Self.patience).run(against: try target(transport, of: server))
        }
        let lines = report.results.map(\.line).joined(separator: "\n")
        #expect(report.failed == 0, "\(lines)")
        #expect(report.results.count == ConformanceSuite.all.count)
        let elsewhere = ConformanceSuite.all.filter { !$0.transports.contains(transport) }.count
        #expect(report.skipped == elsewhere, "\(lines)")
        // The figure the help, the article and a run's first line give, with the tests' patience as the margin of a
        // busy machine.
        let usual = Double(ConformanceSuite.usualSeconds(on: transport))
        #expect(report.seconds < usual * Self.patience, "\(report.seconds) s")
    }

    @Test(
        "a server hosting only some games gets no FAIL: the other games' checks are skipped as not hosted",
        arguments: [[GameKind.snap], [.snap, .suns]])
    func partialServerPasses(_ games: [GameKind]) async throws {
        let report = try await Self.withServer(games: Set(games)) { server in
            await ConformanceSuite(patience: Self.patience).run(against: try target(.udp, of: server))
        }
        let lines = report.results.map(\.line).joined(separator: "\n")
        #expect(report.failed == 0, "\(lines)")
        for game in GameSurvey.builtIn where !games.contains(game) {
            for check in ConformanceSuite.all where check.needs == .game(game) {
                guard case .skip(let why) = report.outcome(of: check.id) else {
                    Issue.record("\(check.id) ran against a server without \(game): \(lines)")
                    continue
                }
                #expect(why.contains("does not host \(game)"), "\(why)")
            }
        }
        #expect(report.outcome(of: "handshake.games") == .pass, "\(lines)")
        #expect(report.outcome(of: "session.join") == .pass, "\(lines)")
    }

    @Test("a broken handshake fails once, and every check that needs a seat is skipped as depending on it")
    func brokenHandshakeFailsOnce() async throws {
        let report = try await Self.withProxy(.dropsWelcomes) { target in
            await ConformanceSuite(patience: Self.patience).run(against: target)
        }
        let lines = report.results.map(\.line).joined(separator: "\n")
        #expect(report.failed == 1, "\(lines)")
        guard case .fail = report.outcome(of: "handshake.games") else {
            Issue.record("handshake.games did not fail: \(lines)")
            return
        }
        for check in ConformanceSuite.all where check.needs != .nothing && check.transports.contains(.udp) {
            guard case .skip(let why) = report.outcome(of: check.id) else {
                Issue.record("\(check.id) ran without a seat: \(lines)")
                continue
            }
            #expect(why.contains("handshake.games"), "\(check.id): \(why)")
        }
        // The skipped checks cost nothing: the run is the survey and the few checks that need no seat.
        #expect(report.seconds < 40 * Self.patience, "\(report.seconds) s")
    }

    @Test("every check has a fault that must make it fail")
    func everyCheckHasAFault() {
        #expect(Set(Fault.allCases.map(\.check)) == Set(ConformanceSuite.ids))
    }

    @Test("each check fails against the server with its rule broken", arguments: Fault.allCases.filter(\.onDatagrams))
    func checkFails(_ fault: Fault) async throws {
        let report = try await Self.withProxy(fault) { target in
            await ConformanceSuite(only: [fault.check], patience: Self.patience).run(against: target)
        }
        try Self.expectFailure(of: fault, in: report, over: "")
    }

    @Test(
        "each check fails over TCP against the server with its rule broken, where the rule applies to streams",
        arguments: Fault.allCases.filter(\.onStreams))
    func checkFailsOverTCP(_ fault: Fault) async throws {
        let report = try await Self.withStreamProxy(fault) { target in
            await ConformanceSuite(only: [fault.check], patience: Self.patience).run(against: target)
        }
        try Self.expectFailure(of: fault, in: report, over: " over TCP")
    }

    @Test(
        "each WebSocket check fails against the server with its rule broken",
        arguments: Fault.allCases.filter(\.onWebSocket))
    func checkFailsOverWebSocket(_ fault: Fault) async throws {
        let report = try await Self.withServer { server in
            let proxy = try await WebSocketCloseProxy.start(server: try #require(server.addresses.http))
            let target = Target(transport: .webSocket, host: "127.0.0.1", port: proxy.port, path: "/ws")
            let report = await ConformanceSuite(only: [fault.check], patience: Self.patience).run(against: target)
            await proxy.stop()
            return report
        }
        try Self.expectFailure(of: fault, in: report, over: " over WebSocket")
    }

    /// `fault`'s check failed in `report`, on the fault's own rule.
    static func expectFailure(
        of fault: Fault, in report: ConformanceReport, over transport: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try #require(
            report.results.first { $0.check.id == fault.check }, sourceLocation: sourceLocation)
        guard case .fail = result.outcome else {
            Issue.record(
                "\(fault.check) did not fail\(transport) with \(fault): \(result.line)", sourceLocation: sourceLocation)
            return
        }
        #expect(result.line.contains(fault.failure), "\(result.line)", sourceLocation: sourceLocation)
    }

    @Test("through the TCP proxy with no fault every check that applies to TCP passes")
    func transparentStreamProxyPasses() async throws {
        let report = try await Self.withStreamProxy(nil) { target in
            await ConformanceSuite(patience: Self.patience).run(against: target)
        }
        #expect(report.failed == 0, "\(report.results.map(\.line).joined(separator: "\n"))")
        #expect(report.passed == ConformanceSuite.all.filter { $0.transports.contains(.tcp) }.count)
    }

    @Test("through the proxy with no fault every check passes: the failures above are the faults'")
    func transparentProxyPasses() async throws {
        let report = try await Self.withProxy(nil) { target in
            await ConformanceSuite(patience: Self.patience).run(against: target)
        }
        #expect(report.failed == 0, "\(report.results.map(\.line).joined(separator: "\n"))")
        #expect(report.passed == ConformanceSuite.all.filter { $0.transports.contains(.udp) }.count)
    }

    @Test("a server that seats Snap for 3 or 4 players only hosts Snap: snap.deal plays four seats and passes")
    func snapForFourIsHosted() async throws {
        let report = try await Self.withProxy(.refusesTwoSeatSnap) { target in
            await ConformanceSuite(
                only: ["handshake.games", "snap.deal", "session.keepalive"], patience: Self.patience
            ).run(against: target)
        }
        let lines = report.results.map(\.line).joined(separator: "\n")
        #expect(report.outcome(of: "handshake.games") == .pass, "\(lines)")
        #expect(report.outcome(of: "session.keepalive") == .pass, "\(lines)")
        let deal = try #require(report.results.first { $0.check.id == "snap.deal" })
        #expect(deal.outcome == .pass, "\(lines)")
        #expect(deal.note?.hasPrefix("played at 4 seats") == true, "\(deal.line)")
        #expect(deal.line.contains("(played at 4 seats: the server refused snap for 2 with Reject(4))"), "\(deal.line)")
    }

    @Test("a server that hosts Snap for 3 or 4 players only gets no FAIL: what fits its tables runs, the rest skips")
    func snapForFourOnly() async throws {
        let report = try await Self.withProxy(nil, games: [.snap], refusingTwoSeatSnap: true) { target in
            await ConformanceSuite(patience: Self.patience).run(against: target)
        }
        let lines = report.results.map(\.line).joined(separator: "\n")
        #expect(report.failed == 0, "\(lines)")
        // Each picks its table: handshake.order's "not forming" Hello asks for Snap at 4, the keepalive idles at a
        // table for 4, the ack timeout sits alone at a table for 3, snap.deal plays 4.
        for id in ["handshake.games", "handshake.order", "session.keepalive", "session.ack-timeout", "snap.deal"] {
            #expect(report.outcome(of: id) == .pass, "\(id): \(lines)")
        }
        for check in ConformanceSuite.all where check.needs == .seat && check.transports.contains(.udp) {
            guard case .skip(let why) = report.outcome(of: check.id) else {
                Issue.record("\(check.id) ran without a two-player table: \(lines)")
                continue
            }
            #expect(why.contains("seats snap for 4 players only"), "\(check.id): \(why)")
        }
    }

    @Test(
        "a broken Snap rule is caught at the four seats of a server that seats Snap for 3 or 4 only",
        arguments: Fault.allCases.filter { $0.check == "snap.deal" })
    func snapFaultAtFourSeats(_ fault: Fault) async throws {
        let report = try await Self.withProxy(fault, refusingTwoSeatSnap: true) { target in
            await ConformanceSuite(only: ["snap.deal"], patience: Self.patience).run(against: target)
        }
        try Self.expectFailure(of: fault, in: report, over: " at four seats")
        let deal = try #require(report.results.first)
        #expect(deal.note?.hasPrefix("played at 4 seats") == true, "\(deal.line)")
    }

    @Test("a check's note follows its title in its line, and is its note in JSON and its system-out in JUnit")
    func noteInEveryFormat() throws {
        let note = "played at 4 seats: the server refused snap for 2 with Reject(4)"
        let report = ConformanceReport(results: [
            CheckResult(check: .snapDeal, outcome: .pass, seconds: 1, note: note),
            CheckResult(check: .sunsRelay, outcome: .fail(expected: "x", saw: "y"), seconds: 1),
        ])
        #expect(report.results[0].line == "PASS  snap.deal  \(ConformanceCheck.snapDeal.title) (\(note))")
        #expect(report.results[1].line.hasPrefix("FAIL  suns.relay  \(ConformanceCheck.sunsRelay.title): expected x"))
        let target = Target(transport: .udp, host: "127.0.0.1", port: 9)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(report.json(target: target).utf8)) as? [String: Any])
        let checks = try #require(document["checks"] as? [[String: Any]])
        #expect(checks.map { $0["note"] as? String } == [note, nil])
        let junit = report.junit(target: target)
        #expect(
            junit.contains("time=\"1.000\">\n      <system-out>\(note)</system-out>\n    </testcase>\n"), "\(junit)")
        #expect(junit.components(separatedBy: "<system-out>").count == 2, "\(junit)")
    }

    @Test("session.keepalive runs on a Puck-only server (a match ended by forfeit), and fails when Pings are dropped")
    func keepaliveOnPuckOnly() async throws {
        let suite = ConformanceSuite(only: ["session.keepalive"], patience: Self.patience)
        let passing = try await Self.withServer(games: [.puck]) { server in
            await suite.run(against: try target(.udp, of: server))
        }
        #expect(passing.outcome(of: "session.keepalive") == .pass, "\(passing.results.map(\.line))")
        let failing = try await Self.withProxy(.dropsPings, games: [.puck]) { target in await suite.run(against: target)
        }
        try Self.expectFailure(of: .dropsPings, in: failing, over: " on a Puck-only server")
    }

    @Test("a check that runs out of time says where it stood")
    func aCheckThatRunsOutOfTimeSaysWhereItStood() async throws {
        let stuck = ConformanceCheck(
            id: "test.stuck", title: "a check stuck in a wait", transports: [.udp], needs: .nothing,
            limit: .milliseconds(300)
        ) { context in
            context.step("waiting for nothing")
            try await Task.sleep(for: .seconds(60))
            return .pass
        }
        let report = await ConformanceSuite(checks: [stuck]).run(
            against: Target(transport: .udp, host: "127.0.0.1", port: 9))
        let outcome = try #require(report.results.first?.outcome)
        guard case .fail(_, let saw) = outcome else {
            Issue.record("the stuck check came out as \(outcome)")
            return
        }
        #expect(saw.hasPrefix("the check still waiting (last at waiting for nothing, "), "\(saw)")
    }

    @Test("a target where nothing listens is reported as unreachable")
    func unreachableTarget() async throws {
        // A port that was free a moment ago: bound, noted, closed.
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        await #expect(throws: ConformanceSuite.Unreachable.self) {
            try await ConformanceSuite.reach(Target(transport: .tcp, host: "127.0.0.1", port: port))
        }
    }

    /// Runs `body` against a fresh reference server and shuts it down before returning, thrown or not, so the next
    /// test's timed checks never share the machine with this test's server.
    static func withServer<T>(
        games: Set<GameKind>? = nil, _ body: (ReferenceServer) async throws -> T
    ) async throws -> T {
        var configuration = ServerConfiguration()
        if let games { configuration.games = configuration.games.restricted(to: games) }
        let server = try await ReferenceServer.start(configuration: configuration)
        do {
            let result = try await body(server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }

    /// Runs `body` against a ``FaultProxy`` breaking `fault` (and refusing Snap for two when `refusingTwoSeatSnap`) in
    /// front of a fresh server; stops both before returning.
    static func withProxy<T>(
        _ fault: Fault?, games: Set<GameKind>? = nil, refusingTwoSeatSnap: Bool = false,
        _ body: (Target) async throws -> T
    ) async throws -> T {
        try await withServer(games: games) { server in
            let proxy = try await FaultProxy.start(
                fault: fault, refusingTwoSeatSnap: refusingTwoSeatSnap, server: try #require(server.addresses.udp))
            do {
                let result = try await body(
                    Target(transport: .udp, host: "127.0.0.1", port: try #require(proxy.address.port)))
                await proxy.stop()
                return result
            } catch {
                await proxy.stop()
                throw error
            }
        }
    }

    /// Runs `body` against a ``StreamFaultProxy`` breaking `fault` in front of a fresh server's TCP listener; stops
    /// both before returning.
    static func withStreamProxy<T>(_ fault: Fault?, _ body: (Target) async throws -> T) async throws -> T {
        try await withServer { server in
            let proxy = try await StreamFaultProxy.start(fault: fault, server: try #require(server.addresses.tcp))
            do {
                let result = try await body(Target(transport: .tcp, host: "127.0.0.1", port: proxy.port))
                await proxy.stop()
                return result
            } catch {
                await proxy.stop()
                throw error
            }
        }
    }

    private func target(_ transport: Transport, of server: ReferenceServer) throws -> Target {
        switch transport {
        case .udp: Target(transport: .udp, host: "127.0.0.1", port: try #require(server.addresses.udp?.port))
        case .tcp: Target(transport: .tcp, host: "127.0.0.1", port: try #require(server.addresses.tcp?.port))
        case .webSocket:
            Target(
                transport: .webSocket, host: "127.0.0.1", port: try #require(server.addresses.http?.port), path: "/ws")
        }
    }
}
