import Foundation
import SkirmishTestSupport

@testable import SkirmishTelemetry

#if canImport(Glibc)
    import Glibc
#endif

/// A real collector from a Debian package, started on a free loopback port for one test and stopped after it.
///
/// A missing binary is an error that says `make test` installs it: these tests never skip silently.
final class Collector {
    /// The collectors the tests run, with how to start each and how to tell it is ready.
    enum Kind: String {
        case pushgateway = "prometheus-pushgateway"
        case prometheus
        case victoriaMetrics = "victoria-metrics"
        case influxdb = "influxd"
        case promtool
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let kind: Kind
    let port: Int
    let directory: URL
    private let process: ChildProcess

    var base: String { "http://127.0.0.1:\(port)" }

    /// Starts a collector; `port` defaults to a free one, `scrapeTarget` configures Prometheus, which scrapes it
    /// every `scrapeSeconds` (also its scrape timeout: give a loaded target more than the default second).
    ///
    /// A free port is only free until someone takes it: on a busy machine another process can bind it between
    /// `freePort()` and the collector's own bind. A collector that exits saying so is started again on a fresh port
    /// (three tries); a port the caller chose is never changed.
    init(_ kind: Kind, port: Int? = nil, scrapeTarget: Int? = nil, scrapeSeconds: Int = 1) async throws {
        self.kind = kind
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-\(kind)-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var attempt = 1
        while true {
            let chosen = try port ?? Collector.freePort()
            let started = try Collector.launch(
                kind, port: chosen, directory: directory, scrape: scrapeTarget, every: scrapeSeconds)
            do {
                try await Collector.waitUntilReady(kind, process: started, port: chosen, directory: directory)
                self.port = chosen
                process = started
                return
            } catch {
                let lost = Collector.log(in: directory).contains("address already in use")
                Collector.stop(started)
                guard port == nil, lost, attempt < 3 else {
                    try? FileManager.default.removeItem(at: directory)
                    throw error
                }
                attempt += 1
            }
        }
    }

    /// Starts the collector's process on `port`, its output going to `log.txt` in `directory` (truncated first).
    private static func launch(
        _ kind: Kind, port: Int, directory: URL, scrape: Int?, every seconds: Int
    ) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: try binary(kind))
        process.arguments = try arguments(kind, port: port, directory: directory, scrape: scrape, every: seconds)
        let log = directory.appendingPathComponent("log.txt")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    deinit {
        stop()
    }

    /// Stops the process (TERM, then KILL after 5 s) and removes its data directory.
    func stop() {
        Collector.stop(process)
        try? FileManager.default.removeItem(at: directory)
    }

