/// One decoded snapshot: items, each a key (`type << 16 | id`) and a run of 32-bit integers (`CSnapshot` in
/// `src/engine/shared/snapshot.h`).
///
/// Its storage is reused: ``removeAll()`` keeps the arrays' capacity, so once a connection's snapshots have grown
/// to the game's working size, decoding the next one allocates nothing. Limits are the reference's: fewer than
/// `CSnapshot::MAX_ITEMS` (1024) items and, keys included, fewer than `CSnapshot::MAX_SIZE` (64 KiB) of data.
struct Snapshot {
    /// `CSnapshot::MAX_ITEMS`.
    static let maxItems = 1024
    /// `CSnapshot::MAX_SIZE` in 32-bit words, keys included.
    static let maxWords = 64 * 1024 / 4

    /// The server tick it shows; -1 for the empty snapshot deltas start from.
    var tick: Int32 = -1
    /// Each item's key.
    private(set) var keys: [Int32] = []
    /// Where each item's data starts in ``data``; it ends where the next starts.
    private(set) var starts: [Int32] = []
    /// Every item's data, back to back.
    private(set) var data: [Int32] = []

    /// An empty snapshot with room for a typical game before it grows.
    init(reservingItems items: Int = 0, words: Int = 0) {
        keys.reserveCapacity(items)
        starts.reserveCapacity(items)
        data.reserveCapacity(words)
    }

    /// How many items it holds.
    var count: Int { keys.count }

    /// The range of item `index`'s data in ``data``.
    func range(_ index: Int) -> Range<Int> {
        Int(starts[index])..<(index + 1 < starts.count ? Int(starts[index + 1]) : data.count)
    }

    /// Item `index`'s type (the key's high half).
    func type(_ index: Int) -> Int { Int(keys[index] >> 16) & 0x7FFF }

    /// Item `index`'s id (the key's low half).
    func id(_ index: Int) -> Int { Int(keys[index] & 0xFFFF) }

    /// The checksum the server sends with each snapshot (`CSnapshot::Crc`): the wrapping sum of every item's data,
    /// keys excluded.
    var crc: UInt32 {
        data.reduce(0) { $0 &+ UInt32(bitPattern: $1) }
    }

    /// Room for at least `items` items and `words` words of data (within the limits), so that filling it to that size
    /// allocates nothing; storage already larger is kept. Sizes are rounded up to a power of two, so a game that
    /// grows a little at a time makes a buffer grow seldom.
    mutating func reserve(items: Int, words: Int) {
        func rounded(_ count: Int, limit: Int) -> Int {
            count <= 1 ? count : min(1 << (Int.bitWidth - (count - 1).leadingZeroBitCount), limit)
        }
        let items = rounded(items, limit: Self.maxItems)
        if keys.capacity < items {
            keys.reserveCapacity(items)
            starts.reserveCapacity(items)
        }
        let words = rounded(words, limit: Self.maxWords)
        if data.capacity < words { data.reserveCapacity(words) }
    }

    /// Words of item data it holds.
    var wordCount: Int { data.count }

    /// Empties it, keeping its storage.
    mutating func removeAll() {
        tick = -1
        keys.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        data.removeAll(keepingCapacity: true)
    }

    /// Appends an item of `words` zeroed words under `key`; returns where its data starts, or `nil` past the limits
    /// (`CSnapshotBuilder::NewItem`).
    mutating func append(key: Int32, words: Int) -> Int? {
        guard words >= 0, keys.count + 1 < Self.maxItems, keys.count + 1 + data.count + words < Self.maxWords else {
            return nil
        }
        let start = data.count
        keys.append(key)
        starts.append(Int32(start))
        data.append(contentsOf: repeatElement(0, count: words))
        return start
    }

    /// Sets word `index` of ``data``.
    mutating func set(_ index: Int, _ value: Int32) { data[index] = value }

    /// Makes this a copy of `other`, reusing this one's storage.
    mutating func copy(from other: Snapshot) {
        removeAll()
        tick = other.tick
        keys.append(contentsOf: other.keys)
        starts.append(contentsOf: other.starts)
        data.append(contentsOf: other.data)
    }
}
