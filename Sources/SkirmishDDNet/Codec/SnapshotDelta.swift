/// Applies a snapshot delta to the snapshot it was made against (`CSnapshotDelta::UnpackDelta` in
/// `src/engine/shared/snapshot.cpp`).
///
/// A delta, after varint decoding, is three counts (deleted, updated, temporary) then the deleted keys, then per
/// updated item its type, id, size in words when the type has no fixed size, and its words: added to the old item's
/// when the key existed, taken as they are when it is new. Items of types below 64 with a fixed size
/// (``staticWords``) omit the size: both sides must agree on that table, or every later item is misread.
struct SnapshotDelta {
    /// Words per item type for the types whose size the delta omits: `sizeof(CNetObj_*) / 4` for DDNet 16.4's
    /// non-extended objects and events (`datasrc/network.py`, set by `CGameClient::OnInit` through
    /// `SnapSetStaticsize`), 0 where the size is sent. Type 0 is `NETOBJTYPE_EX`, the UUID of an extended type.
    static let staticWords: [Int32] = [
        0, // EX
        10, 6, 5, 4, 3, // PLAYERINPUT, PROJECTILE, LASER, PICKUP, FLAG
        8, 4, 15, 22, 5, // GAMEINFO, GAMEDATA, CHARACTERCORE, CHARACTER, PLAYERINFO
        17, 3, // CLIENTINFO, SPECTATORINFO
        2, 2, 2, 2, 3, // events: COMMON, EXPLOSION, SPAWN, HAMMERHIT, DEATH
        3, 3, 3, // events: SOUNDGLOBAL, SOUNDWORLD, DAMAGEIND
    ]

    /// Highest type and id an update may name (`CSnapshot::MAX_TYPE`, `MAX_ID`).
    static let maxType: Int32 = 0x7FFF
    static let maxID: Int32 = 0xFFFF

    private var fromIndex = KeyIndex()
    private var toIndex = KeyIndex()
    private var deleted: [Bool] = []

    /// A delta decoder; one per connection, reused for every snapshot.
    init() { deleted.reserveCapacity(Snapshot.maxItems) }

    /// What an applied delta touched, for telling which item type a checksum mismatch is in.
    struct Touched: Hashable {
        /// Bit `t` set when an item of type `t` (< 64) was updated or created.
        var types: UInt64 = 0
        /// Whether an item of a type ≥ 64 (an extended type) was.
        var otherTypes = false

        /// The one type updated, when exactly one was.
        var onlyType: Int? {
            guard !otherTypes, types != 0, types & (types - 1) == 0 else { return nil }
            return types.trailingZeroBitCount
        }
    }

    /// Builds in `output` the snapshot that `delta` (decoded words) makes of `base`.
    mutating func apply(
        _ delta: UnsafeBufferPointer<Int32>, to base: Snapshot, into output: inout Snapshot
    ) throws(DecodeError) -> Touched {
        guard delta.count >= 3 else { throw .badSnapshot }
        let deletions = Int(delta[0])
        let updates = Int(delta[1])
        guard deletions >= 0, updates >= 0, delta[2] >= 0, deletions <= delta.count - 3 else { throw .badSnapshot }
        var position = 3

        output.removeAll()
        fromIndex.fill(base)
        deleted.removeAll(keepingCapacity: true)
        deleted.append(contentsOf: repeatElement(false, count: base.count))
        for offset in 0..<deletions {
            if let index = fromIndex.index(of: delta[position + offset]) { deleted[index] = true }
        }
        position += deletions

        // Keep what was not deleted, in order.
        toIndex.removeAll()
        for index in 0..<base.count where !deleted[index] {
            let range = base.range(index)
            guard let start = output.append(key: base.keys[index], words: range.count) else { throw .badSnapshot }
            for word in range { output.set(start + word - range.lowerBound, base.data[word]) }
            toIndex.insert(base.keys[index], index: output.count - 1)
        }

        var touched = Touched()
        for _ in 0..<updates {
            guard position + 2 <= delta.count else { throw .badSnapshot }
            let type = delta[position]
            let id = delta[position + 1]
            position += 2
            guard type >= 0, type <= Self.maxType, id >= 0, id <= Self.maxID else { throw .badSnapshot }
            var words = Int(type) < Self.staticWords.count ? Int(Self.staticWords[Int(type)]) : 0
            if words == 0 {
                guard position < delta.count, delta[position] >= 0 else { throw .badSnapshot }
                words = Int(delta[position])
                position += 1
            }
            guard words <= delta.count - position else { throw .badSnapshot }
            if type < 64 { touched.types |= 1 << UInt64(type) } else { touched.otherTypes = true }

            let key = type << 16 | id
            let start: Int
            if let index = toIndex.index(of: key) {
                // The reference writes over the existing item; one of another size would overrun it.
                let range = output.range(index)
                guard range.count == words else { throw .badSnapshot }
                start = range.lowerBound
            } else {
                guard let appended = output.append(key: key, words: words) else { throw .badSnapshot }
                start = appended
                toIndex.insert(key, index: output.count - 1)
            }
            if let old = fromIndex.index(of: key) {
                let range = base.range(old)
                guard range.count == words else { throw .badSnapshot }
                for word in 0..<words {
                    output.set(start + word, base.data[range.lowerBound + word] &+ delta[position + word])
                }
            } else {
                for word in 0..<words { output.set(start + word, delta[position + word]) }
            }
            position += words
        }
        return touched
    }
}
