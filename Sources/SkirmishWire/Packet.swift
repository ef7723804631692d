/// A packet: a number and a message. The header's type code comes from the message.
///
/// Encoding writes into a caller-provided buffer and decoding reads a borrowed view, so the fixed-size messages
/// (`PaddleState`, `TableSnapshot`, `Ping`, `Pong`, `Ack`) cost no heap allocation either way.
public struct Packet: Sendable, Hashable {
    /// The sender's packet number: 0 for handshake packets and on ordered transports.
    public var number: UInt32
    /// What the packet carries; its type code goes in the header.
    public var message: Message

    /// A packet numbered `number` (0, the default, for handshake packets and on TCP and WebSocket) carrying `message`.
    public init(number: UInt32 = 0, _ message: Message) {
        self.number = number
        self.message = message
    }

    /// The header this packet is sent with.
    public var header: PacketHeader { PacketHeader(number: number, type: message.type) }

    /// Decodes one whole packet from `bytes`.
    ///
    /// Total: every input yields a packet or a ``DecodeError``; no input reads outside `bytes` or traps.
    /// - Parameters:
    ///   - bytes: exactly one packet: a datagram, a TCP frame's body or a WebSocket message.
    ///   - maxSize: the largest packet the transport allows (``WireLimits/maxDatagram`` for UDP,
    ///     ``WireLimits/maxFrame`` for TCP and WebSocket); longer input is `tooLarge` before anything is parsed.
    public static func decode(
        _ bytes: UnsafeRawBufferPointer, maxSize: Int = WireLimits.maxFrame
    ) throws(DecodeError) -> Packet {
        guard bytes.count <= maxSize else { throw .tooLarge }
        var reader = WireReader(bytes)
        let header = try reader.header()
        guard header.type.delivery != .handshake || header.number == 0 else { throw .badValue }
        let message = try Message(type: header.type, reading: &reader)
        try reader.finish()
        return Packet(number: header.number, message)
    }

    /// Decodes one whole packet from an array of bytes.
    public static func decode(_ bytes: [UInt8], maxSize: Int = WireLimits.maxFrame) throws(DecodeError) -> Packet {
        // `withUnsafeBytes` rethrows untyped; carry the typed error out through a `Result`.
        try bytes.withUnsafeBytes { raw in Result { () throws(DecodeError) in try decode(raw, maxSize: maxSize) } }
            .get()
    }

    /// Encodes the packet at the start of `buffer` and returns how many bytes it took.
    ///
    /// Refuses (with ``EncodeError``) exactly what ``decode(_:maxSize:)-(UnsafeRawBufferPointer,_)`` would refuse, so what one Skirmish peer
    /// sends another never drops as malformed.
    public func encode(into buffer: UnsafeMutableRawBufferPointer) throws(EncodeError) -> Int {
        do {
            return try write(into: buffer)
        } catch .bufferTooSmall {
            // Slow path, errors only: measure the whole packet so the error says how much room it needs.
            let needed = withUnsafeTemporaryAllocation(byteCount: WireLimits.maxFrame, alignment: 8) { scratch in
                try? write(into: scratch)
            }
            throw EncodeError.bufferTooSmall(needed: needed ?? WireLimits.maxFrame + 1)
        }
    }

    private func write(into buffer: UnsafeMutableRawBufferPointer) throws(EncodeError) -> Int {
        guard message.type.delivery != .handshake || number == 0 else { throw .badValue }
        var writer = WireWriter(buffer)
        try writer.u32(PacketHeader.magic)
        try writer.u32(number)
        try writer.u16(message.type.rawValue)
        try message.write(to: &writer)
        return writer.offset
    }

    /// The encoded bytes in a new array. Convenient off the hot path; the hot path uses ``encode(into:)``.
    public func encoded() throws(EncodeError) -> [UInt8] {
        var result: Result<Int, EncodeError> = .success(0)
        let bytes = [UInt8](unsafeUninitializedCapacity: WireLimits.maxFrame) { buffer, count in
            result = Result { () throws(EncodeError) in try encode(into: UnsafeMutableRawBufferPointer(buffer)) }
            count = (try? result.get()) ?? 0
        }
        _ = try result.get()
        return bytes
    }
}
