import NIOCore
import SkirmishWire

extension ClientConnection {
    /// Why a connection ended.
    package enum Cause: Sendable, Hashable, CustomStringConvertible {
        /// The server refused the Hello (or a resume) with a `Reject`, or sent one later (matchmaking timed out).
        case rejected(RejectReason)
        /// The server sent `Disconnect`.
        case remote(DisconnectReason)
        /// Nothing arrived for the silence timeout.
        case silence
        /// A reliable message went unacknowledged for the ack timeout, or too many awaited an ack.
        case unacknowledged
        /// No Welcome within ``Configuration/handshakeTimeout``, for a first handshake or a resume.
        case handshakeTimeout
        /// The server answered more than ``Configuration/maxChallenges`` Hellos with a Challenge.
        case handshakeLoop
        /// This side closed it with ``ClientConnection/close(reason:now:)``.
        case local
        /// The shell reported that its socket failed (``ClientConnection/transportFailed(_:now:)``).
        case transportError(String)

        package var description: String {
            switch self {
            case .rejected(let reason): "rejected: \(reason)"
            case .remote(let reason): "disconnected by the server: \(reason)"
            case .silence: "the server went silent"
            case .unacknowledged: "reliable messages went unacknowledged"
            case .handshakeTimeout: "the handshake timed out"
            case .handshakeLoop: "the server answered every Hello with a new Challenge"
            case .local: "closed by this side"
            case .transportError(let text): "transport error: \(text)"
            }
        }
    }

    /// What the connection tells its owner.
    package enum Event: Sendable, Hashable {
        /// The first Welcome: the player has a seat.
        case seated(Welcome)
        /// The Welcome that answered a resume: the seat is back, with what it missed following.
        case resumed(Welcome)
        /// A message from the server, in delivery order.
        case message(Message)
        /// A round trip measured from a Pong to one of this side's Pings.
        case rtt(TimeAmount)
        /// The connection ended on its own (not after ``ClientConnection/close(reason:now:)``).
        case closed(Cause)
    }

    /// What one call leaves for the shell to do: packets to write, in order, and events for the owner.
    ///
    /// The shell writes ``packets`` first, then hands the events over with ``ClientConnection/nextEvent(from:)``,
    /// which skips what an event handler made stale by closing the connection. A shell that reuses one value calls
    /// ``removeAll()`` after executing it, so that, once its arrays have grown to a working size, nothing is
    /// allocated per packet.
    package struct Actions: Sendable {
        /// Packets to write, in order. Encoding and framing are the shell's: a ``Packet`` is transport-neutral.
        package var packets: [Packet] = []
        /// Events for the owner, in order.
        package var events: [Event] = []
        /// The owner epoch each event was produced in (see ``ClientConnection/nextEvent(from:)``), index for index.
        var epochs: [UInt32] = []
        /// The next event ``ClientConnection/nextEvent(from:)`` looks at.
        var cursor = 0

        package init() {}

        /// Whether there is nothing to do.
        package var isEmpty: Bool { packets.isEmpty && events.isEmpty }

        /// Forgets everything, keeping the arrays' storage for the next call.
        package mutating func removeAll() {
            packets.removeAll(keepingCapacity: true)
            events.removeAll(keepingCapacity: true)
            epochs.removeAll(keepingCapacity: true)
            cursor = 0
        }
    }
}
