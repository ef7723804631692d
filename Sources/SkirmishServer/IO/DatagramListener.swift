import NIOCore
import SkirmishNet
import SkirmishWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's UDP socket, read and written in batches on the server's event loop.
///
/// NIO's `DatagramChannel` hands over every datagram as an `AddressedEnvelope` — a boxed `SocketAddress` and a
/// pipeline message each — and takes every reply the same way: a few allocations and a pipeline walk per packet, which
/// at hundreds of thousands of packets a second cost more than the game itself. So the server opens the socket itself
/// and gives it to NIO (`DatagramBootstrap.withBoundSocket`) only to be told when it is readable and to own its
/// lifetime. When NIO delivers the first datagram of a readable spell, the loop drains the rest with `recvmmsg` into
/// buffers allocated once; every flush of the core's outbox goes out with `sendmmsg` from buffers allocated once.
/// Nothing leaves the event loop, so the core stays loop-confined and the tick schedule is untouched.
///
/// Only ever touched on the server's loop; `ServerLoop` drops it before NIO closes the descriptor.
final class DatagramListener {
    /// The socket's descriptor; NIO's channel owns it and closes it.
    let descriptor: Int32
    /// NIO's channel on the same socket: a reply the kernel's send buffer cannot take now is queued there instead.
    let channel: any Channel
    private let receiving = DatagramBatch(capacity: DatagramListener.readBatch, slotSize: 2_048)
    // A datagram is at most maxDatagram bytes of packet plus its session trailer (WireProtocol.md).
    private let sending = DatagramBatch(capacity: 1_024, slotSize: WireLimits.maxDatagram + SessionKey.trailerSize)
    /// Datagrams read with `recvmmsg` (beyond the one NIO reads per readable event), and the `sendmmsg` calls made.
    private(set) var batchedReads: UInt64 = 0
    private(set) var sendCalls: UInt64 = 0
    /// Datagrams per `recvmmsg`.
    static let readBatch = 64
    /// Datagrams read per readable event at most, so a flood cannot hold the loop past a tick.
    static let readBudget = 1_024

    init(descriptor: Int32, channel: any Channel) {
        self.descriptor = descriptor
        self.channel = channel
    }

    /// Opens a non-blocking UDP socket bound to `host:port` (no `SO_REUSEADDR`).
    ///
    /// - Throws: `SocketAddressError` for a host that does not resolve, `IOError` (with its errno) when the socket
    ///   cannot be made or bound — what ``ListenError/naming(_:host:port:_:)`` turns into a message.
    static func openSocket(host: String, port: Int) throws -> Int32 {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let family: Int32
        switch address {
        case .v4: family = AF_INET
        case .v6: family = AF_INET6
        case .unixDomainSocket: throw IOError(errnoCode: EAFNOSUPPORT, reason: "bind")
        }
        #if os(Linux)
            let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = SOCK_DGRAM
        #endif
        let descriptor = socket(family, type, 0)
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        if family == AF_INET {
            // Don't fragment: every datagram is under 1,200 bytes anyway, and with DF set the kernel skips choosing a
            // per-destination IP identification for each datagram of an unconnected socket (a hash and an atomic).
            var discover = IP_PMTUDISC_DO
            setsockopt(descriptor, Int32(IPPROTO_IP), IP_MTU_DISCOVER, &discover, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.withSockAddr { pointer, length in bind(descriptor, pointer, socklen_t(length)) }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw IOError(errnoCode: code, reason: "bind")
        }
        return descriptor
    }

    // MARK: Reading

    /// Reads what is waiting, up to ``readBudget`` datagrams, a batch at a time; `receive` gets each datagram, its
    /// sender and the time its batch was read.
    func drain(_ receive: (UnsafeRawBufferPointer, DatagramAddress, NIODeadline) -> Void) {
        var budget = Self.readBudget
        while budget > 0 {
            guard case .transferred(let count) = receiving.receive(from: descriptor) else { return }
            let now = NIODeadline.now()
            batchedReads &+= UInt64(count)
            for slot in 0..<count {
                guard let address = receiving.address(slot) else { continue }
                receive(receiving.payload(slot), address, now)
            }
            budget -= count
            if count < receiving.capacity { return }
        }
    }

    // MARK: Writing

    /// Writes every datagram of `outbox` (stream packets are skipped), up to 1,024 per `sendmmsg`; returns the bytes.
    ///
    /// `encoded` hears the size of each datagram of a match (``Outgoing/match`` non-zero) as it is encoded.
    func write(_ outbox: [Outgoing], encoded: (_ match: UInt32, _ bytes: Int) -> Void = { _, _ in }) -> Int {
        var bytes = 0
        for outgoing in outbox {
            guard case .datagram(let address) = outgoing.connection else { continue }
            if sending.isFull { bytes += sendBatch() }
            sending.append(to: address) {
                let size = outgoing.encode(into: $0) // with the session trailer
                if outgoing.match != 0 { encoded(outgoing.match, size) }
                return size
            }
        }
        bytes += sendBatch()
        return bytes
    }

    private func sendBatch() -> Int {
        var bytes = 0
        var next = 0
        var deferred = false
        while next < sending.count {
            sendCalls &+= 1
            switch sending.send(on: descriptor, from: next) {
            case .transferred(let count):
                for slot in next..<next + count { bytes += sending.appendedLength(slot) }
                next += count
            case .wouldBlock:
                // The kernel's send buffer is full (a slow interface, never loopback): NIO queues the rest and
                // writes it when the socket is writable again, as it did before the server batched.
                for slot in next..<sending.count { bytes += deferToChannel(slot) }
                next = sending.count
                deferred = true
            case .failed:
                // This datagram's destination was refused (no route, a firewall): it is lost like any datagram the
                // network drops, and the rest still go.
                next += 1
            }
        }
        sending.reset()
        if deferred { channel.flush() }
        return bytes
    }

    private func deferToChannel(_ slot: Int) -> Int {
        guard let (address, bytes) = sending.appended(slot) else { return 0 }
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        channel.write(AddressedEnvelope(remoteAddress: address.socketAddress, data: buffer), promise: nil)
        return bytes.count
    }
}
