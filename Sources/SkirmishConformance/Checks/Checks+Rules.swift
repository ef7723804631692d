import NIOWebSocket
import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// The server checks a `Hello` in the spec's order, so the first failing check decides the answer: version before
    /// the cookie, the cookie before the name, the name before a resume token, the token before the game, the game
    /// before the seat count, the seat count before the match; and a bad name gets `Reject(10)`.
    static let handshakeOrder = ConformanceCheck(
        id: "handshake.order", title: "a Hello wrong in several ways gets the Reject of the first check it fails",
        needs: .nothing, limit: .seconds(15)
    ) { context in
        enum Answer: Sendable, Equatable {
            case reject(UInt16)
            case challenge

            var text: String {
                switch self {
                case .reject(let code): "Reject(\(code)\(Self.names[code].map { " \($0)" } ?? ""))"
                case .challenge: "a Challenge"
                }
            }

            static let names: [UInt16: String] = [
                1: "unsupported version", 4: "bad request", 5: "no such match", 6: "resume expired", 10: "bad name",
                11: "seat in use",
            ]
        }
        struct Case: Sendable {
            var what: String
            var hello: Hello
            /// Sent as bytes, without the probe's cookie round: the answer comes before the cookie is checked.
            var raw: Bool
            var answer: Answer
        }
        // A game the server seats, at a count it takes (Snap for 4 or 3 on a server that seats it for no two).
        let (tableGame, tableSeats) = context.survey.table ?? (context.game, 2)
        func hello(_ name: String, game: GameKind? = nil, seats: UInt8? = nil, match: UInt32 = 0, token: UInt64 = 0)
            -> Hello
        {
            Hello(
                game: game ?? tableGame, seats: seats ?? tableSeats, match: match, resumeToken: token,
                name: "\(name)\(context.run)")
        }
        let other = GameKind(rawValue: 200)
        let unknownToken: UInt64 = 0x0C0F_FEE0_DEAD_BEEF
        var newer = hello("v2\u{7}", game: other)
        newer.version = 2
        var cases: [Case] = [
            Case(
                what: "a Hello of version 2 with a bad name, for game 200", hello: newer, raw: true,
                answer: .reject(1)),
            Case(
                what: "a Hello with a bell (U+0007) in its name, an unknown resume token, for game 200",
                hello: hello("b\u{7}", game: other, token: unknownToken), raw: false, answer: .reject(10)),
            Case(
                what: "a Hello with a right-to-left override (U+202E) in its name",
                hello: hello("r\u{202E}"), raw: false, answer: .reject(10)),
            Case(
                what: "a Hello with an unknown resume token, for game 200 and 9 seats",
                hello: hello("tok", game: other, seats: 9, token: unknownToken), raw: false, answer: .reject(6)),
            Case(
                what: "a Hello for game 200, 9 seats, match 0x7ffffff1",
                hello: hello("gm", game: other, seats: 9, match: 0x7FFF_FFF1), raw: false, answer: .reject(4)),
            Case(
                what: "a Hello for \(tableGame) with 9 seats, match 0x7ffffff1",
                hello: hello("st", seats: 9, match: 0x7FFF_FFF1), raw: false, answer: .reject(4)),
            Case(
                what: "a Hello for \(tableGame), \(tableSeats) seats, match 0x7ffffff1 (not forming)",
                hello: hello("mt", match: 0x7FFF_FFF1), raw: false, answer: .reject(5)),
        ]
        if context.isDatagram {
            // The cookie comes before the name: an unverified address is never told about its name.
            cases.insert(
                Case(
                    what: "a first Hello (zero cookie) with a bell in its name", hello: hello("c\u{7}"), raw: true,
                    answer: .challenge), at: 1)
        }
        let limit = Duration.seconds(5) * context.patience
        // Every case from its own probe at once: each is a Reject or a Challenge, so none seats anyone.
        let wrong = await context.eachAtOnce(cases) { item, probe in
            let packet: Packet?
            if item.raw {
                probe.send(Packet(.hello(item.hello)), sealed: false)
                packet = await probe.receive(within: limit, answering: false) { packet in
                    switch packet.message {
                    case .reject, .challenge, .welcome: true
                    default: false
                    }
                }
            } else {
                packet = await probe.handshake(item.hello, within: limit)
            }
            let got: Answer
            switch packet?.message {
            case .reject(let reject)?: got = .reject(reject.reason.rawValue)
            case .challenge?: got = .challenge
            case .welcome?: return "a Welcome"
            default: return "no answer within \(limit)"
            }
            return got == item.answer ? nil : got.text
        }
        if let (item, wrong) = wrong { return .failed("\(item.answer.text) to \(item.what)", wrong) }
        return .pass
    }

    /// The server resends an unacknowledged reliable packet with growing intervals (the timeout doubles after each,
    /// from at least 50 ms, capped at 2 s), and an Ack whose bit 0 names the packet (`cumulative + 1`) stops it, as
    /// the spec requires a sender to honour that bit though an honest receiver never sets it.
    static let reliableResend = ConformanceCheck(
        id: "reliable.resend",
        title: "resends back off (doubling, 50 ms to 2 s) and stop at an Ack whose bit 0 names the packet",
        transports: [.udp], limit: .seconds(15)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let answer = await probe.handshake(context.hello("rto")), case .welcome(let welcome) = answer.message
        else { return .failed("a Welcome", "none within 5 s") }
        let partner = try await context.player("rpart", match: welcome.match)
        defer { release(partner) }
        guard await partner.seated(within: .seconds(5) * context.patience) != nil else {
            return .failed("a second player seated beside the probe", partner.now.lastState)
        }
        partner.send(.chat(Chat(text: "resend \(context.run)")))
        context.step("waiting for the relayed Chat")
        // Read without acknowledging anything: the server must resend.
        guard
            let (chat, first) = await probe.arrival(
                within: .seconds(3) * context.patience, where: { if case .chat = $0.message { true } else { false } })
        else { return .failed("the partner's Chat relayed to the probe", "none within 3 s") }
        context.step("timing the resends of the Chat")
        // Up to five resends, for 6 s after the Chat: well inside the 10 s ack timeout, which ends the session with
        // the Chat still unacknowledged, so that a server ignoring the Ack below still has time to resend. The probe
        // Pings meanwhile, so the silence timeout does not end it either.
        var times = [first]
        let until = first + .seconds(6)
        while times.count < 6, ContinuousClock.now < until {
            guard
                let (_, at) = await probe.arrivalStayingAlive(
                    within: until - ContinuousClock.now,
                    where: { $0.number == chat.number && $0.message == chat.message })
            else { break }
            times.append(at)
        }
        guard times.count >= 4 else {
            return .failed(
                "at least 3 resends of an unacknowledged Chat (reliable \(chat.number)) within 6 s",
                "\(times.count - 1)")
        }
        let intervals = zip(times, times.dropFirst()).map { $1 - $0 }
        // The server's timers fire on its ticks (60 Hz, a reference server) and the probe reads on a busy machine:
        // slack for both, the doubling itself never shrinks. A late read lengthens one interval by what it takes
        // from the next, so neighbours are compared only where they are long (300 ms on) and short of the cap (up
        // to 1 s), and the rest is judged on spans.
        let slack = Duration.milliseconds(20) + .milliseconds(10) * (context.patience - 1)
        let shown = intervals.map { "\($0.milliseconds) ms" }.joined(separator: ", ")
        guard intervals[0] >= .milliseconds(50) - slack else {
            return .failed("the first resend at least 50 ms (the smallest timeout) after the packet", shown)
        }
        let doubling = "each interval between resends twice the one before, up to 2 s"
        // n resends of a timeout that starts at 50 ms or more and doubles take (2ⁿ − 1) × 50 ms at least, up to the
        // cap: resends that do not back off come sooner.
        let least = Duration.milliseconds(50) * Double((1 << intervals.count) - 1)
        guard times.last! - first >= min(least, .milliseconds(1_500)) - slack else { return .failed(doubling, shown) }
        for (earlier, later) in zip(intervals, intervals.dropFirst()) {
            guard later <= min(earlier * 2, .seconds(2)) + .seconds(1) * context.patience else {
                return .failed(doubling, shown)
            }
            // Near the cap the next interval is the cap, whatever the doubling: judged only from 300 ms to 1 s.
            guard earlier < .milliseconds(300) || earlier > .seconds(1) || later >= earlier * 1.5 - slack else {
                return .failed(doubling, shown)
            }
        }
        // Doublings from the first: a timeout that stays put fails here whatever its length.
        guard intervals.last! >= min(intervals[0] * 4, .milliseconds(1_900)) - slack else {
            return .failed(doubling, shown)
        }
        // Bit 0 of the bitfield is `cumulative + 1`: the Chat itself. A Ping after the Ack is the barrier: every
        // resend read after its Pong was sent after the server handled the Ack.
        let ack = Packet(.ack(Ack(cumulative: chat.number &- 1, bitfield: 1)))
        probe.send(ack)
        context.step("listening for resends after the Ack naming the Chat by bit 0")
        guard let handled = await probe.barrier(within: .seconds(2) * context.patience, resending: ack) else {
            return .failed("a Pong to the Ping sent after the Ack", "none within 2 s")
        }
        // Unheeded, the resends go on at most 2 s apart; one a server that handles Acks on its tick had already
        // queued is allowed within a tick's slack of the Pong.
        let queued = handled + .milliseconds(50) * context.patience
        let listen = handled + .seconds(2) + .milliseconds(300) * context.patience
        if let (_, at) = await probe.arrivalStayingAlive(
            within: listen - ContinuousClock.now, after: queued,
            where: { $0.number == chat.number && $0.message == chat.message })
        {
            return .failed(
                "no resend of reliable \(chat.number) after an Ack of cumulative \(chat.number &- 1), bitfield 0b1 "
                    + "(bit 0 names it)",
                "a resend \((at - handled).milliseconds) ms after the Pong that followed it")
        }
        return .pass
    }

    /// A resume `Hello` for a seat whose owner is still connected: refused with `Reject(11 seat in use)` without
    /// proof of the session key (the owner keeps its seat), and over UDP, sealed with the key, answered with the seat
    /// and the owner sent `Disconnect(8 resumed elsewhere)`.
    static let sessionResumeLive = ConformanceCheck(
        id: "session.resume-live",
        title: "a resume while the owner is connected: Reject(11) unsealed, the seat moved when sealed (UDP)",
        limit: .seconds(20)
    ) { context in
        let owner = try await context.probe()
        defer { owner.close() }
        guard let answer = await owner.handshake(context.hello("own")), case .welcome(let welcome) = answer.message
        else { return .failed("a Welcome", "none within 5 s") }
        let partner = try await context.player("opart", match: welcome.match)
        defer { release(partner) }
        guard await partner.seated(within: .seconds(5) * context.patience) != nil else {
            return .failed("a second player seated beside the probe", partner.now.lastState)
        }
        let thief = try await context.probe()
        defer { thief.close() }
        let expected = "Reject(11 seat in use) to a resume Hello (unsealed) for a seat whose owner is connected"
        switch await thief.handshake(context.hello("thief", resumeToken: welcome.resumeToken))?.message {
        case .reject(let reject)? where reject.reason == .seatInUse: break
        case .reject(let reject)?: return .failed(expected, "Reject(\(reject.reason.rawValue))")
        case .welcome?: return .failed(expected, "a Welcome: the seat was handed to the token alone")
        default: return .failed(expected, "no answer within 5 s")
        }
        owner.send(.ping(Ping(player: 0, count: 0x11FE_0001, sendTime: 1)))
        guard
            await owner.receive(
                within: .seconds(2) * context.patience,
                where: { if case .pong(let pong) = $0.message { pong.count == 0x11FE_0001 } else { false } }) != nil
        else { return .failed("the owner to keep its seat after the refused resume (a Pong)", "no Pong within 2 s") }
        guard context.isDatagram else { return .pass }
        // Sealed: the cookie round, then the Hello with the cookie and the trailer under the owner's session key.
        let heir = try await context.probe()
        defer { heir.close() }
        var hello = context.hello("heir", resumeToken: welcome.resumeToken)
        heir.send(Packet(.hello(hello)), sealed: false)
        guard
            case .challenge(let challenge)? = await heir.receive(
                within: .seconds(3) * context.patience, answering: false,
                where: { if case .challenge = $0.message { true } else { false } })?.message
        else { return .failed("a Challenge to a resume Hello with a zero cookie", "none within 3 s") }
        hello.cookie = challenge.cookie
        heir.send(try sealed(Packet(.hello(hello)), with: welcome.sessionKey), sealed: false)
        let moved = "a Welcome for seat \(welcome.seat) to a resume Hello sealed with the session key"
        guard
            let reply = await heir.receive(
                within: .seconds(3) * context.patience, answering: false,
                where: {
                    switch $0.message {
                    case .welcome, .reject: true
                    default: false
                    }
                })
        else { return .failed(moved, "no answer within 3 s") }
        guard case .welcome(let again) = reply.message else {
            if case .reject(let reject) = reply.message { return .failed(moved, "Reject(\(reject.reason.rawValue))") }
            return .failed(moved, "\(reply.message.type)")
        }
        // The heir holds the seat now: it leaves, sealed, so the match does not wait for it.
        heir.send(try sealed(Packet(.disconnect(Disconnect(reason: .quit))), with: welcome.sessionKey), sealed: false)
        guard again.seat == welcome.seat, again.peer == welcome.peer else {
            return .failed(moved + " (peer \(welcome.peer))", "seat \(again.seat), peer \(again.peer)")
        }
        let told = await owner.receive(within: .seconds(2) * context.patience, answering: false) { packet in
            if case .disconnect(let bye) = packet.message { bye.reason == .resumedElsewhere } else { false }
        }
        guard told != nil else {
            return .failed("Disconnect(8 resumed elsewhere), sealed, to the owner's old address", "none within 2 s")
        }
        return .pass
    }

    /// When one Puck player leaves, the other is sent the last snapshot (phase over) and `PuckMatchOver` naming it
    /// the winner in its own frame: `winner` 0 (me) whichever seat it holds, the scores its own first.
    static let puckOver = ConformanceCheck(
        id: "puck.over", title: "a forfeit's PuckMatchOver names the winner in its own frame, seat 1 included",
        needs: .game(.puck), limit: .seconds(15)
    ) { context in
        let (pair, failure) = try await context.pair(game: .puck).players()
        guard let (a, wa, b, _) = pair else { return failure! }
        defer { release(a, b) }
        // Seat 0 leaves, so the winner is seat 1: the seat whose frame is mirrored.
        let (leaver, stayer) = wa.seat == 0 ? (a, b) : (b, a)
        context.step("waiting for the match to start")
        guard
            await stayer.wait(
                .seconds(5) * context.patience, until: { $0.snapshots.contains { $0.phase != .waiting } }) != nil
        else { return .failed("a snapshot of the started match to seat 1", "none within 5 s") }
        await leaver.leave()
        context.step("waiting for PuckMatchOver")
        guard let record = await stayer.wait(.seconds(3) * context.patience, until: { $0.over != nil }),
            let over = record.over
        else {
            return .failed("PuckMatchOver to seat 1 after seat 0 left", "none within 3 s")
        }
        let last = record.snapshots.last
        guard over.winner == .me else {
            return .failed("PuckMatchOver to seat 1 naming it the winner: winner 0 (me)", "winner \(over.winner)")
        }
        if let last, over.myScore != last.myScore || over.theirScore != last.theirScore {
            return .failed(
                "PuckMatchOver's scores \(last.myScore)-\(last.theirScore), seat 1's own first, as its last snapshot",
                "\(over.myScore)-\(over.theirScore)")
        }
        guard last?.phase == .over else {
            return .failed("a last snapshot in phase over (3) to seat 1", "phase \(String(describing: last?.phase))")
        }
        return .pass
    }

    /// Over TCP a frame whose length prefix announces more than 65,536 bytes is refused from the prefix alone: the
    /// server closes the connection (framing is lost).
    static let streamOversize = ConformanceCheck(
        id: "stream.oversize", title: "a TCP frame announcing more than 64 KiB closes the connection",
        transports: [.tcp], needs: .nothing, limit: .seconds(10)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        // 65,537 announced, and a packet's first bytes: a server that waits for the body keeps the connection.
        probe.sendUnframed([0x00, 0x01, 0x00, 0x01, 0x53, 0x4e, 0x41, 0x50, 0, 0, 0, 0, 0x00, 0x06])
        let end = ContinuousClock.now + .seconds(2) * context.patience
        while ContinuousClock.now < end, !probe.isClosed {
            _ = await probe.receiveRaw(within: end - ContinuousClock.now)
        }
        guard probe.isClosed else {
            return .failed("the connection closed after a length prefix of 65,537", "still open after 2 s")
        }
        return .pass
    }
}

