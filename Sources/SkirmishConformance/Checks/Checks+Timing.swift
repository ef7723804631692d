import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// The server acknowledges every reliable packet within the spec's 50 ms ack deadline, with a cumulative number
    /// and bitfield that state exactly what it holds: gaps, out-of-order arrivals, a duplicate and a packet beyond the
    /// reorder window included.
    static let reliableAck = ConformanceCheck(
        id: "reliable.ack",
        title: "every reliable packet is acknowledged within 50 ms, the bitfield naming what arrived",
        transports: [.udp], limit: .seconds(15)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("ack")), case .welcome = welcome.message else {
            return .failed("a Welcome", "none within 5 s")
        }
        // The deadline is the server's: what the probe measures is a round trip, so the link's own round trip (the
        // fastest of a few Ping→Pong exchanges, which the server answers at once) is taken off, and a busy machine
        // gets a scheduling slack that grows with patience. The 50 ms itself never grows. Without any Pong the whole
        // round trip counts.
        var baseline: Duration?
        for count in 0..<5 {
            let sent = ContinuousClock.now
            probe.send(.ping(Ping(player: 0, count: 0x41_434B00 + UInt32(count), sendTime: 0)))
            if let (_, at) = await probe.arrival(
                within: .seconds(2) * context.patience, after: sent,
                where: {
                    if case .pong(let pong) = $0.message { pong.count == 0x41_434B00 + UInt32(count) } else { false }
                })
            {
                baseline = min(baseline ?? at - sent, at - sent)
            }
        }
        let linkRoundTrip = baseline ?? .zero
        let deadline = Duration.milliseconds(50)
        let slack = Duration.milliseconds(10) * (context.patience - 1)
        // Chats numbered by hand: 1, then 3 and 5 (2 and 4 missing), then the gaps filled, then 1 again.
        let script: [(number: UInt32, cumulative: UInt32, bits: UInt32, what: String)] = [
            (1, 1, 0, "reliable packet 1"),
            (3, 1, 0b10, "packet 3, with 2 missing"),
            (5, 1, 0b1010, "packet 5, with 2 and 4 missing"),
            (2, 3, 0b10, "packet 2, filling the first gap"),
            (4, 5, 0, "packet 4, filling the second"),
            (1, 5, 0, "a duplicate of packet 1"),
            // Refused (256 or more past 6, the next expected), and acknowledged all the same, with nothing new.
            (306, 5, 0, "packet 306, beyond the reorder window"),
        ]
        for step in script {
            context.step("waiting for the Ack of \(step.what)")
            // Each step's packet leaves up to three times (after the first, a duplicate, which changes nothing the Ack
            // states) and the fastest Ack counts: one stall of a busy machine does not fail a server that answers
            // at once, and a server that is late is late every time.
            var fastest: Duration?
            for attempt in 0..<3 {
                if attempt > 0 {
                    // What the last sending may still bring (a late Ack, a repeat of it) is read and dropped first,
                    // so that only an answer to this sending times it.
                    _ = await probe.arrival(
                        within: linkRoundTrip + .milliseconds(100) * context.patience, where: { _ in false })
                }
                let sent = ContinuousClock.now
                probe.send(Packet(number: step.number, .chat(Chat(text: "ack \(step.number)"))))
                var last: Ack?
                // Only an Ack read after this send answers it: the previous step's Ack, repeated or late, does not.
                let answer = await probe.arrival(within: .seconds(1) * context.patience, after: sent) { packet in
                    guard case .ack(let ack) = packet.message else { return false }
                    last = ack
                    return ack.cumulative == step.cumulative && ack.bitfield == step.bits
                }
                guard let (_, at) = answer else {
                    let expected =
                        "an Ack of cumulative \(step.cumulative), bitfield \(binary(step.bits)) after \(step.what)"
                    guard let last else {
                        return .failed(
                            expected, "no Ack within \((Duration.seconds(1) * context.patience).milliseconds) ms")
                    }
                    return .failed(expected, "cumulative \(last.cumulative), bitfield \(binary(last.bitfield))")
                }
                let took = at - sent - linkRoundTrip
                fastest = min(fastest ?? took, took)
                if took <= deadline + slack { break }
            }
            guard let fastest, fastest <= deadline + slack else {
                return .failed(
                    "the Ack of \(step.what) within \(deadline.milliseconds) ms of its arrival",
                    "\((fastest ?? .zero).milliseconds) ms at best of three sendings (the round trip less the link's "
                        + "own, \(linkRoundTrip.milliseconds) ms)")
            }
        }
        return .pass
    }

    /// An Ack naming a reliable number the server never sent is ignored entirely: the packet it seems to cover is
    /// still resent until a true Ack comes.
    static let reliableUnsentAck = ConformanceCheck(
        id: "reliable.unsent-ack", title: "an Ack naming packets never sent is ignored: the server keeps resending",
        transports: [.udp], limit: .seconds(20)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let answer = await probe.handshake(context.hello("unsent")), case .welcome(let welcome) = answer.message
        else { return .failed("a Welcome", "none within 5 s") }
        // A partner in the probe's match, whose Chat the server relays to the probe: a reliable packet of its own.
        let partner = try await context.player("upart", match: welcome.match)
        defer { release(partner) }
        guard await partner.seated(within: .seconds(5) * context.patience) != nil else {
            return .failed("a second player seated beside the probe", partner.now.lastState)
        }
        partner.send(.chat(Chat(text: "unsent \(context.run)")))
        context.step("waiting for the relayed Chat")
        // Read without acknowledging anything, so the server must resend.
        guard
            let chat = await probe.receive(
                within: .seconds(3) * context.patience, answering: false,
                where: { if case .chat = $0.message { true } else { false } })
        else { return .failed("the partner's Chat relayed to the probe", "none within 3 s") }
        let forged = chat.number &+ 1_000
        let ack = Packet(.ack(Ack(cumulative: forged, bitfield: 0)))
        probe.send(ack)
        context.step("waiting for the Chat to be resent after the forged Ack")
        // A Ping after the forged Ack is the barrier: a resend read after its Pong was sent after the server handled
        // the Ack. Retransmission timeouts double up to 2 s, so one comes within 2 s of it, well before the 10 s ack
        // timeout ends the session (the probe Pings meanwhile, so silence does not).
        guard let handled = await probe.barrier(within: .seconds(2) * context.patience, resending: ack) else {
            return .failed("a Pong to the Ping sent after the forged Ack", "none within 2 s")
        }
        // One resend a server that handles Acks on its tick had already queued proves nothing: it is skipped within
        // a tick's slack of the Pong.
        let window = Duration.milliseconds(2_500) * context.patience
        guard
            await probe.arrivalStayingAlive(
                within: handled + window - ContinuousClock.now, after: handled + .milliseconds(50) * context.patience,
                where: { $0.number == chat.number && $0.message == chat.message }) != nil
        else {
            return .failed(
                "the Chat (reliable \(chat.number)) resent after an Ack of cumulative \(forged), which names packets the "
                    + "server never sent and must be ignored",
                "no resend within \(window.milliseconds) ms after the Pong that followed it")
        }
        return .pass
    }

    /// A Pong carries its Ping's payload bit for bit: the player, the count and the send time, whatever they are.
    static let sessionPong = ConformanceCheck(
        id: "session.pong", title: "a Pong echoes its Ping's player, count and send time bit for bit",
        limit: .seconds(10)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("echo")), case .welcome = welcome.message else {
            return .failed("a Welcome", "none within 5 s")
        }
        // Send times a server that stored them as anything but the f64 it read would change: −0, 0.1 (no short binary
        // fraction), one past an f32's precision, and a large uptime.
        let pings = [
            Ping(player: 7, count: 0x504E_0001, sendTime: 1.5),
            Ping(player: 0xFFFF_FFFF, count: 0x504E_0002, sendTime: -0.0),
            Ping(player: 0, count: 0x504E_0003, sendTime: 0.1),
            Ping(player: 42, count: 0x504E_0004, sendTime: 16_777_217.000_000_5),
        ]
        for ping in pings {
            probe.send(.ping(ping))
            let answer = await probe.receive(within: .seconds(2) * context.patience) { packet in
                if case .pong(let pong) = packet.message { pong.count == ping.count } else { false }
            }
            let expected =
                "a Pong echoing player \(ping.player), count \(hex32(ping.count)), send time \(ping.sendTime) "
                + "(\(hex64(ping.sendTime.bitPattern))) bit for bit"
            guard case .pong(let pong)? = answer?.message else {
                return .failed(expected, "no Pong with that count within 2 s")
            }
            guard pong.player == ping.player, pong.sendTime.bitPattern == ping.sendTime.bitPattern else {
                return .failed(
                    expected, "player \(pong.player), send time \(pong.sendTime) (\(hex64(pong.sendTime.bitPattern)))")
            }
        }
        return .pass
    }
}

