import SkirmishWire

/// The server's own counters, kept by the loop that owns the server and copied out on read.
///
/// Plain arrays indexed by dense enums: the hot path adds to an element and allocates nothing.
package struct ServerStats: Sendable, Hashable {
    package var rejected = [UInt64](repeating: 0, count: Rejection.allCases.count)
    package var packetsReceived = [UInt64](repeating: 0, count: MessageType.allCases.count)
    package var packetsSent = [UInt64](repeating: 0, count: MessageType.allCases.count)
    package var bytesReceived: UInt64 = 0
    package var bytesSent: UInt64 = 0
    package var challengesSent: UInt64 = 0
    package var sessionsOpened: UInt64 = 0
    package var sessionsClosed: UInt64 = 0
    package var resumes: UInt64 = 0
    package var matchesStarted = [UInt64](repeating: 0, count: 4)
    package var matchesCompleted = [UInt64](repeating: 0, count: 4)
    package var matchesAbandoned = [UInt64](repeating: 0, count: 4)
    package var forfeits: UInt64 = 0
    package var sunsDesyncs: UInt64 = 0
    package var sunsTalliesCompared: UInt64 = 0
    package var ticks: UInt64 = 0
    package var lateTicks: UInt64 = 0
    /// When tick 0 of the current 60 Hz schedule was due (`NIODeadline` uptime nanoseconds): tick k is due at
    /// `tickAnchor + k · 10⁹ / 60`. A benchmark in the same process measures snapshot age against it.
    package var tickAnchor: UInt64 = 0
    /// Sessions held now (attached or awaiting resume).
    package var sessions = 0
    /// Sessions awaiting resume now.
    package var detached = 0
    /// Matches running or forming now.
    package var matches = 0

    package init() {}

    package mutating func reject(_ reason: Rejection) { rejected[reason.rawValue] &+= 1 }

    package func rejections(_ reason: Rejection) -> UInt64 { rejected[reason.rawValue] }

    package var totalRejected: UInt64 { rejected.reduce(0, &+) }
}
