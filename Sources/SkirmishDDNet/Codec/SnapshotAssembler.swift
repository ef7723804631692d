/// Collects the parts of one snapshot message (`NETMSG_SNAP`: up to 64 parts of at most 900 bytes,
/// `CSnapshot::MAX_PARTS` and `MAX_SNAPSHOT_PACKSIZE`) until all have arrived, as `CClient::ProcessServerPacket`
/// does: a part of a newer tick drops the parts gathered so far.
struct SnapshotAssembler {
    /// `CSnapshot::MAX_PARTS`.
    static let maxParts = 64
    /// `MAX_SNAPSHOT_PACKSIZE`.
    static let maxPartSize = 900

    /// The tick being gathered; -1 before the first part.
    private(set) var tick: Int32 = -1
    private var received: UInt64 = 0
    private var parts = 0
    private var size = 0
    /// The parts' bytes, each at `part * maxPartSize`; grows to the largest snapshot seen, at most 57,600 bytes.
    private(set) var bytes: [UInt8] = []

    /// What one part said.
    struct Part {
        var tick: Int32
        var count: Int
        var index: Int
        var data: UnsafeRawBufferPointer
    }

    /// The outcome of adding a part.
    enum Outcome: Equatable {
        /// More parts are missing.
        case incomplete
        /// The snapshot is whole: its compressed bytes are the first `size` of ``bytes``.
        case complete(size: Int)
        /// The part is for a tick already passed.
        case stale
    }

    /// Whether parts of an unfinished tick were abandoned by the last ``add(_:)``.
    private(set) var abandoned = false

    /// Adds one part; throws ``DecodeError/badSnapshot`` for a part count, index or size out of range.
    mutating func add(_ part: Part) throws(DecodeError) -> Outcome {
        guard part.count >= 1, part.count <= Self.maxParts, part.index >= 0, part.index < part.count,
            part.data.count <= Self.maxPartSize
        else { throw .badSnapshot }
        abandoned = false
        if part.tick < tick { return .stale }
        if part.tick != tick {
            abandoned = received != 0
            tick = part.tick
            received = 0
            size = 0
        }
        parts = part.count
        let offset = part.index * Self.maxPartSize
        if bytes.count < offset + part.data.count {
            bytes.append(contentsOf: repeatElement(0, count: offset + part.data.count - bytes.count))
        }
        bytes.withUnsafeMutableBytes { buffer in
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + part.data.count)]).copyMemory(
                from: part.data)
        }
        received |= 1 << UInt64(part.index)
        if part.index == part.count - 1 { size = offset + part.data.count }
        let all: UInt64 = parts == 64 ? .max : (1 << UInt64(parts)) - 1
        guard received == all else { return .incomplete }
        received = 0
        return .complete(size: size)
    }

    /// Forgets the parts gathered so far.
    mutating func reset() {
        tick = -1
        received = 0
        size = 0
    }
}
