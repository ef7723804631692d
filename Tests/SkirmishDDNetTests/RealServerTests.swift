import SkirmishNet
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishDDNet

/// The plug-in against Debian's unmodified `DDNet-Server` 16.4 on loopback: the judge of every protocol detail.
///
/// Deadlines are generous (a busy two-core machine), conditions exact, and every loop bounded by the driver.
@Suite(.serialized, .ownThread)
struct RealServerTests {
    /// Runs until every bot is in the game or closed; fails the test unless all got in.
    private func join(_ driver: LoopbackDriver, timeout: Duration = .seconds(60)) throws {
        driver.start()
        driver.run(timeout: timeout) { $0.bots.allSatisfy { $0.session != nil || $0.closed != nil } }
        let stuck = driver.bots.filter { $0.session == nil }.map {
            "\($0.connection.name): \($0.closed?.description ?? "open")"
        }
        try #require(stuck.isEmpty, "bots that did not reach the game: \(stuck)")
    }

    @Test func botsJoinPlayChatAndStayInSync() throws {
        let server = try DDNetServer()
        defer { server.stop() }
        let driver = try LoopbackDriver(port: server.port, count: 4)
        try join(driver)
        // The server logs `team_join player='ID:name'` for each; the loop keeps running while it is awaited.
        var joins: [String] = []
        for bot in driver.bots {
            let id = try #require(bot.session?.clientID, "\(bot.connection.name) learned no client id")
            joins.append("team_join player='\(id):\(bot.connection.name)'")
        }
        let logged = driver.run(timeout: .seconds(10)) { _ in joins.allSatisfy { server.output.contains($0) } }
        #expect(logged, "missing: \(joins.filter { !server.output.contains($0) })")

        // Bot 0 runs right for two seconds while everybody plays on for over ten.
        let start = try #require(driver.bots[0].lastWorld.local?.x)
        driver.send(.input(.init(direction: 1)), from: 0)
        let before = driver.bots.map(\.worlds)
        let began = LoopbackDriver.now()
        driver.run(timeout: .seconds(11)) { _ in LoopbackDriver.now() - began >= .seconds(10.5) }
        let moved = try #require(driver.bots[0].lastWorld.local?.x)
        #expect(moved > start, "bot 0 held right but stayed at x \(start) → \(moved): its inputs were not applied")

        for (index, bot) in driver.bots.enumerated() {
            let name = bot.connection.name
            #expect(bot.closed == nil, "\(name) closed: \(String(describing: bot.closed))")
            // Snapshots come at 25 Hz (every second tick); half that over ten seconds is a generous floor.
            #expect(bot.worlds - before[index] >= 125, "\(name) decoded only \(bot.worlds - before[index]) snapshots")
            #expect(driver.count(index) { if case .desync = $0 { true } else { false } } == 0)
            #expect(driver.errors(index).isEmpty, "\(name) counted errors \(driver.errors(index))")
            #expect(bot.timings > 100, "\(name) got \(bot.timings) input timings: the server did not take its inputs")
            #expect(driver.count(index) { if case .roundTrip = $0 { true } else { false } } >= 5)
            #expect(driver.count(index) { if case .snapshotAge = $0 { true } else { false } } >= 125)
            #expect(driver.count(index) { if case .handshake = $0 { true } else { false } } == 1)
            #expect(bot.lastWorld.local != nil, "\(name) does not see its own character")
            // The server clips characters out of view (`NetworkClipped`), so not all three need be in the snapshot.
            #expect(!bot.lastWorld.others.isEmpty, "\(name) sees no other character")
        }

        // A chat line comes back to everybody, its speaker included, from the speaker's client id.
        let speaker = try #require(driver.bots[1].session?.clientID)
        driver.send(.say("hello from bot-1"), from: 1)
        let echoed = driver.run(timeout: .seconds(15)) { driver in
            driver.bots.allSatisfy { bot in
                bot.chat.contains { $0.clientID == speaker && $0.text == "hello from bot-1" }
            }
        }
        #expect(echoed, "chat lines seen: \(driver.bots.map(\.chat))")
        driver.closeAll()
    }

    @Test func aFullServerClosesTheExtraBotsWithAReason() throws {
        let server = try DDNetServer(settings: ["sv_max_clients 4"])
        defer { server.stop() }
        let driver = try LoopbackDriver(port: server.port, count: 6)
        driver.start()
        let settled = driver.run(timeout: .seconds(60)) { driver in
            driver.bots.allSatisfy { $0.session != nil || $0.closed != nil }
        }
        #expect(settled)
        let full = driver.bots.compactMap(\.closed).filter { $0.kind == "rejected_server_full" }
        #expect(driver.bots.filter { $0.session != nil }.count == 4)
        #expect(full.count == 2, "closes: \(driver.bots.map { $0.closed?.description ?? "in game" })")
        #expect(full.allSatisfy { $0.detail == "This server is full" && !$0.isOutage })
        driver.closeAll()
    }

