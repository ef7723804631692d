import Logging

/// A swift-log handler that writes each event as one line of ``LogFormat`` text or JSON to a ``LogOutput``.
///
/// Formatting happens only for events at or above ``logLevel`` (swift-log checks the level before it evaluates the
/// message's autoclosure), so a disabled `debug` line costs a comparison.
package struct LogLineHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package let label: String
    package let format: LogFormat
    /// Whether lines name the file and line that logged them (`source` in JSON, a trailing `(File.swift:12)` in text).
    package var sourceLocation: Bool
    private let output: LogOutput
    private let clock: @Sendable () -> Int64

    /// - Parameters:
    ///   - clock: milliseconds since 1970 for the `ts` field (the wall clock unless a test fixes it).
    package init(
        label: String, format: LogFormat, level: Logger.Level = .info, output: LogOutput = .standardError,
        sourceLocation: Bool = false, metadataProvider: Logger.MetadataProvider? = nil,
        clock: @escaping @Sendable () -> Int64 = { WallTime.milliseconds() }
    ) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.output = output
        self.sourceLocation = sourceLocation
        self.metadataProvider = metadataProvider
        self.clock = clock
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        let line = LogLine(
            milliseconds: clock(), level: event.level, label: label, message: event.message.description,
            fields: LogLine.flatten(merged),
            source: sourceLocation ? "\(event.file.split(separator: "/").last ?? ""):\(event.line)" : nil)
        output.write(format == .json ? line.json() : line.text())
    }
}
