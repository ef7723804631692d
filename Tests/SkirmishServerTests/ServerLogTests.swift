import Logging
import NIOCore
import SkirmishGames
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishServer

#if canImport(Glibc)
    import Glibc
#endif

/// What the real server logs on loopback: its start with settings, nothing at info while players play well, and
/// rejected input from a real UDP socket at most once per reason per window with the count it stands for.
@Suite(.serialized) struct ServerLogTests {
    static let window = TimeAmount.seconds(3)

    /// Sends `count` copies of `datagram` to the server's UDP port from one socket.
    static func send(_ datagram: [UInt8], count: Int, to port: Int) throws {
        let fd = try SpoofingLoopbackTests.socket(reusePort: false, port: 0)
        defer { close(fd) }
        var server = SpoofingLoopbackTests.loopback(port: UInt16(port))
        for _ in 0..<count {
            let sent = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: &server) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            #expect(sent == datagram.count)
        }
    }

    /// Polls `condition` every 20 ms until it holds or `limit` passes; whether it held.
    static func eventually(within limit: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return try await condition()
    }

    /// Plays Puck until `snapshots` snapshots arrived, answering each with the striker's input.
    static func play(_ session: AsyncClientSession, snapshots wanted: Int) async throws {
        var seat = 0
        var snapshots = 0
        var step: UInt32 = 0
        for await event in session.events {
            switch event {
            case .stateChanged(.seated(let welcome)): seat = Int(welcome.seat)
            case .stateChanged(.closed(let cause)): throw PlayError(text: "disconnected: \(cause)")
            case .message(.tableSnapshot(let snapshot), _):
                snapshots += 1
                if snapshots >= wanted { return }
                step &+= 1
                let target = Striker.target(snapshot, tick: Int(snapshot.tick), phase: seat * 7)
                session.send(.paddleState(PaddleState(inputStep: step, x: target.x, y: target.y, vx: 0, vy: 0)))
            default: break
            }
        }
        throw PlayError(text: "event stream ended")
    }

    @Test(.timeLimit(.minutes(2)))
    func wellFormedPlayLogsNothingAndGarbageLogsOneLinePerReasonPerWindow() async throws {
        let capture = LogCapture()
        let fixture = try await ServerFixture.start(
            logger: capture.logger("skirmish.server", level: .info), rejectionLogInterval: Self.window
        ) { configuration in
            configuration.tcp = nil
            configuration.http = nil
        }
        let port = try #require(fixture.server.addresses.udp?.port)

        // The start line names the listener and the limits.
        let started = try #require(capture.entries(startingWith: "server started").first)
        #expect(started.level == .info)
        #expect(started.metadata["listen.udp"] == "127.0.0.1:\(port)")
        #expect(started.metadata["max.sessions"] == "20000")

        // Two players, 150 snapshots each (2.5 s of play at 60 Hz, inputs answered): no line at all.
        let a = try await fixture.client(.udp, game: .puck, seats: 2, name: "alice")
        let b = try await fixture.client(.udp, game: .puck, seats: 2, name: "bob")
        try await within(.seconds(60)) {
            async let first: Void = Self.play(a, snapshots: 150)
            async let second: Void = Self.play(b, snapshots: 150)
            _ = try await (first, second)
        }
        // (A machine so busy that a client's inputs queued and left in one burst may meet the per-address limit:
        // that refusal is logged, as it should be, and is the only line allowed here.)
        let duringPlay = capture.all.filter { $0.level >= .info && $0.metadata["reason"] != "rate_limited" }
        #expect(duringPlay.map(\.message) == ["server started"], "\(duringPlay)")

        // Garbage from a real socket: 20 datagrams with a wrong magic and 10 too short to hold a header, at once.
        try Self.send([UInt8](repeating: 0xFF, count: 16), count: 20, to: port)
        try Self.send([0x01], count: 10, to: port)
        #expect(
            try await Self.eventually(within: .seconds(20)) {
                let stats = try await fixture.stats()
                return stats.rejections(.badMagic) == 20 && stats.rejections(.tooShort) == 10
            })
        #expect(
            await Self.eventually(within: .seconds(20)) {
                Set(capture.entries(startingWith: "rejected input").compactMap { $0.metadata["reason"] })
                    == ["bad_magic", "too_short"]
            })
        // A second flood of the same reason within the window gets no line of its own until the window is over,
        // then one line that carries it.
        try Self.send([UInt8](repeating: 0xFF, count: 16), count: 25, to: port)
        #expect(
            try await Self.eventually(within: .seconds(20)) {
                try await fixture.stats().rejections(.badMagic) == 45
            })
        #expect(
            await Self.eventually(within: .seconds(30)) {
                let lines = capture.entries(startingWith: "rejected input").filter {
                    $0.metadata["reason"] == "bad_magic"
                }
                return lines.compactMap { $0.metadata["count"].flatMap(Int.init) }.reduce(0, +) == 45
            })
        let stats = try await fixture.stats()
        for (reason, label) in [(Rejection.badMagic, "bad_magic"), (.tooShort, "too_short")] {
            let lines = capture.entries(startingWith: "rejected input").filter { $0.metadata["reason"] == label }
            let counts = lines.compactMap { $0.metadata["count"].flatMap(Int.init) }
            // Every rejection is in exactly one line, and each line says how many lines it saved.
            #expect(counts.reduce(0, +) == Int(stats.rejections(reason)), "\(lines)")
            for line in lines {
                #expect(line.level == .notice)
                #expect(line.metadata["suppressed"].flatMap(Int.init) == line.metadata["count"].flatMap(Int.init)! - 1)
                #expect(line.metadata["window.seconds"] == "3")
            }
            // At most one line per reason per window. The limiter judges on the tick's clock and `at` is when a line
            // was written, which a busy machine may delay by up to the once-a-second check: hence 3 s less 1.1 s.
            for (earlier, later) in zip(lines, lines.dropFirst()) {
                #expect(earlier.at.duration(to: later.at) >= .milliseconds(1_900), "\(lines)")
            }
        }
        // 45 bad-magic datagrams in two floods well within 30 s: two lines at most, not 45.
        #expect(
            capture.entries(startingWith: "rejected input").filter { $0.metadata["reason"] == "bad_magic" }.count <= 3)

        await a.disconnect()
        await b.disconnect()
        await fixture.stop()
        #expect(capture.entries(startingWith: "server stopping").count == 1)
        #expect(capture.entries(startingWith: "server stopped").count == 1)
        // Nothing at info or above was per packet: start, the rejection lines, and the stop.
        let loud = capture.all.filter { $0.level >= .info }
        #expect(loud.count <= 2 + 4 + 2 + 4, "\(loud)")
    }

    @Test func rejectionsAreLoudOnlyWhenTheServerIsAtCapacity() {
        #expect(ServerLoop.level(of: .serverFull) == .warning)
        #expect(ServerLoop.level(of: .tooManyConnections) == .warning)
        #expect(ServerLoop.level(of: .acceptBackoff) == .warning)
        #expect(ServerLoop.level(of: .badMagic) == .notice)
        #expect(ServerLoop.level(of: .duplicate) == .debug)
    }
}
