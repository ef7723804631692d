import SkirmishNet
import SkirmishWire

@testable import SkirmishENet

#if canImport(Glibc)
    import Glibc
#endif

/// The system's monotonic clock as an ``Instant``: what a runtime loop reads and passes in.
func monotonicNow() -> Instant {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Instant(nanoseconds: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
}

/// A test-only loopback driver for one ``ENetConnection``: a non-blocking UDP socket connected to the peer, `poll`
/// for readiness and for the connection's next deadline, the monotonic clock read here and passed in, and an
/// emulated loss applied to datagrams both ways (seeded).
struct UDPDriver<Codec: ENetMessageCodec> {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    var harness: Harness<Codec>
    let socket: Int32
    var random: SeededRandom
    /// The share of datagrams dropped, each way.
    var loss: Double
    private(set) var datagramsSent = 0
    private(set) var datagramsReceived = 0
    private(set) var dropped = 0

    init(port: UInt16, configuration: ENetConnection<Codec>.Configuration, loss: Double = 0, seed: UInt64 = 1) throws {
        harness = Harness(configuration, seed: seed, now: monotonicNow())
        random = SeededRandom(seed: seed &* 31 &+ 7)
        self.loss = loss
        socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, connected == 0 else {
            let code = errno
            Glibc.close(socket)
            throw Failure(description: "bind/connect to 127.0.0.1:\(port): errno \(code)")
        }
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
    }

    /// Closes the socket.
    func closeSocket() { Glibc.close(socket) }

    private mutating func draw() -> Double { Double(random.next() >> 11) / Double(1 << 53) }

    private mutating func write(_ packets: [[UInt8]]) {
        for packet in packets {
            datagramsSent += 1
            if loss > 0, draw() < loss {
                dropped += 1
                continue
            }
            _ = packet.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, 0) }
        }
    }

    mutating func start() {
        harness.now = monotonicNow()
        write(harness.start())
    }

    mutating func send(_ message: Codec.Message) {
        harness.now = monotonicNow()
        write(harness.send(message))
    }

    mutating func disconnect(data: UInt32) {
        harness.now = monotonicNow()
        write(harness.disconnect(data: data))
    }

    /// Leaves at once (``ENetConnection/close(now:into:)``).
    mutating func leave() {
        harness.now = monotonicNow()
        write(harness.close())
    }

    /// Runs the loop until `condition` holds or `limit` passes; returns whether it held. Never sleeps: it waits in
    /// `poll` for a datagram, the peer's output or the connection's deadline, at most 10 ms at a time.
    mutating func run(within limit: Duration, peer: LibENetPeer? = nil, until condition: (Self) -> Bool) -> Bool {
        let end = monotonicNow() + limit
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            peer?.drain()
            if condition(self) { return true }
            let now = monotonicNow()
            guard now < end else { return false }
            harness.now = now
            if harness.connection.nextDeadline <= now { write(harness.tick()) }
            let wake = min(end, harness.connection.nextDeadline, now + .milliseconds(10))
            let milliseconds = Int32(max(0, (wake - now) / .milliseconds(1)).rounded(.up))
            var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
            if let peer { descriptors.append(pollfd(fd: peer.outputDescriptor, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                datagramsReceived += 1
                if loss > 0, draw() < loss {
                    dropped += 1
                    continue
                }
                harness.now = monotonicNow()
                write(harness.receive(Array(buffer[0..<count])))
            }
        }
    }
}
