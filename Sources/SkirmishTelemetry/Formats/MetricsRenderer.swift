/// The formats the exporter speaks, by the name `--format` takes.
public enum MetricsFormat: String, Sendable, CaseIterable {
    /// Prometheus text exposition, no timestamps, ending in a newline (Pushgateway, `/metrics`).
    case prom
    /// Prometheus text with millisecond timestamps (VictoriaMetrics `/api/v1/import/prometheus`).
    case vm
    /// Influx line protocol with millisecond timestamps (InfluxDB 1.x `/write?precision=ms`).
    case influx
    /// OTLP/HTTP JSON, cumulative temporality (an OpenTelemetry collector's `/v1/metrics`).
    case otlp
    /// JSON lines in VictoriaMetrics' import format (`/api/v1/import`, or any webhook).
    case json
    /// OpenMetrics text, `# EOF`-terminated, with timestamps in seconds (`metrics.om`).
    case openMetrics = "openmetrics"
}

/// Serialises a snapshot in each format. Deterministic: series are sorted by name and labels.
public enum MetricsRenderer {
    public static func render(_ snapshot: MetricsSnapshot, as format: MetricsFormat) -> [UInt8] {
        switch format {
        case .prom: Array(prometheus(snapshot, timestamps: false).utf8)
        case .vm: Array(prometheus(snapshot, timestamps: true).utf8)
        case .openMetrics: Array(openMetrics(snapshot).utf8)
        case .influx: Array(influx(snapshot).utf8)
        case .json: Array(jsonLines(snapshot).utf8)
        case .otlp: OTLPJSON.render(snapshot)
        }
    }

    // MARK: Prometheus text

    static func prometheus(_ snapshot: MetricsSnapshot, timestamps: Bool) -> String {
        var out = ""
        out.reserveCapacity(snapshot.seriesCount * 96)
        let stamp = timestamps ? " \(snapshot.timestampMilliseconds)" : ""
        for (family, series) in grouped(snapshot) {
            out += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            switch family.kind {
            case .counter:
                out += "# TYPE \(family.name) counter\n"
                for (labels, value) in series.counters {
                    out += "\(family.name)\(labelText(labels)) \(value)\(stamp)\n"
                }
            case .gauge:
                out += "# TYPE \(family.name) gauge\n"
                for (labels, value) in series.gauges {
                    out += "\(family.name)\(labelText(labels)) \(number(value))\(stamp)\n"
                }
            case .histogram:
                out += "# TYPE \(family.name) histogram\n"
                for (labels, distribution) in series.histograms {
                    for (bound, count) in distribution.cumulativeBuckets {
                        out += "\(family.name)_bucket\(labelText(labels, le: bound)) \(count)\(stamp)\n"
                    }
                    out += "\(family.name)_sum\(labelText(labels)) \(number(distribution.sum))\(stamp)\n"
                    out += "\(family.name)_count\(labelText(labels)) \(distribution.count)\(stamp)\n"
                }
            }
        }
        return out
    }

    // MARK: OpenMetrics

    static func openMetrics(_ snapshot: MetricsSnapshot) -> String {
        var out = ""
        let seconds = Double(snapshot.timestampMilliseconds) / 1_000
        let stamp = " " + number(seconds)
        for (family, series) in grouped(snapshot) {
            switch family.kind {
            case .counter:
                let base = family.name.hasSuffix("_total") ? String(family.name.dropLast(6)) : family.name
                out += "# TYPE \(base) counter\n# HELP \(base) \(escapeHelp(family.help))\n"
                for (labels, value) in series.counters {
                    out += "\(base)_total\(labelText(labels)) \(value)\(stamp)\n"
                }
            case .gauge:
                out += "# TYPE \(family.name) gauge\n# HELP \(family.name) \(escapeHelp(family.help))\n"
                for (labels, value) in series.gauges {
                    out += "\(family.name)\(labelText(labels)) \(number(value))\(stamp)\n"
                }
            case .histogram:
                out += "# TYPE \(family.name) histogram\n# HELP \(family.name) \(escapeHelp(family.help))\n"
                for (labels, distribution) in series.histograms {
                    for (bound, count) in distribution.cumulativeBuckets {
                        out += "\(family.name)_bucket\(labelText(labels, le: bound)) \(count)\(stamp)\n"
                    }
                    out += "\(family.name)_sum\(labelText(labels)) \(number(distribution.sum))\(stamp)\n"
                    out += "\(family.name)_count\(labelText(labels)) \(distribution.count)\(stamp)\n"
                }
            }
        }
        return out + "# EOF\n"
    }

    // MARK: Influx line protocol

