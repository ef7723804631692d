import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// Two clients on the client runtime get seats in one match, with Welcomes as the spec lays them out.
    static let sessionJoin = ConformanceCheck(
        id: "session.join", title: "two clients are seated in one match with well-formed Welcomes"
    ) { context in
        let (pair, failure) = try await context.pair().players()
        guard let (a, wa, b, wb) = pair else { return failure! }
        defer { release(a, b) }
        guard wa.tickRate == 60, wb.tickRate == 60 else {
            return .failed(
                "tick rate 60 in both Welcomes (\(context.game)'s 60 Hz)", "\(wa.tickRate) and \(wb.tickRate)")
        }
        guard Set([wa.seat, wb.seat]) == [0, 1] else { return .failed("seats 0 and 1", "\(wa.seat) and \(wb.seat)") }
        guard wa.peer != wb.peer else { return .failed("two different peer ids", "both \(wa.peer)") }
        guard wa.resumeToken != 0, wb.resumeToken != 0, wa.resumeToken != wb.resumeToken else {
            return .failed("two different non-zero resume tokens", "\(wa.resumeToken) and \(wb.resumeToken)")
        }
        if context.isDatagram {
            guard wa.sessionKey != .zero, wb.sessionKey != .zero, wa.sessionKey != wb.sessionKey else {
                return .failed("two different non-zero session keys over UDP", "\(wa.sessionKey) and \(wb.sessionKey)")
            }
        } else {
            guard wa.sessionKey == .zero, wb.sessionKey == .zero else {
                return .failed("a zero session key over \(context.transport.rawValue)", "a non-zero key")
            }
        }
        return .pass
    }

    /// After the handshake a datagram must carry the session trailer: forged Disconnects without it change nothing,
    /// and the server's own datagrams carry it.
    static let sessionTrailer = ConformanceCheck(
        id: "session.trailer", title: "datagrams without a valid session trailer are ignored",
        transports: [.udp], limit: .seconds(15)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("mac")), case .welcome = welcome.message else {
            return .failed("a Welcome sealed with the key it carries", "none within 5 s")
        }
        // Pings numbered and sealed by the probe's connection; `sealed: false` cuts the trailer off one.
        func ping(_ count: UInt32, sealed: Bool = true, within limit: Duration? = nil) async -> Bool {
            probe.send(.ping(Ping(player: 0, count: count, sendTime: 1)), sealed: sealed)
            return await probe.receive(within: limit ?? .seconds(2) * context.patience) { packet in
                if case .pong(let pong) = packet.message { pong.count == count } else { false }
            } != nil
        }
        guard await ping(0xC0DE_0001) else {
            return .failed(
                "a sealed Pong to a sealed Ping",
                "no Pong within \(2 * context.patience) s (or not sealed with the session key)")
        }
        let disconnect = try Packet(.disconnect(Disconnect(reason: .quit))).encoded()
        var wrongKey = disconnect + [UInt8](repeating: 0, count: SessionKey.trailerSize)
        wrongKey.withUnsafeMutableBytes {
            _ = SessionKey(key0: 1, key1: 2).seal($0, length: disconnect.count, from: .client)
        }
        probe.send(disconnect, sealed: false)
        probe.send(disconnect + [1, 2, 3, 4, 5, 6, 7, 8], sealed: false)
        probe.send(wrongKey, sealed: false)
        // A Pong takes milliseconds (session.pong): a second of silence is a wide margin. It stays well below the 5 s
        // silence timeout whatever the patience, since no valid datagram goes out meanwhile: a longer wait would let
        // the server end the session for silence before the next sealed Ping.
        if await ping(0xC0DE_0002, sealed: false, within: min(.seconds(1) * context.patience, .seconds(2))) {
            return .failed("no answer to a Ping without the session trailer", "a Pong")
        }
        guard await ping(0xC0DE_0003) else {
            return .failed(
                "the session to survive Disconnects without a valid trailer (a Pong to the next sealed Ping)",
                "no Pong: the session ended")
        }
        return .pass
    }

    /// A dropped player takes its seat back with the Welcome's token; the token is single-use and rotated.
    static let sessionResume = ConformanceCheck(
        id: "session.resume", title: "a dropped player resumes its seat; the old token is then refused",
        limit: .seconds(25)
    ) { context in
        let (pair, failure) = try await context.pair().players()
        guard let (a, wa, b, _) = pair else { return failure! }
        defer { release(a, b) }
        // Both play first: a session that never sent anything of the game is not held for a resume. A Chat counts,
        // whatever the game.
        a.send(.chat(Chat(text: "before a")))
        b.send(.chat(Chat(text: "before b")))
        guard await a.wait(.seconds(5) * context.patience, until: { $0.chats.contains("before b") }) != nil,
            await b.wait(.seconds(5) * context.patience, until: { $0.chats.contains("before a") }) != nil
        else { return .failed("each player's Chat relayed to the other", "not within 5 s") }
        a.session.suspend()
        a.session.resume()
        let resumed = await a.wait(.seconds(10) * context.patience) { record in
            record.isClosed || (record.latestWelcome.map { $0 != wa } ?? false)
        }
        guard let record = resumed, let again = record.latestWelcome, again != wa else {
            return .failed("a Welcome answering the resume within 10 s", a.now.lastState)
        }
        guard again.seat == wa.seat, again.match == wa.match else {
            return .failed(
                "the same seat \(wa.seat) in match \(wa.match)", "seat \(again.seat) in match \(again.match)")
        }
        guard again.resumeToken != 0, again.resumeToken != wa.resumeToken else {
            return .failed("a new resume token in the resume's Welcome", "token \(again.resumeToken)")
        }
        b.send(.chat(Chat(text: "after b")))
        guard await a.wait(.seconds(3) * context.patience, until: { $0.chats.contains("after b") }) != nil else {
            return .failed("the other player's Chat to reach the resumed player", "none within 3 s")
        }
        // The old token was used: a Hello carrying it from anywhere else is refused.
        let probe = try await context.probe()
        defer { probe.close() }
        switch await probe.handshake(context.hello("stale", resumeToken: wa.resumeToken))?.message {
        case .reject(let reject)? where reject.reason == .resumeExpired: return .pass
        case .reject(let reject)?: return .failed("Reject(resumeExpired) for a used token", "Reject(\(reject.reason))")
        case .welcome?: return .failed("Reject(resumeExpired) for a used token", "a Welcome (the token was reused)")
        default: return .failed("Reject(resumeExpired) for a used token", "no answer within 5 s")
        }
    }

    /// The server keeps an idle session alive: it Pings a peer it has sent nothing to for a second.
    ///
    /// The peer must be idle: a Snap table waiting for more players, else a Suns table waiting for its second, else
    /// (a Puck-only server) a Puck match its other player left at once, which the server ends by forfeit
    /// (`PuckMatchOver`) and then stops streaming, while the session stays open.
    static let sessionKeepalive = ConformanceCheck(
        id: "session.keepalive", title: "the server pings an idle peer every second", needs: .table,
        limit: .seconds(15)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        var hello = context.hello("idle")
        let survey = context.survey
        let snap = survey.hosted.contains(.snap) || survey.otherSeats[.snap] != nil
        hello.game = snap ? .snap : survey.hosted.contains(.suns) ? .suns : .puck
        // Snap for four (or for the three a server may take instead): a table waiting for more sends nothing.
        if snap { hello.seats = survey.otherSeats[.snap] ?? 4 }
        guard let answer = await probe.handshake(hello), case .welcome(let welcome) = answer.message else {
            return .failed("a Welcome to a Hello for \(hello.game) (\(hello.seats) seats)", "none within 5 s")
        }
        if hello.game == .puck {
            // A Puck table streams snapshots even to a lone player: a partner joins, the match starts (a snapshot
            // past waiting, the kick-off pause included), the partner leaves, and the server ends the match by
            // forfeit. The probe acknowledges what comes until the PuckMatchOver, then the table is quiet.
            let partner = try await context.player("kpart", game: .puck, match: welcome.match)
            defer { release(partner) }
            guard await partner.seated(within: .seconds(5) * context.patience) != nil else {
                return .failed("a second player seated beside the probe", partner.now.lastState)
            }
            context.step("waiting for the match to start")
            guard
                await probe.receive(
                    within: .seconds(3) * context.patience,
                    where: { if case .tableSnapshot(let s) = $0.message { s.phase != .waiting } else { false } })
                    != nil
            else { return .failed("a snapshot of the started match", "none within 3 s") }
            await partner.leave()
            context.step("waiting for PuckMatchOver after the partner left")
            guard
                await probe.receive(
                    within: .seconds(3) * context.patience,
                    where: { if case .puckMatchOver = $0.message { true } else { false } }) != nil
            else {
                return .failed(
                    "PuckMatchOver (a forfeit) after the other player left with Disconnect(1)", "none in 3 s")
            }
        }
        // The probe answers nothing, and the 5 s silence timeout is not reached in the 3.5 s it listens.
        var pings = 0
        var other: [String] = []
        let end = ContinuousClock.now + .milliseconds(3_500)
        while ContinuousClock.now < end {
            guard let (packet, _) = await probe.receive(within: end - ContinuousClock.now) else { break }
            if case .ping = packet.message { pings += 1 } else { other.append("\(packet.message.type)") }
        }
        guard pings >= 2 else {
            return .failed(
                "at least 2 Pings in 3.5 s to an idle peer (one a second)",
                "\(pings)" + (other.isEmpty ? "" : " (and \(other.joined(separator: ", ")))"))
        }
        return .pass
    }

    /// A peer that goes silent is disconnected after 5 s.
    static let sessionTimeout = ConformanceCheck(
        id: "session.timeout", title: "a peer silent for 5 s is disconnected", limit: .seconds(20)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("mute")), case .welcome = welcome.message else {
            return .failed("a Welcome", "none within 5 s")
        }
        func ping(_ count: UInt32, within limit: Duration = .seconds(2)) async -> Bool {
            probe.send(.ping(Ping(player: 0, count: count, sendTime: 1)))
            return await probe.receive(within: limit) { packet in
                if case .pong(let pong) = packet.message { pong.count == count } else { false }
            } != nil
        }
        guard await ping(0x5111_0001) else { return .failed("a Pong to a Ping", "none within 2 s") }
        // Silent: read what comes, answer nothing, for the 5 s of the rule and a second more for a server that checks
        // its timers once a tick or late (a second per patience: a busy machine makes every server late).
        let silence = Duration.seconds(5) + .seconds(1) * context.patience
        let quiet = ContinuousClock.now + silence
        while ContinuousClock.now < quiet, !probe.isClosed {
            _ = await probe.receiveRaw(within: quiet - ContinuousClock.now)
        }
        if probe.isClosed { return .pass }
        // A live server answers a Ping within milliseconds (session.pong): a second is a wide margin.
        if await ping(0x5111_0002, within: .seconds(1) * context.patience) {
            return .failed(
                "no session after \(silence.milliseconds / 1_000) s of silence (no Pong)",
                "a Pong: the silent peer was kept")
        }
        return .pass
    }
}
