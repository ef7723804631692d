import SkirmishWire

/// Anything that plays Puck from what a client receives: the ``Opponent``, and the swarm's scripted players when an
/// evaluation pits them against it.
///
/// Package-only glue for ``LockstepTable`` and `skirmish ai-eval`; a user of the library drives an ``Opponent``
/// directly. Times are `Instant`s on the driver's clock (the lock-step table's simulated one, or the runtime's).
package protocol PuckAgent: Sendable {
    /// A `TableSnapshot` in the agent's frame, received at local time `time`.
    mutating func observe(_ snapshot: TableSnapshot, at time: Instant)
    /// One Ping→Pong round trip, measured at local time `time`.
    mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant)
    /// Called every server tick: the input to send now, if any.
    mutating func act(now: Instant) -> PaddleState?
    /// Where the agent itself expects the puck at `tick`, for the swarm's misprediction checks; `nil` when it keeps
    /// no prediction of its own.
    func predictedPuck(atTick tick: UInt32) -> TableSnapshot.Puck?
}

extension PuckAgent {
    package func predictedPuck(atTick tick: UInt32) -> TableSnapshot.Puck? { nil }
}

extension Opponent: PuckAgent {
    package mutating func act(now: Instant) -> PaddleState? { decide(now: now) }
}
