import NIOCore
import NIOPosix
import SkirmishWire
import Synchronization
import Testing

@testable import SkirmishNet

/// ``AsyncClientSession`` — a ``Session`` on an epoll ``ClientLoop`` — on real loopback sockets: UDP through a bad
/// emulated link, TCP and WebSocket framing, the silence and handshake timeouts driven by an injected clock, and a
/// transport that fails.
@Suite(.serialized) struct LoopbackTests {
    /// What the client saw of an echo exchange.
    struct EchoRun: Sendable {
        var echoes: [String] = []
        var pingRTTs: [TimeAmount] = []
    }

    /// 150 ms ± 50 ms is the issue's bad link; 40 ms ± 10 ms shows that the estimates follow the latency rather than
    /// landing near 300 ms by chance.
    @Test(arguments: [(150, 50), (40, 10)] as [(Int64, Int64)])
    func reliableMessagesCrossABadLinkOnceAndInOrderAndRTTTracksTheLatency(latency: Int64, jitter: Int64)
        async throws
    {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = try ClientLoop(name: "loopback-udp")
        let peerLoop = group.next()
        let peer = try await EchoPeer.start(on: peerLoop)
        let link = LinkProfile(
            latency: .milliseconds(latency), jitter: .milliseconds(jitter), loss: 0.10, duplicate: 0.05,
            reorder: 0.05)
        var configuration = AsyncClientSession.Configuration(
            target: peer.target, game: .suns, seats: 2, name: "echo", seed: UInt64(latency))
        configuration.link = link
        let session = try await AsyncClientSession.connect(configuration, on: loop)
        _ = try await within(.seconds(15)) { try await connected(session) }

        // 120 reliable Chats 10 ms apart, and 24 Pings 250 ms apart, scheduled on the session's loop (no sleeps).
        // Pings are unreliable: one overtaken by a later one arrives stale and is dropped by design, so they are
        // spaced wider than the link's jitter can reorder (±50 ms each way) for the count below to mean loss.
        let count = 120
        for index in 0..<count {
            session.eventLoop.scheduleTask(in: .milliseconds(Int64(index) * 10)) {
                session.send(.chat(Chat(text: "\(index)")))
            }
        }
        for index in 0..<(count / 5) {
            session.eventLoop.scheduleTask(in: .milliseconds(Int64(index) * 250)) {
                let now = Double(NIODeadline.now().uptimeNanoseconds) / 1e9
                session.send(.ping(Ping(player: 0, count: UInt32(index), sendTime: now)))
            }
        }
        // The Pings' echoes trail the Chats' by up to a round trip and a resend: the run ends once every Chat is back
        // and either enough Pings are, or two seconds have passed since the last Ping left (keepalive Pongs keep
        // events coming meanwhile).
        let pingsDone = NIODeadline.now() + .milliseconds(Int64(count / 5) * 250) + .seconds(2)
        // How late both loops ran their timers while the round trips were measured, probed every 10 ms on each: on a
        // busy machine (CI shares two cores) a stall delays every packet in flight by as much, and the emulated link's
        // delays are timers too. On a quiet one it is a few milliseconds.
        let stall = Mutex<TimeAmount>(.zero)
        let probesStart = NIODeadline.now()
        for index in 0..<(count / 5 * 25) {
            let deadline = probesStart + .milliseconds(Int64(index) * 10)
            let probe: @Sendable () -> Void = {
                let late = NIODeadline.now() - deadline
                stall.withLock { $0 = max($0, late) }
            }
            session.eventLoop.scheduleTask(deadline: deadline, probe)
            peerLoop.scheduleTask(deadline: deadline, probe)
        }
        let run = try await within(.seconds(40)) { () -> EchoRun in
            var run = EchoRun()
            func finished() -> Bool {
                run.echoes.count == count && (run.pingRTTs.count >= count / 5 / 2 || NIODeadline.now() > pingsDone)
            }
            for await event in session.events {
                switch event {
                case .message(.chat(let chat), _):
                    run.echoes.append(chat.text)
                    if finished() { return run }
                case .rtt(let rtt):
                    run.pingRTTs.append(TimeAmount(rtt))
                    if finished() { return run }
                case .stateChanged(.closed(let cause)):
                    throw TestFailure(description: "disconnected: \(cause)")
                default:
                    break
                }
            }
            throw TestFailure(description: "the event stream ended")
        }
        let stalled = stall.withLock { $0 }
        let expected = (0..<count).map { "\($0)" }
        let clients = try await peer.clients()
        let clientStats = try await session.stats()
        await session.disconnect()
        await peer.close()
        loop.stop()
        try await group.shutdownGracefully()

        // Exactly once and in order, at both ends.
        #expect(run.echoes == expected)
        #expect(clients.count == 1)
        #expect(clients.first?.chats == expected)
        // The link really was bad: something was resent, and duplicates reached the far side or this one.
        let peerStats = try #require(clients.first?.stats)
        #expect(clientStats.resends + peerStats.resends > 0)
        #expect(clientStats.duplicates + peerStats.duplicates > 0)
        // The emulated round trip is twice the one-way latency (jitter is symmetric; a few reordered packets add a
        // little). Both the smoothed RTT of the reliable channel and the median Ping round trip must follow it. A
        // stall can only lengthen a round trip, by at most the longest one measured on each leg: the lower bounds are
        // the link's alone, the upper ones allow twice the stall (the exact estimator is ReliableEndpointTests').
        let emulated = Double(2 * latency)
        let allowance = 2 * Double(stalled.nanoseconds) / 1e6
        let srtt = Double(try #require(clientStats.srtt).nanoseconds) / 1e6
        #expect(
            srtt > 0.75 * emulated && srtt < 1.35 * emulated + allowance,
            "SRTT \(srtt) ms for \(emulated) ms, stalls allowing \(allowance) ms more")
        #expect(run.pingRTTs.count >= count / 5 / 2, "most Pings come back")
        let sorted = run.pingRTTs.map { Double($0.nanoseconds) / 1e6 }.sorted()
        let median = try #require(sorted.isEmpty ? nil : sorted[sorted.count / 2])
        #expect(
            median > 0.8 * emulated && median < 1.25 * emulated + allowance,
            "median ping RTT \(median) ms for \(emulated) ms, stalls allowing \(allowance) ms more")
    }

    /// The same packets through a TCP stream and through WebSocket messages: the far side reads exactly the codec's
    /// bytes (TCP: each behind its u32 big-endian length), and the echoes decode back to the same messages — those a
    /// server may send are delivered; the client-only ones (a Hello, a paddle) are counted as ignored, as the
    /// connection refuses them from a server.
    @Test func tcpFramesAndWebSocketMessagesCarryTheSamePacketsByteForByte() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let peer = try await StreamEchoPeer.start(group: group)
        // A Chat last: once its echo is back, every earlier echo has arrived (a stream keeps order).
        let messages = Self.samples + [.chat(Chat(text: "the end"))]
        let deliverable = messages.filter { $0.type.direction.allows(.server) }
        var received: [Transport: [Message]] = [:]
        var ignored: [Transport: UInt64] = [:]
        let loop = try ClientLoop(name: "loopback-streams")
        for target in [peer.tcpTarget, peer.webSocketTarget] {
            var configuration = AsyncClientSession.Configuration(target: target, game: .snap, seats: 2, name: "framing")
            configuration.connection.reliability.keepaliveInterval = .seconds(60)
            configuration.streamLoops = group
            let session = try await AsyncClientSession.connect(configuration, on: loop)
            _ = try await within(.seconds(30)) { try await connected(session) }
            for message in messages { session.send(message) }
            received[target.transport] = try await within(.seconds(30)) { () -> [Message] in
                var echoes: [Message] = []
                for await event in session.events {
                    if case .message(let message, _) = event { echoes.append(message) }
                    if echoes.last == messages.last { return echoes }
                }
                throw TestFailure(description: "the event stream ended")
            }
            ignored[target.transport] = try await session.stats().packetsIgnored
            await session.disconnect()
        }
        let recorded = peer.recorded
        await peer.close()
        loop.stop()
        try await group.shutdownGracefully()

        // What the client wrote is the codec's bytes, packet for packet (numbers are 0 on streams).
        let hello = try #require(recorded.webSocketMessages.first)
        let expected = messages.map { encoded(Packet($0)) }
        var stream = recorded.tcpStream[...]
        var frames: [[UInt8]] = []
        while stream.count >= 4 {
            let length = stream.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            let body = stream.dropFirst(4).prefix(length)
            #expect(body.count == length, "a TCP frame is cut short")
            frames.append(Array(body))
            stream = stream.dropFirst(4 + length)
        }
        #expect(stream.isEmpty, "trailing bytes after the last TCP frame")
        #expect(frames.first == hello, "the Hello differs between TCP and WebSocket")
        // Everything after the Hello; a Disconnect may follow the samples when the session said goodbye.
        #expect(Array(frames.dropFirst().prefix(expected.count)) == expected)
        #expect(Array(recorded.webSocketMessages.dropFirst().prefix(expected.count)) == expected)
        #expect(received[.tcp] == deliverable)
        #expect(received[.webSocket] == deliverable)
        #expect(deliverable.count < messages.count, "the samples include client-only messages")
        #expect(ignored[.tcp] == UInt64(messages.count - deliverable.count))
        #expect(ignored[.webSocket] == UInt64(messages.count - deliverable.count))
    }

    /// A client whose peer falls silent is disconnected 5 s after it last heard from it — the session's own timers,
    /// run by an injected clock rather than a 5-second wait — and its event stream tells the whole story.
    @Test func aSilentPeerIsReportedDisconnectedAfterFiveSeconds() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = try ClientLoop(name: "loopback-silence")
        let peer = try await EchoPeer.start(on: group.next())
        var configuration = AsyncClientSession.Configuration(
            target: peer.target, game: .suns, seats: 2, name: "quiet")
        configuration.selfTimed = false
        // The Welcome, the last packet the peer sends, is read after `started` and before `heard`. The Hello and
        // Welcome exchange runs on its own: the handshake timers are not needed on loopback.
        let started = NIODeadline.now()
        let session = try await AsyncClientSession.connect(configuration, on: loop)
        var reported = try await within(.seconds(10)) { () -> [SnapConnection.State] in
            var states: [SnapConnection.State] = []
            for await event in session.events {
                guard case .stateChanged(let state) = event else { continue }
                states.append(state)
                if case .seated = state { return states }
            }
            throw TestFailure(description: "the event stream ended before the session was seated")
        }
        let heard = NIODeadline.now()
        try await peer.mute()

        // Keepalive Pings go out every second of the silence; nothing answers them. Counted from `started`, these
        // ticks all come less than 5 s after the Welcome was read.
        for second in 1...4 {
            guard case .seated = try await session.tick(now: Instant(started + .seconds(Int64(second)))) else {
                Issue.record("disconnected after only \(second) s of silence")
                return
            }
        }
        guard case .seated = try await session.tick(now: Instant(started + .milliseconds(4_990))) else {
            Issue.record("disconnected before 5 s of silence")
            return
        }
        #expect(try await session.tick(now: Instant(heard + .seconds(5))) == .closed(.silence))
        #expect(try await session.state() == .closed(.silence))
        await session.disconnect()
        // Disconnecting ends the stream; what it still held is the rest of the story.
        for await event in session.events {
            if case .stateChanged(let state) = event { reported.append(state) }
        }
        #expect(reported.first == .handshaking)
        #expect(reported.last == .closed(.silence))
        #expect(reported.count == 3, "\(reported)")
        await peer.close()
        loop.stop()
        try await group.shutdownGracefully()
    }

    /// A UDP handshake nobody answers gives up at the handshake timeout (the closed port's ICMP errors do not end it
    /// early: a server may be starting), with the timers again run by an injected clock.
    @Test func anUnansweredHandshakeTimesOut() async throws {
        let loop = try ClientLoop(name: "loopback-handshake")
        let port = try await Self.closedPort(udp: true)
        var configuration = AsyncClientSession.Configuration(
            target: Target(transport: .udp, host: "127.0.0.1", port: port), game: .puck, seats: 2, name: "early")
        configuration.connection.handshakeTimeout = .seconds(2)
        configuration.selfTimed = false
        let started = NIODeadline.now()
        let session = try await AsyncClientSession.connect(configuration, on: loop)
        #expect(try await session.state() == .handshaking)
        #expect(try await session.tick(now: Instant(started + .milliseconds(1_900))) == .handshaking)
        #expect(try await session.tick(now: Instant(started + .seconds(3))) == .closed(.handshakeTimeout))
        #expect(try await session.stats().packetsSent >= 2, "Hello is resent while waiting")
        await session.disconnect()
        loop.stop()
    }

    /// A TCP or WebSocket connection the server refuses ends the session with a transport error, reported on the
    /// stream as the connection's closed state.
    @Test(arguments: [Transport.tcp, .webSocket])
    func aRefusedStreamConnectionIsATransportError(transport: Transport) async throws {
        let port = try await Self.closedPort(udp: false)
        var configuration = AsyncClientSession.Configuration(
            target: Target(transport: transport, host: "127.0.0.1", port: port, path: "/ws"), game: .snap, seats: 2,
            name: "refused")
        configuration.streamLoops = MultiThreadedEventLoopGroup.singleton
        let session = try await AsyncClientSession.connect(configuration)
        let cause = try await within(.seconds(10)) { () -> SnapConnection.Cause in
            for await event in session.events {
                if case .stateChanged(.closed(let cause)) = event { return cause }
            }
            throw TestFailure(description: "the event stream ended")
        }
        guard case .transportError = cause else {
            Issue.record("closed with \(cause), not a transport error")
            return
        }
        await session.disconnect()
    }

    /// Sessions share their loop with any other shell (a swarm's squads): each socket's readiness reaches the shell
    /// that owns it, and both sides see only their own traffic.
    @Test func sessionsShareALoopWithAnotherShell() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = try ClientLoop(name: "loopback-shared")
        let peer = try await EchoPeer.start(on: group.next())
        let first = try await AsyncClientSession.connect(
            AsyncClientSession.Configuration(target: peer.target, game: .suns, seats: 2, name: "one"), on: loop)
        let second = try await AsyncClientSession.connect(
            AsyncClientSession.Configuration(target: peer.target, game: .suns, seats: 2, name: "two"), on: loop)
        for (session, text) in [(first, "from one"), (second, "from two")] {
            try await within(.seconds(10)) {
                for await event in session.events {
                    if case .stateChanged(.seated) = event { return }
                }
                throw TestFailure(description: "the event stream ended before the session was seated")
            }
            session.send(.chat(Chat(text: text)))
            let echo = try await within(.seconds(10)) { () -> String in
                for await event in session.events {
                    if case .message(.chat(let chat), _) = event { return chat.text }
                }
                throw TestFailure(description: "the event stream ended before the echo")
            }
            #expect(echo == text)
        }
        await first.disconnect()
        await second.disconnect()
        await peer.close()
        loop.stop()
        try await group.shutdownGracefully()
    }

    /// A port on 127.0.0.1 that was just bound and closed again, so nothing listens on it.
    static func closedPort(udp: Bool) async throws -> Int {
        let group = MultiThreadedEventLoopGroup.singleton
        let channel: any Channel =
            udp
            ? try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
            : try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }

    /// One message of each shape a client sends or relays, including the longest chat and a tally with every sun.
    static let samples: [Message] = [
        .chat(Chat(text: "gl hf ✓")),
        .chat(Chat(text: String(repeating: "z", count: WireLimits.maxChat))),
        .signInResponse(SignInResponse(name: "ann")),
        .clientReady,
        .clientDealtCards,
        .clientTurnedCard,
        .playerShouldSnap,
        .paddleState(PaddleState(inputStep: 77, x: 160.5, y: 401.25, vx: -3, vy: 0.5)),
        .sunsStart(SunsStart(coinToss: 0xDEAD_BEEF, suns: (0..<5).map { SunsStart.Sun(x: Float($0) / 5, y: 0.5) })),
        .sunsStrike(SunsStrike(x: 0.25, y: 0.75, radius: 0.1, gameTime: 12.25)),
        .sunsCapture(SunsCapture(sunIndex: 3, gameTime: 12.5)),
        .sunsTally(SunsTally(entries: (0..<16).map { SunsTally.Entry(owner: UInt8($0 % 2), time: Float($0)) })),
        .clientQuit,
    ]
}
