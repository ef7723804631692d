#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Many UDP datagrams per system call — `recvmmsg(2)` and `sendmmsg(2)` — over buffers allocated once.
///
/// A batch is `capacity` slots, each with room for one datagram of up to `slotSize` bytes, its peer address and
/// `controlSize` bytes of ancillary data. Receiving fills slots from the front; sending sends the slots filled with
/// ``append(to:control:_:)``. Nothing is allocated after `init`, so a server or load generator moving hundreds of
/// thousands of datagrams a second pays one system call per batch and no allocation per datagram.
///
/// Glibc declares both calls only under `_GNU_SOURCE`, which Swift's Glibc module does not define, so they are looked
/// up once with `dlsym` and called through `@convention(c)` pointers — the C calling convention, as a C caller would.
/// `struct mmsghdr` (a `msghdr`, then the `unsigned int` byte count, padded to the `msghdr` alignment) is laid out here
/// with raw stores. Where the symbols are missing the batch falls back to one `recvmsg`/`sendmsg` per datagram.
///
/// Not thread-safe: one batch belongs to one thread (an event loop or the load generator's thread).
package final class DatagramBatch {
    /// What one system call did.
    package enum Outcome: Equatable, Sendable {
        /// This many datagrams were received or sent (at least one).
        case transferred(Int)
        /// Nothing to read, or the send buffer is full (`EAGAIN`).
        case wouldBlock
        /// The call failed with this `errno`.
        case failed(Int32)
    }

    package let capacity: Int
    package let slotSize: Int
    package let controlSize: Int
    /// Slots filled: by the last ``receive(from:)``, or by ``append(to:control:_:)`` since the last send or reset.
    package private(set) var count = 0

    private let payloads: UnsafeMutableRawPointer
    private let headers: UnsafeMutableRawPointer
    private let vectors: UnsafeMutablePointer<iovec>
    private let names: UnsafeMutableRawPointer
    private let controls: UnsafeMutableRawPointer?
    /// Bytes of each filled slot's datagram, and of its name and control data (sending).
    private let lengths: UnsafeMutablePointer<(payload: Int, name: socklen_t, control: Int)>

    private static let headerStride: Int = {
        let size = MemoryLayout<msghdr>.size + MemoryLayout<UInt32>.size
        let alignment = MemoryLayout<msghdr>.alignment
        return (size + alignment - 1) / alignment * alignment
    }()
    private static let nameSize = MemoryLayout<sockaddr_storage>.size

    /// - Parameters:
    ///   - capacity: datagrams per system call (at most 1,024, the kernel's `UIO_MAXIOV`).
    ///   - slotSize: the largest datagram, in bytes; a longer one received is cut (and flagged `MSG_TRUNC`).
    ///   - controlSize: bytes of ancillary data per datagram (timestamps, packet info); 0 for none.
    package init(capacity: Int, slotSize: Int, controlSize: Int = 0) {
        precondition((1...1_024).contains(capacity) && slotSize > 0 && controlSize >= 0)
        self.capacity = capacity
        self.slotSize = slotSize
        self.controlSize = controlSize
        payloads = .allocate(byteCount: capacity * slotSize, alignment: 16)
        headers = .allocate(byteCount: capacity * Self.headerStride, alignment: MemoryLayout<msghdr>.alignment)
        headers.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * Self.headerStride)
        vectors = .allocate(capacity: capacity)
        vectors.initialize(repeating: iovec(), count: capacity)
        names = .allocate(byteCount: capacity * Self.nameSize, alignment: MemoryLayout<sockaddr_storage>.alignment)
        names.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * Self.nameSize)
        if controlSize > 0 {
            let controls = UnsafeMutableRawPointer.allocate(byteCount: capacity * controlSize, alignment: 16)
            controls.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * controlSize)
            self.controls = controls
        } else {
            controls = nil
        }
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: (0, 0, 0), count: capacity)
    }

    deinit {
        payloads.deallocate()
        headers.deallocate()
        vectors.deallocate()
        names.deallocate()
        controls?.deallocate()
        lengths.deallocate()
    }

    // MARK: Receiving

    /// Reads up to `capacity` datagrams waiting on `fd` without blocking; ``count`` says how many.
    package func receive(from fd: Int32) -> Outcome {
        for slot in 0..<capacity {
            prepare(slot, payload: slotSize, name: socklen_t(Self.nameSize), control: controlSize)
        }
        count = 0
        let received: Int32
        if let receiveMany = Self.calls.receive {
            received = receiveMany(fd, headers, UInt32(capacity), Int32(MSG_DONTWAIT), nil)
        } else {
            var read: Int32 = 0
            while read < capacity {
                let header = headers.advanced(by: Int(read) * Self.headerStride).assumingMemoryBound(to: msghdr.self)
                let size = recvmsg(fd, header, Int32(MSG_DONTWAIT))
                guard size >= 0 else { break }
                storeLength(UInt32(size), at: Int(read))
                read += 1
            }
            received = read > 0 ? read : -1
        }
        guard received > 0 else { return Self.failure() }
        count = Int(received)
        return .transferred(count)
    }

    /// The bytes of received datagram `slot`.
    package func payload(_ slot: Int) -> UnsafeRawBufferPointer {
        let received = headers.load(fromByteOffset: slot * Self.headerStride + lengthOffset, as: UInt32.self)
        let length = min(Int(received), slotSize)
        return UnsafeRawBufferPointer(start: payloads + slot * slotSize, count: length)
    }

    /// The sender of received datagram `slot`; `nil` for a family other than IPv4 and IPv6.
    package func address(_ slot: Int) -> DatagramAddress? {
        let header = headers.load(fromByteOffset: slot * Self.headerStride, as: msghdr.self)
        let length = min(Int(header.msg_namelen), Self.nameSize)
        return DatagramAddress(rawSockaddr: UnsafeRawBufferPointer(start: names + slot * Self.nameSize, count: length))
    }

    /// The ancillary data the kernel returned with received datagram `slot` (a run of `cmsghdr`s).
    package func control(_ slot: Int) -> UnsafeRawBufferPointer {
        guard let controls else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let header = headers.load(fromByteOffset: slot * Self.headerStride, as: msghdr.self)
        let length = min(header.msg_controllen, controlSize)
        return UnsafeRawBufferPointer(start: controls + slot * controlSize, count: length)
    }

    // MARK: Sending

    /// Whether every slot is filled: send before appending more.
    package var isFull: Bool { count == capacity }

    /// Empties the batch without sending.
    package func reset() { count = 0 }

    /// Fills the next slot: `encode` writes the datagram into the slot's bytes and returns its length (0 leaves the
    /// slot free); `control`, when given, writes ancillary data and returns its length. `address` `nil` sends to the
    /// socket's connected peer. Returns whether a datagram was added (false when full or `encode` wrote nothing).
    @discardableResult
    package func append(
        to address: DatagramAddress?, control: ((UnsafeMutableRawBufferPointer) -> Int)? = nil,
        _ encode: (UnsafeMutableRawBufferPointer) -> Int
    ) -> Bool {
        guard count < capacity else { return false }
        let slot = count
        let written = encode(UnsafeMutableRawBufferPointer(start: payloads + slot * slotSize, count: slotSize))
        guard written > 0, written <= slotSize else { return false }
        let name = address?.write(into: names + slot * Self.nameSize) ?? 0
        var controlLength = 0
        if let control, let controls {
            controlLength = min(
                control(UnsafeMutableRawBufferPointer(start: controls + slot * controlSize, count: controlSize)),
                controlSize)
        }
        lengths[slot] = (written, name, controlLength)
        count += 1
        return true
    }

    /// The length of filled slot `slot`'s datagram (for counting what was sent).
    package func appendedLength(_ slot: Int) -> Int { lengths[slot].payload }

    /// Filled slot `slot`'s destination and datagram; `nil` for a slot sent to the connected peer.
    package func appended(_ slot: Int) -> (DatagramAddress, UnsafeRawBufferPointer)? {
        let length = lengths[slot]
        let name = UnsafeRawBufferPointer(start: names + slot * Self.nameSize, count: Int(length.name))
        guard length.name > 0, let address = DatagramAddress(rawSockaddr: name) else { return nil }
        return (address, UnsafeRawBufferPointer(start: payloads + slot * slotSize, count: length.payload))
    }

    /// Sends slots `start..<count` on `fd` without blocking, with as many system calls as the kernel needs; returns
    /// how many went out before the first failure (the batch stays filled: ``reset()`` when done with it).
    package func send(on fd: Int32, from start: Int = 0) -> Outcome {
        guard start < count else { return .transferred(0) }
        for slot in start..<count {
            let length = lengths[slot]
            prepare(slot, payload: length.payload, name: length.name, control: length.control)
        }
        var sent = start
        while sent < count {
            let result: Int32
            let first = headers + sent * Self.headerStride
            if let sendMany = Self.calls.send {
                result = sendMany(fd, first, UInt32(count - sent), Int32(MSG_DONTWAIT))
            } else {
                let size = sendmsg(fd, first.assumingMemoryBound(to: msghdr.self), Int32(MSG_DONTWAIT))
                result = size >= 0 ? 1 : -1
            }
            guard result > 0 else {
                if sent > start { return .transferred(sent - start) }
                return Self.failure()
            }
            sent += Int(result)
        }
        return .transferred(sent - start)
    }

    // MARK: Layout

    private var lengthOffset: Int { MemoryLayout<msghdr>.size }

    private func prepare(_ slot: Int, payload: Int, name: socklen_t, control: Int) {
        vectors[slot] = iovec(iov_base: payloads + slot * slotSize, iov_len: payload)
        var header = msghdr()
        header.msg_name = name > 0 ? names + slot * Self.nameSize : nil
        header.msg_namelen = name
        header.msg_iov = vectors + slot
        header.msg_iovlen = 1
        header.msg_control = control > 0 ? controls.map { $0 + slot * controlSize } : nil
        header.msg_controllen = header.msg_control == nil ? 0 : control
        header.msg_flags = 0
        headers.storeBytes(of: header, toByteOffset: slot * Self.headerStride, as: msghdr.self)
        storeLength(0, at: slot)
    }

    private func storeLength(_ length: UInt32, at slot: Int) {
        headers.storeBytes(of: length, toByteOffset: slot * Self.headerStride + lengthOffset, as: UInt32.self)
    }

    private static func failure() -> Outcome {
        let code = errno
        return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
    }

    // MARK: The system calls

    private typealias SendMany = @convention(c) (Int32, UnsafeMutableRawPointer?, UInt32, Int32) -> Int32
    private typealias ReceiveMany =
        @convention(c) (Int32, UnsafeMutableRawPointer?, UInt32, Int32, UnsafeMutablePointer<timespec>?) -> Int32

    /// `sendmmsg` and `recvmmsg` from the C library, or `nil` where it has none.
    private struct Calls: @unchecked Sendable {
        // @unchecked: two C function pointers, immutable after the one lookup; calling them from any thread is safe.
        var send: SendMany?
        var receive: ReceiveMany?
    }

    private static let calls: Calls = {
        guard let library = dlopen(nil, RTLD_NOW) else { return Calls() }
        return Calls(
            send: dlsym(library, "sendmmsg").map { unsafeBitCast($0, to: SendMany.self) },
            receive: dlsym(library, "recvmmsg").map { unsafeBitCast($0, to: ReceiveMany.self) })
    }()
}
