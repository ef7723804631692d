import SkirmishWire

@testable import SkirmishENet

/// One direction of a simulated network: each datagram is lost, duplicated or delayed by a seeded draw, so reordering
/// comes from unequal delays. The same seed replays the same run.
struct LossyLink {
    var random: SeededRandom
    var loss = 0.0
    var duplication = 0.0
    var delay = Duration.milliseconds(10)
    var jitter = Duration.milliseconds(0)
    private var inFlight: [(at: Instant, bytes: [UInt8])] = []
    private(set) var sent = 0
    private(set) var dropped = 0

    init(seed: UInt64, loss: Double = 0, duplication: Double = 0, jitter: Duration = .zero) {
        random = SeededRandom(seed: seed)
        self.loss = loss
        self.duplication = duplication
        self.jitter = jitter
    }

    private mutating func draw() -> Double { Double(random.next() >> 11) / Double(1 << 53) }

    mutating func send(_ datagrams: [[UInt8]], now: Instant) {
        for datagram in datagrams {
            sent += 1
            if draw() < loss {
                dropped += 1
                continue
            }
            let copies = draw() < duplication ? 2 : 1
            for _ in 0..<copies {
                inFlight.append((now + delay + jitter * draw(), datagram))
            }
        }
    }

    /// Datagrams whose time has come, in arrival order.
    mutating func arrivals(now: Instant) -> [[UInt8]] {
        let due = inFlight.filter { $0.at <= now }.sorted { $0.at < $1.at }.map(\.bytes)
        inFlight.removeAll { $0.at <= now }
        return due
    }

    var isEmpty: Bool { inFlight.isEmpty }
}

/// A client harness and a ``ServerModel`` joined by two lossy links, stepped on a simulated clock.
struct Simulation<Codec: ENetMessageCodec> {
    var client: Harness<Codec>
    var server = ServerModel()
    var up: LossyLink
    var down: LossyLink

    init(client: Harness<Codec>, seed: UInt64, loss: Double = 0, duplication: Double = 0, jitter: Duration = .zero) {
        self.client = client
        up = LossyLink(seed: seed, loss: loss, duplication: duplication, jitter: jitter)
        down = LossyLink(seed: seed &+ 1, loss: loss, duplication: duplication, jitter: jitter)
    }

    mutating func start() {
        up.send(client.start(), now: client.now)
    }

    /// Client sends, through the link.
    mutating func send(_ message: Codec.Message) {
        up.send(client.send(message), now: client.now)
    }

    /// Advances the clock by `step`, moving datagrams both ways and ticking both ends when due.
    mutating func step(_ step: Duration = .milliseconds(5)) {
        client.advance(step)
        let now = client.now
        for datagram in up.arrivals(now: now) { server.receive(datagram, now: now) }
        for datagram in down.arrivals(now: now) { up.send(client.receive(datagram), now: now) }
        if client.connection.nextDeadline <= now { up.send(client.tick(), now: now) }
        down.send(server.flush(now: now), now: now)
    }

    /// Steps until `condition` holds or `limit` of simulated time passes; returns whether it held.
    mutating func run(for limit: Duration, until condition: (Self) -> Bool) -> Bool {
        let end = client.now + limit
        while client.now < end {
            if condition(self) { return true }
            step()
        }
        return condition(self)
    }
}
