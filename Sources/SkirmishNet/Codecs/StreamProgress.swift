import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An outbound user event a stream's decoder sends toward the head of its pipeline when a whole unit (a frame, a
/// WebSocket message or control frame, an HTTP request head) has arrived.
///
/// A handler at the head (the server's connection guard) times how long a started unit stays incomplete, so a peer
/// that sends half a frame and stops is closed instead of holding its buffer. `pending` says whether bytes of the
/// next unit are already buffered (the timer then restarts rather than stops).
public struct StreamProgress: Sendable, Hashable {
    public var pending: Bool

    public init(pending: Bool) {
        self.pending = pending
    }
}

/// Back-off for a listening socket whose `accept(2)` fails, so that running out of descriptors does not spin.
///
/// At the open-file limit `accept` fails with `EMFILE` while the connection stays queued, so the listener is readable
/// again at once: without a pause the event loop retries in a tight loop at 100 % CPU and starves every other socket
/// it serves. NIO's `AcceptBackoffHandler` stops reading the listener for a while after such an error.
public enum AcceptBackoff {
    /// How long to stop accepting after `error`: longer when the process or system is out of descriptors or memory.
    public static func delay(after error: IOError) -> TimeAmount {
        switch error.errnoCode {
        case EMFILE, ENFILE, ENOBUFS, ENOMEM: .milliseconds(200)
        default: .milliseconds(20)
        }
    }

    /// The handler to add to a listening channel; `onBackoff` is told of each error it backs off from (on the loop).
    public static func handler(onBackoff: @escaping (IOError) -> Void = { _ in }) -> AcceptBackoffHandler {
        AcceptBackoffHandler(shouldForwardIOErrorCaught: false) { error in
            onBackoff(error)
            return delay(after: error)
        }
    }
}