    private static func stop(_ process: ChildProcess) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.send(SIGKILL) }
        process.waitUntilExit()
    }

    /// The collector's own log, for failure messages.
    var log: String { Collector.log(in: directory) }

    private static func log(in directory: URL) -> String {
        (try? String(contentsOf: directory.appendingPathComponent("log.txt"), encoding: .utf8)) ?? ""
    }

    /// `GET base + path`; the body as text, or `nil` when nothing answered.
    func get(_ path: String) -> (status: Int, body: String)? {
        HTTPClient().get(base + path).map { ($0.status, String(decoding: $0.body, as: UTF8.self)) }
    }

    /// `POST base + path` with a body; the status and answer, or `nil` when nothing answered.
    func post(_ path: String, body: String = "") -> HTTPClient.Outcome {
        HTTPClient().send(
            method: "POST", url: base + path, body: Array(body.utf8),
            contentType: "application/x-www-form-urlencoded", auth: .none, timeout: .seconds(10))
    }

    /// Polls `probe` every 50 ms until it returns a value or `timeout` passes (collectors apply data
    /// asynchronously, so reading back is polling with a deadline).
    ///
    /// It sleeps with `Task.sleep`, never `usleep`: a test waiting here gives its cooperative thread back. Blocking
    /// waits of up to a minute held both threads of a 2-core machine's pool, and every other test in the process
    /// stalled (a swarm's 8 s plan ran out before its first bot started).
    static func poll<T>(timeout: TimeInterval = 20, _ probe: () throws -> T?) async rethrows -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let value = try probe() { return value }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try probe()
    }

    private static func waitUntilReady(_ kind: Kind, process: ChildProcess, port: Int, directory: URL) async throws {
        let path: String
        switch kind {
        case .pushgateway, .prometheus: path = "/-/ready"
        case .victoriaMetrics: path = "/health"
        case .influxdb: path = "/ping"
        case .promtool: return
        }
        let ready = await poll(timeout: 30) { () -> Bool? in
            guard process.isRunning else { return false }
            guard let answer = HTTPClient().get("http://127.0.0.1:\(port)\(path)"), (200..<300).contains(answer.status)
            else { return nil }
            return true
        }
        guard ready == true else {
            throw Failure(description: "\(kind.rawValue) did not become ready on port \(port):\n\(log(in: directory))")
        }
    }

    /// The absolute path of a tool, or an error telling how to get it.
    static func binary(_ kind: Kind) throws -> String {
        for directory in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] {
            let path = directory + "/" + kind.rawValue
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw Failure(
            description: "\(kind.rawValue) is not installed: run `make test`, which installs it (Makefile test-deps)")
    }

    /// A port nobody listens on right now: bind 127.0.0.1:0, read the port, close.
    /// A loopback port nothing listens on, below the kernel's ephemeral range: a port the kernel hands out to
    /// `bind(0)` and outgoing connections was taken by another test's socket between this check and the collector's
    /// start (a test that starts its collector late, on purpose, lost its port that way in a full `make test`).
    static func freePort() throws -> Int {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        if let low = range?.first, low > 3_000 {
            for _ in 0..<64 {
                let port = Int.random(in: max(1_024, low - 12_000)..<low)
                if bindable(port) { return port }
            }
        }
        return try ephemeralPort()
    }

    /// Whether `port` on 127.0.0.1 can be bound now.
    private static func bindable(_ port: Int) -> Bool {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { return false }
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A port the kernel chooses (in its ephemeral range), when none below it is free.
    private static func ephemeralPort() throws -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(socketFD, pointer, length) == 0 && getsockname(socketFD, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "could not bind 127.0.0.1:0") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func arguments(
        _ kind: Kind, port: Int, directory: URL, scrape: Int?, every seconds: Int
    ) throws -> [String] {
        let listen = "127.0.0.1:\(port)"
        switch kind {
        case .pushgateway:
            // Debian's default persists every group to /var/lib/prometheus/pushgateway.data, so one test run would
            // see the groups of the last: each instance keeps its own file in its own temporary directory.
            return [
                "--web.listen-address=\(listen)",
                "--persistence.file=\(directory.appendingPathComponent("pushgateway.data").path)",
            ]
        case .prometheus:
            let config = directory.appendingPathComponent("prometheus.yml")
            let target = scrape.map { "['127.0.0.1:\($0)']" } ?? "[]"
            try """
            global: {scrape_interval: \(seconds)s, scrape_timeout: \(seconds)s, evaluation_interval: 1s}
            scrape_configs:
              - {job_name: pushgateway, honor_labels: true, static_configs: [{targets: \(target)}]}

            """.write(to: config, atomically: true, encoding: .utf8)
            return [
                "--config.file=\(config.path)", "--storage.tsdb.path=\(directory.appendingPathComponent("data").path)",
                "--web.listen-address=\(listen)",
            ]
        case .victoriaMetrics:
            return [
                "-httpListenAddr=\(listen)", "-storageDataPath=\(directory.appendingPathComponent("data").path)",
                "-retentionPeriod=100y", "-search.disableCache", "-search.latencyOffset=0s",
            ]
        case .influxdb:
            let config = directory.appendingPathComponent("influxdb.conf")
            let rpc = try freePort()
            try """
            reporting-disabled = true
            bind-address = "127.0.0.1:\(rpc)"
            [meta]
              dir = "\(directory.appendingPathComponent("meta").path)"
            [data]
              dir = "\(directory.appendingPathComponent("data").path)"
              wal-dir = "\(directory.appendingPathComponent("wal").path)"
            [http]
              bind-address = "\(listen)"
              log-enabled = false

            """.write(to: config, atomically: true, encoding: .utf8)
            return ["run", "-config", config.path]
        case .promtool:
            return []
        }
    }
}
