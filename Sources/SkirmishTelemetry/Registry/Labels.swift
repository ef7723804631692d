/// Label pairs of one series, kept sorted by name so equal sets compare and hash equal.
public struct Labels: Sendable, Hashable {
    public private(set) var pairs: [(name: String, value: String)]

    public init(_ dictionary: [String: String]) {
        pairs = dictionary.map { (MetricFamily.sanitise($0.key), $0.value) }.sorted { $0.name < $1.name }
    }

    /// These labels with `extra` added (replacing any of the same name).
    public func adding(_ extra: [String: String]) -> Labels {
        var merged: [String: String] = [:]
        for pair in pairs { merged[pair.name] = pair.value }
        for (name, value) in extra { merged[name] = value }
        return Labels(merged)
    }

    public subscript(_ name: String) -> String? { pairs.first { $0.name == name }?.value }

    public var isEmpty: Bool { pairs.isEmpty }

    /// Whether every `name = value` of `filter` is among these labels.
    public func matches(_ filter: [String: String]) -> Bool {
        filter.allSatisfy { self[$0.key] == $0.value }
    }

    public static func == (lhs: Labels, rhs: Labels) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0 == $1 }
    }

    public func hash(into hasher: inout Hasher) {
        for pair in pairs {
            hasher.combine(pair.name)
            hasher.combine(pair.value)
        }
    }
}
