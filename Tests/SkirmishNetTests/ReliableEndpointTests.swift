import NIOCore
import SkirmishWire
import Testing

@testable import SkirmishNet

/// The reliability state machine, driven by a clock and a seeded lossy link — no sockets, no sleeps.
@Suite struct ReliableEndpointTests {
    /// A simulated link between two endpoints: each packet is lost, duplicated or delayed (and so reordered) from a
    /// seeded generator; time advances in 5 ms steps.
    struct Simulation {
        var a: ReliableEndpoint
        var b: ReliableEndpoint
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var random: SeededRandom
        var inFlight: [(due: NIODeadline, toB: Bool, packet: Packet)] = []
        var deliveredAtB: [UInt32] = []
        var deliveredAtA: [UInt32] = []
        let loss: Double
        let duplicate: Double
        let latency: ClosedRange<Int64>

        init(seed: UInt64, loss: Double, duplicate: Double, latency: ClosedRange<Int64>) {
            // Timeouts far away: this checks the delivery guarantee, not when a hopeless link is given up.
            let configuration = ReliableEndpoint.Configuration(
                ackTimeout: .seconds(3_600), silenceTimeout: .seconds(3_600))
            a = ReliableEndpoint(configuration: configuration, now: now)
            b = ReliableEndpoint(configuration: configuration, now: now)
            random = SeededRandom(seed: seed)
            self.loss = loss
            self.duplicate = duplicate
            self.latency = latency
        }

        mutating func carry(_ packet: Packet, toB: Bool) {
            guard Double.random(in: 0..<1, using: &random) >= loss else { return }
            let copies = Double.random(in: 0..<1, using: &random) < duplicate ? 2 : 1
            for _ in 0..<copies {
                let delay = Int64.random(in: latency, using: &random)
                inFlight.append((now + .milliseconds(delay), toB, packet))
            }
        }

        mutating func step() {
            now = now + .milliseconds(5)
            let due = inFlight.filter { $0.due <= now }
            inFlight.removeAll { $0.due <= now }
            for item in due {
                if item.toB {
                    _ = b.receive(item.packet, now: now) { message in
                        if case .chat(let chat) = message { deliveredAtB.append(UInt32(chat.text)!) }
                    }
                } else {
                    _ = a.receive(item.packet, now: now) { message in
                        if case .chat(let chat) = message { deliveredAtA.append(UInt32(chat.text)!) }
                    }
                }
            }
            var outA: [Packet] = []
            var outB: [Packet] = []
            _ = a.poll(now: now) { outA.append($0) }
            _ = b.poll(now: now) { outB.append($0) }
            for packet in outA { carry(packet, toB: true) }
            for packet in outB { carry(packet, toB: false) }
        }
    }

    /// How a link mangles packets besides losing them: duplicates some, reorders (a random 5–120 ms delay per packet,
    /// so later packets overtake earlier ones) or both; `clean` keeps a fixed 60 ms delay and order.
    enum Mangling: String, CaseIterable, CustomTestStringConvertible {
        case clean, duplicating, reordering, both

        var duplicate: Double { self == .duplicating || self == .both ? 0.2 : 0 }
        var latency: ClosedRange<Int64> { self == .reordering || self == .both ? 5...120 : 60...60 }
        var testDescription: String { rawValue }
    }

    /// Every combination of loss, duplication and reordering; 4 seeds × 300 messages each way per combination.
    @Test(arguments: [0.0, 0.1, 0.3], Mangling.allCases)
    func reliableMessagesArriveExactlyOnceInOrder(loss: Double, mangling: Mangling) throws {
        for seed in UInt64(1)...4 {
            var simulation = Simulation(
                seed: seed, loss: loss, duplicate: mangling.duplicate, latency: mangling.latency)
            let count: UInt32 = 300
            for number in 1...count {
                let packetA = try simulation.a.stamp(.chat(Chat(text: "\(number)")), now: simulation.now)
                simulation.carry(packetA, toB: true)
                let packetB = try simulation.b.stamp(.chat(Chat(text: "\(number)")), now: simulation.now)
                simulation.carry(packetB, toB: false)
                simulation.step()
            }
            var steps = 0
            while simulation.deliveredAtB.count < count || simulation.deliveredAtA.count < count, steps < 20_000 {
                simulation.step()
                steps += 1
            }
            #expect(simulation.deliveredAtB == Array(1...count), "seed \(seed)")
            #expect(simulation.deliveredAtA == Array(1...count), "seed \(seed)")
        }
    }

