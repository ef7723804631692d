import SkirmishWire

/// The vital chunks this side sent and the server has not acknowledged yet, kept to send again
/// (`CNetConnection::m_Buffer`, a 32 KiB ring in the reference).
///
/// Fixed slots in one byte array: nothing is allocated after init, and a full queue refuses the chunk (counted by the
/// connection) instead of growing. A bot's vital messages are few and small (join messages, chat lines), so 32
/// slots of 320 bytes are far more than it ever has in flight.
struct ResendQueue {
    /// Slots in the ring.
    static let capacity = 32
    /// The largest chunk a slot holds; a chat line is cut to fit well below it.
    static let slotSize = 320

    /// One queued chunk's bookkeeping (its bytes are in the slot of the same index).
    struct Entry {
        var sequence = 0
        var length = 0
        var kind = 0
        var firstSent = Instant.zero
        var lastSent = Instant.zero
    }

    private var bytes = [UInt8](repeating: 0, count: capacity * slotSize)
    private var entries = [Entry](repeating: Entry(), count: capacity)
    private var head = 0
    /// How many chunks wait for an acknowledgement.
    private(set) var count = 0

    /// Whether nothing waits.
    var isEmpty: Bool { count == 0 }

    /// The oldest unacknowledged chunk.
    var oldest: Entry? { count == 0 ? nil : entries[head] }

    /// Keeps a copy of `data` sent as vital chunk `sequence`; `false` when the queue is full or the chunk too big.
    mutating func append(sequence: Int, kind: Int, data: UnsafeRawBufferPointer, now: Instant) -> Bool {
        guard count < Self.capacity, data.count <= Self.slotSize else { return false }
        let slot = (head + count) % Self.capacity
        bytes.withUnsafeMutableBytes { buffer in
            UnsafeMutableRawBufferPointer(rebasing: buffer[(slot * Self.slotSize)...]).copyMemory(from: data)
        }
        entries[slot] = Entry(sequence: sequence, length: data.count, kind: kind, firstSent: now, lastSent: now)
        count += 1
        return true
    }

    /// Drops every chunk the server's `ack` covers (`CNetConnection::AckChunks`).
    mutating func acknowledge(_ ack: Int) {
        while count > 0, ChunkHeader.isBehind(entries[head].sequence, ack: ack) {
            head = (head + 1) % Self.capacity
            count -= 1
        }
    }

    /// Calls `body` with the `position`-th oldest chunk and its bytes, and marks it sent at `now`.
    mutating func resend(_ position: Int, now: Instant, _ body: (Entry, UnsafeRawBufferPointer) -> Void) {
        let slot = (head + position) % Self.capacity
        entries[slot].lastSent = now
        let entry = entries[slot]
        bytes.withUnsafeBytes { buffer in
            body(
                entry,
                UnsafeRawBufferPointer(rebasing: buffer[(slot * Self.slotSize)..<(slot * Self.slotSize + entry.length)])
            )
        }
    }

    /// Forgets everything.
    mutating func removeAll() {
        head = 0
        count = 0
    }
}
