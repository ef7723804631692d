import NIOConcurrencyHelpers
import SkirmishWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The Puck load for `skirmish bench server`: thousands of UDP clients on plain non-blocking sockets, driven by one
/// thread with `poll(2)`, so that the server — not the client library — is what runs out of time.
///
/// Every client does the cookie handshake, acknowledges the server's reliable packets, and sends a `PaddleState` at
/// the input rate; sends are spread evenly over each input period (client j of n at j/n of it). Paddles sweep their
/// own half (y 360–440 in their own frame) and never reach the resting puck, so every match keeps running for the
/// whole step. Snapshot arrival times are the kernel's (`SO_TIMESTAMPNS`), so how often this thread polls does not
/// change the measured snapshot age.
final class LoadGenerator {
    /// Shared with the controlling task; the generator takes the lock about once a millisecond.
    struct Control: Sendable {
        /// Set by the controller: record snapshot samples from now on (warm-up samples are kept apart).
        var recording = false
        /// Set by the controller: send Disconnect, close every socket and return.
        var stop = false
        /// Written by the generator.
        var welcomed = 0
        var failed = 0
    }

    /// One snapshot's arrival.
    struct Sample: Sendable {
        var client: UInt32
        var tick: UInt32
        /// Arrival, kernel timestamp converted to this process's monotonic clock (`NIODeadline` uptime).
        var arrival: Int64
        var inWindow: Bool
    }

    struct Report: Sendable {
        var samples: [Sample] = []
        /// Inputs sent while recording, and how late against their fixed schedule (10 µs buckets).
        var inputsSent = 0
        /// Inputs the kernel accepted over the whole step (warm-up included), to set against what the server decoded.
        var inputsAccepted = 0
        var sendLateness = [Int](repeating: 0, count: 20_001)
        var sendDrops = 0
        var snapshotsInWindow = 0
        var windowNanoseconds: Int64 = 0
        var cpuNanoseconds: Int64 = 0
        var rejects = 0
        var overloaded = false
        var error: String?

        /// A percentile of the send lateness in milliseconds.
        func latenessMilliseconds(_ fraction: Double) -> Double {
            let total = sendLateness.reduce(0, +)
            guard total > 0 else { return 0 }
            var seen = 0
            for (bucket, count) in sendLateness.enumerated() {
                seen += count
                if Double(seen) >= fraction * Double(total) { return Double(bucket) * 0.01 }
            }
            return 200
        }
    }

    private struct Client {
        var fd: Int32
        var state: UInt8 = 0 // 0 Hello sent, 1 Hello with cookie sent, 2 welcomed, 3 refused
        var cookie = Cookie.zero
        var expected: UInt32 = 1
        var unreliable: UInt32 = 0
        var step: UInt32 = 0
        var phase: Float
        var lastHello: Int64 = 0
    }

