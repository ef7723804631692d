import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench codec`: encode + decode cost and heap allocations per packet for the fixed-size messages.
package enum CodecBenchmark {
    package struct Configuration: Sendable {
        /// Encode + decode round trips per message type.
        package var iterations = 2_000_000

        package init(iterations: Int = 2_000_000) {
            self.iterations = iterations
        }
    }

    /// One message type's figures.
    package struct Row: Sendable, Equatable {
        package var message: String
        package var bytes: Int
        package var measurement: Measurement

        package init(message: String, bytes: Int, measurement: Measurement) {
            self.message = message
            self.bytes = bytes
            self.measurement = measurement
        }

        package var line: String {
            pad(message, 15) + pad("\(bytes)", 7, left: true)
                + pad(fixed(measurement.nanosecondsPerIteration), 15, left: true)
                + pad(fixed(measurement.cpuNanosecondsPerIteration), 9, left: true)
                + pad(fixed(measurement.allocationsPerIteration, 3), 15, left: true)
        }
    }

    package struct Result: Sendable {
        package var iterations: Int
        package var rows: [Row]

        package init(iterations: Int, rows: [Row]) {
            self.iterations = iterations
            self.rows = rows
        }

        /// The budget: no fixed-size message allocates on the hot path.
        package var passed: Bool { rows.allSatisfy { $0.measurement.allocations == 0 } }

        /// The table, then the verdict when it failed.
        package var lines: [String] {
            var lines = [
                "codec: encode + decode round trips, \(iterations) per message",
                pad("message", 15) + pad("bytes", 7, left: true) + pad("ns/round trip", 15, left: true)
                    + pad("cpu ns", 9, left: true) + pad("allocs/packet", 15, left: true),
            ]
            lines += rows.map(\.line)
            if !passed { lines.append("FAIL: a fixed-size message allocated on the hot path") }
            return lines
        }
    }

    /// The messages timed, each a typical instance.
    package static let samples: [(String, Packet)] = [
        ("PaddleState", Packet(number: 7, .paddleState(.init(inputStep: 9, x: 160, y: 400, vx: 1.5, vy: -2)))),
        ("TableSnapshot", Packet(number: 7, .tableSnapshot(sampleSnapshot))),
        ("Ping", Packet(number: 7, .ping(.init(player: 3, count: 11, sendTime: 12.5)))),
        ("Pong", Packet(number: 7, .pong(.init(player: 3, count: 11, sendTime: 12.5)))),
        ("Ack", Packet(.ack(.init(cumulative: 41, bitfield: 0b1011)))),
    ]

    package static func run(_ configuration: Configuration, environment: BenchEnvironment) throws -> Result {
        try Measurement.checkAllocationCounter(environment)
        var rows: [Row] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: WireLimits.maxDatagram, alignment: 8)
        defer { buffer.deallocate() }
        for (name, packet) in samples {
            var checksum: UInt32 = 0
            var size = 0
            var failure: (any Error)?
            var sample = packet
            let measurement = Measurement.run(iterations: configuration.iterations, environment: environment) { i in
                if sample.message.type.delivery != .handshake { sample.number = UInt32(truncatingIfNeeded: i) }
                do {
                    size = try sample.encode(into: buffer)
                    let decoded = try Packet.decode(UnsafeRawBufferPointer(rebasing: buffer[..<size]))
                    checksum &+= decoded.number
                } catch {
                    failure = error
                }
            }
            if let failure { throw BenchError("\(name) failed to round-trip: \(failure)") }
            blackHole(checksum)
            rows.append(Row(message: name, bytes: size, measurement: measurement))
        }
        return Result(iterations: configuration.iterations, rows: rows)
    }

    private static var sampleSnapshot: TableSnapshot {
        TableSnapshot(
            tick: 1_000, lastInputStep: 998,
            me: .init(x: 160, y: 400, vx: 0, vy: 0), them: .init(x: 160, y: 80, vx: 1, vy: 1),
            puck: .init(x: 150, y: 240, vx: 3, vy: -4, angle: 0.5, spin: 0.01),
            myScore: 3, theirScore: 2, phase: .playing, stateHash: 0xDEAD_BEEF)
    }
}