/// `value` in binary with a `0b` prefix (an Ack's bitfield in a failure line).
func binary(_ value: UInt32) -> String { "0b" + String(value, radix: 2) }

/// A 64-bit pattern in hex.
func hex64(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 { nanoseconds / 1_000_000 }
}

extension ConformanceCheck {
    /// A `Disconnect` ends the session at once: the server answers nothing the peer sends after it.
    static let sessionDisconnect = ConformanceCheck(
        id: "session.disconnect", title: "a Disconnect ends the session: a Ping after it gets no Pong",
        limit: .seconds(10)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("bye")), case .welcome = welcome.message else {
            return .failed("a Welcome", "none within 5 s")
        }
        func ping(_ count: UInt32, within limit: Duration) async -> Bool {
            probe.send(.ping(Ping(player: 0, count: count, sendTime: 1)))
            return await probe.receive(within: limit) { packet in
                if case .pong(let pong) = packet.message { pong.count == count } else { false }
            } != nil
        }
        guard await ping(0xD15C_0001, within: .seconds(2) * context.patience) else {
            return .failed("a Pong to a Ping", "none within 2 s")
        }
        // The Disconnect as a seated client sends it (sealed over UDP), behind the probe's connection's back, so that
        // the connection still numbers and seals the Ping after it as a live session's.
        probe.send(Packet(.disconnect(Disconnect(reason: .quit))))
        // A Pong takes milliseconds (session.pong): one second of silence is a wide margin.
        if await ping(0xD15C_0002, within: .seconds(1) * context.patience) {
            return .failed(
                "no Pong to a Ping sent after a Disconnect (a peer receiving one MUST consider the session ended)",
                "a Pong: the session went on")
        }
        return .pass
    }

    /// Over TCP and WebSocket every packet the server sends carries number 0: the stream orders and retransmits.
    static let streamNumbering = ConformanceCheck(
        id: "stream.numbering", title: "every packet the server sends over a stream is numbered 0",
        transports: [.tcp, .webSocket], limit: .seconds(10)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("zero")), case .welcome = welcome.message else {
            return .failed("a Welcome", "none within 5 s")
        }
        guard welcome.number == 0 else { return .failed("the Welcome numbered 0", "number \(welcome.number)") }
        // A partner, so that the match plays (snapshots, Snap's reliable messages), and Pings for Pongs in any game.
        let partner = try await context.player("zpart")
        defer { release(partner) }
        guard await partner.seated(within: .seconds(5) * context.patience) != nil else {
            return .failed("a second player seated beside the probe", partner.now.lastState)
        }
        for count in 0..<10 { probe.send(.ping(Ping(player: 1, count: 0x5A00_0000 + UInt32(count), sendTime: 1))) }
        var seen = 0
        let end = ContinuousClock.now + .seconds(1) * context.patience
        while ContinuousClock.now < end {
            guard let packet = await probe.receive(within: end - ContinuousClock.now, where: { _ in true }) else {
                break
            }
            guard packet.number == 0 else {
                return .failed(
                    "number 0 on every packet over \(context.transport.rawValue)",
                    "\(packet.message.type) numbered \(packet.number)")
            }
            seen += 1
        }
        guard seen >= 10 else {
            return .failed(
                "at least 10 packets (Pongs to 10 Pings) in \((Duration.seconds(1) * context.patience).milliseconds) ms",
                "\(seen)")
        }
        return .pass
    }
}

