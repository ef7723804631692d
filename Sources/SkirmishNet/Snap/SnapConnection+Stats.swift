import NIOCore
import SkirmishWire

extension SnapConnection {
    /// Counters of one connection. Bytes and per-type counts are the shell's: it sees the encoded packets.
    package struct Stats: Sendable, Hashable {
        /// Packets handed to the shell to write (Hellos, acks, resends and Pongs included).
        package var packetsSent: UInt64 = 0
        /// Packets decoded and taken in while the connection was live.
        package var packetsReceived: UInt64 = 0
        /// Packets that arrived when no connection was live (idle, suspended, closed) or came from the wrong side
        /// (a client-to-server type such as `Hello` or `PaddleState`); dropped.
        package var packetsIgnored: UInt64 = 0
        /// UDP datagrams that failed the session's trailer check (``SessionKey``), or came without one where one is
        /// required: spoofed or mangled; dropped unread.
        package var unauthenticated: UInt64 = 0
        /// Packets numbered too far ahead of the stream (a forged jump), refused.
        package var farFuture: UInt64 = 0
        /// Acks for numbers this side never sent, ignored.
        package var unsentAcks: UInt64 = 0
        /// Undecodable packets, by ``DecodeError`` kind; dropped.
        package var decodeErrors = DecodeErrors()
        /// Messages ``SnapConnection/send(_:now:into:)`` refused because there was no seat (idle, handshaking,
        /// closed).
        package var droppedSends: UInt64 = 0
        /// Unreliable packets the server sent that never arrived (gaps in their numbering).
        package var lost: UInt64 = 0
        /// Reliable packets resent.
        package var resends: UInt64 = 0
        /// Packets that arrived twice.
        package var duplicates: UInt64 = 0
        /// Unreliable packets that arrived after a newer one, dropped.
        package var stale: UInt64 = 0
        /// The smoothed round trip of reliable packets and their acks, once measured.
        package var srtt: TimeAmount?

        package init() {}
    }

    /// A count per ``DecodeError`` kind, in fixed storage: a hostile peer can send every kind, but no more kinds than
    /// the closed enum has, so this never grows.
    package struct DecodeErrors: Sendable, Hashable {
        private var tooShort: UInt64 = 0
        private var badMagic: UInt64 = 0
        private var unknownType: UInt64 = 0
        private var truncatedPayload: UInt64 = 0
        private var trailingBytes: UInt64 = 0
        private var badString: UInt64 = 0
        private var tooLarge: UInt64 = 0
        private var badValue: UInt64 = 0

        package init() {}

        /// How many packets failed to decode with `kind`.
        package subscript(kind: DecodeError) -> UInt64 {
            switch kind {
            case .tooShort: tooShort
            case .badMagic: badMagic
            case .unknownType: unknownType
            case .truncatedPayload: truncatedPayload
            case .trailingBytes: trailingBytes
            case .badString: badString
            case .tooLarge: tooLarge
            case .badValue: badValue
            }
        }

        mutating func count(_ kind: DecodeError) {
            switch kind {
            case .tooShort: tooShort &+= 1
            case .badMagic: badMagic &+= 1
            case .unknownType: unknownType &+= 1
            case .truncatedPayload: truncatedPayload &+= 1
            case .trailingBytes: trailingBytes &+= 1
            case .badString: badString &+= 1
            case .tooLarge: tooLarge &+= 1
            case .badValue: badValue &+= 1
            }
        }

        /// All kinds together.
        package var total: UInt64 {
            tooShort &+ badMagic &+ unknownType &+ truncatedPayload &+ trailingBytes &+ badString &+ tooLarge
                &+ badValue
        }
    }
}