    static func influx(_ snapshot: MetricsSnapshot) -> String {
        var out = ""
        let stamp = " \(snapshot.timestampMilliseconds)"
        for (family, series) in grouped(snapshot) {
            let measurement = escapeInflux(family.name, isMeasurement: true)
            for (labels, value) in series.counters {
                out += "\(measurement)\(influxTags(labels)) value=\(value)i\(stamp)\n"
            }
            for (labels, value) in series.gauges {
                out += "\(measurement)\(influxTags(labels)) value=\(number(value))\(stamp)\n"
            }
            for (labels, distribution) in series.histograms {
                var fields = "count=\(distribution.count)i,sum=\(number(distribution.sum))"
                for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("max", 1.0)] {
                    if let value = distribution.quantile(q) { fields += ",\(name)=\(number(value))" }
                }
                out += "\(measurement)\(influxTags(labels)) \(fields)\(stamp)\n"
            }
        }
        return out
    }

    // MARK: JSON lines

    static func jsonLines(_ snapshot: MetricsSnapshot) -> String {
        var out = ""
        let stamp = snapshot.timestampMilliseconds
        func line(_ name: String, _ labels: Labels, _ value: String, le: Double? = nil) {
            var metric = "\"__name__\":\(jsonString(name))"
            for pair in labels.pairs { metric += ",\(jsonString(pair.name)):\(jsonString(pair.value))" }
            if let le { metric += ",\"le\":\(jsonString(bound(le)))" }
            out += "{\"metric\":{\(metric)},\"values\":[\(value)],\"timestamps\":[\(stamp)]}\n"
        }
        for (family, series) in grouped(snapshot) {
            for (labels, value) in series.counters { line(family.name, labels, "\(value)") }
            for (labels, value) in series.gauges { line(family.name, labels, number(value)) }
            for (labels, distribution) in series.histograms {
                for (upper, count) in distribution.cumulativeBuckets {
                    line(family.name + "_bucket", labels, "\(count)", le: upper)
                }
                line(family.name + "_sum", labels, number(distribution.sum))
                line(family.name + "_count", labels, "\(distribution.count)")
            }
        }
        return out
    }

    // MARK: Helpers

    struct FamilySeries {
        var counters: [(Labels, UInt64)] = []
        var gauges: [(Labels, Double)] = []
        var histograms: [(Labels, Distribution)] = []
    }

    /// Series grouped by family, families and series sorted, so output is stable run to run.
    static func grouped(_ snapshot: MetricsSnapshot) -> [(MetricFamily, FamilySeries)] {
        var byName: [String: (MetricFamily, FamilySeries)] = [:]
        for (key, value) in snapshot.counters {
            byName[key.family.name, default: (key.family, FamilySeries())].1.counters.append((key.labels, value))
        }
        for (key, value) in snapshot.gauges {
            byName[key.family.name, default: (key.family, FamilySeries())].1.gauges.append((key.labels, value))
        }
        for (key, value) in snapshot.histograms {
            byName[key.family.name, default: (key.family, FamilySeries())].1.histograms.append((key.labels, value))
        }
        return byName.keys.sorted().map { name in
            var (family, series) = byName[name]!
            series.counters.sort { sortKey($0.0) < sortKey($1.0) }
            series.gauges.sort { sortKey($0.0) < sortKey($1.0) }
            series.histograms.sort { sortKey($0.0) < sortKey($1.0) }
            return (family, series)
        }
    }

    static func sortKey(_ labels: Labels) -> String {
        labels.pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "\u{1}")
    }

    static func labelText(_ labels: Labels, le: Double? = nil) -> String {
        var parts = labels.pairs.map { "\($0.name)=\"\(escapeLabel($0.value))\"" }
        if let le { parts.append("le=\"\(bound(le))\"") }
        return parts.isEmpty ? "" : "{" + parts.joined(separator: ",") + "}"
    }

    static func bound(_ value: Double) -> String { value == .infinity ? "+Inf" : number(value) }

    /// A number as Prometheus and JSON accept it (integers without a fraction, no exponent for small ones).
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : (value > 0 ? "+Inf" : "-Inf") }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func escapeHelp(_ value: String) -> String {
        value.replacingOccurrences("\\", "\\\\").replacingOccurrences("\n", "\\n")
    }

    static func escapeInflux(_ value: String, isMeasurement: Bool = false) -> String {
        var out = ""
        for character in value {
            switch character {
            case ",", " ": out += "\\\(character)"
            case "=" where !isMeasurement: out += "\\="
            case "\n": out += " "
            default: out.append(character)
            }
        }
        return out
    }

    static func influxTags(_ labels: Labels) -> String {
        labels.pairs.filter { !$0.value.isEmpty }.map { ",\(escapeInflux($0.name))=\(escapeInflux($0.value))" }
            .joined()
    }

    static func jsonString(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out +=
                        "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
