extension MetricsRenderer {
    /// JSON lines in VictoriaMetrics' `/api/v1/import` shape: `{"metric":{"__name__":…},"values":[…],"timestamps":[ms]}`.
    ///
    /// Histograms expand to `_bucket` (with `le`), `_sum` and `_count` lines like the Prometheus text; non-finite
    /// gauges are skipped (JSON has no NaN).
    public static func renderJSONLines(_ snapshot: MetricsSnapshot) -> [UInt8] {
        var out = TextBuffer(capacity: snapshot.series.count * 160)
        var strings = JSONStringCache()
        let time = snapshot.timestampMs
        for item in snapshot.series {
            let name = item.family.name
            switch item.value {
            case .counter(let value):
                jsonLine(&out, &strings, name, item.labels, le: nil, time: time) { $0.append(value) }
            case .gauge(let value):
                guard value.isFinite else { continue }
                jsonLine(&out, &strings, name, item.labels, le: nil, time: time) { $0.append(float: value) }
            case .histogram(let histogram):
                let counts = histogram.cumulativeBucketCounts()
                let bucketName = name + "_bucket"
                for (slot, count) in counts.enumerated() {
                    let le = slot < histogram.scale.bounds.count ? formatFloat(histogram.scale.bounds[slot]) : "+Inf"
                    jsonLine(&out, &strings, bucketName, item.labels, le: le, time: time) { $0.append(count) }
                }
                jsonLine(&out, &strings, name + "_sum", item.labels, le: nil, time: time) {
                    $0.append(float: histogram.sum)
                }
                jsonLine(&out, &strings, name + "_count", item.labels, le: nil, time: time) {
                    $0.append(counts.last ?? 0)
                }
            }
        }
        return out.bytes
    }

    /// One import line. Label names are already `[a-zA-Z_][a-zA-Z0-9_]*` (see ``MetricName``), so only the
    /// values need JSON escaping, which json-c does.
    private static func jsonLine(
        _ out: inout TextBuffer, _ strings: inout JSONStringCache, _ name: String, _ labels: Labels, le: String?,
        time: Int64, value: (inout TextBuffer) -> Void
    ) {
        out.append("{\"metric\":{\"__name__\":")
        strings.append(name, to: &out)
        for (labelName, labelValue) in zip(labels.names, labels.values) {
            out.append(",\"")
            out.append(labelName)
            out.append("\":")
            strings.append(labelValue, to: &out)
        }
        if let le {
            out.append(",\"le\":")
            strings.append(le, to: &out)
        }
        out.append("},\"values\":[")
        value(&out)
        out.append("],\"timestamps\":[")
        out.append(time)
        out.append("]}\n")
    }

    /// OTLP/HTTP JSON (`ExportMetricsServiceRequest`), cumulative: counters as monotonic sums, gauges, histograms
    /// with explicit bounds. 64-bit integers and nanosecond times are strings, as the protobuf JSON mapping requires.
    public static func renderOTLP(_ snapshot: MetricsSnapshot) -> [UInt8] {
        var out = TextBuffer(capacity: snapshot.series.count * 300)
        var strings = JSONStringCache()
        var attributes: [String: [UInt8]] = [:]
        let now = String(snapshot.timestampMs * 1_000_000)
        let start = String((snapshot.startTimeMs == 0 ? snapshot.timestampMs : snapshot.startTimeMs) * 1_000_000)
        let times = "\"startTimeUnixNano\":\"\(start)\",\"timeUnixNano\":\"\(now)\""

        out.append("{\"resourceMetrics\":[{\"resource\":{\"attributes\":[")
        out.bytes.append(contentsOf: attribute("service.name", "skirmish", &strings))
        out.append("]},\"scopeMetrics\":[{\"scope\":{\"name\":\"skirmish\"},\"metrics\":[")
        for (familyIndex, (family, series)) in snapshot.families.enumerated() {
            if familyIndex > 0 { out.append(byte: 0x2C) }
            out.append("{\"name\":")
            strings.append(family.name, to: &out)
            out.append(",\"description\":")
            strings.append(family.help, to: &out)
            out.append(",\"unit\":")
            strings.append(family.unit, to: &out)
            switch family.kind {
            case .counter: out.append(",\"sum\":{\"dataPoints\":[")
            case .gauge: out.append(",\"gauge\":{\"dataPoints\":[")
            case .histogram: out.append(",\"histogram\":{\"dataPoints\":[")
            }
            for (pointIndex, item) in series.enumerated() {
                if pointIndex > 0 { out.append(byte: 0x2C) }
                out.append("{\"attributes\":[")
                for (labelIndex, (name, value)) in zip(item.labels.names, item.labels.values).enumerated() {
                    if labelIndex > 0 { out.append(byte: 0x2C) }
                    let key = name + "\u{0}" + value
                    if let bytes = attributes[key] {
                        out.bytes.append(contentsOf: bytes)
                    } else {
                        let bytes = attribute(name, value, &strings)
                        attributes[key] = bytes
                        out.bytes.append(contentsOf: bytes)
                    }
                }
                out.append("],")
                out.append(times)
                switch item.value {
                case .counter(let value):
                    out.append(",\"asInt\":\"")
                    out.append(min(value, UInt64(Int64.max)))
                    out.append("\"}")
                case .gauge(let value):
                    out.append(",\"asDouble\":")
                    out.append(float: value.isFinite ? value : 0)
                    out.append(byte: 0x7D)
                case .histogram(let histogram):
                    let cumulative = histogram.cumulativeBucketCounts()
                    out.append(",\"count\":\"")
                    out.append(cumulative.last ?? 0)
                    out.append("\",\"sum\":")
                    out.append(float: histogram.sum.isFinite ? histogram.sum : 0)
                    out.append(",\"bucketCounts\":[")
                    var previous: UInt64 = 0
                    for (slot, running) in cumulative.enumerated() {
                        if slot > 0 { out.append(byte: 0x2C) }
                        out.append(byte: 0x22)
                        out.append(running - previous)
                        out.append(byte: 0x22)
                        previous = running
                    }
                    out.append("],\"explicitBounds\":[")
                    for (slot, bound) in histogram.scale.bounds.enumerated() {
                        if slot > 0 { out.append(byte: 0x2C) }
                        out.append(float: bound)
                    }
                    out.append("]}")
                }
            }
            switch family.kind {
            case .counter: out.append("],\"aggregationTemporality\":2,\"isMonotonic\":true}}")
            case .gauge: out.append("]}}")
            case .histogram: out.append("],\"aggregationTemporality\":2}}")
            }
        }
        out.append("]}]}]}")
        return out.bytes
    }

    /// One OTLP `KeyValue` with a string value, as JSON.
    private static func attribute(_ key: String, _ value: String, _ strings: inout JSONStringCache) -> [UInt8] {
        var out = TextBuffer(capacity: 64)
        out.append("{\"key\":")
        strings.append(key, to: &out)
        out.append(",\"value\":{\"stringValue\":")
        strings.append(value, to: &out)
        out.append("}}")
        return out.bytes
    }
}
