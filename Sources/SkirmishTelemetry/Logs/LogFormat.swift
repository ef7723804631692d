/// How log lines are written: for a person reading a terminal, or for a log collector.
package enum LogFormat: String, CaseIterable, Sendable {
    /// `2026-11-24T21:50:05.123Z warning skirmish.exporter: collector unreachable target=vm run=…`
    case text
    /// One JSON object per line: `ts`, `level`, `label`, `msg`, then every metadata key as a string field.
    case json
}
