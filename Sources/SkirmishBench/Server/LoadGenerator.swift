import NIOConcurrencyHelpers
import SkirmishNet
import SkirmishWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The Puck load for `skirmish bench server`: thousands of UDP clients driven by one thread in batches of datagrams,
/// so that the server — not the client library — is what runs out of time.
///
/// Every client does the cookie handshake, acknowledges the server's reliable packets, and sends a `PaddleState` at
/// the input rate; sends are spread evenly over each input period (client j of n at j/n of it). Paddles sweep their
/// own half (y 360–440 in their own frame) and never reach the resting puck, so every match keeps running for the
/// whole step. Snapshot arrival times are the kernel's (`SO_TIMESTAMPNS`), so how often this thread polls does not
/// change the measured snapshot age.
///
/// All clients share one UDP socket, each with its own loopback source address (client i is 127.64.0.0 + i + 1, set
/// per datagram with `IP_PKTINFO`; the destination address of a reply, also from `IP_PKTINFO`, says whose it is), so
/// that a millisecond's sends go out with one `sendmmsg` and its replies come in with one `recvmmsg` — with a socket per
/// client, the system calls alone held one core at 2,000 clients. The socket is bound to the wildcard address, which
/// the replies to 127.64/16 need (connecting it would pin its local address to 127.0.0.1), tied to the loopback
/// interface where the kernel allows it (`SO_BINDTODEVICE`), and keeps only datagrams from the server's address.
package final class LoadGenerator {
    /// Shared with the controlling task; the generator takes the lock about once a millisecond.
    package struct Control: Sendable {
        /// Set by the controller: record snapshot samples from now on (warm-up samples are kept apart).
        package var recording = false
        /// Set by the controller: send Disconnect, close every socket and return.
        package var stop = false
        /// Written by the generator.
        package var welcomed = 0
        package var failed = 0

        package init() {}
    }

    /// One snapshot's arrival.
    package struct Sample: Sendable, Equatable {
        package var client: UInt32
        package var tick: UInt32
        /// Arrival, kernel timestamp converted to this process's monotonic clock (`NIODeadline` uptime).
        package var arrival: Int64
        package var inWindow: Bool

        package init(client: UInt32, tick: UInt32, arrival: Int64, inWindow: Bool) {
            self.client = client
            self.tick = tick
            self.arrival = arrival
            self.inWindow = inWindow
        }
    }

    package struct Report: Sendable {
        package var samples: [Sample] = []
        /// Inputs sent while recording, and how late against their fixed schedule (10 µs buckets).
        package var inputsSent = 0
        /// Inputs the kernel accepted over the whole step (warm-up included), to set against what the server decoded.
        package var inputsAccepted = 0
        package var sendLateness = [Int](repeating: 0, count: 20_001)
        package var sendDrops = 0
        package var snapshotsInWindow = 0
        package var windowNanoseconds: Int64 = 0
        package var cpuNanoseconds: Int64 = 0
        package var rejects = 0
        package var overloaded = false
        package var error: String?

        package init() {}

        /// A percentile of the send lateness in milliseconds.
        package func latenessMilliseconds(_ fraction: Double) -> Double {
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
        var state: UInt8 = 0 // 0 Hello sent, 1 Hello with cookie sent, 2 welcomed, 3 refused
        var cookie = Cookie.zero
        var expected: UInt32 = 1
        var unreliable: UInt32 = 0
        var step: UInt32 = 0
        var phase: Float
        var lastHello: Int64 = 0
        /// The session key from the Welcome: every datagram after it carries the trailer (``SessionKey``).
        var key: SessionKey?
    }

    private let port: UInt16
    private let clientCount: Int
    private let inputPeriod: Int64
    private let control: NIOLockedValueBox<Control>
    private var clients: [Client] = []
    private var fd: Int32 = -1
    private var report = Report()
    /// Datagrams waiting for the next `sendmmsg`, each with its client's source address.
    private let outgoing = DatagramBatch(capacity: 256, slotSize: WireLimits.maxDatagram, controlSize: 32)
    private let incoming = DatagramBatch(capacity: 256, slotSize: 2_048, controlSize: 128)
    /// Monotonic minus real time, to bring the kernel's CLOCK_REALTIME receive stamps onto the monotonic clock.
    private var realToMonotonic: Int64 = 0

    /// SO_TIMESTAMPNS (asm-generic and x86: 35); Glibc hides the name behind a time64 switch Swift cannot import.
    private static let timestampOption: Int32 = 35

    package init(serverPort: Int, clients: Int, inputRate: Int, control: NIOLockedValueBox<Control>) {
        port = UInt16(serverPort)
        clientCount = clients
        inputPeriod = 1_000_000_000 / Int64(inputRate)
        self.control = control
    }

    /// Client i sends from 127.64.0.0 + i + 1.
    private static let firstAddress: UInt32 = 0x7F40_0001
    private var server: DatagramAddress { DatagramAddress(ipv4: 0x7F00_0001, port: port) }

    package static func monotonic() -> Int64 {
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
    package func run() -> Report {
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
            flushSends()
            if now >= nextPoll {
                receiveAll(recording: recording)
                flushSends()
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
        guard clientCount < 1 << 16 else { throw SocketError(description: "at most 65,535 clients (127.64/16)") }
        var local = wildcardIPv4Address()
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SocketError(description: "socket() failed: errno \(errno)") }
        var on: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        setsockopt(fd, SOL_SOCKET, Self.timestampOption, &on, size)
        setsockopt(fd, Int32(IPPROTO_IP), IP_PKTINFO, &on, size)
        // Don't fragment (as the server): the kernel then skips a per-destination IP identification per datagram.
        var discover = IP_PMTUDISC_DO
        setsockopt(fd, Int32(IPPROTO_IP), IP_MTU_DISCOVER, &discover, size)
        // Every client's replies queue on this one socket: room for a few tens of milliseconds of them.
        var buffer: Int32 = 16 << 20
        if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, size) != 0 {
            buffer = 4 << 20
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, size)
        }
        buffer = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, size)
        _ = "lo".withCString { setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0, 3) }
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw SocketError(description: "bind failed: errno \(errno)") }
        for index in 0..<clientCount {
            clients.append(Client(phase: Float(index % 97) * 0.37))
        }
    }

    private func closeAll() {
        for index in clients.indices where clients[index].state == 2 {
            send(Packet(.disconnect(Disconnect(reason: .quit))), from: index)
        }
        flushSends()
        if fd >= 0 { close(fd) }
        fd = -1
        clients.removeAll()
    }

    /// Queues `packet` from client `index` for the next `sendmmsg`; false when it could not be encoded.
    @discardableResult
    private func send(_ packet: Packet, from index: Int) -> Bool {
        if outgoing.isFull { flushSends() }
        let source = Self.firstAddress + UInt32(index)
        let key = clients[index].key
        let queued = outgoing.append(
            to: server, control: { Self.writePacketInfo(source: source, into: $0) },
            { buffer in
                guard let length = try? packet.encode(into: buffer) else { return 0 }
                guard let key else { return length }
                return key.seal(buffer, length: length, from: .client) ?? 0
            })
        if queued { queuedInputs[outgoing.count - 1] = packet.message.type == .paddleState }
        return queued
    }

    /// Which queued datagrams are inputs: those the kernel refuses are taken back out of `inputsAccepted`.
    private var queuedInputs = [Bool](repeating: false, count: 256)

    private func flushSends() {
        guard outgoing.count > 0 else { return }
        var next = 0
        while next < outgoing.count {
            guard case .transferred(let count) = outgoing.send(on: fd, from: next) else {
                for slot in next..<outgoing.count where queuedInputs[slot] {
                    report.inputsAccepted -= 1
                    report.sendDrops += 1
                }
                break
            }
            next += count
        }
        outgoing.reset()
    }

    /// One `IP_PKTINFO` control message choosing the datagram's source address; returns its length.
    private static func writePacketInfo(source: UInt32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let header = MemoryLayout<cmsghdr>.size
        let space = header + (MemoryLayout<in_pktinfo>.size + 7) & ~7
        guard buffer.count >= space else { return 0 }
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        // cmsghdr: size_t len, int level, int type; then in_pktinfo: int ifindex, spec_dst, addr (network order).
        buffer.storeBytes(of: header + MemoryLayout<in_pktinfo>.size, toByteOffset: 0, as: Int.self)
        buffer.storeBytes(of: Int32(IPPROTO_IP), toByteOffset: MemoryLayout<Int>.size, as: Int32.self)
        buffer.storeBytes(of: IP_PKTINFO, toByteOffset: MemoryLayout<Int>.size + 4, as: Int32.self)
        buffer.storeBytes(of: source.bigEndian, toByteOffset: header + 4, as: UInt32.self)
        return space
    }

    private func sendHello(_ index: Int, now: Int64) {
        let hello = Hello(
            version: Hello.currentVersion, game: .puck, seats: 2, match: 0, cookie: clients[index].cookie,
            resumeToken: 0, name: "gen\(index)")
        clients[index].lastHello = now
        send(Packet(.hello(hello)), from: index)
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
        // Counted as accepted when queued: a batch the kernel refuses is subtracted in `flushSends`.
        let sent = send(packet, from: index)
        if sent { report.inputsAccepted += 1 }
        guard recording else { return }
        report.inputsSent += 1
        report.sendLateness[Int(min(lateness / 10_000, 20_000))] += 1
    }

    // MARK: Receiving

    private func receiveAll(recording: Bool) {
        // A bounded drain: at most 64 batches (16,384 datagrams, tens of milliseconds of replies) per call.
        for _ in 0..<64 {
            guard case .transferred(let count) = incoming.receive(from: fd) else { return }
            for slot in 0..<count where incoming.address(slot) == server {
                let (destination, arrival) = readControl(incoming.control(slot))
                guard destination >= Self.firstAddress, Int(destination - Self.firstAddress) < clients.count else {
                    continue
                }
                handle(
                    Int(destination - Self.firstAddress), incoming.payload(slot), arrival: arrival,
                    recording: recording)
            }
            if count < incoming.capacity { return }
        }
    }

    /// The reply's destination address (which client it is for) and its kernel arrival time, from its control data.
    private func readControl(_ control: UnsafeRawBufferPointer) -> (destination: UInt32, arrival: Int64) {
        // cmsghdr: size_t len, int level, int type, then the data at the next 8-byte boundary (16 on 64-bit).
        var arrival = Self.monotonic()
        var destination: UInt32 = 0
        var offset = 0
        let headerSize = MemoryLayout<Int>.size + 8
        while offset + headerSize <= control.count {
            let length = control.load(fromByteOffset: offset, as: Int.self)
            let level = control.load(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self)
            let type = control.load(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self)
            guard length >= headerSize else { break }
            if level == SOL_SOCKET, type == Self.timestampOption, length >= headerSize + 16 {
                let seconds = control.load(fromByteOffset: offset + headerSize, as: Int.self)
                let nanoseconds = control.load(fromByteOffset: offset + headerSize + 8, as: Int.self)
                arrival = Int64(seconds) * 1_000_000_000 + Int64(nanoseconds) + realToMonotonic
            } else if level == Int32(IPPROTO_IP), type == IP_PKTINFO, length >= headerSize + 12 {
                // in_pktinfo: int ifindex, in_addr spec_dst, in_addr addr (the datagram's destination).
                destination = UInt32(bigEndian: control.load(fromByteOffset: offset + headerSize + 8, as: UInt32.self))
            }
            offset += (length + 7) & ~7
        }
        return (destination, arrival)
    }

    private func u32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    private func handle(_ index: Int, _ input: UnsafeRawBufferPointer, arrival: Int64, recording: Bool) {
        let size = input.count
        guard size >= 10, u32(input, 0) == PacketHeader.magic else { return }
        let number = u32(input, 4)
        let rawType = UInt16(input[8]) << 8 | UInt16(input[9])
        switch rawType {
        case MessageType.tableSnapshot.rawValue:
            guard size >= 14 else { return }
            report.samples.append(
                Sample(client: UInt32(index), tick: u32(input, 10), arrival: arrival, inWindow: recording))
            if recording { report.snapshotsInWindow += 1 }
            return
        case MessageType.challenge.rawValue:
            guard size >= 26, clients[index].state == 0 else { return }
            clients[index].cookie = Cookie(
                high: UInt64(u32(input, 10)) << 32 | UInt64(u32(input, 14)),
                low: UInt64(u32(input, 18)) << 32 | UInt64(u32(input, 22)))
            clients[index].state = 1
            sendHello(index, now: Self.monotonic())
            return
        case MessageType.reject.rawValue, MessageType.disconnect.rawValue:
            if clients[index].state != 2 { clients[index].state = 3 }
            report.rejects += 1
            return
        case MessageType.welcome.rawValue:
            // The key sits after peer, match, seat, tick rate and token; the Welcome is sealed with it. Replies from
            // the in-process server are trusted otherwise: this generator measures, it does not defend.
            let keyOffset = PacketHeader.size + 19
            guard size == keyOffset + 16 + SessionKey.trailerSize else { return }
            let key = SessionKey(
                key0: UInt64(u32(input, keyOffset)) << 32 | UInt64(u32(input, keyOffset + 4)),
                key1: UInt64(u32(input, keyOffset + 8)) << 32 | UInt64(u32(input, keyOffset + 12)))
            guard key.open(input, from: .server) != nil else { return }
            clients[index].key = key
            if clients[index].state < 2 { clients[index].state = 2 }
        default:
            break
        }
        guard let type = MessageType(rawValue: rawType), type.delivery == .reliable else { return }
        if number == clients[index].expected {
            clients[index].expected &+= 1
            if clients[index].expected == 0 { clients[index].expected = 1 }
        }
        send(Packet(.ack(Ack(cumulative: clients[index].expected &- 1, bitfield: 0))), from: index)
    }
}
