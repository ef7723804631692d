import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishENet

/// What the metrics add up to, and the connection's life around a suspended socket.
@Suite struct MetricsTests {
    /// With nothing resent, the bytes counted as sent are exactly the bytes of the datagrams written (each datagram's
    /// header counted once, with its first packet), and the bytes counted as received exactly those taken in.
    @Test func bytesAddUpToTheWire() throws {
        var model = ServerModel()
        var harness = Harness(ENetConnection<ENetRawCodec>.Configuration())
        var written = 0
        var read = 0
        // Datagrams go back and forth until both ends are quiet.
        func exchange(_ datagrams: [[UInt8]], _ harness: inout Harness<ENetRawCodec>) {
            var up = datagrams
            for _ in 0..<10 {
                written += up.reduce(0) { $0 + $1.count }
                for datagram in up { model.receive(datagram, now: harness.now) }
                up = []
                for datagram in model.flush(now: harness.now) {
                    read += datagram.count
                    up += harness.receive(datagram)
                }
                if up.isEmpty { return }
            }
        }
        exchange(harness.start(), &harness)
        exchange(harness.send(packet(0, .reliable, [1, 2, 3])), &harness)
        exchange(harness.send(packet(1, .unreliable, [4])), &harness)
        exchange(harness.send(packet(1, .unsequenced, [])), &harness)
        exchange(harness.send(packet(0, .reliable, [UInt8](repeating: 9, count: 3000))), &harness)
        model.send(channel: 1, delivery: .reliable, [UInt8](repeating: 7, count: 5000))
        model.send(channel: 0, delivery: .unreliable, [1])
        exchange([], &harness)
        #expect(harness.messages.count == 2 && model.delivered.count == 4)
        let sent = harness.metrics.reduce(0) { if case .sent(_, let bytes) = $1 { $0 + bytes } else { $0 } }
        let received = harness.metrics.reduce(0) { if case .received(_, let bytes) = $1 { $0 + bytes } else { $0 } }
        #expect(!harness.metrics.contains { if case .resent = $0 { true } else { false } })
        #expect(sent == written)
        #expect(received == read)
    }

    /// Suspending ends the connection (ENet cannot take a peer's place back); resuming starts a new one with the
    /// next connect id.
    @Test func suspendAndResume() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<ENetRawCodec>.Configuration(), model: &model)
        var actions = ClientActions<ENetConnection<ENetRawCodec>>()
        harness.connection.suspend(now: harness.now, into: &actions)
        #expect(actions.events.count == 1 && actions.packets.isEmpty)
        actions.removeAll()
        harness.connection.resume(now: harness.now, into: &actions)
        let request = try #require(actions.packets.first)
        guard case .connect(let parameters, _) = try #require(commands(in: request).first).command else {
            Issue.record("the resume did not send a connect request")
            return
        }
        #expect(parameters.connectID != connectID(seed: 7))
        #expect(commands(in: request).first?.header.reliableSequenceNumber == 1)
    }

    /// An idle connection is small: what a swarm of mostly idle bots pays per bot before any traffic.
    @Test func idleConnectionIsSmall() {
        #expect(MemoryLayout<ENetConnection<ENetRawCodec>>.size <= 1024)
    }
}
