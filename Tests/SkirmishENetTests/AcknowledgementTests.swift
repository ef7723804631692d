import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishENet

/// Acknowledgements carry the sent time back, and the round-trip estimate follows libenet's integer arithmetic.
@Suite struct AcknowledgementTests {
    /// protocol.c's estimator by hand: the first sample sets the mean and half of it as variance; later ones move the
    /// variance a quarter and the mean an eighth of the way, truncating.
    @Test func estimatorFollowsLibENet() {
        var estimate = RoundTripEstimate()
        #expect(estimate.roundTripTime == 500 && estimate.retransmissionTimeout == 500)
        _ = estimate.sample(100, at: 1000, first: true)
        #expect(estimate.roundTripTime == 100 && estimate.roundTripTimeVariance == 50)
        _ = estimate.sample(50, at: 1010, first: false)
        #expect(estimate.roundTripTime == 94 && estimate.roundTripTimeVariance == 50)
        _ = estimate.sample(200, at: 1020, first: false)
        #expect(estimate.roundTripTime == 107 && estimate.roundTripTimeVariance == 64)
        #expect(estimate.retransmissionTimeout == 107 + 4 * 64)
    }

    /// The throttle closes when round trips run two deviations above their interval's best, and opens again.
    @Test func throttleMovesWithRoundTrips() {
        var estimate = RoundTripEstimate()
        _ = estimate.sample(20, at: 1, first: true)
        for time in 2..<10 { _ = estimate.sample(20, at: UInt32(time), first: false) }
        // The next interval starts from a best of 20 ms with a small deviation.
        _ = estimate.sample(20, at: 6000, first: false)
        let closed = estimate.sample(200, at: 6001, first: false)
        #expect(closed && estimate.packetThrottle == 30)
        let opened = estimate.sample(10, at: 6002, first: false)
        #expect(opened && estimate.packetThrottle == 32)
    }

    /// A reliable packet's acknowledgement echoes the sent time of the datagram that carried it, on its channel and
    /// sequence number; an acknowledgement back gives a round trip of the time between.
    @Test func acknowledgementEchoesSentTime() throws {
        var model = ServerModel()
        var harness = connected(ENetConnection<ENetRawCodec>.Configuration(), model: &model)
        let reliable = CommandHeader(.sendReliable, channelID: 1, reliableSequenceNumber: 1, acknowledge: true)
        let replies = harness.receive(datagram(sentTime: 0xABCD, [(reliable, .sendReliable, [7])]))
        let acknowledgement = try #require(replies.flatMap { commands(in: $0) }.first)
        #expect(acknowledgement.header == CommandHeader(.acknowledge, channelID: 1, reliableSequenceNumber: 1))
        #expect(acknowledgement.command == .acknowledge(receivedReliableSequenceNumber: 1, receivedSentTime: 0xABCD))

        // A reliable send, acknowledged 40 ms later with its sent time echoed.
        let sent = harness.send(packet(0, .reliable, [1]))
        let sentHeader = try #require(header(of: sent[0]))
        let sentTime = try #require(sentHeader.sentTime)
        let command = try #require(commands(in: sent[0]).last)
        harness.advance(.milliseconds(40))
        let ack = CommandHeader(
            .acknowledge, channelID: 0, reliableSequenceNumber: command.header.reliableSequenceNumber)
        let before = harness.metrics.count
        _ = harness.receive(
            datagram([
                (
                    ack,
                    .acknowledge(
                        receivedReliableSequenceNumber: ack.reliableSequenceNumber, receivedSentTime: sentTime), []
                )
            ]))
        let samples = harness.metrics[before...].compactMap { if case .roundTrip(let time) = $0 { time } else { nil } }
        #expect(samples.count == 1)
        #expect(!harness.connection.sentReliable.contains { $0.header.channelID == 0 })
        #expect(harness.connection.roundTrip.lastRoundTripTime > 0)
    }

    /// Over a link of 25 ms each way the estimate settles on 50 ms, and idle connections keep it fresh with pings
    /// every `pingInterval` without an acknowledgement.
    @Test func roundTripOverALink() throws {
        var simulation = Simulation(client: Harness(ENetConnection<ENetRawCodec>.Configuration()), seed: 1)
        simulation.up.delay = .milliseconds(25)
        simulation.down.delay = .milliseconds(25)
        simulation.start()
        #expect(simulation.run(for: .seconds(5)) { $0.client.established != nil })
        _ = simulation.run(for: .seconds(10)) { _ in false }
        let estimate = simulation.client.connection.roundTripTime
        #expect(estimate >= .milliseconds(50) && estimate <= .milliseconds(55))
        let pings = simulation.client.counts(sent: true)["ping"]?.packets ?? 0
        // One ping per (500 ms + a round trip) of silence: about 18 in 10 s.
        #expect(pings >= 15 && pings <= 20, "\(pings) pings")
        let samples = simulation.client.metrics.filter { if case .roundTrip = $0 { true } else { false } }
        #expect(samples.count >= pings)
    }
}