    @Test func aFlippedBitInASnapshotIsADesyncAndTheBotRecovers() throws {
        let server = try DDNetServer()
        defer { server.stop() }
        let driver = try LoopbackDriver(port: server.port, count: 2)
        try join(driver)
        driver.run(timeout: .seconds(2)) { _ in false }

        // Flip the lowest bit of the last byte of the next single-part snapshot bot 0 receives: the last varint of
        // the last item's data, so the delta still decodes but one value is off by a power of two.
        var flipped: Int32?
        driver.rewrite = { index, datagram, connection in
            guard index == 0, flipped == nil else { return }
            flipped = SnapshotCorruption.flipLastPayloadBit(&datagram, token: connection.token.expected)
        }
        let before = driver.bots[0].worlds
        let caught = driver.run(timeout: .seconds(10)) { driver in
            flipped != nil && driver.count(0) { if case .desync = $0 { true } else { false } } > 0
        }
        #expect(caught)
        let desyncs = driver.bots[0].metrics.compactMap { if case .desync(let d) = $0 { d } else { nil } }
        #expect(desyncs.count == 1)
        #expect(
            desyncs.first.map { $0.tick == UInt32(bitPattern: flipped ?? 0) } == true,
            "\(desyncs), flipped \(String(describing: flipped))")
        #expect(desyncs.first.map { $0.expected != $0.observed } == true)
        // Caught within one snapshot: the corrupted one was never delivered as a world.
        #expect(driver.bots[0].lastWorld.tick != Int(flipped ?? -1))
        let afterDesync = driver.bots[0].worlds
        let recovered = driver.run(timeout: .seconds(10)) { $0.bots[0].worlds >= afterDesync + 25 }
        #expect(recovered, "bot 0 decoded \(driver.bots[0].worlds - before) snapshots after the flip")
        #expect(driver.count(0) { if case .desync = $0 { true } else { false } } == 1)
        #expect(driver.count(1) { if case .desync = $0 { true } else { false } } == 0)
        #expect(driver.errors(0).isEmpty, "\(driver.errors(0))")
        driver.closeAll()
    }

    @Test func botsJoinThroughFivePercentLossAndResend() throws {
        let server = try DDNetServer()
        defer { server.stop() }
        let driver = try LoopbackDriver(port: server.port, count: 4, seed: 7)
        driver.lossRate = 0.05
        try join(driver, timeout: .seconds(90))
        // Chat once a second (vital, so a lost one is resent) until a resend has been counted.
        var lines = 0
        var next = LoopbackDriver.now()
        let resent = driver.run(timeout: .seconds(60)) { driver in
            if LoopbackDriver.now() >= next && lines < 40 {
                lines += 1
                next = LoopbackDriver.now() + .milliseconds(1_100)
                for index in driver.bots.indices { driver.send(.say("line \(lines)"), from: index) }
            }
            return driver.bots.indices.contains { index in
                driver.count(index) { if case .resent = $0 { true } else { false } } > 0
            }
        }
        #expect(resent)
        for (index, bot) in driver.bots.enumerated() {
            #expect(bot.closed == nil)
            #expect(driver.count(index) { if case .desync = $0 { true } else { false } } == 0)
        }
        driver.closeAll()
    }
}

/// Rewrites a datagram from the server with a bit flipped in a snapshot's payload, using the plug-in's own codec.
enum SnapshotCorruption {
    /// When `datagram` carries a single-part snapshot, flips the lowest bit of its payload's last byte, re-encodes
    /// the datagram and returns the snapshot's tick; otherwise leaves it alone and returns `nil`.
    static func flipLastPayloadBit(_ datagram: inout [UInt8], token: UInt32?) -> Int32? {
        var payload = [UInt8](repeating: 0, count: PacketHeader.maxPacketSize)
        let decoded = datagram.withUnsafeBytes { bytes in
            payload.withUnsafeMutableBytes { try? PacketCodec.decode(bytes, token: token, into: $0) }
        }
        guard let (header, count) = decoded, !header.flags.contains(.control) else { return nil }
        var target: (offset: Int, tick: Int32)?
        payload.withUnsafeBytes { bytes in
            var reader = ChunkReader(UnsafeRawBufferPointer(rebasing: bytes[..<count]), count: header.chunkCount)
            while let chunk = try? reader.next() {
                var unpacker = Unpacker(chunk.data)
                guard unpacker.int() == Wire.System.snapSingle << 1 | 1 else { continue }
                let tick = unpacker.int()
                guard !unpacker.failed, chunk.data.count > 0 else { continue }
                let end = chunk.data.baseAddress! - bytes.baseAddress! + chunk.data.count
                target = (end - 1, tick)
            }
        }
        guard let target else { return nil }
        payload[target.offset] ^= 1
        var output = [UInt8](repeating: 0, count: PacketHeader.maxPacketSize)
        let size = payload.withUnsafeMutableBytes { chunks in
            output.withUnsafeMutableBytes { out in
                PacketCodec.encode(
                    flags: header.flags.subtracting(.compression), ack: header.ack, chunkCount: header.chunkCount,
                    chunks: chunks, chunkBytes: count, token: token, compress: true, into: out)
            }
        }
        guard size > 0 else { return nil }
        datagram = Array(output[..<size])
        return target.tick
    }
}
