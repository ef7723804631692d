import Testing

@testable import SkirmishDDNet

@Suite struct SnapshotDeltaTests {
    /// Applies `words` to `base`.
    private func apply(_ words: [Int32], to base: Snapshot) throws(DecodeError) -> Snapshot {
        var delta = SnapshotDelta()
        var output = Snapshot()
        _ = try words.withUnsafeBufferPointer { buffer throws(DecodeError) in
            try delta.apply(buffer, to: base, into: &output)
        }
        return output
    }

    private func item(_ snapshot: Snapshot, type: Int, id: Int) -> [Int32]? {
        (0..<snapshot.count).first { snapshot.type($0) == type && snapshot.id($0) == id }.map {
            Array(snapshot.data[snapshot.range($0)])
        }
    }

    @Test func fullThenDeltaWithDeletionUpdateAndNewItem() throws {
        // From nothing: a pickup (type 4, 4 words, fixed size) and an extended item (type 0x7FFF, size sent).
        let full = try apply([0, 2, 0, 4, 1, 10, 20, 3, 0, 0x7FFF, 9, 2, 5, 6], to: Snapshot())
        #expect(full.count == 2)
        #expect(item(full, type: 4, id: 1) == [10, 20, 3, 0])
        #expect(item(full, type: 0x7FFF, id: 9) == [5, 6])
        #expect(full.crc == 10 + 20 + 3 + 5 + 6)

        // Delete the extended item, move the pickup by (+2, -1), add a flag (type 5, 3 words).
        let next = try apply([1, 2, 0, 0x7FFF << 16 | 9, 4, 1, 2, -1, 0, 0, 5, 0, 7, 8, 9], to: full)
        #expect(next.count == 2)
        #expect(item(next, type: 4, id: 1) == [12, 19, 3, 0])
        #expect(item(next, type: 5, id: 0) == [7, 8, 9])
        #expect(item(next, type: 0x7FFF, id: 9) == nil)
        #expect(next.crc == 12 + 19 + 3 + 7 + 8 + 9)

        // The empty delta keeps everything.
        let same = try apply([0, 0, 0], to: next)
        #expect(same.crc == next.crc && same.count == next.count)
    }

    /// A buffer reserved for a size is rounded up to a power of two and then filled to that size without growing, so
    /// the buffers that take turns decoding a game allocate only when the game outgrows them.
    @Test func aReservedBufferFillsWithoutGrowing() throws {
        var snapshot = Snapshot()
        snapshot.reserve(items: 300, words: 3_000)
        let capacity = (snapshot.keys.capacity, snapshot.data.capacity)
        #expect(capacity.0 >= 512 && capacity.1 >= 4_096)
        snapshot.reserve(items: 400, words: 4_000)
        for key in 0..<400 {
            let start = snapshot.append(key: Int32(key), words: 10)
            #expect(start == key * 10)
        }
        #expect(snapshot.keys.capacity == capacity.0)
        #expect(snapshot.data.capacity == capacity.1)
        // Past the reference's limits nothing is reserved beyond them.
        snapshot.reserve(items: 100_000, words: 1_000_000)
        #expect(snapshot.keys.capacity < 2 * Snapshot.maxItems)
        #expect(snapshot.data.capacity < 2 * Snapshot.maxWords)
    }

    @Test func checksumWrapsLikeTheServers() throws {
        let snapshot = try apply([0, 1, 0, 0x4000, 1, 2, Int32.max, 2], to: Snapshot())
        #expect(snapshot.crc == UInt32(bitPattern: Int32.max) &+ 2)
    }

    @Test(arguments: [
        [Int32](), [0, 0], [-1, 0, 0], [0, -1, 0], [5, 0, 0], // counts
        [0, 1, 0], [0, 1, 0, 4], [0, 1, 0, 4, 1, 10], // cut off
        [0, 1, 0, -3, 1], [0, 1, 0, 0x8000, 1, 0], [0, 1, 0, 4, 0x10000], [0, 1, 0, 100, 1, -2], // out of range
        [0, 2, 0, 100, 1, 1, 5, 100, 1, 2, 5, 6], // the same key twice with another size
    ])
    func badDeltasAreRefused(words: [Int32]) {
        #expect(throws: DecodeError.badSnapshot) { try apply(words, to: Snapshot()) }
    }

    @Test func anUpdateOfAnotherSizeThanTheBaseIsRefused() throws {
        let base = try apply([0, 1, 0, 100, 1, 2, 1, 1], to: Snapshot())
        #expect(throws: DecodeError.badSnapshot) { try apply([0, 1, 0, 100, 1, 3, 1, 1, 1], to: base) }
    }

    @Test func partsAreGatheredAndANewerTickDropsOlderParts() throws {
        var assembler = SnapshotAssembler()
        let first = [UInt8](repeating: 1, count: 900)
        let second: [UInt8] = [2, 2]
        func add(_ tick: Int32, _ count: Int, _ index: Int, _ data: [UInt8]) throws -> SnapshotAssembler.Outcome {
            try data.withUnsafeBytes { raw in
                try assembler.add(.init(tick: tick, count: count, index: index, data: raw))
            }
        }
        #expect(try add(10, 2, 1, second) == .incomplete)
        #expect(try add(11, 2, 0, first) == .incomplete)
        #expect(assembler.abandoned)
        #expect(try add(11, 2, 1, second) == .complete(size: 902))
        #expect(assembler.bytes[899] == 1 && assembler.bytes[900] == 2)
        #expect(try add(9, 1, 0, second) == .stale)
        #expect(throws: DecodeError.badSnapshot) { try add(12, 0, 0, second) }
        #expect(throws: DecodeError.badSnapshot) { try add(12, 65, 0, second) }
        #expect(throws: DecodeError.badSnapshot) { try add(12, 2, 2, second) }
    }
}
