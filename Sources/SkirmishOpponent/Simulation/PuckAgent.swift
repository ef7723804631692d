import SkirmishWire

/// Anything that plays Puck from what a client receives: the ``Opponent``, and the swarm's scripted players when an
/// evaluation pits them against it.
///
/// Package-only glue for ``LockstepTable`` and `skirmish ai-eval`; a user of the library drives an ``Opponent``
/// directly.
package protocol PuckAgent: Sendable {
    /// A `TableSnapshot` in the agent's frame, received at local time `time` (seconds).
    mutating func observe(_ snapshot: TableSnapshot, at time: Double)
    /// One Ping→Pong round trip in seconds, measured at local time `time`.
    mutating func observeRoundTrip(_ seconds: Double, at time: Double)
    /// Called every server tick: the input to send now, if any.
    mutating func act(now: Double) -> PaddleState?
}

extension Opponent: PuckAgent {
    package mutating func act(now: Double) -> PaddleState? { decide(now: now) }
}
