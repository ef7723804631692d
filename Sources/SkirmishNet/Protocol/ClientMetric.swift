/// A figure a connection measured, for the runtime to count: packets by kind, round trips, resends, losses,
/// handshakes, snapshot ages, desyncs and errors.
///
/// Figures a protocol cannot measure are never reported, and its ``ProtocolDescription/figures`` says which it does:
/// a summary then shows them as absent, not as 0.
public enum ClientMetric: Sendable, Hashable {
    /// One packet (or message, or command: what the protocol counts) of kind `kind` was sent: an index into
    /// ``ProtocolDescription/packetKinds``; `bytes` is its share of the datagram, headers counted once.
    case sent(kind: Int, bytes: Int)
    /// One packet of kind `kind` arrived and was accepted.
    case received(kind: Int, bytes: Int)
    /// A round-trip probe (a ping) left; its answer, if any comes, is a ``roundTrip(_:)``. Together they give the
    /// reply rate (`skirmish_pings_total{direction}`).
    case probeSent
    /// A round trip, measured by the protocol's own means (a ping, an acknowledgement's echoed time).
    case roundTrip(Duration)
    /// Packets the protocol sent again because no acknowledgement came.
    case resent(count: Int)
    /// Packets from the server that never arrived (gaps in its numbering).
    case lost(count: Int)
    /// The handshake took this long, from ``ClientProtocol/start(now:into:)`` to the player being accepted.
    case handshake(Duration)
    /// How old the newest game state was on arrival: the receive time minus the server's tick time, on the server's
    /// clock as the protocol estimates it.
    case snapshotAge(Duration)
    /// The time between two consecutive snapshots (or state updates) as they arrived.
    case snapshotInterval(Duration)
    /// Two views of state that must agree did not: the first divergent tick of an episode.
    case desync(Desync)
    /// Bad input or a failure of kind `kind` (one of ``ProtocolDescription/errorKinds``): counted, never fatal.
    case error(kind: String)
    /// One reply judged against a rule of the protocol (a check, as in k6 or Gatling): counted in
    /// `skirmish_checks_total{check}`, and when `passed` is false in `skirmish_checks_failed_total{check}`. `name` is
    /// one of ``ProtocolDescription/checks``.
    case check(name: String, passed: Bool)
    /// One occurrence of the protocol's own event number `index` in ``ProtocolDescription/events`` (fragments sent,
    /// throttle changes, …), `count` times.
    case event(index: Int, count: Int)
}

/// One desync episode as a protocol or an agent reports it: where the views diverged, from which tick, and both
/// values as text.
public struct Desync: Sendable, Hashable {
    /// What differs: a part of the state (`puck`, `piles`) or, for a snapshot checksum, the item type that differed.
    public var part: String
    /// The server tick of the state that disagreed, when the protocol has ticks.
    public var tick: UInt32?
    /// What this side computed.
    public var expected: String
    /// What the server said.
    public var observed: String

    /// An episode in `part` at `tick`.
    public init(part: String, tick: UInt32? = nil, expected: String = "", observed: String = "") {
        self.part = part
        self.tick = tick
        self.expected = expected
        self.observed = observed
    }
}
