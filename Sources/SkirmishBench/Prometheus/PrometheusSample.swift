/// One sample line of the Prometheus text exposition format: `name{label="value",…} value [timestamp]`.
package struct PrometheusSample: Sendable, Equatable {
    package var name: String
    package var labels: [String: String]
    package var value: Double
    /// Milliseconds since the epoch, when the line carries one.
    package var timestamp: Int64?

    package init(name: String, labels: [String: String] = [:], value: Double, timestamp: Int64? = nil) {
        self.name = name
        self.labels = labels
        self.value = value
        self.timestamp = timestamp
    }

    package static func == (lhs: PrometheusSample, rhs: PrometheusSample) -> Bool {
        lhs.name == rhs.name && lhs.labels == rhs.labels && lhs.timestamp == rhs.timestamp
            && (lhs.value == rhs.value || (lhs.value.isNaN && rhs.value.isNaN))
    }
}

/// A line of exposition text that does not follow the format: which line, what it says, and what is wrong.
package struct PrometheusParseError: Error, Equatable, CustomStringConvertible {
    /// 1-based.
    package var line: Int
    package var text: String
    package var reason: String

    package var description: String {
        "metrics line \(line) `\(text)`: \(reason) (expected Prometheus text format 0.0.4: name{label=\"value\"} value)"
    }
}
