import SkirmishWire

/// What an ``AsyncClientSession`` tells its owner, in order.
package enum SessionEvent: Sendable, Hashable {
    /// The connection moved to a new state: handshaking once the socket is open, seated at a Welcome (the first or a
    /// resume's), suspended, resuming, or closed with the cause (see ``SnapConnection/State``).
    ///
    /// A close asked for with ``AsyncClientSession/disconnect(reason:)`` is not reported: the stream ends instead.
    case stateChanged(SnapConnection.State)
    /// A message from the server, in delivery order, with when the packet carrying it was read.
    case message(Message, receivedAt: Instant)
    /// A round trip measured from a Pong to one of this side's Pings.
    case rtt(Duration)
}
