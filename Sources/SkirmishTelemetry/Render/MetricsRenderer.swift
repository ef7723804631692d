/// Serialises a ``MetricsSnapshot`` into each collector's format.
///
/// Pure functions of the snapshot, so they run on the exporter thread and in `skirmish bench export` alike. The
/// rules that bite per collector are in the DocC article *Formats*.
public enum MetricsRenderer {
    /// The payload for a push format.
    public static func render(_ snapshot: MetricsSnapshot, as format: MetricsFormat) -> [UInt8] {
        switch format {
        case .prom: renderPrometheus(snapshot, timestamps: false)
        case .vm: renderPrometheus(snapshot, timestamps: true)
        case .influx: renderInflux(snapshot)
        case .otlp: renderOTLP(snapshot)
        case .json: renderJSONLines(snapshot)
        }
    }

    /// Prometheus text exposition (version 0.0.4), optionally with millisecond timestamps; ends with a newline.
    ///
    /// Pushgateway refuses timestamps, so ``MetricsFormat/prom`` omits them; VictoriaMetrics keeps them.
    public static func renderPrometheus(_ snapshot: MetricsSnapshot, timestamps: Bool) -> [UInt8] {
        var out = TextBuffer(capacity: snapshot.series.count * 96)
        let time: Int64? = timestamps ? snapshot.timestampMs : nil
        for (family, series) in snapshot.families {
            writeHeader(&out, family: family, typeName: family.name, openMetrics: false)
            for item in series { writeSamples(&out, item, time: time, openMetrics: false) }
        }
        return out.bytes
    }

    /// OpenMetrics text: counter families named without `_total`, timestamps in seconds, ending in `# EOF`.
    ///
    /// This is the end-of-run `metrics.om`, loadable with `promtool tsdb create-blocks-from openmetrics`.
    public static func renderOpenMetrics(_ snapshot: MetricsSnapshot) -> [UInt8] {
        var out = TextBuffer(capacity: snapshot.series.count * 96)
        for (family, series) in snapshot.families {
            var typeName = family.name
            if case .counter = family.kind, typeName.hasSuffix("_total") { typeName.removeLast(6) }
            writeHeader(&out, family: family, typeName: typeName, openMetrics: true)
            for item in series { writeSamples(&out, item, time: snapshot.timestampMs, openMetrics: true) }
        }
        out.append("# EOF\n")
        return out.bytes
    }

    private static func writeHeader(_ out: inout TextBuffer, family: MetricFamily, typeName: String, openMetrics: Bool)
    {
        out.append("# HELP ")
        out.append(typeName)
        out.append(byte: 0x20)
        out.append(escapeHelp(family.help, openMetrics: openMetrics))
        out.append("\n# TYPE ")
        out.append(typeName)
        switch family.kind {
        case .counter: out.append(" counter\n")
        case .gauge: out.append(" gauge\n")
        case .histogram: out.append(" histogram\n")
        }
    }

    private static func writeSamples(_ out: inout TextBuffer, _ item: MetricSeries, time: Int64?, openMetrics: Bool) {
        let name = item.family.name
        switch item.value {
        case .counter(let value):
            var sampleName = name
            if openMetrics && !sampleName.hasSuffix("_total") { sampleName += "_total" }
            writeLine(&out, sampleName, item.labels, le: nil) { $0.append(value) }
            writeTime(&out, time, openMetrics: openMetrics)
        case .gauge(let value):
            writeLine(&out, name, item.labels, le: nil) { $0.append(float: value) }
            writeTime(&out, time, openMetrics: openMetrics)
        case .histogram(let histogram):
            let counts = histogram.cumulativeBucketCounts()
            for (slot, count) in counts.enumerated() {
                let le = slot < histogram.scale.bounds.count ? formatFloat(histogram.scale.bounds[slot]) : "+Inf"
                writeLine(&out, name + "_bucket", item.labels, le: le) { $0.append(count) }
                writeTime(&out, time, openMetrics: openMetrics)
            }
            writeLine(&out, name + "_sum", item.labels, le: nil) { $0.append(float: histogram.sum) }
            writeTime(&out, time, openMetrics: openMetrics)
            writeLine(&out, name + "_count", item.labels, le: nil) { $0.append(counts.last ?? 0) }
            writeTime(&out, time, openMetrics: openMetrics)
        }
    }

    private static func writeLine(
        _ out: inout TextBuffer, _ name: String, _ labels: Labels, le: String?, value: (inout TextBuffer) -> Void
    ) {
        out.append(name)
        if labels.count > 0 || le != nil {
            out.append(byte: 0x7B)
            var first = true
            for (labelName, labelValue) in zip(labels.names, labels.values) {
                if !first { out.append(byte: 0x2C) }
                first = false
                writeLabel(&out, labelName, labelValue)
            }
            if let le {
                if !first { out.append(byte: 0x2C) }
                writeLabel(&out, "le", le)
            }
            out.append(byte: 0x7D)
        }
        out.append(byte: 0x20)
        value(&out)
    }

    private static func writeLabel(_ out: inout TextBuffer, _ name: String, _ value: String) {
        out.append(name)
        out.append("=\"")
        // Almost every value needs no escaping: copy it whole.
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A }) else {
            out.append(value)
            out.append(byte: 0x22)
            return
        }
        for byte in value.utf8 {
            switch byte {
            case 0x5C: out.append("\\\\")
            case 0x22: out.append("\\\"")
            case 0x0A: out.append("\\n")
            default: out.append(byte: byte)
            }
        }
        out.append(byte: 0x22)
    }

    private static func writeTime(_ out: inout TextBuffer, _ time: Int64?, openMetrics: Bool) {
        if let time {
            out.append(byte: 0x20)
            if openMetrics { out.append(secondsFromMs: time) } else { out.append(time) }
        }
        out.append(byte: 0x0A)
    }

    private static func escapeHelp(_ help: String, openMetrics: Bool) -> String {
        var result = ""
        for character in help {
            switch character {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\"" where openMetrics: result += "\\\""
            default: result.append(character)
            }
        }
        return result
    }

    /// A float as Prometheus and Influx parse it: `+Inf`/`-Inf`/`NaN`, `12` for integral values below 2^53, else
    /// Swift's shortest round-tripping form (`0.005`, `1e-05`).
    static func formatFloat(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return value.description
    }
}
