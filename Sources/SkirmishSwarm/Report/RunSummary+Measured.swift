extension RunSummary {
    /// A figure that is `nil` when the run did not measure it, written to `summary.json` as `null`.
    ///
    /// A synthesized `Codable` leaves a `nil` field out of the JSON, which a reader cannot tell from a field an older
    /// version never wrote; an explicit `null` says "not measured" (a protocol without round trips has no RTT, which
    /// is not an RTT of 0). Summaries that lack the field, from before it existed, read back as `nil`.
    @propertyWrapper
    public struct Measured<Value: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
        /// The figure, or `nil` when it was not measured.
        public var wrappedValue: Value?

        /// A figure, `nil` when not measured.
        public init(wrappedValue: Value?) {
            self.wrappedValue = wrappedValue
        }

        /// Reads the figure, or `null` as not measured.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
        }

        /// Writes the figure, or `null` when it was not measured.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
        }
    }
}

extension KeyedDecodingContainer {
    /// A ``RunSummary/Measured`` field missing from the JSON (a summary written before it existed) reads as not
    /// measured instead of failing the whole file; the synthesized decoders pick this overload over the generic one.
    func decode<Value>(_ type: RunSummary.Measured<Value>.Type, forKey key: Key) throws -> RunSummary.Measured<Value> {
        try decodeIfPresent(type, forKey: key) ?? RunSummary.Measured(wrappedValue: nil)
    }
}
