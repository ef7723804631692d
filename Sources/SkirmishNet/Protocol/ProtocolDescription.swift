import SkirmishWire

/// What the runtime knows of a protocol before any connection exists: its name, the transports it runs over, and
/// every series it can produce, so each exists at 0 from the first push and figures it cannot measure stay absent.
public struct ProtocolDescription: Sendable, Hashable {
    /// The name scripts write in `protocol:` (`snap`, `enet`, `ddnet`, or a user's).
    public var name: String
    /// The transports it runs over; a target with another is refused before a run starts.
    public var transports: Set<Transport>
    /// The kinds ``ClientMetric/sent(kind:bytes:)`` and ``ClientMetric/received(kind:bytes:)`` index: the `type` and
    /// `delivery` labels of `skirmish_packets_sent_total` and `skirmish_packets_received_total`.
    public var packetKinds: [PacketKind]
    /// The figures the protocol measures (round trips, resends, …); the others are absent from its runs' results.
    public var figures: Figures
    /// The `kind` labels its ``ClientMetric/error(kind:)`` and ``CloseReason/kind`` use, besides the runtime's own
    /// (``CloseReason/runtimeKinds``).
    public var errorKinds: [String]
    /// The names of its own events (``ClientMetric/event(index:count:)``), counted in
    /// `skirmish_protocol_events_total{event}`.
    public var events: [String]
    /// The parts its ``ClientMetric/desync(_:)`` names, counted in `skirmish_desyncs_total{part}`.
    public var desyncParts: [String]
    /// The names its ``ClientMetric/check(name:passed:)`` judges, counted in `skirmish_checks_total{check}`.
    public var checks: [String]

    /// A description; every list may be empty.
    public init(
        name: String, transports: Set<Transport>, packetKinds: [PacketKind], figures: Figures,
        errorKinds: [String] = [], events: [String] = [], desyncParts: [String] = [], checks: [String] = []
    ) {
        self.name = name
        self.transports = transports
        self.packetKinds = packetKinds
        self.figures = figures
        self.errorKinds = errorKinds
        self.events = events
        self.desyncParts = desyncParts
        self.checks = checks
    }
}

/// One kind of packet a protocol counts: its name, how it is delivered (`reliable`, `unreliable`, `control`, …) and
/// which way it travels.
public struct PacketKind: Sendable, Hashable {
    /// Which way a kind of packet travels: its sent series exist when a client sends it, its received series when
    /// a server does.
    public enum Direction: Sendable, Hashable {
        case toServer, fromServer, both
    }

    /// The `type` label: `PaddleState`, `reliable/ch0`, `snap_single`.
    public var name: String
    /// The `delivery` label.
    public var delivery: String
    /// Which way it travels.
    public var direction: Direction

    /// A kind named `name`, delivered as `delivery`, travelling `direction`.
    public init(_ name: String, delivery: String, direction: Direction = .both) {
        self.name = name
        self.delivery = delivery
        self.direction = direction
    }
}

/// The figures a run can show, each measured by a protocol or by a behaviour, or by neither and then absent.
public struct Figures: OptionSet, Sendable, Hashable {
    /// The set's bits.
    public var rawValue: UInt32

    /// A set from its bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Round trips (`skirmish_rtt_seconds`).
    public static let roundTrip = Figures(rawValue: 1 << 0)
    /// Reliable resends (`skirmish_reliable_resends_total`).
    public static let resends = Figures(rawValue: 1 << 1)
    /// Packets lost from the server (`skirmish_packets_lost_total`).
    public static let loss = Figures(rawValue: 1 << 2)
    /// Handshake times (`skirmish_handshake_seconds`).
    public static let handshake = Figures(rawValue: 1 << 3)
    /// Snapshot ages (`skirmish_snapshot_age_seconds`).
    public static let snapshotAge = Figures(rawValue: 1 << 4)
    /// Desync episodes (`skirmish_desyncs_total`).
    public static let desyncs = Figures(rawValue: 1 << 5)
    /// Input schedule lateness (`skirmish_tick_lateness_seconds`, `skirmish_inputs_total`).
    public static let tickLateness = Figures(rawValue: 1 << 6)
    /// Prediction errors and mispredictions (`skirmish_prediction_error_pixels`).
    public static let prediction = Figures(rawValue: 1 << 7)
    /// Matches started and completed.
    public static let matches = Figures(rawValue: 1 << 8)
    /// Snapshot intervals (`skirmish_snapshot_interval_seconds`).
    public static let snapshotInterval = Figures(rawValue: 1 << 9)
    /// Request round trips a behaviour matched itself (`skirmish_request_rtt_seconds`): an echoed sequence number.
    public static let requestRoundTrip = Figures(rawValue: 1 << 10)
}
