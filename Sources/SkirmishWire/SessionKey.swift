/// The per-session secret that authenticates every post-handshake UDP datagram, in both directions.
///
/// The server draws it from the system's CSPRNG for each UDP session and sends it in `Welcome`. After that, each
/// datagram of the session carries an 8-byte trailer: SipHash-2-4 under this key of one direction byte and the packet
/// (header and payload). A datagram whose trailer does not verify is dropped and counted, never acted on: someone who
/// can send from a player's address but never saw its Welcome cannot end the session with a `Disconnect` or poison
/// its numbering with a far-future `PaddleState` (the netcode.io idea, with a MAC instead of an AEAD: the payload
/// is not secret, only its origin matters). TCP and WebSocket are bound to their connection and carry no trailer.
///
/// Sealing and opening work on the caller's buffer and allocate nothing: this runs for every packet of every bot.
public struct SessionKey: Sendable, Hashable {
    /// The first SipHash key word (sent first in `Welcome`).
    public var key0: UInt64
    /// The second SipHash key word.
    public var key1: UInt64

    /// A key from its two SipHash words, as read from a `Welcome`; use ``random()`` for a new session.
    public init(key0: UInt64, key1: UInt64) {
        self.key0 = key0
        self.key1 = key1
    }

    /// No key: what `Welcome` carries over TCP and WebSocket, where the connection itself authenticates.
    public static let zero = SessionKey(key0: 0, key1: 0)

    /// A fresh key from the system's CSPRNG (never a run's seed).
    public static func random() -> SessionKey {
        var generator = SystemRandomNumberGenerator()
        var key = SessionKey(key0: generator.next(), key1: generator.next())
        while key == .zero { key = SessionKey(key0: generator.next(), key1: generator.next()) }
        return key
    }

    /// Bytes the trailer adds to a datagram.
    public static let trailerSize = 8

    /// The byte that says which way a datagram goes, MACed first, so a packet cannot be reflected back to its sender.
    public static func directionByte(from sender: Role) -> UInt8 {
        switch sender {
        case .client: 0x43 // "C"
        case .server: 0x53 // "S"
        }
    }

    /// The trailer of `packet` (its encoded header and payload) sent by `sender`.
    public func mac(_ packet: UnsafeRawBufferPointer, from sender: Role) -> UInt64 {
        var hash = SipHash(key0: key0, key1: key1)
        hash.combine(Self.directionByte(from: sender))
        hash.combine(packet)
        return hash.finalize()
    }

    /// Appends the trailer after the `length` bytes of the packet at the start of `buffer`; returns the datagram's
    /// length, or `nil` when the buffer has no room for it.
    public func seal(_ buffer: UnsafeMutableRawBufferPointer, length: Int, from sender: Role) -> Int? {
        guard length >= 0, buffer.count - length >= Self.trailerSize else { return nil }
        let tag = mac(UnsafeRawBufferPointer(rebasing: buffer[0..<length]), from: sender)
        buffer.storeBytes(of: tag.bigEndian, toByteOffset: length, as: UInt64.self)
        return length + Self.trailerSize
    }

    /// The packet inside a datagram whose trailer verifies, or `nil` when it is missing or wrong.
    public func open(_ datagram: UnsafeRawBufferPointer, from sender: Role) -> UnsafeRawBufferPointer? {
        guard datagram.count >= Self.trailerSize else { return nil }
        let end = datagram.count - Self.trailerSize
        let packet = UnsafeRawBufferPointer(rebasing: datagram[0..<end])
        let tag = UInt64(bigEndian: datagram.loadUnaligned(fromByteOffset: end, as: UInt64.self))
        // One 64-bit comparison: no early exit per byte for a timing attack to measure.
        return mac(packet, from: sender) == tag ? packet : nil
    }
}
