extension MetricsRenderer {
    /// JSON lines in VictoriaMetrics' `/api/v1/import` shape: `{"metric":{"__name__":…},"values":[…],"timestamps":[ms]}`.
    ///
    /// Histograms expand to `_bucket` (with `le`), `_sum` and `_count` lines like the Prometheus text; non-finite
    /// gauges are skipped (JSON has no NaN).
    public static func renderJSONLines(_ snapshot: MetricsSnapshot) -> [UInt8] {
        var out = TextBuffer(capacity: snapshot.series.count * 160)
        var pool = JSONPool()
        let time = snapshot.timestampMs
        for item in snapshot.series {
            let name = item.family.name
            switch item.value {
            case .counter(let value):
                jsonLine(
                    &out, &pool, name, item.labels, le: nil, value: JSONBuilder.int(Int64(clamping: value)),
                    time: time)
            case .gauge(let value):
                guard value.isFinite else { continue }
                jsonLine(&out, &pool, name, item.labels, le: nil, value: JSONBuilder.double(value), time: time)
            case .histogram(let histogram):
                let counts = histogram.cumulativeBucketCounts()
                for (slot, count) in counts.enumerated() {
                    let le = slot < histogram.scale.bounds.count ? formatFloat(histogram.scale.bounds[slot]) : "+Inf"
                    jsonLine(
                        &out, &pool, name + "_bucket", item.labels, le: le,
                        value: JSONBuilder.int(Int64(clamping: count)),
                        time: time)
                }
                jsonLine(
                    &out, &pool, name + "_sum", item.labels, le: nil, value: JSONBuilder.double(histogram.sum),
                    time: time)
                jsonLine(
                    &out, &pool, name + "_count", item.labels, le: nil,
                    value: JSONBuilder.int(Int64(clamping: counts.last ?? 0)), time: time)
            }
        }
        return out.bytes
    }

    private static func jsonLine(
        _ out: inout TextBuffer, _ pool: inout JSONPool, _ name: String, _ labels: Labels, le: String?,
        value: OpaquePointer, time: Int64
    ) {
        let line = JSONBuilder()
        let metric = JSONBuilder.object()
        JSONBuilder.set(metric, "__name__", pool.string(name))
        for (labelName, labelValue) in zip(labels.names, labels.values) {
            JSONBuilder.set(metric, labelName, pool.string(labelValue))
        }
        if let le { JSONBuilder.set(metric, "le", pool.string(le)) }
        JSONBuilder.set(line.root, "metric", metric)
        let values = JSONBuilder.array()
        JSONBuilder.append(values, value)
        JSONBuilder.set(line.root, "values", values)
        let timestamps = pool.shared("\u{0}timestamps") {
            let array = JSONBuilder.array()
            JSONBuilder.append(array, JSONBuilder.int(time))
            return array
        }
        JSONBuilder.set(line.root, "timestamps", timestamps)
        line.finish(into: &out)
        out.append(byte: 0x0A)
    }

