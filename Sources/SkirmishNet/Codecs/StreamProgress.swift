import NIOCore

/// An outbound user event a stream's decoder sends toward the head of its pipeline when a whole unit (a frame, a
/// WebSocket message or control frame, an HTTP request head) has arrived.
///
/// A handler at the head (the server's connection guard) times how long a started unit stays incomplete, so a peer
/// that sends half a frame and stops is closed instead of holding its buffer. `pending` says whether bytes of the
/// next unit are already buffered (the timer then restarts rather than stops).
package struct StreamProgress: Sendable, Hashable {
    package var pending: Bool

    package init(pending: Bool) {
        self.pending = pending
    }
}
