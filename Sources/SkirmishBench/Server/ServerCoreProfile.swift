import NIOCore
import SkirmishNet
import SkirmishServer
import SkirmishWire

/// The server's own work per packet with the sockets taken away: `ServerCore` fed encoded datagrams from thousands
/// of addresses and ticked on a simulated 60 Hz clock, with its outbox encoded as `ServerLoop` would.
///
/// Timed in CPU time of this thread (CLOCK_THREAD_CPUTIME_ID), so other processes taking the core do not count:
/// repeatable where the socket search is at the mercy of the scheduler, so it is the figure to compare before and
/// after a change to the server's hot path.
package struct ServerCoreProfile: Sendable {
    package var matches: Int
    package var ticks: Int
    package var inputRate: Int

    package init(matches: Int, ticks: Int, inputRate: Int) {
        self.matches = matches
        self.ticks = ticks
        self.inputRate = inputRate
    }

    package struct Result: Sendable, Equatable {
        package var inputNanoseconds: Double
        package var inputAllocations: Double
        package var tickNanosecondsPerMatch: Double
        package var tickAllocationsPerMatch: Double
        package var packetsOutPerTick: Double
        package var welcomed: Int

        /// Matches one core would run at 60 Hz on this cost alone: each match takes two clients' inputs at
        /// `inputRate` and one tick per 1/60 s.
        package func matchesPerCore(inputRate: Int) -> Double {
            1e9 / (60 * (2 * inputNanoseconds * Double(inputRate) / 60 + tickNanosecondsPerMatch))
        }
    }

    private struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    package func run(environment: BenchEnvironment) throws -> Result {
        var configuration = ServerConfiguration()
        configuration.maxSessions = 2 * matches + 64
        configuration.maxMatches = matches + 32
        configuration.maxForming = matches + 32
        configuration.packetRate = 1_000_000
        var core = ServerCore(configuration: configuration)
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
        let clients = 2 * matches
        let addresses = (0..<clients).map {
            ConnectionID.datagram(DatagramAddress(ipv4: 0x7F00_0001, port: UInt16(10_000 + $0)))
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: WireLimits.maxDatagram, alignment: 8)
        defer { buffer.deallocate() }
        // Each client's session key from its Welcome: after the handshake every datagram carries its trailer.
        var keys = [SessionKey?](repeating: nil, count: clients)
        func deliver(_ packet: Packet, from connection: ConnectionID, key: SessionKey? = nil) {
            guard var size = try? packet.encode(into: buffer) else { return }
            if let key { size = key.seal(buffer, length: size, from: .client) ?? size }
            core.receive(UnsafeRawBufferPointer(rebasing: buffer[..<size]), from: connection, now: now)
        }
        // The handshake, as a client does it: Hello, the Challenge's cookie, Hello again, then acknowledge Welcome.
        var welcomed = 0
        for (index, address) in addresses.enumerated() {
            var hello = Hello(
                version: Hello.currentVersion, game: .puck, seats: 2, match: 0, cookie: .zero, resumeToken: 0,
                name: "core\(index)")
            deliver(Packet(.hello(hello)), from: address)
            guard case .challenge(let challenge)? = core.outbox.last?.packet.message else {
                throw Failure(description: "no Challenge for client \(index)")
            }
            core.outbox.removeAll()
            hello.cookie = challenge.cookie
            deliver(Packet(.hello(hello)), from: address)
            for outgoing in core.outbox where outgoing.connection == address {
                if case .welcome(let welcome) = outgoing.packet.message {
                    welcomed += 1
                    keys[index] = welcome.sessionKey
                    deliver(
                        Packet(.ack(Ack(cumulative: outgoing.packet.number, bitfield: 0))), from: address,
                        key: welcome.sessionKey)
                }
            }
            core.outbox.removeAll()
        }

        // Steady play: each client sends its inputs spread over the tick, then the server ticks and its outbox is
        // encoded. Inputs and ticks are timed apart; the tick includes the encoding of everything it queued.
        let period = Int64(1_000_000_000 / 60)
        let inputsPerTick = Double(inputRate) / 60
        var owed = 0.0
        var steps = [UInt32](repeating: 0, count: clients)
        var numbers = [UInt32](repeating: 0, count: clients)
        var inputTime: Int64 = 0
        var inputCount = 0
        var inputAllocations: UInt64 = 0
        var tickTime: Int64 = 0
        var tickAllocations: UInt64 = 0
        var packetsOut = 0
        for tick in 0..<(ticks + 60) {
            let measured = tick >= 60 // the first second warms up
            owed += inputsPerTick
            let rounds = Int(owed)
            owed -= Double(rounds)
            let allocationsBefore = environment.threadAllocations()
            let inputStart = BenchSystem.threadCPUNanoseconds()
            for _ in 0..<rounds {
                for (index, address) in addresses.enumerated() {
                    steps[index] &+= 1
                    numbers[index] &+= 1
                    let x = Float(100 + (steps[index] * 7 + UInt32(index)) % 120)
                    let input = PaddleState(inputStep: steps[index], x: x, y: 400, vx: 0, vy: 0)
                    deliver(Packet(number: numbers[index], .paddleState(input)), from: address, key: keys[index])
                }
            }
            let inputElapsed = BenchSystem.threadCPUNanoseconds() - inputStart
            let allocationsMiddle = environment.threadAllocations()
            now = now + .nanoseconds(period)
            let tickStart = BenchSystem.threadCPUNanoseconds()
            core.tick(now: now)
            var out = core.outbox
            core.outbox = []
            for outgoing in out {
                _ = outgoing.encode(into: buffer)
            }
            let sent = out.count
            out.removeAll(keepingCapacity: true)
            core.outbox = out
            let tickElapsed = BenchSystem.threadCPUNanoseconds() - tickStart
            let allocationsAfter = environment.threadAllocations()
            guard measured else { continue }
            inputTime += inputElapsed
            tickTime += tickElapsed
            inputCount += rounds * clients
            inputAllocations += allocationsMiddle - allocationsBefore
            tickAllocations += allocationsAfter - allocationsMiddle
            packetsOut += sent
        }
        return Result(
            inputNanoseconds: Double(inputTime) / Double(max(inputCount, 1)),
            inputAllocations: Double(inputAllocations) / Double(max(inputCount, 1)),
            tickNanosecondsPerMatch: Double(tickTime) / Double(ticks * matches),
            tickAllocationsPerMatch: Double(tickAllocations) / Double(ticks * matches),
            packetsOutPerTick: Double(packetsOut) / Double(ticks), welcomed: welcomed)
    }
}
