import Foundation
import Glibc

@testable import SkirmishDDNet

/// A UDP proxy on loopback between bots and a DDNet server that forwards every datagram both ways and lies once: it
/// flips a bit in the payload of one snapshot sent to the first client it saw, once that client has been sent
/// `flipAfter` datagrams (so the bot is well into the game).
///
/// Each client address gets its own upstream socket, so the server sees one player per bot as it would without the
/// proxy. The proxy reads each client's security token from the server's connect-accept, which it needs to decode
/// and re-encode the snapshot's datagram with the plug-in's own codec (``SnapshotCorruption``). It runs on a thread
/// of its own, polling with a short timeout so ``stop()`` is prompt; every loop is bounded by that flag.
final class LyingProxy: @unchecked Sendable {
    // @unchecked: the sockets and `clients` are touched only by the proxy's thread between `init` and `stop()`, which
    // waits for the thread to end before closing them; `flipped`, `stopping` and `forwarded` are read and written
    // only under `lock`.

    /// One client behind the proxy.
    private struct Client {
        var address: sockaddr_in
        var upstream: Int32
        var token: UInt32?
        var sent = 0
    }

    /// The port bots connect to.
    let port: UInt16
    private let server: UInt16
    private let front: Int32
    private let flipAfter: Int
    private var clients: [Client] = []
    private let lock = NSCondition()
    private var stopping = false
    private var running = true
    private var flippedTick: Int32?
    private var flippedClient: Int?

    /// A proxy in front of the server at `server`, flipping one snapshot bit after `flipAfter` datagrams to the first
    /// client.
    init(server: UInt16, flipAfter: Int) throws {
        self.server = server
        self.flipAfter = flipAfter
        let front = try Self.socket(bindingPort: 0)
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(front, $0, &length) }
        }
        self.front = front
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in run() }
        thread.name = "lying-proxy"
        thread.start()
    }

    /// The tick of the snapshot whose bit was flipped, once it has been; and which client (in order of arrival).
    var flipped: (tick: Int32, client: Int)? {
        lock.lock()
        defer { lock.unlock() }
        guard let flippedTick, let flippedClient else { return nil }
        return (flippedTick, flippedClient)
    }

    /// Stops forwarding and closes every socket.
    func stop() {
        lock.lock()
        stopping = true
        while running { lock.wait(until: Date().addingTimeInterval(5)) }
        lock.unlock()
        for client in clients { close(client.upstream) }
        close(front)
    }

    private var shouldStop: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 2_048)
        while !shouldStop {
            var descriptors = [pollfd(fd: front, events: Int16(POLLIN), revents: 0)]
            descriptors += clients.map { pollfd(fd: $0.upstream, events: Int16(POLLIN), revents: 0) }
            guard poll(&descriptors, nfds_t(descriptors.count), 20) > 0 else { continue }
            // Clients first seen below have no descriptor in this round.
            let polled = clients.count
            if descriptors[0].revents & Int16(POLLIN) != 0 { fromClients(&buffer) }
            for index in 0..<polled where descriptors[index + 1].revents & Int16(POLLIN) != 0 {
                fromServer(to: index, &buffer)
            }
        }
        lock.lock()
        running = false
        lock.broadcast()
        lock.unlock()
    }

    /// Forwards what bots sent, each through its own upstream socket (made on its first datagram).
    private func fromClients(_ buffer: inout [UInt8]) {
        for _ in 0..<256 {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(front, &buffer, buffer.count, Int32(MSG_DONTWAIT), $0, &length)
                }
            }
            guard count > 0 else { return }
            var index = clients.firstIndex {
                $0.address.sin_port == address.sin_port && $0.address.sin_addr.s_addr == address.sin_addr.s_addr
            }
            if index == nil {
                guard let upstream = try? Self.socket(bindingPort: 0, connectingTo: server) else { continue }
                clients.append(Client(address: address, upstream: upstream))
                index = clients.count - 1
            }
            _ = send(clients[index!].upstream, buffer, count, 0)
        }
    }

    /// Forwards what the server sent client `index`, learning its token and lying once.
    private func fromServer(to index: Int, _ buffer: inout [UInt8]) {
        for _ in 0..<256 {
            let count = recv(clients[index].upstream, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { return }
            var datagram = Array(buffer[..<count])
            if clients[index].token == nil { clients[index].token = Self.token(inConnectAccept: datagram) }
            clients[index].sent += 1
            if index == 0, clients[index].sent > flipAfter, flipped == nil, let token = clients[index].token,
                let tick = SnapshotCorruption.flipLastPayloadBit(&datagram, token: token)
            {
                lock.lock()
                flippedTick = tick
                flippedClient = index
                lock.unlock()
            }
            var address = clients[index].address
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(front, datagram, datagram.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// The token a connect-accept hands out (after `TKEN`), or `nil` when `datagram` is something else.
    private static func token(inConnectAccept datagram: [UInt8]) -> UInt32? {
        var payload = [UInt8](repeating: 0, count: PacketHeader.maxPacketSize)
        let decoded = datagram.withUnsafeBytes { bytes in
            payload.withUnsafeMutableBytes { try? PacketCodec.decode(bytes, token: nil, into: $0) }
        }
        let magic = PacketCodec.tokenMagic
        guard let (header, count) = decoded, header.flags.contains(.control), count >= 1 + magic.count + 4,
            payload[0] == Wire.Control.connectAccept, Array(payload[1..<(1 + magic.count)]) == magic
        else { return nil }
        return payload.withUnsafeBytes { PacketCodec.readToken($0, at: 1 + magic.count) }
    }

    /// A non-blocking UDP socket on 127.0.0.1:`port`, connected to `peer` when given.
    private static func socket(bindingPort port: UInt16, connectingTo peer: UInt16? = nil) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw DDNetServer.ServerError(message: "socket: errno \(errno)") }
        var local = sockaddr_in.loopback(port: port)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        var ok =
            withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
            } == 0
        if ok, let peer {
            var remote = sockaddr_in.loopback(port: peer)
            ok =
                withUnsafePointer(to: &remote) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) }
                } == 0
        }
        ok = ok && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0
        guard ok else {
            let error = errno
            close(fd)
            throw DDNetServer.ServerError(message: "proxy socket: errno \(error)")
        }
        return fd
    }
}
