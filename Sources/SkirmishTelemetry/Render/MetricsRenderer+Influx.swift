extension MetricsRenderer {
    /// Influx line protocol with millisecond timestamps (push with `precision=ms`), one field `value` per line.
    ///
    /// Counters are integers (`12i`), gauges floats. A histogram becomes `<name>_bucket` lines tagged `le`, plus
    /// `<name>_sum` and `<name>_count`, mirroring Prometheus so dashboards read alike. Empty tag values are left
    /// out (InfluxDB rejects them) and non-finite gauges are skipped (line protocol has no NaN or Inf).
    ///
    /// With `fieldFromName` (for VictoriaMetrics' `/influx/write`, which names a series `<measurement>_<field>`),
    /// the name's last `_` part becomes the field instead of `value`: `skirmish_bots connected=12` is stored as
    /// `skirmish_bots_connected`, the name the dashboards use, where `value=` would give `…_connected_value`.
    public static func renderInflux(_ snapshot: MetricsSnapshot, fieldFromName: Bool = false) -> [UInt8] {
        var out = TextBuffer(capacity: snapshot.series.count * 96)
        let time = snapshot.timestampMs
        for item in snapshot.series {
            let name = item.family.name
            switch item.value {
            case .counter(let value):
                writeInfluxLine(&out, name, item.labels, le: nil, time: time, split: fieldFromName) {
                    $0.append(min(value, UInt64(Int64.max)))
                    $0.append(byte: 0x69)
                }
            case .gauge(let value):
                guard value.isFinite else { continue }
                writeInfluxLine(&out, name, item.labels, le: nil, time: time, split: fieldFromName) {
                    $0.append(float: value)
                }
            case .histogram(let histogram):
                let counts = histogram.cumulativeBucketCounts()
                for (slot, count) in counts.enumerated() {
                    let le = slot < histogram.scale.bounds.count ? formatFloat(histogram.scale.bounds[slot]) : "+Inf"
                    writeInfluxLine(&out, name + "_bucket", item.labels, le: le, time: time, split: fieldFromName) {
                        $0.append(count)
                        $0.append(byte: 0x69)
                    }
                }
                writeInfluxLine(&out, name + "_sum", item.labels, le: nil, time: time, split: fieldFromName) {
                    $0.append(float: histogram.sum)
                }
                writeInfluxLine(&out, name + "_count", item.labels, le: nil, time: time, split: fieldFromName) {
                    $0.append(counts.last ?? 0)
                    $0.append(byte: 0x69)
                }
            }
        }
        return out.bytes
    }

    private static func writeInfluxLine(
        _ out: inout TextBuffer,
        _ measurement: String,
        _ labels: Labels,
        le: String?,
        time: Int64,
        split: Bool,
        value: (inout TextBuffer) -> Void
    ) {
        // Sanitised names need no escaping; tag values may hold commas, equals signs and spaces.
        var field = "value"
        if split, let underscore = measurement.lastIndex(of: "_"), underscore != measurement.startIndex,
            measurement.index(after: underscore) != measurement.endIndex
        {
            out.append(String(measurement[..<underscore]))
            field = String(measurement[measurement.index(after: underscore)...])
        } else {
            out.append(measurement)
        }
        for (name, tagValue) in zip(labels.names, labels.values) where !tagValue.isEmpty {
            out.append(byte: 0x2C)
            out.append(name)
            out.append(byte: 0x3D)
            writeInfluxTagValue(&out, tagValue)
        }
        if let le {
            out.append(",le=")
            out.append(le)
        }
        out.append(byte: 0x20)
        out.append(field)
        out.append(byte: 0x3D)
        value(&out)
        out.append(byte: 0x20)
        out.append(time)
        out.append(byte: 0x0A)
    }

    private static func writeInfluxTagValue(_ out: inout TextBuffer, _ value: String) {
        // A trailing backslash would escape the separator that follows, so trailing backslashes are dropped.
        var bytes = value.utf8[...]
        while bytes.last == 0x5C { bytes = bytes.dropLast() }
        for byte in bytes {
            if byte == 0x2C || byte == 0x3D || byte == 0x20 { out.append(byte: 0x5C) }
            out.append(byte: byte)
        }
    }
}
