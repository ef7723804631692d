/// One metric name with its help text, kind and label names: what a collector sees as a family of series.
public struct MetricFamily: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case counter
        case gauge
        /// A distribution; `unit` says how values are recorded and exported.
        case histogram(HistogramUnit)
    }

    public let name: String
    public let help: String
    public let kind: Kind

    public init(name: String, help: String, kind: Kind) {
        self.name = MetricFamily.sanitise(name)
        self.help = help
        self.kind = kind
    }

    /// Names as collectors accept them: `[a-zA-Z_:][a-zA-Z0-9_:]*`; anything else becomes `_`.
    public static func sanitise(_ name: String) -> String {
        var result = ""
        for (index, scalar) in name.unicodeScalars.enumerated() {
            let isLetter =
                (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_"
                || scalar == ":"
            let isDigit = scalar >= "0" && scalar <= "9"
            result.unicodeScalars.append(isLetter || (isDigit && index > 0) ? scalar : "_")
        }
        return result.isEmpty ? "_" : result
    }
}

/// How a histogram records values: the resolution kept and the bucket bounds exported.
public enum HistogramUnit: Sendable, Hashable {
    /// Durations: kept to the microsecond, exported in seconds.
    case seconds
    /// Screen distances: kept to 1/100 px, exported in pixels.
    case pixels

    /// Upper bounds (`le`) of the exported buckets, in the exported unit.
    public var bounds: [Double] {
        switch self {
        case .seconds:
            [0.0005, 0.001, 0.002, 0.005, 0.01, 0.016, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10]
        case .pixels: [0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256]
        }
    }

    /// Recorded integer units per exported unit.
    var scale: Double {
        switch self {
        case .seconds: 1_000_000
        case .pixels: 100
        }
    }
}
