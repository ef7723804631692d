import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishOpponent
import SkirmishPractice
import SkirmishServer
import SkirmishWire

#if canImport(Glibc)
    import Glibc
#endif

/// `skirmish practice` in-process, as the command wires it: a reference server on a free loopback port whose HTTP
/// listener also serves the page and the lobby's match route, and opponents that join over its WebSocket endpoint.
struct PracticeFixture {
    let server: ReferenceServer
    let lobby: PracticeLobby
    let port: Int

    var pageURL: String { "http://127.0.0.1:\(port)/play" }
    var webSocket: Target { Target(transport: .webSocket, host: "127.0.0.1", port: port) }

    static func start(difficulty: Opponent.Level = .medium, joinTimeout: Duration = .seconds(15)) async throws
        -> PracticeFixture
    {
        let lobby = PracticeLobby(difficulty: difficulty, joinTimeout: joinTimeout)
        var configuration = ServerConfiguration()
        configuration.udp = nil
        configuration.tcp = nil
        configuration.http = .init(host: "127.0.0.1", port: 0)
        let server = try await ReferenceServer.start(configuration: configuration, routes: lobby.routes)
        let port = server.addresses.http?.port ?? 0
        await lobby.serve(
            opponentsAt: Target(transport: .webSocket, host: "127.0.0.1", port: port), pageWebSocketURL: nil)
        return PracticeFixture(server: server, lobby: lobby, port: port)
    }

    func stop() async {
        await lobby.close()
        await server.shutdown()
    }

    /// The opponent seated at `match`, if it is still there.
    func opponent(at match: UInt32) async -> OpponentSeat? {
        await lobby.opponents().first { $0.welcome.match == match }
    }

    /// Waits until the opponent at `match` sees the other paddle within 2 px of (x, y) in its own frame.
    ///
    /// That view is the server's: the position comes from the server's snapshot after it applied the inputs.
    func opponentSeesOtherPaddle(match: UInt32, near x: Float, _ y: Float, timeout: Duration = .seconds(10)) async
        -> TableSnapshot.Paddle?
    {
        await poll(timeout: timeout) { () -> TableSnapshot.Paddle? in
            guard let seat = await opponent(at: match), let snapshot = try? await seat.lastSnapshot() else {
                return nil
            }
            let them = snapshot.them
            return abs(them.x - x) <= 2 && abs(them.y - y) <= 2 ? them : nil
        }
    }
}

/// A minimal HTTP GET over a socket (no Foundation networking on this platform without extra libraries).
enum HTTPGet {
    struct Response {
        let status: Int
        let headers: [String: String]
        let body: String
    }

    /// Blocks a thread of its own, never one of the cooperative pool (the server's routes run there).
    static func fetch(port: Int, path: String) async throws -> Response {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingFetch(port: port, path: path) })
            }
        }
    }

    private static func blockingFetch(port: Int, path: String) throws -> Response {
        do {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            // The routes answer from the cooperative pool, which other suites can keep busy for tens of seconds on a
            // loaded 2-core machine: the wait is for an answer, not a speed.
            var timeout = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else { throw DevTools.Failure(description: "cannot connect to 127.0.0.1:\(port)") }
            let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
            _ = request.withCString { send(fd, $0, strlen($0), 0) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            for _ in 0..<10_000 {
                let count = recv(fd, &chunk, chunk.count, 0)
                if count <= 0 { break }
                bytes += chunk[0..<count]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            guard let split = text.range(of: "\r\n\r\n") else {
                throw DevTools.Failure(description: "no HTTP answer from \(path): \(text.prefix(200))")
            }
            let lines = text[..<split.lowerBound].split(separator: "\r\n")
            let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
            return Response(status: status, headers: headers, body: String(text[split.upperBound...]))
        }
    }
}
