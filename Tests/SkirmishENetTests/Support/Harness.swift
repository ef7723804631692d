import SkirmishNet
import SkirmishWire

@testable import SkirmishENet

/// Drives one ``ENetConnection`` by hand: every call takes the harness's clock, and what comes out (datagrams,
/// messages, the close, metrics) is collected for the test to read.
struct Harness<Codec: ENetMessageCodec> {
    typealias Connection = ENetConnection<Codec>

    var connection: Connection
    var now: Instant
    private var actions = ClientActions<Connection>()
    /// Every message delivered so far.
    var messages: [Codec.Message] = []
    /// Every metric event so far.
    var metrics: [ClientMetric] = []
    var established: ENetSession?
    var closed: CloseReason?

    init(_ configuration: Connection.Configuration, seed: UInt64 = 7, now: Instant = Instant(seconds: 100)) {
        connection = Connection(
            configuration: configuration, setup: ConnectionSetup(transport: .udp, player: 1, name: "bot-1", seed: seed))
        self.now = now
    }

    /// The packets of one call, after collecting its events.
    private mutating func collect() -> [[UInt8]] {
        let packets = actions.packets
        while let event = actions.nextEvent() {
            switch event {
            case .established(let session): established = session
            case .resumed: break
            case .message(let message): messages.append(message)
            case .closed(let reason): closed = reason
            }
        }
        while let metric = actions.nextMetric() { metrics.append(metric) }
        actions.removeAll()
        return packets
    }

    mutating func start() -> [[UInt8]] {
        connection.start(now: now, into: &actions)
        return collect()
    }

    mutating func receive(_ datagram: [UInt8]) -> [[UInt8]] {
        datagram.withUnsafeBytes { connection.receive($0, now: now, into: &actions) }
        return collect()
    }

    mutating func send(_ message: Codec.Message) -> [[UInt8]] {
        connection.send(message, now: now, into: &actions)
        return collect()
    }

    mutating func tick() -> [[UInt8]] {
        connection.tick(now: now, into: &actions)
        return collect()
    }

    mutating func close() -> [[UInt8]] {
        connection.close(now: now, into: &actions)
        return collect()
    }

    mutating func disconnect(data: UInt32) -> [[UInt8]] {
        connection.disconnect(data: data, now: now, into: &actions)
        return collect()
    }

    mutating func disconnectLater(data: UInt32) -> [[UInt8]] {
        connection.disconnectLater(data: data, now: now, into: &actions)
        return collect()
    }

    /// Moves the clock on by `duration`.
    mutating func advance(_ duration: Duration) { now += duration }

    /// Errors counted so far, by kind.
    var errors: [String: Int] {
        metrics.reduce(into: [:]) { counts, metric in
            if case .error(let kind) = metric { counts[kind, default: 0] += 1 }
        }
    }

    /// Count of one protocol event.
    func events(_ event: MetricCatalog.Event) -> Int {
        metrics.reduce(0) { total, metric in
            if case .event(let index, let count) = metric, index == event.rawValue { total + count } else { total }
        }
    }

    /// Packets sent (or received) by kind name, and their bytes.
    func counts(sent: Bool) -> [String: (packets: Int, bytes: Int)] {
        let kinds = Connection.description.packetKinds
        var result: [String: (packets: Int, bytes: Int)] = [:]
        for metric in metrics {
            switch metric {
            case .sent(let kind, let bytes) where sent, .received(let kind, let bytes) where !sent:
                let old = result[kinds[kind].name] ?? (0, 0)
                result[kinds[kind].name] = (old.packets + 1, old.bytes + bytes)
            default: continue
            }
        }
        return result
    }
}

/// The connect id a connection draws from `seed`, as ``ENetConnection`` draws it.
func connectID(seed: UInt64) -> UInt32 {
    var random = SeededRandom(seed: seed)
    return UInt32(truncatingIfNeeded: random.next())
}