    /// OTLP/HTTP JSON (`ExportMetricsServiceRequest`), cumulative: counters as monotonic sums, gauges, histograms
    /// with explicit bounds. 64-bit integers and nanosecond times are strings, as the protobuf JSON mapping requires.
    public static func renderOTLP(_ snapshot: MetricsSnapshot) -> [UInt8] {
        let request = JSONBuilder()
        var pool = JSONPool()
        let resourceMetrics = JSONBuilder.array()
        let entry = JSONBuilder.object()
        let resource = JSONBuilder.object()
        let resourceAttributes = JSONBuilder.array()
        JSONBuilder.append(resourceAttributes, attribute("service.name", "skirmish"))
        JSONBuilder.set(resource, "attributes", resourceAttributes)
        JSONBuilder.set(entry, "resource", resource)

        let scopeMetrics = JSONBuilder.array()
        let scopeEntry = JSONBuilder.object()
        let scope = JSONBuilder.object()
        JSONBuilder.set(scope, "name", JSONBuilder.string("skirmish"))
        JSONBuilder.set(scopeEntry, "scope", scope)
        let metrics = JSONBuilder.array()
        let now = String(snapshot.timestampMs * 1_000_000)
        let start = String((snapshot.startTimeMs == 0 ? snapshot.timestampMs : snapshot.startTimeMs) * 1_000_000)

        for (family, series) in snapshot.families {
            let metric = JSONBuilder.object()
            JSONBuilder.set(metric, "name", JSONBuilder.string(family.name))
            JSONBuilder.set(metric, "description", JSONBuilder.string(family.help))
            JSONBuilder.set(metric, "unit", JSONBuilder.string(family.unit))
            let points = JSONBuilder.array()
            for item in series {
                let point = JSONBuilder.object()
                let attributes = JSONBuilder.array()
                for (name, value) in zip(item.labels.names, item.labels.values) {
                    JSONBuilder.append(attributes, pool.shared(name + "\u{0}" + value) { attribute(name, value) })
                }
                JSONBuilder.set(point, "attributes", attributes)
                JSONBuilder.set(point, "startTimeUnixNano", pool.string(start))
                JSONBuilder.set(point, "timeUnixNano", pool.string(now))
                switch item.value {
                case .counter(let value):
                    JSONBuilder.set(point, "asInt", JSONBuilder.string(String(min(value, UInt64(Int64.max)))))
                case .gauge(let value):
                    JSONBuilder.set(point, "asDouble", JSONBuilder.double(value.isFinite ? value : 0))
                case .histogram(let histogram):
                    let cumulative = histogram.cumulativeBucketCounts()
                    JSONBuilder.set(point, "count", JSONBuilder.string(String(cumulative.last ?? 0)))
                    JSONBuilder.set(point, "sum", JSONBuilder.double(histogram.sum))
                    let bucketCounts = JSONBuilder.array()
                    var previous: UInt64 = 0
                    for running in cumulative {
                        JSONBuilder.append(bucketCounts, JSONBuilder.string(String(running - previous)))
                        previous = running
                    }
                    JSONBuilder.set(point, "bucketCounts", bucketCounts)
                    let bounds = pool.shared("\u{0}bounds" + histogram.scale.bounds.description) {
                        let bounds = JSONBuilder.array()
                        for bound in histogram.scale.bounds { JSONBuilder.append(bounds, JSONBuilder.double(bound)) }
                        return bounds
                    }
                    JSONBuilder.set(point, "explicitBounds", bounds)
                }
                JSONBuilder.append(points, point)
            }
            let data = JSONBuilder.object()
            JSONBuilder.set(data, "dataPoints", points)
            switch family.kind {
            case .counter:
                JSONBuilder.set(data, "aggregationTemporality", JSONBuilder.int(2))
                JSONBuilder.set(data, "isMonotonic", JSONBuilder.bool(true))
                JSONBuilder.set(metric, "sum", data)
            case .gauge:
                JSONBuilder.set(metric, "gauge", data)
            case .histogram:
                JSONBuilder.set(data, "aggregationTemporality", JSONBuilder.int(2))
                JSONBuilder.set(metric, "histogram", data)
            }
            JSONBuilder.append(metrics, metric)
        }
        JSONBuilder.set(scopeEntry, "metrics", metrics)
        JSONBuilder.append(scopeMetrics, scopeEntry)
        JSONBuilder.set(entry, "scopeMetrics", scopeMetrics)
        JSONBuilder.append(resourceMetrics, entry)
        JSONBuilder.set(request.root, "resourceMetrics", resourceMetrics)
        var out = TextBuffer(capacity: snapshot.series.count * 256)
        request.finish(into: &out)
        return out.bytes
    }

    private static func attribute(_ key: String, _ value: String) -> OpaquePointer {
        let pair = JSONBuilder.object()
        JSONBuilder.set(pair, "key", JSONBuilder.string(key))
        let any = JSONBuilder.object()
        JSONBuilder.set(any, "stringValue", JSONBuilder.string(value))
        JSONBuilder.set(pair, "value", any)
        return pair
    }
}
