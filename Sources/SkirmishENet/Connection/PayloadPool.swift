/// Reusable byte buffers for packets the connection must keep past one call: queued and unacknowledged sends,
/// incoming packets held for order, and reassembly buffers with their fragment bitmaps.
///
/// A slot's array keeps its capacity when released, so once the pool has grown to a working size no packet costs an
/// allocation; a slot that grew beyond ``trimCapacity`` gives its storage back on release, so one large packet does
/// not pin its size for the rest of the run. Fragments of one packet share its slot through a reference count.
/// ``bytes`` is what the live slots hold: what the connection's limits are measured against.
struct PayloadPool {
    private var buffers: [[UInt8]] = []
    private var references: [Int32] = []
    private var free: [Int] = []
    /// Bytes held by live slots.
    private(set) var bytes = 0

    /// Capacity above which a released slot's storage is freed rather than kept.
    static let trimCapacity = 8 * 1024

    /// A slot with an empty buffer and one reference.
    mutating func acquire() -> Int {
        if let slot = free.popLast() {
            references[slot] = 1
            return slot
        }
        buffers.append([])
        references.append(1)
        return buffers.count - 1
    }

    /// Moves the slot's buffer out (leaving it empty) so it can be filled without holding the pool; give it back
    /// with ``put(_:_:)``.
    mutating func take(_ slot: Int) -> [UInt8] {
        var buffer: [UInt8] = []
        swap(&buffer, &buffers[slot])
        bytes -= buffer.count
        return buffer
    }

    /// Puts a buffer taken with ``take(_:)`` back.
    mutating func put(_ slot: Int, _ buffer: [UInt8]) {
        bytes += buffer.count
        buffers[slot] = buffer
    }

    /// Sets the slot's buffer to `count` zero bytes (a reassembly buffer or a bitmap).
    mutating func resize(_ slot: Int, to count: Int) {
        var buffer = take(slot)
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: repeatElement(0, count: count))
        put(slot, buffer)
    }

    /// How many bytes the slot holds.
    func count(_ slot: Int) -> Int { buffers[slot].count }

    /// Adds `count` references to the slot.
    mutating func retain(_ slot: Int, by count: Int) { references[slot] += Int32(count) }

    /// Drops one reference; the last one empties the slot and makes it free.
    mutating func release(_ slot: Int) {
        references[slot] -= 1
        guard references[slot] == 0 else { return }
        bytes -= buffers[slot].count
        if buffers[slot].capacity > Self.trimCapacity {
            buffers[slot] = []
        } else {
            buffers[slot].removeAll(keepingCapacity: true)
        }
        free.append(slot)
    }

    /// Calls `body` with the bytes of the slot in `range`.
    func withBytes<Result>(_ slot: Int, _ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        buffers[slot].withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Calls `body` with the slot's bytes to change in place (their count stays).
    mutating func withMutableBytes<Result>(_ slot: Int, _ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
        buffers[slot].withUnsafeMutableBytes { body($0) }
    }
}
