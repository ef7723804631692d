import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// The spec's example Hello, byte for byte, is understood and answered with a packet of the documented layout.
    static let handshakeVector = ConformanceCheck(
        id: "handshake.vector", title: "the spec's example Hello gets an answer of the documented layout",
        needs: .nothing, limit: .seconds(10)
    ) { context in
        // Over a stream the answer is the handshake's end: when handshake.games got none for Puck, that failure is
        // this one's too, and is reported once.
        if !context.isDatagram, let broken = context.survey.broken[.puck] {
            return .skip(
                "over a stream the answer is a Welcome or Reject, and a Puck Hello got \(broken) (handshake.games)")
        }
        let probe = try await context.probe()
        defer { probe.close() }
        // WireProtocol.md, Hello: puck, 2 seats, any match, first try, name `bo`: 74 bytes.
        let hello: [UInt8] =
            [0x53, 0x4e, 0x41, 0x50, 0, 0, 0, 0, 0x00, 0x01, 0x00, 0x01, 0x02, 0x02, 0, 0, 0, 0]
            + [UInt8](repeating: 0, count: 24) + [0x62, 0x6f, 0x00] + [UInt8](repeating: 0, count: 29)
        probe.send(hello, sealed: false)
        guard let answer = await probe.receiveRaw(within: .seconds(3)) else {
            return .failed(
                context.isDatagram
                    ? "a 26-byte Challenge to the 74-byte example Hello" : "a Welcome to the example Hello",
                "no answer within 3 s")
        }
        let magic: [UInt8] = [0x53, 0x4e, 0x41, 0x50]
        if context.isDatagram {
            let header = magic + [0, 0, 0, 0, 0x00, 0x02]
            guard answer.count == 26, Array(answer.prefix(10)) == header else {
                return .failed(
                    "a 26-byte Challenge starting 534e4150 00000000 0002", "\(answer.count) bytes: \(hex(answer))")
            }
            return .pass
        }
        // Over a stream the Hello is answered at once: with a Welcome, 10 + 35 bytes and a zero session key, or, by a
        // server that does not host Puck, with Reject(4 bad request).
        if context.survey.refused.contains(.puck) {
            guard answer.count >= 13, Array(answer.prefix(10)) == magic + [0, 0, 0, 0, 0x00, 0x04],
                answer[10] == 0x00, answer[11] == 0x04
            else {
                return .failed(
                    "a Reject(4) (type 0004, reason 0004) from a server that does not host Puck",
                    "\(answer.count) bytes: \(hex(answer))")
            }
            return .pass
        }
        guard answer.count == 45, Array(answer.prefix(4)) == magic, answer[8] == 0x00, answer[9] == 0x03,
            answer[29..<45].allSatisfy({ $0 == 0 })
        else {
            return .failed(
                "a 45-byte Welcome (type 0003) with a zero session key", "\(answer.count) bytes: \(hex(answer))")
        }
        return .pass
    }

    /// No reply to an unverified address is larger than the request that caused it.
    static let handshakeAmplification = ConformanceCheck(
        id: "handshake.amplification", title: "no reply to an unverified address is larger than its request",
        transports: [.udp], needs: .nothing, limit: .seconds(15)
    ) { context in
        var forged = context.hello("amp")
        forged.cookie = Cookie(high: 0x0123_4567_89ab_cdef, low: 0xfedc_ba98_7654_3210)
        var oldVersion = context.hello("amp")
        oldVersion.version = 99
        var otherGame = context.hello("amp")
        otherGame.game = GameKind(rawValue: 200)
        let hello = try Packet(.hello(context.hello("amp"))).encoded()
        let requests: [(String, [UInt8])] = [
            ("a first Hello", hello),
            ("a Hello with a forged cookie", try Packet(.hello(forged)).encoded()),
            ("a Hello of version 99", try Packet(.hello(oldVersion)).encoded()),
            ("a Hello for game 200", try Packet(.hello(otherGame)).encoded()),
            ("a truncated Hello", Array(hello.prefix(40))),
            ("a bare header", Array(hello.prefix(10))),
        ]
        // Every request from its own address at once, then every answer collected against one deadline: a request
        // the server rightly ignores costs one shared second of silence, not a second each (six in a row outlasted
        // the check's limit on a busy machine).
        var probes: [RawProbe] = []
        defer { for probe in probes { probe.close() } }
        for index in requests.indices {
            context.step("opening probe \(index + 1) of \(requests.count)")
            probes.append(try await context.probe())
        }
        for (probe, (_, request)) in zip(probes, requests) { probe.send(request, sealed: false) }
        let deadline = ContinuousClock.now + .seconds(1) * context.patience
        context.step("listening for the replies to all \(requests.count) requests")
        // Every probe listens at once, so a busy process's late resumptions overlap instead of adding up (one probe
        // after another took 14 s under load, for waits bounded at about 1.3 s each).
        let heard = await withTaskGroup(of: (index: Int, total: Int, count: Int).self) { group in
            for (index, probe) in probes.enumerated() {
                group.addTask {
                    var total = 0
                    var count = 0
                    // The first answer may take a while on a busy server; more datagrams for the same request come
                    // at once. A probe listens for a second at most after that: a port that keeps receiving (a
                    // stream meant for someone else) ends in a verdict on what came, not in a wait until the limit.
                    var wait = max(deadline - ContinuousClock.now, .milliseconds(300))
                    let listenUntil = ContinuousClock.now + wait + .seconds(1)
                    while wait > .zero, let reply = await probe.receiveRaw(within: wait) {
                        wait = min(.milliseconds(300), listenUntil - ContinuousClock.now)
                        total += reply.count
                        count += 1
                    }
                    return (index, total, count)
                }
            }
            var heard = Array(repeating: (total: 0, count: 0), count: probes.count)
            for await result in group { heard[result.index] = (result.total, result.count) }
            return heard
        }
        for ((what, request), (total, count)) in zip(requests, heard) where total > request.count {
            return .failed(
                "at most \(request.count) bytes in reply to \(what) of \(request.count) bytes",
                "\(total) bytes in \(count) datagram(s)")
        }
        // The first request is a first Hello, which a Challenge answers.
        guard heard[0].count > 0 else { return .failed("a Challenge to a first Hello", "no answer") }
        return .pass
    }

    /// Without a valid cookie for its own address no Hello gets a seat, and a client that does the cookie round
    /// still joins after many that did not.
    static let handshakeCookie = ConformanceCheck(
        id: "handshake.cookie", title: "no seat without a valid cookie; an honest client still joins",
        transports: [.udp], limit: .seconds(20)
    ) { context in
        var probes: [RawProbe] = []
        defer { for probe in probes { probe.close() } }
        var cookies: [Cookie] = []
        for index in 0..<5 {
            let probe = try await context.probe()
            probes.append(probe)
            probe.send(Packet(.hello(context.hello("ck\(index)-"))), sealed: false)
            let answer = await probe.receive(within: .seconds(3)) { packet in
                switch packet.message {
                case .challenge, .welcome, .reject: true
                default: false
                }
            }
            switch answer?.message {
            case .challenge(let challenge)?: cookies.append(challenge.cookie)
            case .welcome?:
                return .failed("a Challenge to a Hello with a zero cookie", "a Welcome (a seat with no cookie)")
            case .reject(let reject)?: return .failed("a Challenge to a first Hello", "Reject(\(reject.reason))")
            default: return .failed("a Challenge to a first Hello", "no answer within 3 s")
            }
        }
        // A forged cookie, and another address's genuine cookie: neither may seat anyone.
        for (index, probe) in probes.enumerated() {
            let cookie =
                index % 2 == 0
                ? Cookie(high: 0xdead_beef_0000_0000 | UInt64(index), low: 0x0bad_c0de)
                : cookies[(index + 1) % cookies.count]
            probe.send(Packet(.hello(context.hello("ck\(index)-", cookie: cookie))), sealed: false)
        }
        // Every probe listens at once: 600 ms of silence for all of them, not for each in turn.
        let listening = probes
        let seated = await withTaskGroup(of: Int?.self) { group in
            for (index, probe) in listening.enumerated() {
                group.addTask {
                    let welcome = await probe.receive(within: .milliseconds(600)) { packet in
                        if case .welcome = packet.message { true } else { false }
                    }
                    return welcome == nil ? nil : index
                }
            }
            var seated: [Int] = []
            for await index in group { if let index { seated.append(index) } }
            return seated.min()
        }
        if let index = seated {
            let what = index % 2 == 0 ? "a forged cookie" : "another address's cookie"
            return .failed("no Welcome to a Hello with \(what)", "a Welcome")
        }
        let honest = try await context.probe()
        probes.append(honest)
        switch await honest.handshake(context.hello("honest"))?.message {
        case .welcome?: return .pass
        case .reject(let reject)?:
            return .failed("a Welcome for a client that returns its cookie", "Reject(\(reject.reason))")
        default: return .failed("a Welcome for a client that returns its cookie", "no answer within 5 s")
        }
    }
}

/// Bytes as space-separated groups of hex, shortened after 48 bytes.
func hex(_ bytes: [UInt8]) -> String {
    let shown = bytes.prefix(48).map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
    return bytes.count > 48 ? shown + "…" : shown
}