    private let port: UInt16
    private let clientCount: Int
    private let inputPeriod: Int64
    private let control: NIOLockedValueBox<Control>
    private var clients: [Client] = []
    private var pollSet: [pollfd] = []
    private var report = Report()
    private let out = UnsafeMutableRawBufferPointer.allocate(byteCount: WireLimits.maxDatagram, alignment: 8)
    private let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 2_048, alignment: 8)
    private let controlBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 8)
    /// Monotonic minus real time, to bring the kernel's CLOCK_REALTIME receive stamps onto the monotonic clock.
    private var realToMonotonic: Int64 = 0

    /// SO_TIMESTAMPNS (asm-generic and x86: 35); Glibc hides the name behind a time64 switch Swift cannot import.
    private static let timestampOption: Int32 = 35

    init(serverPort: Int, clients: Int, inputRate: Int, control: NIOLockedValueBox<Control>) {
        port = UInt16(serverPort)
        clientCount = clients
        inputPeriod = 1_000_000_000 / Int64(inputRate)
        self.control = control
    }

    deinit {
        out.deallocate()
        input.deallocate()
        controlBuffer.deallocate()
    }

    static func monotonic() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    private static func realtime() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Runs until the controller sets `stop`; blocks the calling thread.
    func run() -> Report {
        realToMonotonic = Self.monotonic() - Self.realtime()
        do {
            try openSockets()
        } catch {
            report.error = "\(error)"
            closeAll()
            return report
        }
        var nextHello = 0
        let start = Self.monotonic()
        var roundStart: Int64 = 0
        var cursor = 0
        var playing = false
        var nextPoll: Int64 = 0
        var nextControl: Int64 = 0
        var recording = false
        var windowStart: Int64 = 0
        var cpuStart: Int64 = 0
        var welcomed = 0
        var nextRetry = start + 300_000_000
        while true {
            var now = Self.monotonic()
            // Hellos go out at 50 per millisecond, so a burst of thousands does not overflow the server's socket.
            while nextHello < clients.count, Int64(nextHello) * 20_000 <= now - start {
                sendHello(nextHello, now: now)
                nextHello += 1
            }
            if !playing, now >= nextRetry {
                for index in clients.indices
                where clients[index].state < 2 && now - clients[index].lastHello > 250_000_000 {
                    sendHello(index, now: now)
                }
                nextRetry = now + 300_000_000
            }
            if playing {
                let n = Int64(clients.count)
                while true {
                    let due = roundStart + Int64(cursor) * inputPeriod / n
                    guard due <= now else { break }
                    let late = now - due
                    if late > 200_000_000 {
                        // More than 200 ms behind: this thread cannot keep up; restart the schedule from now.
                        report.overloaded = report.overloaded || recording
                        roundStart = now
                        cursor = 0
                        continue
                    }
                    sendInput(cursor, recording: recording, lateness: late)
                    cursor += 1
                    if cursor == clients.count {
                        cursor = 0
                        roundStart += inputPeriod
                    }
                }
            }
            if now >= nextPoll {
                receiveAll(recording: recording)
                nextPoll = now + 1_000_000
            }
            if now >= nextControl {
                welcomed = clients.reduce(0) { $0 + ($1.state == 2 ? 1 : 0) }
                let failed = clients.reduce(0) { $0 + ($1.state == 3 ? 1 : 0) }
                let wanted = control.withLockedValue { control in
                    control.welcomed = welcomed
                    control.failed = failed
                    return (control.recording, control.stop)
                }
                if wanted.1 { break }
                if !playing, welcomed + failed == clients.count, nextHello == clients.count {
                    playing = true
                    roundStart = now
                    cursor = 0
                }
                if wanted.0 != recording {
                    recording = wanted.0
                    if recording {
                        windowStart = now
                        cpuStart = BenchSystem.threadCPUNanoseconds()
                    } else {
                        report.windowNanoseconds += now - windowStart
                        report.cpuNanoseconds += BenchSystem.threadCPUNanoseconds() - cpuStart
                    }
                }
                nextControl = now + 10_000_000
            }
            now = Self.monotonic()
            var wake = nextPoll
            if playing { wake = min(wake, roundStart + Int64(cursor) * inputPeriod / Int64(max(clients.count, 1))) }
            if nextHello < clients.count { wake = min(wake, now + 1_000_000) }
            if wake > now {
                // Naps of at least 100 µs: sends then go out a few at a time instead of this thread spinning on the
                // clock between them (their lateness is measured and reported).
                var pause = timespec(tv_sec: 0, tv_nsec: Int(min(max(wake - now, 100_000), 2_000_000)))
                nanosleep(&pause, nil)
            }
        }
        if recording {
            report.windowNanoseconds += Self.monotonic() - windowStart
            report.cpuNanoseconds += BenchSystem.threadCPUNanoseconds() - cpuStart
        }
        closeAll()
        return report
    }

    // MARK: Sockets

    private struct SocketError: Error, CustomStringConvertible {
        var description: String
    }

    private func openSockets() throws {
        clients.reserveCapacity(clientCount)
        pollSet.reserveCapacity(clientCount)
        var server = sockaddr_in()
        server.sin_family = sa_family_t(AF_INET)
        server.sin_port = port.bigEndian
        server.sin_addr.s_addr = inet_addr("127.0.0.1")
        var local = server
        local.sin_port = 0
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        for index in 0..<clientCount {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else {
                throw SocketError(description: "socket() failed after \(index) clients: errno \(errno)")
            }
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, Self.timestampOption, &on, socklen_t(MemoryLayout<Int32>.size))
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            let connected = withUnsafePointer(to: &server) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
            }
            guard bound == 0, connected == 0 else {
                close(fd)
                throw SocketError(description: "bind/connect failed after \(index) clients: errno \(errno)")
            }
            let phase = Float(index % 97) * 0.37
            clients.append(Client(fd: fd, phase: phase))
            pollSet.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        }
    }

    private func closeAll() {
        for index in clients.indices {
            if clients[index].state == 2 { send(Packet(.disconnect(Disconnect(reason: .quit))), on: clients[index].fd) }
            close(clients[index].fd)
        }
        clients.removeAll()
        pollSet.removeAll()
    }

    @discardableResult
    private func send(_ packet: Packet, on fd: Int32) -> Bool {
        guard let size = try? packet.encode(into: out) else { return false }
        return Glibc.send(fd, out.baseAddress, size, Int32(MSG_DONTWAIT)) == size
    }

    private func sendHello(_ index: Int, now: Int64) {
        let hello = Hello(
            version: Hello.currentVersion, game: .puck, seats: 2, match: 0, cookie: clients[index].cookie,
            resumeToken: 0, name: "gen\(index)")
        clients[index].lastHello = now
        send(Packet(.hello(hello)), on: clients[index].fd)
    }

    private func sendInput(_ index: Int, recording: Bool, lateness: Int64) {
        guard clients[index].state == 2 else { return }
        clients[index].unreliable &+= 1
        if clients[index].unreliable == 0 { clients[index].unreliable = 1 }
        clients[index].step &+= 1
        let angle = clients[index].phase + Float(clients[index].step) * 0.05
        let x = (160 + 90 * sin(angle)).rounded()
        let y = (400 + 40 * cos(angle * 0.7)).rounded()
        let packet = Packet(
            number: clients[index].unreliable,
            .paddleState(PaddleState(inputStep: clients[index].step, x: x, y: y, vx: 0, vy: 0)))
        let sent = send(packet, on: clients[index].fd)
        if sent { report.inputsAccepted += 1 }
        guard recording else { return }
        report.inputsSent += 1
        if !sent { report.sendDrops += 1 }
        report.sendLateness[Int(min(lateness / 10_000, 20_000))] += 1
    }

    // MARK: Receiving

    private func receiveAll(recording: Bool) {
        let ready = poll(&pollSet, nfds_t(pollSet.count), 0)
        guard ready > 0 else { return }
        var remaining = Int(ready)
        for index in pollSet.indices where pollSet[index].revents != 0 {
            pollSet[index].revents = 0
            for _ in 0..<32 {
                guard let (size, arrival) = receive(on: clients[index].fd) else { break }
                handle(index, size: size, arrival: arrival, recording: recording)
            }
            remaining -= 1
            if remaining == 0 { break }
        }
    }

    /// One datagram and its kernel arrival time, or nil when none is waiting.
    private func receive(on fd: Int32) -> (Int, Int64)? {
        var vector = iovec(iov_base: input.baseAddress, iov_len: input.count)
        var header = msghdr()
        let size = withUnsafeMutablePointer(to: &vector) { vector in
            header.msg_iov = vector
            header.msg_iovlen = 1
            header.msg_control = controlBuffer.baseAddress
            header.msg_controllen = controlBuffer.count
            return recvmsg(fd, &header, Int32(MSG_DONTWAIT))
        }
        guard size > 0 else { return nil }
        // cmsghdr: size_t len, int level, int type, then the data at the next 8-byte boundary (16 on 64-bit).
        var arrival = Self.monotonic()
        var offset = 0
        let headerSize = MemoryLayout<Int>.size + 8
        while offset + headerSize <= Int(header.msg_controllen) {
            let length = controlBuffer.load(fromByteOffset: offset, as: Int.self)
            let level = controlBuffer.load(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self)
            let type = controlBuffer.load(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self)
            guard length >= headerSize else { break }
            if level == SOL_SOCKET, type == Self.timestampOption, length >= headerSize + 16 {
                let seconds = controlBuffer.load(fromByteOffset: offset + headerSize, as: Int.self)
                let nanoseconds = controlBuffer.load(fromByteOffset: offset + headerSize + 8, as: Int.self)
                arrival = Int64(seconds) * 1_000_000_000 + Int64(nanoseconds) + realToMonotonic
            }
            offset += (length + 7) & ~7
        }
        return (size, arrival)
    }

    private func u32(_ offset: Int) -> UInt32 {
        UInt32(input[offset]) << 24 | UInt32(input[offset + 1]) << 16 | UInt32(input[offset + 2]) << 8
            | UInt32(input[offset + 3])
    }

    private func handle(_ index: Int, size: Int, arrival: Int64, recording: Bool) {
        guard size >= 10, u32(0) == PacketHeader.magic else { return }
        let number = u32(4)
        let rawType = UInt16(input[8]) << 8 | UInt16(input[9])
        switch rawType {
        case MessageType.tableSnapshot.rawValue:
            guard size >= 14 else { return }
            report.samples.append(Sample(client: UInt32(index), tick: u32(10), arrival: arrival, inWindow: recording))
            if recording { report.snapshotsInWindow += 1 }
            return
        case MessageType.challenge.rawValue:
            guard size >= 26, clients[index].state == 0 else { return }
            clients[index].cookie = Cookie(
                high: UInt64(u32(10)) << 32 | UInt64(u32(14)), low: UInt64(u32(18)) << 32 | UInt64(u32(22)))
            clients[index].state = 1
            sendHello(index, now: Self.monotonic())
            return
        case MessageType.reject.rawValue, MessageType.disconnect.rawValue:
            if clients[index].state != 2 { clients[index].state = 3 }
            report.rejects += 1
            return
        case MessageType.welcome.rawValue:
            if clients[index].state < 2 { clients[index].state = 2 }
        default:
            break
        }
        guard let type = MessageType(rawValue: rawType), type.delivery == .reliable else { return }
        if number == clients[index].expected {
            clients[index].expected &+= 1
            if clients[index].expected == 0 { clients[index].expected = 1 }
        }
        send(Packet(.ack(Ack(cumulative: clients[index].expected &- 1, bitfield: 0))), on: clients[index].fd)
    }
}
