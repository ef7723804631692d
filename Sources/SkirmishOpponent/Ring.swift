/// A fixed-capacity ring of the newest elements: storage allocated once, so the decision path never allocates.
struct Ring<Element: Sendable>: Sendable {
    private var storage: ContiguousArray<Element>
    private var start = 0
    private(set) var count = 0

    init(capacity: Int, filler: Element) {
        storage = ContiguousArray(repeating: filler, count: max(capacity, 1))
    }

    var capacity: Int { storage.count }

    /// Appends, dropping the oldest element when full.
    mutating func append(_ element: Element) {
        if count < storage.count {
            storage[(start + count) % storage.count] = element
            count += 1
        } else {
            storage[start] = element
            start = (start + 1) % storage.count
        }
    }

    /// The `index`-th element, oldest first (`0..<count`).
    subscript(index: Int) -> Element {
        storage[(start + index) % storage.count]
    }

    var newest: Element? { count == 0 ? nil : self[count - 1] }

    mutating func removeAll() {
        start = 0
        count = 0
    }
}