extension ConformanceCheck {
    /// A peer that never acknowledges is dropped 10 s after the server first sent the packet it owes an Ack for,
    /// silently (the ack timeout; no `Disconnect`), while everything else about the peer stays alive.
    ///
    /// The one reliable packet a server sends outside a running match is the Welcome, so the probe joins and never
    /// acknowledges it: the Welcome is resent with back-off and goes unacknowledged from its first sending. Meanwhile
    /// the probe Pings every 250 ms (a new unreliable number each, the sign of life that keeps the silence timeout
    /// away) and answers the server's Pings, so it is the ack timeout that ends the session, not silence. The rule is
    /// UDP's: a stream never carries an Ack.
    ///
    /// It waits about 11.5 s, so it runs alongside the other checks from right after the survey, and it must meet none
    /// of their players: it sits at a Snap table for three, which no other check asks for (they play two seats;
    /// `session.keepalive` takes four unless the server seats Snap for three only, and then the two share a table
    /// that still waits for its third and stays as idle as each needs; `snap.deal` then plays three, within seconds
    /// of the survey since the two-player checks are skipped, so its first table usually meets the probe and is made
    /// again, since its last player finds no seat). Alone at a forming table, the probe gets no reliable packet but the Welcome, and
    /// having sent nothing of the game it is not held for a resume but leaves.
    /// A server without Snap, or one that answers a Hello for three with `Reject(4)`, has no such table: the check is
    /// skipped.
    ///
    /// While the session lives each Ping gets a Pong within milliseconds, so the last packet the server sends marks
    /// the drop to within 250 ms: it must come 9–10.5 s after the Welcome (a margin of 0.5 s per patience), none may
    /// come in the further second of Pings, and none may be a `Disconnect`.
    static let sessionAckTimeout = ConformanceCheck(
        id: "session.ack-timeout",
        title: "a peer that never acks is dropped, silently, 10 s after the first unacked packet",
        transports: [.udp], needs: .game(.snap), limit: .seconds(20), alongside: true
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        probe.withholdAcks()
        var hello = context.hello("noack")
        hello.game = .snap
        hello.seats = 3
        switch await probe.handshake(hello)?.message {
        case .welcome?: break
        case .reject(let reject)? where reject.reason == .badRequest:
            // Snap seated for other counts only (four, say): there is no table for three to sit at alone.
            return .skip("needs a Snap table for three, which no other check joins, and the server seats none")
        case .reject(let reject)?: return .failed("a Welcome to a Hello for snap (3 seats)", "Reject(\(reject.reason))")
        default: return .failed("a Welcome to a Hello for snap (3 seats)", "none within 5 s")
        }
        // Both ends as the socket read them: a task that got round to the Welcome late would shorten the span.
        let welcomed = probe.answeredAt ?? ContinuousClock.now
        let deadline = welcomed + .seconds(10) + .milliseconds(500) * context.patience
        let end = deadline + .seconds(1) * context.patience
        var last = welcomed
        var resends = 0
        var disconnect: Disconnect?
        var count: UInt32 = 0
        var nextPing = welcomed
        context.step("waiting for the ack timeout, Welcome unacknowledged")
        while ContinuousClock.now < end {
            if ContinuousClock.now >= nextPing {
                count += 1
                probe.send(.ping(Ping(player: 0, count: 0xAC70_0000 + count, sendTime: 1)))
                nextPing += .milliseconds(250)
            }
            let wait = max(min(nextPing, end) - ContinuousClock.now, .milliseconds(1))
            // The time the packet was read off the socket, not when this task got round to it.
            guard let (packet, at) = await probe.arrival(within: wait, where: { _ in true }) else { continue }
            last = at
            switch packet.message {
            case .welcome: resends += 1
            case .ping(let ping): probe.send(.pong(ping))
            case .disconnect(let sent): disconnect = sent
            default: break
            }
        }
        let lasted = "the last packet \((last - welcomed).milliseconds) ms after it (\(resends) resends of the Welcome)"
        if let disconnect {
            return .failed(
                "no packet when the ack timeout drops the session (it is silent)", "Disconnect(\(disconnect.reason))")
        }
        guard last <= deadline else {
            return .failed(
                "no packet later than \((deadline - welcomed).milliseconds) ms after a Welcome never acknowledged "
                    + "(the ack timeout drops the session at 10 s)", "\(lasted): the session went on")
        }
        guard last >= welcomed + .seconds(9) else {
            return .failed(
                "the session kept, answering Pings, until the ack timeout 10 s after the unacknowledged Welcome",
                "\(lasted): dropped too early")
        }
        return .pass
    }
}
