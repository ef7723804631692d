import Logging
import Synchronization

/// Keeps every log event its loggers write, for tests: what a component logged, at which level, with which metadata.
///
/// Like swift-log's own test handler, it ships beside the real one so every test target uses the same capture. It
/// records events (not rendered lines), each with the moment it arrived on the continuous clock.
package final class LogCapture: Sendable {
    /// One captured event, its metadata flattened to strings as the JSON handler writes them.
    package struct Entry: Sendable, CustomStringConvertible {
        package var level: Logger.Level
        package var label: String
        package var message: String
        package var metadata: [String: String]
        package var at: ContinuousClock.Instant

        package var description: String {
            "\(level) \(label): \(message) \(metadata.sorted { $0.key < $1.key }.map { "\($0)=\($1)" })"
        }
    }

    private let entries = Mutex<[Entry]>([])

    package init() {}

    /// A logger labelled `label` that writes into this capture at `level` and above.
    package func logger(_ label: String, level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: label) { label in Handler(label: label, capture: self) }
        logger.logLevel = level
        return logger
    }

    /// Everything captured so far, oldest first.
    package var all: [Entry] { entries.withLock { $0 } }

    /// The entries whose message starts with `prefix`.
    package func entries(startingWith prefix: String) -> [Entry] { all.filter { $0.message.hasPrefix(prefix) } }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        let label: String
        let capture: LogCapture

        init(label: String, capture: LogCapture) {
            self.label = label
            self.capture = capture
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged = metadata
            if let own = event.metadata { merged.merge(own) { _, new in new } }
            var fields: [String: String] = [:]
            for (key, value) in LogLine.flatten(merged) { fields[key] = value }
            capture.append(
                Entry(
                    level: event.level, label: label, message: event.message.description, metadata: fields,
                    at: .now))
        }
    }
}