    @Test func rtoFollowsTheSmoothedRoundTripAndBacksOff() throws {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var sender = ReliableEndpoint(now: start)
        var receiver = ReliableEndpoint(now: start)
        var now = start
        // Ten exchanges with a 100 ms round trip: SRTT converges to 100 ms and RTO to max(50 ms, SRTT + 4·RTTVAR).
        for index in 0..<10 {
            let packet = try sender.stamp(.chat(Chat(text: "\(index)")), now: now)
            _ = receiver.receive(packet, now: now + .milliseconds(50)) { _ in }
            var acks: [Packet] = []
            _ = receiver.poll(now: now + .milliseconds(50)) { acks.append($0) }
            #expect(acks.count == 1)
            now = now + .milliseconds(100)
            _ = sender.receive(acks[0], now: now) { _ in }
        }
        let srtt = try #require(sender.stats.srtt)
        #expect(abs(srtt.nanoseconds - 100_000_000) < 1_000_000)
        #expect(sender.rto >= .milliseconds(100) && sender.rto < .milliseconds(130))

        // Unacknowledged: resent after one RTO, then after twice that, then four times.
        let lostPacket = try sender.stamp(.chat(Chat(text: "lost")), now: now)
        let rto = sender.rto
        var resendTimes: [NIODeadline] = []
        var clock = now
        while resendTimes.count < 3 {
            clock = clock + .milliseconds(1)
            _ = sender.poll(now: clock) { packet in
                if packet.number == lostPacket.number { resendTimes.append(clock) }
            }
        }
        let first = resendTimes[0] - now
        let second = resendTimes[1] - resendTimes[0]
        let third = resendTimes[2] - resendTimes[1]
        #expect(abs(first.nanoseconds - rto.nanoseconds) <= 1_000_000)
        #expect(abs(second.nanoseconds - 2 * rto.nanoseconds) <= 1_000_000)
        #expect(abs(third.nanoseconds - 4 * rto.nanoseconds) <= 1_000_000)
        #expect(sender.stats.resends == 3)
    }

    /// A 300 ms round trip against the 200 ms initial timeout: the first packets time out, and the backed-off
    /// timeout lets the later ones be acknowledged before they are resent, so Karn's rule gets samples and the
    /// estimate finds the real round trip instead of resending every packet forever.
    @Test func aRoundTripLongerThanTheInitialTimeoutIsStillMeasured() throws {
        var simulation = Simulation(seed: 1, loss: 0, duplicate: 0, latency: 150...150)
        for step in 0..<700 {
            if step < 600, step % 10 == 0 {
                let packet = try simulation.a.stamp(.chat(Chat(text: "\(step / 10 + 1)")), now: simulation.now)
                simulation.carry(packet, toB: true)
            }
            simulation.step()
        }
        let srtt = try #require(simulation.a.stats.srtt)
        #expect(abs(srtt.nanoseconds - 300_000_000) <= 10_000_000, "SRTT \(srtt)")
        #expect(simulation.a.stats.resends <= 5, "\(simulation.a.stats.resends) resends for 60 packets")
        #expect(simulation.deliveredAtB == Array(1...60))
    }

    @Test func rtoNeverDropsBelowFiftyMilliseconds() throws {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var sender = ReliableEndpoint(now: start)
        var receiver = ReliableEndpoint(now: start)
        var now = start
        for index in 0..<20 {
            let packet = try sender.stamp(.chat(Chat(text: "\(index)")), now: now)
            _ = receiver.receive(packet, now: now) { _ in }
            var acks: [Packet] = []
            _ = receiver.poll(now: now) { acks.append($0) }
            now = now + .microseconds(200)
            _ = sender.receive(acks[0], now: now) { _ in }
        }
        #expect(sender.rto == .milliseconds(50))
    }

    @Test func staleAndDuplicateUnreliablePacketsAreDroppedAndGapsCounted() {
        let now = NIODeadline.uptimeNanoseconds(1)
        var receiver = ReliableEndpoint(now: now)
        var delivered: [UInt32] = []
        for number: UInt32 in [1, 2, 5, 5, 3, 6, 4, 9] {
            let ping = Packet(number: number, .ping(Ping(player: 0, count: number, sendTime: 0)))
            _ = receiver.receive(ping, now: now) { message in
                if case .ping(let ping) = message { delivered.append(ping.count) }
            }
        }
        #expect(delivered == [1, 2, 5, 6, 9])
        #expect(receiver.stats.lost == 2 + 2) // 3, 4 missing before 5; 7, 8 before 9
        #expect(receiver.stats.duplicates == 1)
        #expect(receiver.stats.stale == 2)
    }

    @Test func numbersWrapAroundWithSerialArithmetic() {
        let now = NIODeadline.uptimeNanoseconds(1)
        var receiver = ReliableEndpoint(now: now)
        var delivered: [UInt32] = []
        for number: UInt32 in [UInt32.max - 1, UInt32.max, 1, 2] {
            let ping = Packet(number: number, .ping(Ping(player: 0, count: number, sendTime: 0)))
            _ = receiver.receive(ping, now: now) { message in
                if case .ping(let ping) = message { delivered.append(ping.count) }
            }
        }
        // 0 is skipped by senders (it means "unnumbered"), so UInt32.max → 1 is one step, not a gap.
        #expect(delivered == [UInt32.max - 1, UInt32.max, 1, 2])
    }

