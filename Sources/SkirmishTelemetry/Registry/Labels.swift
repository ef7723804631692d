/// An ordered list of label pairs with sanitised names and values.
///
/// Order matters for export (constant labels first, then the family's label order), so labels are pairs rather
/// than a dictionary. Names follow `[a-zA-Z_][a-zA-Z0-9_]*`; values lose control characters and are capped at
/// ``maxValueLength`` UTF-8 bytes, so a hostile persona name cannot break a line-based format or grow a series.
public struct Labels: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The longest value kept, in UTF-8 bytes; longer values are cut at a character boundary.
    public static let maxValueLength = 128

    /// The label names, in order.
    public private(set) var names: [String]
    /// The label values, in the order of ``names``.
    public private(set) var values: [String]

    /// No labels.
    public init() {
        names = []
        values = []
    }

    /// Labels from ordered pairs; a repeated name keeps its last value in its first position.
    public init(_ pairs: [(String, String)]) {
        self.init()
        for (name, value) in pairs { self[name] = value }
    }

    /// Labels from a literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// How many pairs there are.
    public var count: Int { names.count }

    /// The value of a label, or `nil`; setting appends a new name or replaces the value in place.
    public subscript(name: String) -> String? {
        get {
            let clean = MetricName.sanitiseLabel(name)
            return names.firstIndex(of: clean).map { values[$0] }
        }
        set {
            let clean = MetricName.sanitiseLabel(name)
            if let index = names.firstIndex(of: clean) {
                if let newValue {
                    values[index] = Labels.sanitiseValue(newValue)
                } else {
                    names.remove(at: index)
                    values.remove(at: index)
                }
            } else if let newValue {
                names.append(clean)
                values.append(Labels.sanitiseValue(newValue))
            }
        }
    }

    /// The pairs in order.
    public var pairs: [(name: String, value: String)] {
        zip(names, values).map { (name: $0, value: $1) }
    }

    /// These labels followed by those of `other` not already present.
    public func appending(_ other: Labels) -> Labels {
        var result = self
        for (name, value) in zip(other.names, other.values) where !result.names.contains(name) {
            result.names.append(name)
            result.values.append(value)
        }
        return result
    }

    /// The labels reordered to `order`: a missing name gets the empty value, names not in `order` are dropped.
    ///
    /// A series is identified by its family's label names, so a caller that forgets or misspells one still lands
    /// in a well-formed series instead of creating a second shape that Pushgateway would reject.
    func conformed(to order: [String]) -> Labels {
        var result = Labels()
        result.names = order
        result.values = order.map { name in names.firstIndex(of: name).map { values[$0] } ?? "" }
        return result
    }

    /// Whether every pair of `filter` is present with the same value.
    func matches(_ filter: [String: String]) -> Bool {
        filter.allSatisfy { self[$0.key] == $0.value }
    }

    static func sanitiseValue(_ value: String) -> String {
        var scalars = String.UnicodeScalarView()
        var length = 0
        for scalar in value.unicodeScalars {
            let clean: Unicode.Scalar = scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar
            length += String(clean).utf8.count
            if length > maxValueLength { break }
            scalars.append(clean)
        }
        return String(scalars)
    }
}
