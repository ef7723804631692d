import ArgumentParser
import Foundation
import Logging
import SkirmishSwarm
import SkirmishTelemetry

/// `--push URL --format F`, repeatable: where the exporter sends metrics while a run lasts.
struct PushOptions: ParsableArguments {
    @Option(
        name: .customLong("push"),
        help: ArgumentHelp(
            "A collector to push metrics to (repeatable; each may be followed by its --format).",
            discussion: """
                Pushgateway: http://host:9091 (format prom; grouped by job/run/shard). VictoriaMetrics: \
                http://host:8428/api/v1/import/prometheus (vm), or /api/v1/import (json lines). InfluxDB 1.x: \
                http://host:8086/write?db=skirmish (influx; precision=ms is always added). OpenTelemetry: \
                http://host:4318/v1/metrics (otlp). The format is inferred from these paths and ports; give \
                --format for anything else (a webhook: --format json). Credentials: https://user:password@host/… \
                for basic auth, or the SKIRMISH_PUSH_TOKEN environment variable for a bearer token.
                """,
            valueName: "url"))
    var urls: [String] = []

    @Option(
        name: .customLong("format"),
        help: ArgumentHelp(
            "Format of the matching --push, by position: prom, vm, influx, otlp or json (default: inferred).",
            valueName: "format"))
    var formats: [String] = []

    @Option(help: ArgumentHelp("Seconds between pushes (a final push always follows the run).", valueName: "seconds"))
    var pushInterval = 5

    /// Checks every URL, format and interval before anything starts: a mistyped collector is refused at once
    /// (exit status 2), not discovered by every push of a run.
    func validate() throws {
        do {
            _ = try targets()
        } catch {
            throw ValidationError(error.text)
        }
    }

    /// The exporter for these options, or `nil` when no collector was named.
    func makeExporter(
        source: any MetricsSource, runID: String, shard: Shard,
        logger: Logger = Logger(label: "skirmish.exporter")
    ) throws -> Exporter? {
        let targets = try targets()
        guard !targets.isEmpty else { return nil }
        return Exporter(
            targets: targets, source: source, interval: .seconds(pushInterval), runID: runID,
            shard: shard.description, logger: logger)
    }

    /// The targets these options name, each URL parsed strictly by `URLComponents` (`PushTarget.components(of:)`).
    private func targets() throws(InputError) -> [PushTarget] {
        guard formats.count <= urls.count else {
            throw InputError(
                "there are more --format options (\(formats.count)) than --push URLs (\(urls.count)); give one "
                    + "--format after each --push it belongs to")
        }
        for format in formats where MetricsFormat(rawValue: format) == nil {
            throw InputError(
                "--format \(format) is not a format; use one of "
                    + MetricsFormat.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard pushInterval >= 1 else { throw InputError("--push-interval must be at least 1 second") }
        let token = ProcessInfo.processInfo.environment["SKIRMISH_PUSH_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        var targets: [PushTarget] = []
        for (index, url) in urls.enumerated() {
            let named = index < formats.count ? MetricsFormat(rawValue: formats[index]) : nil
            do {
                _ = try PushTarget.components(of: url)
            } catch {
                throw InputError(String(describing: error))
            }
            guard let format = named ?? PushTarget.inferredFormat(for: url) else {
                throw InputError(
                    "--push \(url): cannot tell which collector this is; add --format prom|vm|influx|otlp|json "
                        + "after it (or use a collector's usual path, e.g. /api/v1/import/prometheus)")
            }
            do {
                targets.append(try PushTarget(parsing: url, format: format, auth: token.map { .bearer($0) } ?? .none))
            } catch {
                throw InputError(String(describing: error))
            }
        }
        return targets
    }
}

/// Bad input (a script, a flag, a target): printed as one clear message, exit status 2.
struct InputError: Error, CustomStringConvertible {
    var text: String
    init(_ text: String) { self.text = text }
    var description: String { text }
}

extension InputError {
    /// Runs `body`, turning bad input into its message on stderr and exit status 2.
    static func reporting<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as InputError {
            Console.note(error.text)
            throw ExitCode(2)
        }
    }
}