    /// `WireProtocol.md`, "Windows": the first unreliable number of a session is measured from 0, so 0–4,096 and the
    /// half of the number space behind 0 are taken, 4,097–2³¹ − 1 refused; the first one taken is then the newest.
    @Test(arguments: [
        (UInt32(0), true), (1, true), (4_096, true), (4_097, false), (0x7FFF_FFFF, false), (0x8000_0000, true),
        (0xFFFF_FFFF, true),
    ])
    func theFirstUnreliableNumberIsMeasuredFromZero(number: UInt32, accepted: Bool) {
        let now = NIODeadline.uptimeNanoseconds(1)
        var receiver = ReliableEndpoint(now: now)
        let ping = { (number: UInt32) in Packet(number: number, .ping(Ping(player: 0, count: number, sendTime: 0))) }
        let first = receiver.receive(ping(number), now: now) { _ in }
        #expect(first == (accepted ? .delivered : .farFuture))
        // Measured from the first number taken, or still from 0 when it was refused (never adopted).
        let next = receiver.receive(ping(accepted ? number &+ 4_096 : 4_096), now: now) { _ in }
        #expect(next == .delivered)
    }

    @Test func silenceAndMissingAcksTimeOut() throws {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var silent = ReliableEndpoint(now: start)
        #expect(silent.poll(now: start + .milliseconds(4_999)) { _ in } == .alive)
        #expect(silent.poll(now: start + .seconds(5)) { _ in } == .timedOut(.silence))

        var unacked = ReliableEndpoint(
            configuration: .init(silenceTimeout: .seconds(60)), now: start)
        _ = try unacked.stamp(.chat(Chat(text: "x")), now: start)
        #expect(unacked.poll(now: start + .milliseconds(9_999)) { _ in } == .alive)
        #expect(unacked.poll(now: start + .seconds(10)) { _ in } == .timedOut(.unacknowledged))
    }

    /// A peer resumed after a long gap: the gap counts against neither timeout, what it missed goes out at once at
    /// the measured timeout (not the backoff grown while it was away), and then backs off from there again.
    @Test func aReattachedEndpointStartsItsClocksAfresh() throws {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var endpoint = ReliableEndpoint(now: start)
        _ = try endpoint.stamp(.chat(Chat(text: "missed")), now: start)
        // Away for 8 s: resends back off to the 2 s cap (nobody polls a detached peer's endpoint on a server, but a
        // client's runs while it resumes).
        var resends = 0
        var now = start
        while now < start + .seconds(4) {
            now = now + .milliseconds(10)
            _ = endpoint.poll(now: now) { if case .chat = $0.message { resends += 1 } }
        }
        #expect(resends >= 3)
        let back = start + .seconds(8)
        endpoint.reattached(now: back)
        var sent: [Packet] = []
        #expect(endpoint.poll(now: back) { sent.append($0) } == .alive)
        #expect(sent.contains { if case .chat = $0.message { true } else { false } })
        // The next resend follows the initial 200 ms timeout doubled once, not the 2 s cap.
        sent = []
        _ = endpoint.poll(now: back + .milliseconds(399)) { sent.append($0) }
        #expect(!sent.contains { if case .chat = $0.message { true } else { false } })
        _ = endpoint.poll(now: back + .milliseconds(400)) { sent.append($0) }
        #expect(sent.contains { if case .chat = $0.message { true } else { false } })
        // Silence and the ack timeout count from the resume.
        #expect(endpoint.poll(now: back + .milliseconds(4_999)) { _ in } == .alive)
        #expect(endpoint.poll(now: back + .seconds(5)) { _ in } == .timedOut(.silence))
    }

    @Test func keepaliveFollowsOneSecondOfIdleness() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var endpoint = ReliableEndpoint(now: start)
        var sent: [Packet] = []
        _ = endpoint.poll(now: start + .milliseconds(999)) { sent.append($0) }
        #expect(sent.isEmpty)
        _ = endpoint.poll(now: start + .seconds(1)) { sent.append($0) }
        #expect(sent.count == 1)
        #expect(sent.first?.message.type == .ping)
    }

    @Test func pendingQueueIsBounded() throws {
        let now = NIODeadline.uptimeNanoseconds(1)
        var endpoint = ReliableEndpoint(configuration: .init(maxPendingReliable: 4), now: now)
        for _ in 0..<4 { _ = try endpoint.stamp(.chat(Chat(text: "x")), now: now) }
        #expect(throws: EndpointError.queueFull) { try endpoint.stamp(.chat(Chat(text: "x")), now: now) }
    }
}
