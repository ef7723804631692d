/// A snapshot written to a run's `metrics.json` and read back exactly: every series with its family, labels and
/// value, histograms with their HDR counts (``HistogramValue``'s own encoding). It is what `skirmish merge` adds up
/// across the shards of a run, so that every figure of the merged summary, per persona and per tag included, is
/// computed from the same series a single process would have held.
///
/// Families are written once and referred to by position; a series refers to a family that does not exist, or holds
/// a value of another kind than its family's, is an error, never a guess.
extension MetricsSnapshot: Codable {
    private enum CodingKeys: String, CodingKey {
        case timestampMs, startTimeMs, families, series
    }

    private struct Family: Codable {
        var name: String
        var help: String
        var kind: String
        var labelNames: [String]
        /// A histogram family's scale (the values carry it too; the family needs it to be declared).
        var resolution: Double?
        var highest: Double?
        var bounds: [Double]?
    }

    private struct Series: Codable {
        var family: Int
        var labels: [[String]]
        var counter: UInt64?
        var gauge: Double?
        var histogram: HistogramValue?
    }

    /// Reads a snapshot written by ``encode(to:)``; throws naming the first malformed family or series.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            timestampMs: try container.decode(Int64.self, forKey: .timestampMs),
            startTimeMs: try container.decode(Int64.self, forKey: .startTimeMs))
        let families = try container.decode([Family].self, forKey: .families).map { family -> MetricFamily in
            let kind: MetricFamily.Kind
            switch family.kind {
            case "counter": kind = .counter
            case "gauge": kind = .gauge
            case "histogram":
                guard let resolution = family.resolution, let highest = family.highest, let bounds = family.bounds,
                    let scale = HistogramScale.validated(resolution: resolution, highest: highest, bounds: bounds)
                else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .families, in: container,
                        debugDescription: "histogram family \(family.name) has no valid resolution, highest and bounds")
                }
                kind = .histogram(scale)
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .families, in: container,
                    debugDescription: "family \(family.name) has kind \(family.kind), not counter, gauge or histogram")
            }
            return MetricFamily(name: family.name, help: family.help, kind: kind, labelNames: family.labelNames)
        }
        for (position, item) in try container.decode([Series].self, forKey: .series).enumerated() {
            func corrupt(_ what: String) -> DecodingError {
                DecodingError.dataCorruptedError(
                    forKey: .series, in: container, debugDescription: "series \(position + 1): \(what)")
            }
            guard families.indices.contains(item.family) else { throw corrupt("no family \(item.family)") }
            guard item.labels.allSatisfy({ $0.count == 2 }) else { throw corrupt("a label is not [name, value]") }
            let family = families[item.family]
            let value: MetricSeries.Value
            switch (family.kind, item.counter, item.gauge, item.histogram) {
            case (.counter, let count?, nil, nil): value = .counter(count)
            case (.gauge, nil, let gauge?, nil): value = .gauge(gauge)
            case (.histogram(let scale), nil, nil, let histogram?) where histogram.scale == scale:
                value = .histogram(histogram)
            default: throw corrupt("its value is not of its family \(family.name)'s kind")
            }
            insert(
                MetricSeries(family: family, labels: Labels(item.labels.map { ($0[0], $0[1]) }), value: value))
        }
    }

    /// Writes the timestamps, each family once, then every series by its family's position.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(timestampMs, forKey: .timestampMs)
        try container.encode(startTimeMs, forKey: .startTimeMs)
        var positions: [String: Int] = [:]
        var families: [Family] = []
        var series: [Series] = []
        series.reserveCapacity(self.series.count)
        for item in self.series {
            let position: Int
            if let known = positions[item.family.name] {
                position = known
            } else {
                position = families.count
                positions[item.family.name] = position
                var family = Family(
                    name: item.family.name, help: item.family.help, kind: "counter",
                    labelNames: item.family.labelNames)
                switch item.family.kind {
                case .counter: break
                case .gauge: family.kind = "gauge"
                case .histogram(let scale):
                    family.kind = "histogram"
                    family.resolution = scale.resolution
                    family.highest = scale.highest
                    family.bounds = scale.bounds
                }
                families.append(family)
            }
            var entry = Series(family: position, labels: item.labels.pairs.map { [$0.name, $0.value] })
            switch item.value {
            case .counter(let count): entry.counter = count
            case .gauge(let gauge): entry.gauge = gauge
            case .histogram(let histogram): entry.histogram = histogram
            }
            series.append(entry)
        }
        try container.encode(families, forKey: .families)
        try container.encode(series, forKey: .series)
    }
}
