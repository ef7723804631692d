import ArgumentParser
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench codec`: encode + decode cost and heap allocations per packet for the fixed-size messages.
struct CodecBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "Time encode + decode of the fixed-size messages and count heap allocations per packet.",
        discussion: """
            Budget (DESIGN §9): encode + decode of a PaddleState well under 1 µs with no heap allocation. \
            Exits 1 when a fixed-size message allocates on the hot path.
            """
    )

    @Option(help: "Encode + decode round trips per message type.")
    var iterations = 2_000_000

    func validate() throws {
        guard iterations > 0 else { throw ValidationError("--iterations must be positive, got \(iterations)") }
    }

    func run() throws {
        let samples: [(String, Packet)] = [
            ("PaddleState", Packet(number: 7, .paddleState(.init(inputStep: 9, x: 160, y: 400, vx: 1.5, vy: -2)))),
            ("TableSnapshot", Packet(number: 7, .tableSnapshot(sampleSnapshot))),
            ("Ping", Packet(number: 7, .ping(.init(player: 3, count: 11, sendTime: 12.5)))),
            ("Pong", Packet(number: 7, .pong(.init(player: 3, count: 11, sendTime: 12.5)))),
            ("Ack", Packet(.ack(.init(cumulative: 41, bitfield: 0b1011)))),
        ]
        try Measurement.checkAllocationCounter()
        print("codec: encode + decode round trips, \(iterations) per message")
        print(
            pad("message", 15) + pad("bytes", 7, left: true) + pad("ns/round trip", 15, left: true)
                + pad("cpu ns", 9, left: true) + pad("allocs/packet", 15, left: true))
        var allocationFree = true
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: WireLimits.maxDatagram, alignment: 8)
        defer { buffer.deallocate() }
        for (name, packet) in samples {
            var checksum: UInt32 = 0
            var size = 0
            var failure: (any Error)?
            var sample = packet
            let measurement = Measurement.run(iterations: iterations) { i in
                if sample.message.type.delivery != .handshake { sample.number = UInt32(truncatingIfNeeded: i) }
                do {
                    size = try sample.encode(into: buffer)
                    let decoded = try Packet.decode(UnsafeRawBufferPointer(rebasing: buffer[..<size]))
                    checksum &+= decoded.number
                } catch {
                    failure = error
                }
            }
            if let failure { throw ValidationError("\(name) failed to round-trip: \(failure)") }
            allocationFree = allocationFree && measurement.allocations == 0
            print(
                pad(name, 15) + pad("\(size)", 7, left: true)
                    + pad(fixed(measurement.nanosecondsPerIteration), 15, left: true)
                    + pad(fixed(measurement.cpuNanosecondsPerIteration), 9, left: true)
                    + pad(fixed(measurement.allocationsPerIteration, 3), 15, left: true)
                    + (checksum == 0xFFFF_FFFF ? " " : ""))
        }
        if !allocationFree {
            print("FAIL: a fixed-size message allocated on the hot path")
            throw ExitCode(1)
        }
    }

    private var sampleSnapshot: TableSnapshot {
        TableSnapshot(
            tick: 1_000, lastInputStep: 998,
            me: .init(x: 160, y: 400, vx: 0, vy: 0), them: .init(x: 160, y: 80, vx: 1, vy: 1),
            puck: .init(x: 150, y: 240, vx: 3, vy: -4, angle: 0.5, spin: 0.01),
            myScore: 3, theirScore: 2, phase: .playing, stateHash: 0xDEAD_BEEF)
    }
}
