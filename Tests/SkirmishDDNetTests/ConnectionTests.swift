import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishDDNet

/// The connection machine played by hand: injected server datagrams, injected time, no socket.
@Suite struct ConnectionTests {
    @Test func theJoinSequenceAsTheServerNeedsIt() throws {
        var harness = Harness()
        harness.start()
        // CONNECT: control flag, ack 0, no chunks; `TKEN` and the unknown token 0xFFFFFFFF.
        #expect(harness.sent == [[0x10, 0, 0, 1] + Array("TKEN".utf8) + [0xFF, 0xFF, 0xFF, 0xFF]])
        harness.sent.removeAll()

        harness.deliver(harness.server.connectAccept())
        var sent = harness.take()
        #expect(sent.count == 2)
        #expect(sent.first?.control == [Wire.Control.accept], "ACCEPT carries the server's token")
        let info = try #require(sent.last?.messages)
        #expect(info.map(\.id) == [Wire.System.ex, Wire.System.info])
        #expect(info.allSatisfy { $0.system && $0.vital } && info.map(\.sequence) == [1, 2])
        #expect(Array(info[0].fields.prefix(16)) == Wire.Extended.clientVersion)
        #expect(info[1].fields == Array("0.6 626fce9a778df4d4".utf8) + [0, 0], "net version, empty password")

        harness.server.ack = 2
        harness.deliver(
            harness.server.packet([
                (
                    true,
                    FakeServer.message(system: true, Wire.System.mapChange) { p in
                        p.string("dm1", limit: 100)
                        p.int(Int32(0x1234))
                        p.int(Int32(5_000))
                    }
                )
            ]))
        sent = harness.take()
        #expect(sent.flatMap(\.messages).map(\.id) == [Wire.System.ready], "READY at once: no map download")
        #expect(sent.first?.header.ack == 1, "the map change is acknowledged")

        harness.deliver(harness.server.packet([(true, FakeServer.message(system: true, Wire.System.conReady))]))
        let start = try #require(harness.take().flatMap(\.messages).first)
        #expect(!start.system && start.id == Wire.Game.startInfo)
        #expect(start.fields.starts(with: Array("bot-7".utf8) + [0] + Array("skirmish".utf8) + [0]))

        harness.deliver(harness.server.packet([(true, FakeServer.message(system: false, Wire.Game.readyToEnter))]))
        #expect(harness.take().flatMap(\.messages).map(\.id) == [Wire.System.enterGame])
        #expect(harness.events.isEmpty, "not established before the first snapshot")

        harness.now += .milliseconds(250)
        harness.deliver(harness.snapshot(tick: 100, base: -1, words: Harness.firstSnapshot(clientID: 7)))
        let session = try #require(
            harness.events.compactMap { if case .established(let s) = $0 { s } else { nil } }.first)
        #expect(session.clientID == 7 && session.map == "dm1" && session.mapCRC == 0x1234 && session.name == "bot-7")
        #expect(harness.metrics.contains(.handshake(.milliseconds(250))))
        #expect(harness.connection.world.local == World.Character(clientID: 7, x: 320, y: 640))
        let input = try #require(harness.take().flatMap(\.messages).first { $0.id == Wire.System.input })
        #expect(!input.vital)
        var fields = input.fields
        let acknowledged = fields.withUnsafeBytes { raw in
            var unpacker = Unpacker(raw)
            return unpacker.int()
        }
        #expect(acknowledged == 100, "inputs acknowledge the newest verified snapshot")
        fields.removeAll()

