import NIOCore
import SkirmishNet
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `recvmmsg`/`sendmmsg` batches over real loopback sockets, and the plain addresses they carry.
@Suite struct DatagramBatchTests {
    /// A non-blocking UDP socket bound to 127.0.0.1 on a free port, and its address.
    static func loopbackSocket() throws -> (Int32, DatagramAddress) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        try #require(fd >= 0)
        let local = DatagramAddress(ipv4: 0x7F00_0001, port: 0)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 8)
        defer { raw.deallocate() }
        let length = local.write(into: raw)
        try #require(bind(fd, raw.assumingMemoryBound(to: sockaddr.self), length) == 0)
        var named = socklen_t(128)
        try #require(getsockname(fd, raw.assumingMemoryBound(to: sockaddr.self), &named) == 0)
        return (fd, try #require(DatagramAddress(rawSockaddr: UnsafeRawBufferPointer(start: raw, count: Int(named)))))
    }

    /// Waits until `fd` is readable or `deadline` passes (an event with a deadline, not a sleep).
    static func waitReadable(_ fd: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return false }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, Int32(min(1_000, max(1, left / .milliseconds(1))))) > 0
    }

    @Test func manyDatagramsCrossLoopbackInBatchesWithTheirSenderAndBytesIntact() throws {
        let (sender, senderAddress) = try Self.loopbackSocket()
        let (receiver, receiverAddress) = try Self.loopbackSocket()
        defer {
            close(sender)
            close(receiver)
        }
        // 300 datagrams of 1 to 300 bytes: more than one send batch (128) and one receive batch (64). Each send batch
        // is read before the next goes, so a default-sized receive buffer (about 200 KiB) never overflows.
        let outgoing = DatagramBatch(capacity: 128, slotSize: 1_200)
        let incoming = DatagramBatch(capacity: 64, slotSize: 2_048)
        var sent = 0
        var received: [Int] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while sent < 300 {
            while !outgoing.isFull, sent < 300 {
                let size = sent + 1
                let value = UInt8(truncatingIfNeeded: sent)
                outgoing.append(to: receiverAddress) { buffer in
                    for index in 0..<size { buffer[index] = value &+ UInt8(truncatingIfNeeded: index) }
                    return size
                }
                sent += 1
            }
            #expect(outgoing.send(on: sender) == .transferred(outgoing.count))
            outgoing.reset()
            while received.count < sent, Self.waitReadable(receiver, until: deadline) {
                while case .transferred(let count) = incoming.receive(from: receiver) {
                    for slot in 0..<count {
                        let bytes = incoming.payload(slot)
                        #expect(incoming.address(slot) == senderAddress)
                        let first = bytes[0]
                        let whole = bytes.indices.allSatisfy { bytes[$0] == first &+ UInt8(truncatingIfNeeded: $0) }
                        #expect(whole, "datagram \(received.count) came apart")
                        received.append(bytes.count)
                    }
                }
            }
        }
        // Loopback neither loses nor reorders between two sockets of one host.
        #expect(received == Array(1...300))
        #expect(incoming.receive(from: receiver) == .wouldBlock)
    }

    @Test func addressesRoundTripThroughSocketAddressAndSockaddr() throws {
        let v4 = try SocketAddress(ipAddress: "127.64.1.2", port: 40_001)
        let v6 = try SocketAddress(ipAddress: "::1", port: 40_002)
        let plain4 = try #require(DatagramAddress(v4))
        let plain6 = try #require(DatagramAddress(v6))
        #expect(plain4 == DatagramAddress(ipv4: 0x7F40_0102, port: 40_001))
        #expect(plain4.description == "127.64.1.2:40001")
        #expect(plain6.description == "[0:0:0:0:0:0:0:1]:40002")
        #expect(plain4.socketAddress == v4)
        #expect(plain6.socketAddress == v6)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 8)
        defer { raw.deallocate() }
        for address in [plain4, plain6] {
            let length = address.write(into: raw)
            #expect(DatagramAddress(rawSockaddr: UnsafeRawBufferPointer(start: raw, count: Int(length))) == address)
        }
        #expect(plain4.bytes != DatagramAddress(ipv4: 0x7F40_0102, port: 40_002).bytes)
        #expect(DatagramAddress(try SocketAddress(unixDomainSocketPath: "/tmp/skirmish-test.sock")) == nil)
    }
}