extension ConformanceCheck {
    /// Over WebSocket the server refuses what RFC 6455 and the spec refuse with the close code the spec names: a text
    /// message 1003, an unmasked frame 1002, a message above 65,536 bytes 1009.
    static let streamWebSocketClose = ConformanceCheck(
        id: "stream.websocket-close",
        title: "a text message, an unmasked frame and a message over 64 KiB close with 1003, 1002 and 1009",
        transports: [.webSocket], needs: .nothing, limit: .seconds(10)
    ) { context in
        let cases: [(what: String, bytes: [UInt8], opcode: WebSocketOpcode, masked: Bool, code: UInt16)] = [
            ("a text message", Array("hello".utf8), .text, true, 1003),
            ("an unmasked binary frame", [0x53, 0x4e, 0x41, 0x50], .binary, false, 1002),
            (
                "a binary message of 65,537 bytes", [UInt8](repeating: 0, count: WireLimits.maxFrame + 1), .binary,
                true, 1009
            ),
        ]
        let limit = Duration.seconds(2) * context.patience
        // Each from its own connection, all at once.
        let wrong = await context.eachAtOnce(cases) { item, probe in
            probe.sendFrame(item.bytes, opcode: item.opcode, masked: item.masked)
            let end = ContinuousClock.now + limit
            while ContinuousClock.now < end, !probe.isClosed {
                _ = await probe.receiveRaw(within: end - ContinuousClock.now)
            }
            guard probe.isClosed else { return "the connection still open after 2 s" }
            guard let code = probe.closeCode else { return "the connection closed without a close frame" }
            return code == item.code ? nil : "close code \(code)"
        }
        if let (item, wrong) = wrong {
            return .failed("a close frame with code \(item.code) after \(item.what)", wrong)
        }
        return .pass
    }
}

/// `packet`'s bytes with a trailer under `key`, as the client whose session it is would seal them.
private func sealed(_ packet: Packet, with key: SessionKey) throws -> [UInt8] {
    let body = try packet.encoded()
    var bytes = body + [UInt8](repeating: 0, count: SessionKey.trailerSize)
    bytes.withUnsafeMutableBytes { _ = key.seal($0, length: body.count, from: .client) }
    return bytes
}