        // Inputs follow at the server's rate: 50 in one second.
        harness.send(.input(.init(direction: -1, jump: true)))
        harness.advance(by: .seconds(1))
        let inputs = harness.take().flatMap(\.messages).filter { $0.id == Wire.System.input }
        #expect((49...51).contains(inputs.count), "\(inputs.count) inputs in a second")
        #expect(harness.errors.isEmpty)
    }

    @Test func aChecksumMismatchIsADesyncAndAsksForAFullSnapshot() throws {
        var harness = Harness()
        harness.join()
        _ = harness.take()
        var character = [Int32](repeating: 0, count: 22)
        character[1] = 3
        let words: [Int32] = [0, 1, 0, 9, 7] + character
        harness.deliver(harness.snapshot(tick: 102, base: 100, words: words, crc: 12_345))
        let desync = try #require(harness.metrics.compactMap { if case .desync(let d) = $0 { d } else { nil } }.first)
        #expect(desync.part == "character", "only characters changed, so the character differs")
        #expect(desync.tick == 102 && desync.observed == "12345" && desync.expected != desync.observed)
        let request = try #require(harness.take().flatMap(\.messages).first { $0.id == Wire.System.input })
        let acknowledged = request.fields.withUnsafeBytes { raw in
            var unpacker = Unpacker(raw)
            return unpacker.int()
        }
        #expect(acknowledged == -1, "after a desync the bot asks for a full snapshot")
        // A second bad one in the same episode is not another episode; a good one ends it.
        harness.deliver(harness.snapshot(tick: 104, base: 100, words: words, crc: 1))
        harness.deliver(harness.snapshot(tick: 106, base: 100, words: words))
        harness.deliver(harness.snapshot(tick: 108, base: 106, words: words, crc: 1))
        #expect(harness.metrics.filter { if case .desync = $0 { true } else { false } }.count == 2)
        #expect(harness.connection.world.tick == 106)
    }

    @Test func unacknowledgedVitalChunksAreResentThenTimeOut() throws {
        var harness = Harness()
        harness.start()
        harness.deliver(harness.server.connectAccept())
        _ = harness.take()
        // The server answers nothing but keep-alives acknowledging nothing.
        for _ in 0..<3 {
            harness.advance(by: .milliseconds(600))
            harness.deliver(harness.server.control([Wire.Control.keepAlive]))
        }
        let resent = harness.take().flatMap(\.messages).filter { $0.vital }
        #expect(resent.map(\.sequence).contains(1), "the oldest vital chunk went out again")
        #expect(harness.metrics.contains { if case .resent = $0 { true } else { false } })

        // The server asks for everything again with the resend flag.
        harness.metrics.removeAll()
        harness.deliver(harness.server.packet([], flags: .resend))
        #expect(harness.metrics.contains(.resent(count: 2)))
        #expect(Set(harness.take().flatMap(\.messages).map(\.sequence)) == [1, 2])

        for _ in 0..<16 {
            harness.advance(by: .seconds(1))
            harness.deliver(harness.server.control([Wire.Control.keepAlive]))
        }
        #expect(harness.events.contains { if case .closed(let r) = $0 { r.kind == "ack_timeout" } else { false } })
    }

    @Test func connectsRepeatUntilTheHandshakeTimesOut() {
        var harness = Harness()
        harness.start()
        harness.advance(by: .seconds(21))
        let connects = harness.sent.filter { $0.count > 3 && $0[3] == Wire.Control.connect }
        #expect((39...42).contains(connects.count), "a connect every 500 ms: \(connects.count)")
        #expect(harness.events.count == 1)
        #expect(
            harness.events.contains { if case .closed(let r) = $0 { r.kind == "handshake_timeout" } else { false } })
        #expect(harness.connection.nextDeadline == .distantFuture)
    }

    @Test func silenceInGameCloses() {
        var harness = Harness()
        harness.join()
        harness.advance(by: .seconds(16))
        #expect(harness.events.contains { if case .closed(let r) = $0 { r.kind == "silence_timeout" } else { false } })
    }

    @Test(arguments: [
        ("This server is full", "rejected_server_full"), ("Wrong password", "rejected_wrong_password"),
        ("You have been banned for 5 minutes (spam)", "rejected_banned"),
        ("Only 4 players with the same IP are allowed", "rejected_connection_limit"),
        ("Kicked (afk)", "closed_by_server"), ("Server shutdown", "server_shutdown"),
    ])
    func aServerCloseReportsItsReason(text: String, kind: String) throws {
        var harness = Harness()
        harness.start()
        harness.deliver(harness.server.connectAccept())
        harness.deliver(harness.server.control([Wire.Control.close] + Array(text.utf8) + [0]))
        let reason = try #require(harness.events.compactMap { if case .closed(let r) = $0 { r } else { nil } }.first)
        #expect(reason.kind == kind && reason.detail == text)
        #expect(DDNetConnection.description.errorKinds.contains(kind))
    }

    @Test func chatGoesOutVitalAndComesBack() throws {
        var harness = Harness()
        harness.join()
        _ = harness.take()
        harness.send(.say("gl hf"))
        let say = try #require(harness.take().flatMap(\.messages).first)
        #expect(!say.system && say.id == Wire.Game.say && say.vital && say.fields == [0] + Array("gl hf".utf8) + [0])
        harness.deliver(
            harness.server.packet([
                (
                    true,
                    FakeServer.message(system: false, Wire.Game.chat) { p in
                        p.int(Int32(0))
                        p.int(Int32(7))
                        p.string("gl\u{1}hf", limit: 100)
                    }
                )
            ]))
        #expect(harness.events.contains { $0.chatLine == .init(clientID: 7, team: false, text: "gl hf") })
    }

    @Test func pingsMeasureTheRoundTrip() {
        var harness = Harness()
        harness.join()
        _ = harness.take()
        // The first ping goes out at the first tick in game, at the join's instant.
        harness.advance(by: .milliseconds(1))
        #expect(harness.take().flatMap(\.messages).contains { $0.id == Wire.System.ping })
        // Counted as a probe, so the summary's reply rate has the pings it answers.
        #expect(harness.metrics.filter { $0 == .probeSent }.count == 1)
        harness.now += .milliseconds(30)
        harness.deliver(harness.server.packet([(false, FakeServer.message(system: true, Wire.System.pingReply))]))
        #expect(harness.metrics.contains(.roundTrip(.milliseconds(31))))
    }

    /// Every kind of bad input is counted once, under its kind, and the connection carries on.
    @Test func badInputIsCountedByKindAndNeverFatal() throws {
        var harness = Harness()
        harness.join()
        let token = harness.server.token
        var server = harness.server
        let cases: [(String, [UInt8])] = [
            ("bad_packet", [0x00, 0x00]),
            ("bad_packet", [UInt8](repeating: 0, count: 1_401)),
            ("bad_huffman", [0x80, 0x05, 0x01]),
            (
                "bad_token",
                {
                    var p = server.control([Wire.Control.keepAlive], ack: 5)
                    p[p.count - 1] ^= 0xFF
                    return p
                }()
            ),
            ("bad_chunk", server.encode(flags: [], ack: 5, chunks: [0x03, 0x00, 0x01], count: 1, compress: false)),
            (
                "bad_message",
                server.packet([(true, FakeServer.message(system: true, Wire.System.mapChange) { $0.raw([0x64]) })])
            ),
            ("bad_snapshot", harness.snapshot(tick: 200, base: -1, words: [7, 0, 0])),
            (
                "bad_snapshot",
                server.packet([
                    (
                        false,
                        FakeServer.message(system: true, Wire.System.snap) { p in
                            for value: Int32 in [300, 1, 0, 0, 0, 0] { p.int(value) }
                        }
                    )
                ])
            ),
            ("bad_ack", server.control([Wire.Control.keepAlive], ack: 900)),
        ]
        _ = token
        for (kind, datagram) in cases {
            harness.metrics.removeAll()
            harness.deliver(datagram)
            #expect(harness.errors == [kind], "expected \(kind), counted \(harness.errors)")
        }
        #expect(!harness.events.contains { if case .closed = $0 { true } else { false } })
        harness.metrics.removeAll()
        harness.deliver(harness.snapshot(tick: 210, base: 100, words: [0, 0, 0]))
        #expect(harness.connection.world.tick == 210, "a good snapshot still decodes after all that")
    }

    @Test func theDescriptionListsEverySeries() {
        let description = DDNetConnection.description
        #expect(description.name == "ddnet" && description.transports == [.udp])
        #expect(description.packetKinds.count == DDNetConnection.Kind.allCases.count)
        #expect(Set(description.packetKinds.map(\.name)).count == description.packetKinds.count)
        #expect(
            description.errorKinds.contains("bad_huffman") && description.errorKinds.contains("rejected_server_full"))
        #expect(description.figures.contains([.roundTrip, .resends, .handshake, .snapshotAge, .desyncs]))
    }
}

extension ClientEvent<DDNetConnection> {
    /// The chat line this event carries, if it is one.
    var chatLine: DDNetConnection.ChatLine? {
        if case .message(.chat(let line)) = self { return line }
        return nil
    }
}
