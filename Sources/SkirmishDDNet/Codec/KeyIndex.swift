/// A fixed-size open-addressing table from item keys to item indices, for the lookups a snapshot delta makes
/// (the reference hashes keys too, `GenerateHash` in `src/engine/shared/snapshot.cpp`).
///
/// 2048 slots for at most 1023 items keeps probes short; the table is cleared and refilled per snapshot without
/// allocating.
struct KeyIndex {
    private static let slots = 2048
    private var keys = [Int32](repeating: 0, count: slots)
    /// Item index + 1 in each slot; 0 marks an empty slot.
    private var values = [Int16](repeating: 0, count: slots)

    /// Empties the table.
    mutating func removeAll() {
        for slot in values.indices { values[slot] = 0 }
    }

    private static func slot(_ key: Int32) -> Int {
        Int((UInt32(bitPattern: key) &* 0x9E37_79B1) >> 21)
    }

    /// Records that `key` is item `index` (the first record of a key wins).
    mutating func insert(_ key: Int32, index: Int) {
        var slot = Self.slot(key)
        while values[slot] != 0 {
            if keys[slot] == key { return }
            slot = (slot + 1) & (Self.slots - 1)
        }
        keys[slot] = key
        values[slot] = Int16(index + 1)
    }

    /// The item index recorded for `key`.
    func index(of key: Int32) -> Int? {
        var slot = Self.slot(key)
        while values[slot] != 0 {
            if keys[slot] == key { return Int(values[slot]) - 1 }
            slot = (slot + 1) & (Self.slots - 1)
        }
        return nil
    }

    /// Fills the table with every item of `snapshot`.
    mutating func fill(_ snapshot: Snapshot) {
        removeAll()
        for index in 0..<snapshot.count { insert(snapshot.keys[index], index: index) }
    }
}
