import Foundation
import SkirmishScript
import SkirmishTelemetry
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A run's figures written while it lasts: one line per second per persona, as JSON lines (`--out-stream`), as CSV
/// (`--out-csv`), or both.
///
/// A line holds what the summary reports, for that second alone: bots connected, packets per second, errors, desyncs,
/// mispredictions and the predictions judged, matches completed, failed checks, and the count, p50, p95, p99 and
/// maximum of round trips, snapshot age and tick lateness. A JSON line also carries each distribution's HDR values
/// and counts (``SparseDistribution``), so percentiles over any span are exact: add the lines' counts value by value.
/// Only the legitimate personas are written, as in the summary's figures.
///
/// Each second's lines reach the file in one `write(2)`, so a reader (`tail -f`, a collector, what is left after a
/// crash) only ever sees whole lines. A file stops growing at ``limit`` bytes, with a last line saying so, so a
/// week-long soak cannot fill a disk.
public final class RunStream: Sendable {
    /// The default cap on each file: 512 MiB (a day of one persona's JSON lines with busy HDR buckets is ~150 MiB).
    public static let defaultLimit = 512 << 20

    /// A file the stream could not open or write, naming it.
    public struct FileError: Error, Sendable, CustomStringConvertible {
        /// The file's path as given.
        public var path: String
        /// What went wrong (the system's words).
        public var reason: String

        /// `path: reason`.
        public var description: String { "\(path): \(reason)" }
    }

    /// One open output file.
    private struct Output {
        let path: String
        let descriptor: Int32
        let csv: Bool
        var written = 0
        var truncated = false
        var failed: String?
    }

    private struct State {
        var outputs: [Output]
        var previous: [String: RunSamples.Figures] = [:]
        var previousSeconds = 0.0
        var closed = false
    }

    /// The paths written, JSON first.
    public let paths: [String]
    /// Each file's cap in bytes.
    public let limit: Int
    private let run: String
    private let shard: String
    private let personas: [(name: String, game: String)]
    private let startedAt: Date
    private let state: Mutex<State>

