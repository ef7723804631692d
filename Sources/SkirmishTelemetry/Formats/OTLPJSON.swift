import CJSONC

/// OTLP/HTTP JSON (`ExportMetricsServiceRequest`), cumulative temporality, built with json-c.
///
/// Counters become monotonic sums, gauges gauges, histograms explicit-bucket histograms with per-bucket counts (not
/// cumulative, one more than the bounds). 64-bit integers and nanosecond times are JSON strings, as the proto3 JSON
/// mapping requires.
enum OTLPJSON {

    static func render(_ snapshot: MetricsSnapshot, startMilliseconds: Int64? = nil) -> [UInt8] {
        let time = String(snapshot.timestampMilliseconds * 1_000_000)
        let start = String((startMilliseconds ?? processStartMilliseconds) * 1_000_000)
        let root = json_object_new_object()
        defer { json_object_put(root) }
        let resourceMetrics = json_object_new_array()
        let resourceEntry = json_object_new_object()
        let resource = json_object_new_object()
        let resourceAttributes = json_object_new_array()
        json_object_array_add(resourceAttributes, attribute("service.name", "skirmish"))
        json_object_object_add(resource, "attributes", resourceAttributes)
        json_object_object_add(resourceEntry, "resource", resource)
        let scopeMetrics = json_object_new_array()
        let scopeEntry = json_object_new_object()
        let scope = json_object_new_object()
        json_object_object_add(scope, "name", json_object_new_string("skirmish"))
        json_object_object_add(scopeEntry, "scope", scope)
        let metrics = json_object_new_array()
        for (family, series) in MetricsRenderer.grouped(snapshot) {
            let metric = json_object_new_object()
            json_object_object_add(metric, "name", json_object_new_string(family.name))
            json_object_object_add(metric, "description", json_object_new_string(family.help))
            let points = json_object_new_array()
            switch family.kind {
            case .counter:
                json_object_object_add(metric, "unit", json_object_new_string("1"))
                for (labels, value) in series.counters {
                    let point = dataPoint(labels, start: start, time: time)
                    json_object_object_add(point, "asInt", json_object_new_string(String(value)))
                    json_object_array_add(points, point)
                }
                let sum = json_object_new_object()
                json_object_object_add(sum, "aggregationTemporality", json_object_new_int(2))
                json_object_object_add(sum, "isMonotonic", json_object_new_boolean(1))
                json_object_object_add(sum, "dataPoints", points)
                json_object_object_add(metric, "sum", sum)
            case .gauge:
                json_object_object_add(metric, "unit", json_object_new_string("1"))
                for (labels, value) in series.gauges {
                    let point = dataPoint(labels, start: nil, time: time)
                    json_object_object_add(point, "asDouble", json_object_new_double(value))
                    json_object_array_add(points, point)
                }
                let gauge = json_object_new_object()
                json_object_object_add(gauge, "dataPoints", points)
                json_object_object_add(metric, "gauge", gauge)
            case .histogram(let unit):
                json_object_object_add(metric, "unit", json_object_new_string(unit == .seconds ? "s" : "px"))
                for (labels, distribution) in series.histograms {
                    let point = dataPoint(labels, start: start, time: time)
                    json_object_object_add(point, "count", json_object_new_string(String(distribution.count)))
                    json_object_object_add(point, "sum", json_object_new_double(distribution.sum))
                    let counts = json_object_new_array()
                    var previous: UInt64 = 0
                    for (_, cumulative) in distribution.cumulativeBuckets {
                        json_object_array_add(counts, json_object_new_string(String(cumulative &- previous)))
                        previous = cumulative
                    }
                    let bounds = json_object_new_array()
                    for bound in unit.bounds { json_object_array_add(bounds, json_object_new_double(bound)) }
                    json_object_object_add(point, "bucketCounts", counts)
                    json_object_object_add(point, "explicitBounds", bounds)
                    json_object_array_add(points, point)
                }
                let histogram = json_object_new_object()
                json_object_object_add(histogram, "aggregationTemporality", json_object_new_int(2))
                json_object_object_add(histogram, "dataPoints", points)
                json_object_object_add(metric, "histogram", histogram)
            }
            json_object_array_add(metrics, metric)
        }
        json_object_object_add(scopeEntry, "metrics", metrics)
        json_object_array_add(scopeMetrics, scopeEntry)
        json_object_object_add(resourceEntry, "scopeMetrics", scopeMetrics)
        json_object_array_add(resourceMetrics, resourceEntry)
        json_object_object_add(root, "resourceMetrics", resourceMetrics)
        guard let text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN) else { return [] }
        return Array(String(cString: text).utf8)
    }

    private static func attribute(_ key: String, _ value: String) -> OpaquePointer? {
        let entry = json_object_new_object()
        json_object_object_add(entry, "key", json_object_new_string(key))
        let wrapped = json_object_new_object()
        json_object_object_add(wrapped, "stringValue", json_object_new_string(value))
        json_object_object_add(entry, "value", wrapped)
        return entry
    }

    private static func dataPoint(_ labels: Labels, start: String?, time: String) -> OpaquePointer? {
        let point = json_object_new_object()
        let attributes = json_object_new_array()
        for pair in labels.pairs { json_object_array_add(attributes, attribute(pair.name, pair.value)) }
        json_object_object_add(point, "attributes", attributes)
        if let start { json_object_object_add(point, "startTimeUnixNano", json_object_new_string(start)) }
        json_object_object_add(point, "timeUnixNano", json_object_new_string(time))
        return point
    }

    /// When this process started, in Unix milliseconds: the start of every cumulative series.
    static let processStartMilliseconds: Int64 = WallTime.milliseconds()
}
