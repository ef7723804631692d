import SkirmishWire
import Yams

/// The keys of one mapping in a script that a protocol plug-in or a behaviour decodes for itself: a script's
/// `protocol:` block, or the keys of a persona that are not the runtime's own.
///
/// Each key is read at most once, with the same checks and located errors as the rest of a script (file, line,
/// column and a hint). A key that nobody reads is an error when the loader finishes the mapping, so a typo in a
/// plug-in's option is never silently ignored.
public struct ScriptOptions {
    var reader: NodeReader
    var fields: Fields
    let depth: Int

    init(reader: NodeReader, fields: Fields, depth: Int) {
        self.reader = reader
        self.fields = fields
        self.depth = depth
    }

    /// What the mapping is, for messages: `a persona`, `protocol`.
    public var what: String { fields.what }

    /// The file the script came from, for messages.
    public var file: String { reader.file }

    /// Whether the mapping has `key`, read or not.
    public func contains(_ key: String) -> Bool { fields.contains(key) }

    /// The keys not read so far.
    public var unreadKeys: [String] { fields.unread }

    /// An error located at `key`'s value (at the mapping when it has no such key).
    public func error(at key: String, _ message: String, hint: String? = nil) -> ScriptError {
        reader.error(fields.entries.first { $0.key == key }?.value ?? fields.node, message, hint: hint)
    }

    /// An error located at the mapping.
    public func error(_ message: String, hint: String? = nil) -> ScriptError {
        reader.error(fields.node, message, hint: hint)
    }

    /// `key`'s text, trimmed of nothing, or `nil` when absent.
    public mutating func string(_ key: String) throws(ScriptError) -> String? {
        guard let node = fields.take(key) else { return nil }
        return try reader.string(node, key)
    }

    /// `key` as a whole number in `range`.
    public mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(ScriptError) -> Int? {
        guard let node = fields.take(key) else { return nil }
        return try reader.integer(node, key, in: range)
    }

    /// `key` as a number in `range` (`1.5`, `-3`).
    public mutating func number(_ key: String, in range: ClosedRange<Double>) throws(ScriptError) -> Double? {
        guard let node = fields.take(key) else { return nil }
        let text = try reader.string(node, key)
        guard let value = Double(text.trimmed), value.isFinite else {
            throw reader.error(node, "\(key) must be a number, got `\(text)`")
        }
        guard range.contains(value) else {
            throw reader.error(node, "\(key) must be between \(range.lowerBound) and \(range.upperBound), got \(text)")
        }
        return value
    }

    /// `key` as a duration (`250ms`, `30s`, `5m`).
    public mutating func duration(_ key: String, positive: Bool = false) throws(ScriptError) -> Duration? {
        guard let node = fields.take(key) else { return nil }
        return try reader.duration(node, key, positive: positive)
    }

    /// `key` as a duration or a range of durations (`2s`, `2s..5s`).
    public mutating func durationRange(_ key: String) throws(ScriptError) -> ClosedRange<Duration>? {
        guard let node = fields.take(key) else { return nil }
        return try reader.range(node, key)
    }

    /// `key` as a positive rate per second (`30hz`, `50/s`), at most `max`.
    public mutating func rate(_ key: String, max: Double) throws(ScriptError) -> Double? {
        guard let node = fields.take(key) else { return nil }
        return try reader.rate(node, key, max: max)
    }

    /// `key` as a percentage (`1%`, `0.5%`), as a fraction.
    public mutating func percentage(_ key: String) throws(ScriptError) -> Double? {
        guard let node = fields.take(key) else { return nil }
        return try reader.percentage(node, key)
    }

    /// `key` as `true` or `false`.
    public mutating func flag(_ key: String) throws(ScriptError) -> Bool? {
        guard let node = fields.take(key) else { return nil }
        return try reader.flag(node, key)
    }

    /// `key` as one of `T`'s raw values (case-insensitive), with a suggestion when it is none.
    public mutating func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) throws(ScriptError)
        -> T? where T.RawValue == String
    {
        guard let node = fields.take(key) else { return nil }
        return try reader.choice(node, key, T.self)
    }

    /// `key` as one of the named `options`, with a suggestion when it is none.
    public mutating func choice<T>(_ key: String, _ options: [(name: String, value: T)]) throws(ScriptError) -> T? {
        guard let node = fields.take(key) else { return nil }
        return try reader.choice(node, key, options)
    }

    /// `key` as a nested mapping, read the same way; call ``finish(known:)`` on it when done.
    public mutating func options(_ key: String) throws(ScriptError) -> ScriptOptions? {
        guard let node = fields.take(key) else { return nil }
        let nested = try reader.fields(node, "`\(key)`", depth: depth + 1)
        return ScriptOptions(reader: reader, fields: nested, depth: depth + 1)
    }

    /// `key` as a list of at most `limit` items, each a mapping (read as ``ScriptOptions``) or a single value (read
    /// as a one-key mapping `{value: …}`, so `[a, {b: 1}]` reads `value` then `b`).
    public mutating func list(_ key: String, limit: Int) throws(ScriptError) -> [ScriptOptions]? {
        guard let node = fields.take(key) else { return nil }
        var items: [ScriptOptions] = []
        for item in try reader.sequence(node, "`\(key)`", depth: depth + 1, limit: limit) {
            if case .mapping = item {
                items.append(
                    ScriptOptions(
                        reader: reader, fields: try reader.fields(item, "an item of `\(key)`", depth: depth + 2),
                        depth: depth + 2))
            } else {
                let entry = Fields.Entry(key: "value", keyNode: item, value: item)
                items.append(
                    ScriptOptions(
                        reader: reader, fields: Fields(node: item, what: "an item of `\(key)`", entries: [entry]),
                        depth: depth + 2))
            }
        }
        return items
    }

    /// Refuses the keys nobody read, naming the closest of `known`.
    public func finish(known: [String]) throws(ScriptError) {
        try fields.finish(reader, known: known)
    }

    /// Marks `key` as read without reading it (the loader's own keys).
    mutating func skip(_ key: String) { _ = fields.take(key) }
}

/// A plug-in's or a behaviour's decoded options, kept in a script's model without the model knowing their type.
///
/// Made from any `Sendable` and `Hashable` value (a `SnapConnection.Configuration`, a behaviour's own options struct)
/// and read back with ``get(_:)`` by the code that registered the decoder.
public struct OptionValue: @unchecked Sendable, Hashable {
    // @unchecked: `base` is only ever made from a `Sendable` value (the one initialiser below requires it), and
    // `AnyHashable` adds no mutable state of its own.
    private let base: AnyHashable

    /// Wraps `value`.
    public init<Value: Sendable & Hashable>(_ value: Value) { base = AnyHashable(value) }

    /// No options: what a decoder that reads nothing returns.
    public static let none = OptionValue(Empty())

    /// The value as `type`, or `nil` when it is something else.
    public func get<Value>(_ type: Value.Type = Value.self) -> Value? { base.base as? Value }

    private struct Empty: Sendable, Hashable {}
}
