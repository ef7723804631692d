/// The push formats, one per collector dialect (DESIGN §6).
public enum MetricsFormat: String, Sendable, CaseIterable {
    /// Prometheus text without timestamps, for Pushgateway.
    case prom
    /// Prometheus text with millisecond timestamps, for VictoriaMetrics `/api/v1/import/prometheus`.
    case vm
    /// Influx line protocol with millisecond timestamps, for InfluxDB 1.x `/write?precision=ms`.
    case influx
    /// OTLP/HTTP JSON with cumulative temporality, for an OpenTelemetry collector `/v1/metrics`.
    case otlp
    /// JSON lines in VictoriaMetrics' import shape, for `/api/v1/import` or any webhook.
    case json

    /// The `Content-Type` header a collector expects for the format.
    public var contentType: String {
        switch self {
        case .prom, .vm: "text/plain; version=0.0.4; charset=utf-8"
        case .influx: "text/plain; charset=utf-8"
        case .otlp: "application/json"
        case .json: "application/x-ndjson"
        }
    }
}
