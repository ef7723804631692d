import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishENet

/// Whole sessions against the test's server model over seeded lossy links: reliable packets arrive exactly once and
/// in order both ways, fragments reassemble both ways, unreliable packets never go backwards.
@Suite struct ReliabilityTests {
    /// A reliable packet's bytes: its channel and number, so order and duplicates show.
    static func numbered(_ channel: UInt8, _ number: Int, size: Int = 8) -> [UInt8] {
        [channel, UInt8(number >> 8), UInt8(number & 0xFF)]
            + [UInt8](repeating: UInt8(number % 251), count: max(size - 3, 0))
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func reliableExactlyOnceInOrder(seed: UInt64) throws {
        var simulation = Simulation(
            client: Harness(ENetConnection<ENetRawCodec>.Configuration(), seed: seed), seed: seed, loss: 0.2,
            duplication: 0.1, jitter: .milliseconds(40))
        simulation.start()
        #expect(simulation.run(for: .seconds(30)) { $0.client.established != nil && $0.server.connected })
        let count = 150
        for number in 0..<count {
            for channel: UInt8 in [0, 1] {
                simulation.send(packet(channel, .reliable, Self.numbered(channel, number)))
                simulation.server.send(channel: channel, delivery: .reliable, Self.numbered(channel, number))
            }
            simulation.step()
        }
        let done = simulation.run(for: .seconds(120)) {
            $0.server.delivered.count == 2 * count && $0.client.messages.count == 2 * count
        }
        #expect(done)
        for channel: UInt8 in [0, 1] {
            let up = simulation.server.delivered.filter { $0.channel == channel }.map(\.bytes)
            let down = simulation.client.messages.filter { $0.channel == channel }.map(\.bytes)
            #expect(up == (0..<count).map { Self.numbered(channel, $0) })
            #expect(down == (0..<count).map { Self.numbered(channel, $0) })
        }
        #expect(simulation.client.closed == nil)
        #expect(simulation.client.metrics.contains { if case .resent = $0 { true } else { false } })
        #expect(simulation.client.events(.duplicates) > 0)
        #expect(simulation.server.headerErrors == 0)
        #expect(simulation.client.errors.isEmpty, "\(simulation.client.errors)")
    }

    /// 4 KiB packets go out as reliable fragments and come back whole, both ways, under loss.
    @Test func fragmentsBothWays() throws {
        var simulation = Simulation(
            client: Harness(ENetConnection<ENetRawCodec>.Configuration()), seed: 9, loss: 0.1, jitter: .milliseconds(20)
        )
        simulation.start()
        #expect(simulation.run(for: .seconds(30)) { $0.client.established != nil && $0.server.connected })
        let big = (0..<5).map { index in (0..<4096).map { UInt8(($0 * 7 + index) % 256) } }
        for bytes in big {
            simulation.send(packet(0, .reliable, bytes))
            simulation.server.send(channel: 1, delivery: .reliable, bytes)
        }
        #expect(simulation.run(for: .seconds(60)) { $0.server.delivered.count == 5 && $0.client.messages.count == 5 })
        #expect(simulation.server.delivered.map(\.bytes) == big)
        #expect(simulation.client.messages == big.map { packet(1, .reliable, $0) })
        // 4096 bytes in fragments of 1400 − 28 = 1372: 3 fragments each, counted once per packet as 3 × 24 + 4096.
        #expect(simulation.client.events(.fragmentsSent) == 15)
        #expect(simulation.client.events(.fragmentsReceived) == 15)
        let sent = simulation.client.counts(sent: true)["reliable/ch0"]
        #expect(sent?.packets == 5)
        let received = simulation.client.counts(sent: false)["reliable/ch1"]
        #expect(received?.packets == 5)
    }

    /// Unreliable fragments: with `unreliableFragments` a large unreliable packet travels as
    /// SEND_UNRELIABLE_FRAGMENT commands under one unreliable number, and reassembles on the other side.
    @Test func unreliableFragments() throws {
        var model = ServerModel()
        var configuration = ENetConnection<ENetRawCodec>.Configuration()
        configuration.unreliableFragments = true
        var harness = connected(configuration, model: &model)
        let bytes = (0..<4096).map { UInt8($0 % 256) }
        let datagrams = harness.send(packet(1, .unreliable, bytes))
        let fragments = datagrams.flatMap { commands(in: $0) }.compactMap { decoded -> FragmentHeader? in
            if case .sendUnreliableFragment(let fragment) = decoded.command { fragment } else { nil }
        }
        #expect(fragments.count == 3 && Set(fragments.map(\.startSequenceNumber)) == [1])
        // And the other way: a hand-made unreliable fragment packet arriving out of order reassembles.
        var client = harness
        let pieces = stride(from: 0, to: 4096, by: 1372).enumerated().map { number, offset in
            (
                CommandHeader(.sendUnreliableFragment, channelID: 1, reliableSequenceNumber: 0),
                Command.sendUnreliableFragment(
                    FragmentHeader(
                        startSequenceNumber: 1, fragmentCount: 3, fragmentNumber: UInt32(number), totalLength: 4096,
                        fragmentOffset: UInt32(offset))), Array(bytes[offset..<min(offset + 1372, 4096)])
            )
        }
        for piece in pieces.reversed() { _ = client.receive(datagram(peerID: 0, session: 1, [piece])) }
        #expect(client.messages == [packet(1, .unreliable, bytes)])
        #expect(client.errors.isEmpty)
    }

    /// Unreliable packets through a reordering, lossy link are delivered newest-first or not at all, and the gaps
    /// in their numbering are counted lost.
    @Test func unreliableNeverGoesBackwards() throws {
        var simulation = Simulation(
            client: Harness(ENetConnection<ENetRawCodec>.Configuration()), seed: 5, loss: 0.1, jitter: .milliseconds(30)
        )
        simulation.start()
        #expect(simulation.run(for: .seconds(30)) { $0.client.established != nil && $0.server.connected })
        for number in 0..<300 {
            simulation.server.send(channel: 1, delivery: .unreliable, Self.numbered(1, number))
            simulation.step()
        }
        _ = simulation.run(for: .seconds(1)) { _ in false }
        let numbers = simulation.client.messages.map { Int($0.bytes[1]) << 8 | Int($0.bytes[2]) }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        #expect(numbers.count > 150 && numbers.count < 300)
        let lost = simulation.client.metrics.reduce(0) { if case .lost(let count) = $1 { $0 + count } else { $0 } }
        #expect(lost == 300 - numbers.count - (299 - (numbers.last ?? 0)))
    }

    /// An unreliable packet sent after a reliable one waits for it; one from before it that comes late is dropped.
    @Test func unreliableWaitsForItsReliable() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<ENetRawCodec>.Configuration(), model: &model)
        let reliable = CommandHeader(.sendReliable, channelID: 0, reliableSequenceNumber: 1, acknowledge: true)
        let unreliable = CommandHeader(.sendUnreliable, channelID: 0, reliableSequenceNumber: 1)
        _ = harness.receive(datagram([(unreliable, .sendUnreliable(unreliableSequenceNumber: 1), [2])]))
        #expect(harness.messages.isEmpty)
        _ = harness.receive(datagram([(reliable, .sendReliable, [1])]))
        #expect(harness.messages.map(\.bytes) == [[1], [2]])
        let stale = CommandHeader(.sendUnreliable, channelID: 0, reliableSequenceNumber: 0)
        _ = harness.receive(datagram([(stale, .sendUnreliable(unreliableSequenceNumber: 9), [3])]))
        #expect(harness.messages.count == 2)
    }

    /// Reliable sequence numbers wrap past 65535 on both sides without a loss, a duplicate or a window error.
    @Test func sequenceNumbersWrap() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<ENetRawCodec>.Configuration(), model: &model)
        let count = 70_000
        var delivered = 0
        for batch in stride(from: 0, to: count, by: 500) {
            var up: [[UInt8]] = []
            for number in batch..<min(batch + 500, count) {
                up += harness.send(packet(0, .reliable, [UInt8(number & 0xFF)]))
                model.send(channel: 1, delivery: .reliable, [UInt8(number & 0xFF)])
            }
            for datagram in up { model.receive(datagram, now: harness.now) }
            for datagram in model.flush(now: harness.now) {
                for reply in harness.receive(datagram) { model.receive(reply, now: harness.now) }
            }
            harness.advance(.milliseconds(1))
            delivered = harness.messages.count
        }
        #expect(delivered == count && model.delivered.count == count)
        #expect(harness.messages.enumerated().allSatisfy { $0.element.bytes == [UInt8($0.offset & 0xFF)] })
        #expect(model.delivered.enumerated().allSatisfy { $0.element.bytes == [UInt8($0.offset & 0xFF)] })
        #expect(harness.errors.isEmpty && harness.events(.duplicates) == 0)
        #expect(harness.connection.channels[1].incomingReliableSequenceNumber == UInt16(count % 65536))
    }

    /// Unsequenced packets are delivered as they come, duplicates dropped.
    @Test func unsequencedDropsDuplicates() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<ENetRawCodec>.Configuration(), model: &model)
        let header = CommandHeader(.sendUnsequenced, channelID: 1, unsequenced: true)
        for group: UInt16 in [3, 1, 3, 2, 1] {
            _ = harness.receive(datagram([(header, .sendUnsequenced(unsequencedGroup: group), [UInt8(group)])]))
        }
        #expect(harness.messages.map(\.bytes) == [[3], [1], [2]])
        #expect(harness.messages.allSatisfy { $0.delivery == .unsequenced })
    }
}
