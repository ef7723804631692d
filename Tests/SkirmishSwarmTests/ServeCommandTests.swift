import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import SkirmishServer

#if canImport(Glibc)
    import Glibc
#endif

/// `skirmish serve` as an operator runs it, in its own process.
@Suite struct ServeCommandTests {
    /// A UDP port another server holds is refused with a message naming the listener and the flag to change, and the
    /// bad-input status: two servers never silently share one port.
    @Test func aTakenPortIsBadInputNamingTheFlag() async throws {
        var configuration = ServerConfiguration()
        configuration.tcp = nil
        configuration.http = nil
        let holder = try await ReferenceServer.start(
            configuration: configuration, group: MultiThreadedEventLoopGroup.singleton)
        let port = try #require(holder.addresses.udp?.port)

        // The same in-process: a typed error, no listener left behind.
        configuration.udp = .init(host: "127.0.0.1", port: port)
        await #expect(throws: ListenError.self) {
            let second = try await ReferenceServer.start(
                configuration: configuration, group: MultiThreadedEventLoopGroup.singleton)
            await second.shutdown()
        }

        let directory = try SkirmishProcess.temporaryDirectory("serve-taken")
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try SkirmishProcess(["serve", "--udp", "127.0.0.1:\(port)"], logs: directory)
        let status = try await serve.wait(limit: .seconds(30))
        await holder.shutdown()
        #expect(status == 2, "\(serve.stderr)")
        #expect(serve.stderr.contains("cannot listen for udp on 127.0.0.1:\(port): address already in use"))
        #expect(serve.stderr.contains("--udp HOST:PORT"))
        #expect(!serve.stdout.contains("listening"))
    }

    /// `--run-id` labels every server series with the swarm's run, so dashboards filtered on that run show the
    /// server's panels; a run id that cannot be a label is refused before anything listens.
    @Test func theServersSeriesCarryTheRunIdGiven() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("serve-run-id")
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try SkirmishProcess(
            [
                "serve", "--udp", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0", "--run-id",
                "nightly-42",
            ],
            logs: directory)
        let listening = try await SkirmishProcess.waitUntil(limit: .seconds(30)) {
            serve.stdout.contains("listening http://")
        }
        try #require(listening, "\(serve.stderr)")
        let port = try ServeLimitTests.port("listening http://", in: serve.stdout)
        let body = try #require(try ServeLimitTests.metrics(port: port))
        serve.signal(SIGTERM)
        #expect(try await serve.wait(limit: .seconds(30)) == 0, "\(serve.stderr)")
        let series = body.split(separator: "\n").filter { $0.hasPrefix("skirmish_server_") }
        #expect(!series.isEmpty, "\(body.prefix(2_000))")
        #expect(series.allSatisfy { $0.contains("run=\"nightly-42\"") }, "\(series.prefix(5))")

        let bad = try SkirmishProcess(["serve", "--run-id", "night/42"], logs: directory)
        #expect(try await bad.wait(limit: .seconds(30)) == 2)
        #expect(bad.stderr.contains("--run-id 'night/42'"), "\(bad.stderr)")
        #expect(!bad.stdout.contains("listening"))
    }
}
