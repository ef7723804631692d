import NIOCore
import SkirmishNet
import SkirmishServer
import SkirmishWire

/// The server's own work per packet with the sockets taken away: `ServerCore` fed the datagrams of thousands of
/// clients and ticked on a simulated 60 Hz clock, with its outbox encoded as `ServerLoop` would.
///
/// The clients are ``SnapConnection``s, the SNAP plug-in the swarm runs: their datagrams go to the core as from their
/// own addresses, and every datagram the core sends goes to its client's connection, so the handshake, the acks and
/// the session trailers are the protocol's own. Only the core is timed: before each round of inputs the clients take
/// what the core sent since the last one and make the round's inputs, all before the clock starts.
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
        /// Reliable packets the core sent again (a number it had sent that client before): 0 when every client
        /// acknowledged in time, as the clients' connections do.
        package var resends: Int

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
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: WireLimits.maxDatagram, alignment: 8)
        defer { buffer.deallocate() }
        var world = World(configuration: configuration, clients: 2 * matches, buffer: buffer)

        // The handshakes, one client at a time as before: Hello, the Challenge's cookie, Hello again, the Welcome
        // and its ack, all the connections' and the core's own doing.
        for index in 0..<world.clients.count {
            world.clients[index].start(now: world.instant, into: &world.actions)
            world.settle(index)
            world.exchange()
        }
        guard world.welcomed == world.clients.count else {
            throw Failure(description: "\(world.welcomed) of \(world.clients.count) clients were seated")
        }

        // Steady play: each client sends its inputs spread over the tick, then the server ticks and its outbox is
        // encoded. Inputs and ticks are timed apart; the tick includes the encoding of everything it queued.
        let period = Int64(1_000_000_000 / 60)
        let inputsPerTick = Double(inputRate) / 60
        var owed = 0.0
        var steps = [UInt32](repeating: 0, count: world.clients.count)
        // The client of each packet in `world.actions` while a round's inputs wait there.
        var senders: [Int] = []
        senders.reserveCapacity(world.clients.count)
        var inputTime: Int64 = 0
        var inputCount = 0
        var inputAllocations: UInt64 = 0
        var tickTime: Int64 = 0
        var tickAllocations: UInt64 = 0
        var packetsOut = 0
        // What the core sent since the clients last took anything.
        var pending: [Outgoing] = []
        for tick in 0..<(ticks + 60) {
            let measured = tick >= 60 // the first second warms up
            owed += inputsPerTick
            let rounds = Int(owed)
            owed -= Double(rounds)
            var inputElapsed: Int64 = 0
            var inputAllocated: UInt64 = 0
            var inputs = 0
            for _ in 0..<rounds {
                // Not timed, and all of the clients' work in one place: they take what the core sent since the last
                // round (answering it), run their timers and make this round's inputs. Between two ticks with no
                // round the core's caches then stay as warm as its own work left them.
                world.deliver(pending)
                pending.removeAll(keepingCapacity: true)
                world.tickClients()
                world.exchange()
                senders.removeAll(keepingCapacity: true)
                for index in world.clients.indices {
                    steps[index] &+= 1
                    let x = Float(100 + (steps[index] * 7 + UInt32(index)) % 120)
                    let input = PaddleState(inputStep: steps[index], x: x, y: 400, vx: 0, vy: 0)
                    let before = world.actions.packetCount
                    world.clients[index].send(.paddleState(input), now: world.instant, into: &world.actions)
                    for _ in before..<world.actions.packetCount { senders.append(index) }
                }
                let allocationsBefore = environment.threadAllocations()
                let inputStart = BenchSystem.threadCPUNanoseconds()
                world.deliverInputs(from: senders)
                inputElapsed += BenchSystem.threadCPUNanoseconds() - inputStart
                inputAllocated += environment.threadAllocations() - allocationsBefore
                inputs += senders.count
                world.actions.removeAll()
            }
            world.now = world.now + .nanoseconds(period)
            let allocationsBefore = environment.threadAllocations()
            let tickStart = BenchSystem.threadCPUNanoseconds()
            world.core.tick(now: world.now)
            var out = world.core.outbox
            world.core.outbox = []
            for outgoing in out {
                _ = outgoing.encode(into: buffer)
            }
            let sent = out.count
            let tickElapsed = BenchSystem.threadCPUNanoseconds() - tickStart
            let allocationsAfter = environment.threadAllocations()
            pending.append(contentsOf: out)
            out.removeAll(keepingCapacity: true)
            world.core.outbox = out
            guard measured else { continue }
            inputTime += inputElapsed
            tickTime += tickElapsed
            inputCount += inputs
            inputAllocations += inputAllocated
            tickAllocations += allocationsAfter - allocationsBefore
            packetsOut += sent
        }
        return Result(
            inputNanoseconds: Double(inputTime) / Double(max(inputCount, 1)),
            inputAllocations: Double(inputAllocations) / Double(max(inputCount, 1)),
            tickNanosecondsPerMatch: Double(tickTime) / Double(ticks * matches),
            tickAllocationsPerMatch: Double(tickAllocations) / Double(ticks * matches),
            packetsOutPerTick: Double(packetsOut) / Double(ticks), welcomed: world.welcomed, resends: world.resends)
    }

    /// The core and its clients, with the plumbing between them.
    private struct World {
        var core: ServerCore
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
        var clients: [SnapConnection]
        /// Client i's address (127.0.0.1, port 10,000 + i), and back.
        let addresses: [ConnectionID]
        let indices: [ConnectionID: Int]
        /// What the last call into a client's connection produced; emptied after each.
        var actions = ClientActions<SnapConnection>(capacity: 64 * 1_024)
        /// Room for one datagram, as the server's loop encodes it (the caller's, freed by it).
        let buffer: UnsafeMutableRawBufferPointer
        var welcomed = 0
        /// The newest reliable number the core sent each client, to tell a resend.
        var newestReliable: [UInt32]
        var resends = 0

        init(configuration: ServerConfiguration, clients count: Int, buffer: UnsafeMutableRawBufferPointer) {
            core = ServerCore(configuration: configuration)
            addresses = (0..<count).map {
                ConnectionID.datagram(DatagramAddress(ipv4: 0x7F00_0001, port: UInt16(10_000 + $0)))
            }
            indices = Dictionary(uniqueKeysWithValues: addresses.enumerated().map { ($1, $0) })
            var connection = SnapConnection.Configuration(game: .puck, seats: 2)
            // Nothing here measures round trips: no Pings of the clients' own.
            connection.pingInterval = nil
            clients = (0..<count).map {
                SnapConnection(
                    configuration: connection,
                    setup: ConnectionSetup(transport: .udp, player: $0, name: "core\($0)", seed: UInt64($0)))
            }
            newestReliable = [UInt32](repeating: 0, count: count)
            self.buffer = buffer
        }

        var instant: Instant { Instant(now) }

        /// The round's inputs in ``actions``, packet i from client `senders[i]`, to the core: the timed part.
        mutating func deliverInputs(from senders: [Int]) {
            for packet in senders.indices {
                let address = addresses[senders[packet]]
                actions.withPacket(packet) { core.receive($0, from: address, now: now) }
            }
        }

        /// Hands what the last call into client `index`'s connection produced to the core, and notes a seat.
        mutating func settle(_ index: Int) {
            for packet in 0..<actions.packetCount {
                actions.withPacket(packet) { core.receive($0, from: addresses[index], now: now) }
            }
            while let event = actions.nextEvent() {
                if case .established = event { welcomed += 1 }
            }
            actions.removeAll()
        }

        /// Each of `outgoing` encoded as the server's loop does and taken in by its client's connection.
        mutating func deliver(_ outgoing: [Outgoing]) {
            for item in outgoing {
                guard let index = indices[item.connection] else { continue }
                let packet = item.packet
                if packet.message.type.delivery == .reliable {
                    if packet.number != 0, !SerialNumber.follows(packet.number, newestReliable[index]) {
                        resends += 1
                    } else {
                        newestReliable[index] = packet.number
                    }
                }
                let size = item.encode(into: buffer)
                guard size > 0 else { continue }
                clients[index].receive(UnsafeRawBufferPointer(rebasing: buffer[..<size]), now: instant, into: &actions)
                settle(index)
            }
        }

        /// Runs the clients' timers that are due.
        mutating func tickClients() {
            // Read in place: through the getter, each connection would be copied first.
            func deadline(of connection: inout SnapConnection) -> Instant { connection.nextDeadline }
            for index in clients.indices where deadline(of: &clients[index]) <= instant {
                clients[index].tick(now: instant, into: &actions)
                settle(index)
            }
        }

        /// Passes packets between the core and the clients until the core has nothing more to send.
        mutating func exchange() {
            while !core.outbox.isEmpty {
                let outgoing = core.outbox
                // Its storage stays the core's: the next tick then allocates nothing to queue its packets.
                core.outbox.removeAll(keepingCapacity: true)
                deliver(outgoing)
            }
        }
    }
}
