/// What one call into a ``ClientProtocol`` leaves for the runtime: packets to write, events for the agent, metric
/// events — each in order.
///
/// The runtime keeps one value per loop and empties it after executing it (``removeAll()``), so that once its
/// storage has grown to a working size nothing is allocated per packet: packets are encoded straight into its byte
/// storage (``write(maxLength:_:)``) and sent from there.
public struct ClientActions<Connection: ClientProtocol> {
    /// Encoded packets back to back; `bytes.count` is the storage's size, `used` how much of it holds packets.
    @usableFromInline var bytes: [UInt8]
    @usableFromInline var used = 0
    /// Where each packet ends in ``bytes``.
    @usableFromInline var ends: [Int] = []
    @usableFromInline var eventList: [ClientEvent<Connection>] = []
    @usableFromInline var metricList: [ClientMetric] = []
    @usableFromInline var eventCursor = 0
    @usableFromInline var metricCursor = 0

    /// An empty buffer with room for `capacity` bytes of packets before it grows.
    public init(capacity: Int = 4_096) {
        bytes = [UInt8](repeating: 0, count: max(capacity, 64))
        ends.reserveCapacity(16)
        eventList.reserveCapacity(16)
        metricList.reserveCapacity(16)
    }

    // MARK: Written by the protocol

    /// Appends one packet (a datagram, a WebSocket message, or a run of a TCP stream) encoded by `encode` into a
    /// buffer of `maxLength` bytes; `encode` returns how many it wrote (0: nothing is sent).
    @inlinable
    public mutating func write(maxLength: Int, _ encode: (UnsafeMutableRawBufferPointer) -> Int) {
        precondition(maxLength >= 0, "maxLength must not be negative")
        if used + maxLength > bytes.count { grow(to: used + maxLength) }
        let start = used
        let written = bytes.withUnsafeMutableBytes { raw in
            encode(UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + maxLength)]))
        }
        precondition(written <= maxLength, "wrote \(written) bytes into a buffer of \(maxLength)")
        guard written > 0 else { return }
        used += written
        ends.append(used)
    }

    /// Appends one packet with these bytes.
    @inlinable
    public mutating func write(_ packet: UnsafeRawBufferPointer) {
        write(maxLength: packet.count) { buffer in
            buffer.copyMemory(from: packet)
            return packet.count
        }
    }

    /// Appends one packet with these bytes.
    public mutating func write(_ packet: [UInt8]) {
        packet.withUnsafeBytes { write($0) }
    }

    @usableFromInline
    mutating func grow(to needed: Int) {
        var size = bytes.count
        while size < needed { size *= 2 }
        bytes.append(contentsOf: repeatElement(0, count: size - bytes.count))
    }

    /// The server accepted the player.
    @inlinable
    public mutating func established(_ established: Connection.Established) {
        eventList.append(.established(established))
    }

    /// The player's seat is back after a resume.
    @inlinable
    public mutating func resumed(_ established: Connection.Established) {
        eventList.append(.resumed(established))
    }

    /// An application message for the agent.
    @inlinable
    public mutating func deliver(_ message: Connection.Message) {
        eventList.append(.message(message))
    }

    /// The connection ended on its own.
    @inlinable
    public mutating func closed(_ reason: CloseReason) {
        eventList.append(.closed(reason))
    }

    /// A figure for the metrics.
    @inlinable
    public mutating func record(_ metric: ClientMetric) {
        metricList.append(metric)
    }

    // MARK: Read by the runtime

    /// How many packets are waiting to be written.
    @inlinable
    public var packetCount: Int { ends.count }

    /// Calls `body` with the bytes of packet `index` (valid only during the call).
    @inlinable
    public func withPacket<Result>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let start = index == 0 ? 0 : ends[index - 1]
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<ends[index]])) }
    }

    /// The packets as arrays: for tests and tools, not the hot path.
    public var packets: [[UInt8]] { (0..<packetCount).map { withPacket($0) { Array($0) } } }

    /// Every event so far, handed over or not.
    public var events: [ClientEvent<Connection>] { eventList }

    /// Every metric event so far, handed over or not.
    public var metrics: [ClientMetric] { metricList }

    /// The next event not yet handed over (events appended while handling one come after it), or `nil`.
    @inlinable
    public mutating func nextEvent() -> ClientEvent<Connection>? {
        guard eventCursor < eventList.count else { return nil }
        defer { eventCursor += 1 }
        return eventList[eventCursor]
    }

    /// The next metric event not yet handed over, or `nil`.
    @inlinable
    public mutating func nextMetric() -> ClientMetric? {
        guard metricCursor < metricList.count else { return nil }
        defer { metricCursor += 1 }
        return metricList[metricCursor]
    }

    /// Skips the events not yet handed over: their connection is gone (the bot closed it while handling an earlier
    /// one), so they belong to nobody.
    @inlinable
    public mutating func discardPendingEvents() {
        eventCursor = eventList.count
    }

    /// Forgets the packets, keeping events and metrics.
    @inlinable
    public mutating func removePackets() {
        used = 0
        ends.removeAll(keepingCapacity: true)
    }

    /// Forgets everything, keeping the storage for the next call.
    @inlinable
    public mutating func removeAll() {
        used = 0
        ends.removeAll(keepingCapacity: true)
        eventList.removeAll(keepingCapacity: true)
        metricList.removeAll(keepingCapacity: true)
        eventCursor = 0
        metricCursor = 0
    }

    /// Whether nothing is waiting.
    @inlinable
    public var isEmpty: Bool { ends.isEmpty && eventList.isEmpty && metricList.isEmpty }
}
