import Foundation

/// `skirmish serve` as a benchmark's opponent, with its addresses.
package struct BenchServer {
    package let process: BenchProcess
    package let udpPort: Int
    package let httpPort: Int

    package static func start(core: Int, realtime: Bool, folder: URL) throws -> BenchServer {
        let process = try BenchProcess(
            name: "skirmish serve",
            arguments: [
                "serve", "--udp", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0",
                "--max-sessions", "40000", "--max-matches", "20000", "--no-host-limits",
            ], core: core, realtime: realtime, captureOutput: true, log: folder.appendingPathComponent("serve.log"))
        let udp = try process.readLine(prefix: "listening udp://", timeout: .seconds(30))
        _ = try process.readLine(prefix: "listening tcp://", timeout: .seconds(5))
        let http = try process.readLine(prefix: "listening http://", timeout: .seconds(5))
        func port(_ line: String) throws -> Int {
            guard let text = line.split(separator: ":").last, let port = Int(text) else {
                throw BenchError("cannot read a port from `\(line)`")
            }
            return port
        }
        return BenchServer(process: process, udpPort: try port(udp), httpPort: try port(http))
    }

    package func metrics() throws -> PrometheusText { try PrometheusText.fetch(port: httpPort) }
}
