import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import SkirmishServer

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
}
