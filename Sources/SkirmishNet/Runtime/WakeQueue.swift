/// A min-heap of wake-up times for the bots of one group, with lazy cancellation.
///
/// Each entry carries the bot's slot and the generation it was scheduled with; rescheduling a bot bumps its
/// generation, so an older entry is skipped when it surfaces instead of being searched for and removed.
@usableFromInline
package struct WakeQueue: Sendable {
    @usableFromInline
    package struct Entry: Sendable, Hashable {
        @usableFromInline package var due: UInt64
        @usableFromInline package var slot: UInt32
        @usableFromInline package var generation: UInt32

        @inlinable
        package init(due: UInt64, slot: UInt32, generation: UInt32) {
            self.due = due
            self.slot = slot
            self.generation = generation
        }
    }

    @usableFromInline var heap: [Entry] = []

    @inlinable
    package var count: Int { heap.count }
    @inlinable
    package var isEmpty: Bool { heap.isEmpty }
    @inlinable
    package var earliest: UInt64? { heap.first?.due }

    @inlinable
    package init(capacity: Int = 0) { heap.reserveCapacity(capacity) }

    @inlinable
    package mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry due at or before `now`.
    @inlinable
    package mutating func popDue(now: UInt64) -> Entry? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            var smallest = left
            if left + 1 < heap.count, heap[left + 1].due < heap[left].due { smallest = left + 1 }
            guard heap[smallest].due < heap[parent].due else { break }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
        return first
    }

    /// Drops stale entries when they outnumber live bots by far, so the heap stays bounded.
    @usableFromInline
    package mutating func compact(isLive: (Entry) -> Bool) {
        let live = heap.filter(isLive)
        heap.removeAll(keepingCapacity: true)
        for entry in live { push(entry) }
    }
}
