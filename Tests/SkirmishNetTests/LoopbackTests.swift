import NIOCore
import NIOPosix
import SkirmishWire
import Testing

@testable import SkirmishNet

/// Client sessions on real loopback sockets: UDP through a bad emulated link, TCP and WebSocket framing, and the
/// silence timeout driven by an injected clock.
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
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let peer = try await EchoPeer.start(on: group.next())
        let link = LinkProfile(
            latency: .milliseconds(latency), jitter: .milliseconds(jitter), loss: 0.10, duplicate: 0.05,
            reorder: 0.05)
        var configuration = ClientSession.Configuration(
            target: peer.target, game: .suns, seats: 2, name: "echo", seed: UInt64(latency))
        configuration.link = link
        let session = try await AsyncClientSession.connect(configuration, on: group.next())
        _ = try await within(.seconds(15)) { try await connected(session) }

        // 120 reliable Chats 10 ms apart and a Ping every 50 ms, scheduled on the session's loop (no sleeps).
        let count = 120
        for index in 0..<count {
            session.eventLoop.scheduleTask(in: .milliseconds(Int64(index) * 10)) {
                session.send(.chat(Chat(text: "\(index)")))
            }
        }
        for index in 0..<(count / 5) {
            session.eventLoop.scheduleTask(in: .milliseconds(Int64(index) * 50)) {
                let now = Double(NIODeadline.now().uptimeNanoseconds) / 1e9
                session.send(.ping(Ping(player: 0, count: UInt32(index), sendTime: now)))
            }
        }
        let run = try await within(.seconds(40)) { () -> EchoRun in
            var run = EchoRun()
            for await event in session.events {
                switch event {
                case .message(.chat(let chat), _):
                    run.echoes.append(chat.text)
                    if run.echoes.count == count { return run }
                case .rtt(let rtt):
                    run.pingRTTs.append(rtt)
                case .stateChanged(.disconnected(let cause)):
                    throw TestFailure(description: "disconnected: \(cause)")
                default:
                    break
                }
            }
            throw TestFailure(description: "the event stream ended")
        }
        let expected = (0..<count).map { "\($0)" }
        let clients = try await peer.clients()
        let clientStats = try await session.stats()
        await session.disconnect()
        await peer.close()
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
        // little). Both the smoothed RTT of the reliable channel and the median Ping round trip must follow it.
        let emulated = Double(2 * latency)
        let srtt = Double(try #require(clientStats.srtt).nanoseconds) / 1e6
        #expect(srtt > 0.75 * emulated && srtt < 1.35 * emulated, "SRTT \(srtt) ms for \(emulated) ms")
        #expect(run.pingRTTs.count >= count / 5 / 2, "most Pings come back")
        let sorted = run.pingRTTs.map { Double($0.nanoseconds) / 1e6 }.sorted()
        let median = try #require(sorted.isEmpty ? nil : sorted[sorted.count / 2])
        #expect(median > 0.8 * emulated && median < 1.25 * emulated, "median ping RTT \(median) ms")
    }

    /// The same packets through a TCP stream and through WebSocket messages: the far side reads exactly the codec's
    /// bytes (TCP: each behind its u32 big-endian length), and the echoes decode back to the same messages.
    @Test func tcpFramesAndWebSocketMessagesCarryTheSamePacketsByteForByte() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let peer = try await StreamEchoPeer.start(group: group)
        let messages = Self.samples
        var received: [Transport: [Message]] = [:]
        for target in [peer.tcpTarget, peer.webSocketTarget] {
            var configuration = ClientSession.Configuration(
                target: target, game: .snap, seats: 2, name: "framing")
            configuration.reliability.keepaliveInterval = .seconds(60)
            let session = try await AsyncClientSession.connect(configuration, on: group.next())
            _ = try await within(.seconds(10)) { try await connected(session) }
            for message in messages { session.send(message) }
            received[target.transport] = try await within(.seconds(10)) { () -> [Message] in
                var echoes: [Message] = []
                for await event in session.events {
                    if case .message(let message, _) = event { echoes.append(message) }
                    if echoes.count == messages.count { return echoes }
                }
                throw TestFailure(description: "the event stream ended")
            }
            await session.disconnect()
        }
        let recorded = peer.recorded
        await peer.close()
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
        #expect(received[.tcp] == messages)
        #expect(received[.webSocket] == messages)
    }

    /// A client whose peer falls silent is disconnected 5 s after it last heard from it — the session's own timers,
    /// run by an injected clock rather than a 5-second wait.
    @Test func aSilentPeerIsReportedDisconnectedAfterFiveSeconds() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let peer = try await EchoPeer.start(on: loop)
        var settings = ClientSession.Configuration(target: peer.target, game: .suns, seats: 2, name: "quiet")
        settings.selfTimed = false
        let configuration = settings
        let (events, continuation) = AsyncStream.makeStream(of: SessionEvent.self)
        let (connectedAt, connectedAtContinuation) = AsyncStream.makeStream(of: NIODeadline.self)
        let session = try await loop.submit {
            let session = ClientSession(configuration: configuration, eventLoop: loop) { event in
                // On the loop, as the Welcome is processed: the last time the client heard from the peer is at most
                // this, and only microseconds before it.
                if case .stateChanged(.connected) = event { connectedAtContinuation.yield(.now()) }
                continuation.yield(event)
            }
            session.connect()
            return NIOLoopBound(session, eventLoop: loop)
        }.get()
        // The Hello and Welcome exchange runs on its own; the handshake timers are not needed on loopback.
        let heard = try await within(.seconds(10)) { () -> NIODeadline in
            for await time in connectedAt { return time }
            throw TestFailure(description: "no connection")
        }
        try await peer.mute()

        func state(after elapsed: TimeAmount) async throws -> ClientSession.State {
            try await loop.submit {
                session.value.tick(now: heard + elapsed)
                return session.value.state
            }.get()
        }
        // Keepalive Pings go out every second of the silence; nothing answers them.
        for second in 1...4 {
            guard case .connected = try await state(after: .seconds(Int64(second))) else {
                Issue.record("disconnected after only \(second) s of silence")
                return
            }
        }
        guard case .connected = try await state(after: .milliseconds(4_990)) else {
            Issue.record("disconnected before 5 s of silence")
            return
        }
        #expect(try await state(after: .seconds(5)) == .disconnected(.silence))
        continuation.finish()
        var reported: [ClientSession.State] = []
        for await event in events {
            if case .stateChanged(let state) = event { reported.append(state) }
        }
        #expect(reported.first == .connecting)
        #expect(reported.last == .disconnected(.silence))
        await peer.close()
        try await group.shutdownGracefully()
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
        .sunsStrike(SunsStrike(x: 0.25, y: 0.75, radius: 0.1)),
        .sunsCapture(SunsCapture(sunIndex: 3, gameTime: 12.5)),
        .sunsTally(SunsTally(entries: (0..<16).map { SunsTally.Entry(owner: UInt8($0 % 2), time: Float($0)) })),
        .clientQuit,
    ]
}
