import CJSONC

/// JSON string literals, quoted and escaped by json-c, made once per distinct text within one payload.
///
/// Both JSON formats are a fixed envelope around strings and numbers. json-c stays the one place that decides how
/// a string is escaped (control characters, quotes, invalid UTF-8), while the envelope is written straight into the
/// buffer: building a json-c tree of 10,000 series cost about 50 ms of CPU and 160,000 allocations per push, writing
/// the envelope around cached literals about 16 ms and 40,000 (`skirmish bench export`). Label values repeat
/// thousands of times per payload, so each distinct one is encoded once.
struct JSONStringCache {
    private var encoded: [String: [UInt8]] = [:]

    /// Appends `text` as a JSON string literal.
    mutating func append(_ text: String, to out: inout TextBuffer) {
        if let bytes = encoded[text] {
            out.bytes.append(contentsOf: bytes)
            return
        }
        let bytes = Self.encode(text)
        encoded[text] = bytes
        out.bytes.append(contentsOf: bytes)
    }

    /// The literal json-c prints for `text`, quotes included.
    static func encode(_ text: String) -> [UInt8] {
        let object = text.withCString { json_object_new_string_len($0, Int32(clamping: text.utf8.count)) }
        defer { json_object_put(object) }
        var length = 0
        guard let literal = skirmish_json_plain(object, &length) else { return Array("\"\"".utf8) }
        return Array(UnsafeRawBufferPointer(start: literal, count: length))
    }
}
