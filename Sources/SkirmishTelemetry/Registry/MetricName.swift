/// Sanitising of metric and label names, the one rule every collector accepts.
///
/// Prometheus allows `[a-zA-Z_:][a-zA-Z0-9_:]*` for metric names and `[a-zA-Z_][a-zA-Z0-9_]*` for label names;
/// InfluxDB and OpenTelemetry accept more, VictoriaMetrics rewrites what it dislikes. Using the strictest rule
/// everywhere keeps one name per metric across collectors.
enum MetricName {
    /// Maps every invalid character to `_` and prefixes `_` when the first character is a digit.
    static func sanitise(_ name: String) -> String {
        sanitise(name, allowColon: true)
    }

    /// Like ``sanitise(_:)`` but without `:` (reserved for recording rules in label names).
    static func sanitiseLabel(_ name: String) -> String {
        sanitise(name, allowColon: false)
    }

    private static func sanitise(_ name: String, allowColon: Bool) -> String {
        if name.isEmpty { return "_" }
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count + 1)
        for byte in name.utf8 {
            let isLetter = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F
            let isDigit = byte >= 0x30 && byte <= 0x39
            let isColon = byte == 0x3A && allowColon
            if out.isEmpty && isDigit { out.append(0x5F) }
            out.append(isLetter || isDigit || isColon ? byte : 0x5F)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
