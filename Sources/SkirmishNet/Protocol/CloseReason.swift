/// Why a connection ended, as the metrics count it and a person reads it.
///
/// ``kind`` is the `kind` label of `skirmish_errors_total`: a short word from a closed set the plug-in lists in its
/// ``ProtocolDescription/errorKinds`` (so each series exists at 0), never built from what a server sent — a hostile
/// server must not be able to mint a series per invented reason. ``detail`` is free text for logs and agents.
public struct CloseReason: Sendable, Hashable, CustomStringConvertible {
    /// The metric label: `rejected_server_full`, `silence_timeout`, `closed_by_server`, …
    public var kind: String
    /// What happened, for people: the server's own words where it sent some.
    public var detail: String
    /// Whether the server or the network went away (a restart, silence, a reset): a bot's return after it is timed
    /// as a reconnect. A refusal (server full, wrong password, banned) is not an outage.
    public var isOutage: Bool
    /// The number the server's goodbye carried, when the protocol has one (ENet's disconnect data, a reason code):
    /// for agents that act on it; never a metric label.
    public var code: UInt32?

    /// A reason; `kind` must be one of the protocol's listed error kinds (or a runtime one).
    public init(kind: String, detail: String, isOutage: Bool, code: UInt32? = nil) {
        self.kind = kind
        self.detail = detail
        self.isOutage = isOutage
        self.code = code
    }

    /// This side ended the connection (the bot left, or dropped its socket on purpose).
    public static let local = CloseReason(kind: "local", detail: "closed by this side", isOutage: false)

    /// Nothing arrived from the server for the protocol's timeout.
    public static func silence(_ detail: String = "the server went silent") -> CloseReason {
        CloseReason(kind: "silence_timeout", detail: detail, isOutage: true)
    }

    /// The handshake did not finish in time.
    public static func handshakeTimeout(_ detail: String = "the handshake timed out") -> CloseReason {
        CloseReason(kind: "handshake_timeout", detail: detail, isOutage: false)
    }

    /// Reliable data went unacknowledged for the protocol's timeout.
    public static func unacknowledged(_ detail: String = "reliable messages went unacknowledged") -> CloseReason {
        CloseReason(kind: "ack_timeout", detail: detail, isOutage: true)
    }

    /// The socket failed or the server closed the stream.
    public static func transport(_ detail: String) -> CloseReason {
        CloseReason(kind: "transport", detail: "transport error: \(detail)", isOutage: true)
    }

    /// `kind: detail`.
    public var description: String { "\(kind): \(detail)" }

    /// The error kinds the runtime itself may report for any protocol: they exist at 0 for every persona. (`local`
    /// is never counted as an error: the bot itself ended the connection.)
    public static let runtimeKinds = ["handshake_timeout", "silence_timeout", "ack_timeout", "transport"]
}
