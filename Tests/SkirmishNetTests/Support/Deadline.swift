import NIOCore
import SkirmishNet
import SkirmishWire

struct Timeout: Error, CustomStringConvertible {
    var limit: Duration
    var description: String { "gave up after \(limit)" }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs `body`, failing with ``Timeout`` when it takes longer than `limit` (a deadline, not a synchronisation sleep).
func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw Timeout(limit: limit)
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// Waits for the session to be seated and returns its Welcome.
func connected(_ session: AsyncClientSession) async throws -> Welcome {
    for await event in session.events {
        switch event {
        case .stateChanged(.seated(let welcome)): return welcome
        case .stateChanged(.closed(let cause)): throw TestFailure(description: "disconnected: \(cause)")
        default: continue
        }
    }
    throw TestFailure(description: "the event stream ended before the session connected")
}

/// The packet's bytes as the codec writes them.
func encoded(_ packet: Packet) -> [UInt8] {
    (try? packet.encoded()) ?? []
}