    /// Opens (creating or emptying) the JSON-lines file `json` and the CSV file `csv`, either of which may be `nil`,
    /// for `script`'s legitimate personas.
    ///
    /// - Throws: ``FileError`` naming a file that cannot be opened for writing.
    public init(
        json: String?, csv: String?, script: Script, run: String, shard: Shard, startedAt: Date,
        limit: Int = RunStream.defaultLimit
    ) throws(FileError) {
        var outputs: [Output] = []
        for (path, isCSV) in [(json, false), (csv, true)] {
            guard let path else { continue }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                let reason = String(cString: strerror(errno))
                for output in outputs { close(output.descriptor) }
                throw FileError(path: path, reason: reason)
            }
            outputs.append(Output(path: path, descriptor: descriptor, csv: isCSV))
        }
        paths = outputs.map(\.path)
        self.limit = limit
        self.run = run
        self.shard = shard.fraction
        personas = script.personas.filter(\.isLegit).map { ($0.name, $0.gameName) }
        self.startedAt = startedAt
        state = Mutex(State(outputs: outputs))
        for index in outputs.indices where outputs[index].csv {
            state.withLock { Self.append(Self.csvHeader, to: &$0.outputs[index], limit: limit) }
        }
    }

    deinit {
        state.withLock { state in
            guard !state.closed else { return }
            for output in state.outputs { close(output.descriptor) }
        }
    }

    /// Writes the stretch since the previous call: the snapshot `seconds` into the run.
    public func record(_ snapshot: MetricsSnapshot, at seconds: Double) {
        state.withLock { state in
            guard !state.closed, seconds > state.previousSeconds else { return }
            let length = seconds - state.previousSeconds
            var json = ""
            var csv = ""
            // The snapshot's own clock: `startedAt` is when the command started, before the server and the bots.
            let time = ISO8601DateFormatter().string(
                from: snapshot.timestampMs > 0
                    ? Date(timeIntervalSince1970: Double(snapshot.timestampMs) / 1_000)
                    : startedAt.addingTimeInterval(seconds))
            for (name, game) in personas {
                let current = RunSamples.cumulative(snapshot, persona: name)
                let step = RunSamples.step(from: state.previous[name] ?? .init(), to: current, seconds: length)
                state.previous[name] = current
                let line = Line(
                    t: (seconds * 1_000).rounded() / 1_000, time: time, run: run, shard: shard, persona: name,
                    game: game, seconds: (length * 1_000).rounded() / 1_000, bots: Int(current.botSeconds),
                    packetsPerSecond: Double(step.packets) / length, errors: step.errors, desyncs: step.desyncs,
                    mispredictions: step.mispredictions, predictions: step.predictions ?? 0,
                    matchesCompleted: step.matchesCompleted, checksFailed: step.checksFailed,
                    rtt: Line.Distribution(step.rtt), snapshotAge: Line.Distribution(step.snapshotAge),
                    tickLateness: Line.Distribution(step.tickLateness))
                json += line.json + "\n"
                csv += line.csv + "\n"
            }
            state.previousSeconds = seconds
            for index in state.outputs.indices {
                Self.append(state.outputs[index].csv ? csv : json, to: &state.outputs[index], limit: limit)
            }
        }
    }

    /// Writes the last stretch (the final snapshot, `seconds` into the run) and closes the files; returns a note
    /// for each file that hit its cap or failed.
    @discardableResult
    public func finish(_ snapshot: MetricsSnapshot, at seconds: Double) -> [String] {
        record(snapshot, at: seconds)
        return state.withLock { state in
            guard !state.closed else { return [] }
            state.closed = true
            var notes: [String] = []
            for output in state.outputs {
                close(output.descriptor)
                if let failed = output.failed {
                    notes.append("\(output.path): writing stopped: \(failed)")
                } else if output.truncated {
                    notes.append(
                        "\(output.path) reached its cap of \(limit >> 20) MiB and stopped growing (its last line says "
                            + "when); summary.json holds the whole run")
                }
            }
            return notes
        }
    }

    /// Appends `text` to `output` in one write, unless that would pass `limit`: then a last line says so and the
    /// file stops growing.
    private static func append(_ text: String, to output: inout Output, limit: Int) {
        guard !output.truncated, output.failed == nil, !text.isEmpty else { return }
        var bytes = Array(text.utf8)
        if output.written + bytes.count > limit {
            output.truncated = true
            let note =
                output.csv
                ? "# truncated: the file reached its cap of \(limit) bytes\n"
                : "{\"truncated\":true,\"limit_bytes\":\(limit)}\n"
            bytes = Array(note.utf8)
        }
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(output.descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                output.failed = String(cString: strerror(errno))
                return
            }
            offset += count
        }
        output.written += bytes.count
    }

    static let csvHeader =
        "t,time,run,shard,persona,game,seconds,bots,packets_per_second,errors,desyncs,mispredictions,predictions,"
        + "matches_completed,checks_failed,"
        + ["rtt", "snapshot_age", "tick_lateness"].map { name in
            ["count", "p50", "p95", "p99", "max"].map { "\(name)_\($0)" }.joined(separator: ",")
        }.joined(separator: ",") + "\n"

    /// One persona's second.
    struct Line: Encodable {
        /// A distribution's count, percentiles (seconds) and HDR values.
        struct Distribution: Encodable {
            var count: UInt64
            var p50: Double?
            var p95: Double?
            var p99: Double?
            var max: Double?
            var hdr: SparseDistribution

            init?(_ distribution: SparseDistribution?) {
                guard let distribution, distribution.total > 0 else { return nil }
                count = distribution.total
                p50 = distribution.quantile(0.5)
                p95 = distribution.quantile(0.95)
                p99 = distribution.quantile(0.99)
                max = distribution.quantile(1)
                hdr = distribution
            }

            var csvCells: [String] {
                [String(count)] + [p50, p95, p99, max].map { $0.map { String($0) } ?? "" }
            }
        }

        var t: Double
        var time: String
        var run: String
        var shard: String
        var persona: String
        var game: String
        var seconds: Double
        var bots: Int
        var packetsPerSecond: Double
        var errors: UInt64
        var desyncs: UInt64
        var mispredictions: UInt64
        var predictions: UInt64
        var matchesCompleted: UInt64
        var checksFailed: UInt64
        var rtt: Distribution?
        var snapshotAge: Distribution?
        var tickLateness: Distribution?

        var json: String {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }

        var csv: String {
            var cells = [
                String(t), time, run, shard, persona, game, String(seconds), String(bots),
                String(format: "%.3f", packetsPerSecond), String(errors), String(desyncs), String(mispredictions),
                String(predictions), String(matchesCompleted), String(checksFailed),
            ]
            for distribution in [rtt, snapshotAge, tickLateness] {
                cells += distribution?.csvCells ?? ["0", "", "", "", ""]
            }
            return cells.joined(separator: ",")
        }
    }
}
