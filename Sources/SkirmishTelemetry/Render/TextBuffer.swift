/// A byte buffer for line formats: appends text and numbers without building intermediate strings.
struct TextBuffer {
    var bytes: [UInt8] = []

    init(capacity: Int = 4096) {
        bytes.reserveCapacity(capacity)
    }

    mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    mutating func append(byte: UInt8) {
        bytes.append(byte)
    }

    mutating func append(_ value: UInt64) {
        if value == 0 {
            bytes.append(0x30)
            return
        }
        // Write the digits backwards into place, then reverse them: no temporary array.
        let start = bytes.count
        var rest = value
        while rest > 0 {
            bytes.append(UInt8(truncatingIfNeeded: rest % 10) + 0x30)
            rest /= 10
        }
        bytes[start...].reverse()
    }

    mutating func append(_ value: Int64) {
        if value < 0 {
            bytes.append(0x2D)
            append(UInt64(value.magnitude))
        } else {
            append(UInt64(value))
        }
    }

    /// Prometheus float text: `+Inf`, `-Inf`, `NaN`, integers without a fraction, others in Swift's shortest form.
    mutating func append(float value: Double) {
        append(MetricsRenderer.formatFloat(value))
    }

    /// Milliseconds as seconds with three decimals (OpenMetrics timestamps).
    mutating func append(secondsFromMs ms: Int64) {
        append(ms / 1000)
        bytes.append(0x2E)
        let fraction = UInt64(ms % 1000)
        if fraction < 100 { bytes.append(0x30) }
        if fraction < 10 { bytes.append(0x30) }
        append(fraction)
    }
}
