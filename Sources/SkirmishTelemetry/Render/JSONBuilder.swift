import CJSONC

/// A json-c object tree under construction; `finish` serialises it compactly and frees it.
///
/// json-c owns children added to a parent, so only the root is ever released.
struct JSONBuilder: ~Copyable {
    let root: OpaquePointer

    init(object: Void = ()) {
        root = json_object_new_object()
    }

    init(array: Void) {
        root = json_object_new_array()
    }

    static func object() -> OpaquePointer { json_object_new_object() }
    static func array() -> OpaquePointer { json_object_new_array() }
    static func string(_ value: String) -> OpaquePointer {
        value.withCString { json_object_new_string_len($0, Int32(value.utf8.count)) }
    }
    static func bool(_ value: Bool) -> OpaquePointer { json_object_new_boolean(value ? 1 : 0) }
    static func int(_ value: Int64) -> OpaquePointer { json_object_new_int64(value) }

    /// A finite double with Swift's shortest text (`0.005`, not `0.0050000000000000001`); callers skip non-finite.
    static func double(_ value: Double) -> OpaquePointer {
        let text = MetricsRenderer.formatFloat(value)
        return text.withCString { json_object_new_double_s(value, $0) }
    }

    static func set(_ object: OpaquePointer, _ key: String, _ value: OpaquePointer) {
        skirmish_json_add(object, key, value)
    }

    static func append(_ array: OpaquePointer, _ value: OpaquePointer) {
        json_object_array_add(array, value)
    }

    /// Appends the compact serialisation to `out` and releases the tree.
    consuming func finish(into out: inout TextBuffer) {
        var length = 0
        if let text = skirmish_json_plain(root, &length) {
            text.withMemoryRebound(to: UInt8.self, capacity: length) {
                out.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
            }
        }
        json_object_put(root)
        discard self
    }

    deinit {
        json_object_put(root)
    }
}

/// json-c values that repeat within one payload (label values, attributes, timestamps, bucket bounds), built once
/// and shared by reference count: a 10,000-series payload then allocates a few objects per series instead of dozens.
///
/// json-c frees a value when its last reference goes; the pool holds one reference to each value it made and hands
/// out another with every use (`json_object_get`), which the parent it is added to then owns.
struct JSONPool: ~Copyable {
    private var values: [String: OpaquePointer] = [:]

    init() {}

    /// A shared string value.
    mutating func string(_ text: String) -> OpaquePointer {
        shared(text) { JSONBuilder.string(text) }
    }

    /// A shared value under `key`, made by `make` the first time.
    mutating func shared(_ key: String, make: () -> OpaquePointer) -> OpaquePointer {
        if let existing = values[key] { return json_object_get(existing) }
        let made = make()
        values[key] = made
        return json_object_get(made)
    }

    deinit {
        for value in values.values { json_object_put(value) }
    }
}
