import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// Reliable messages (Chat, relayed by the server) arrive exactly once and in order, over a link that loses,
    /// duplicates and reorders packets both ways (UDP: emulated inside each client's session).
    static let reliableRelay = ConformanceCheck(
        id: "reliable.relay", title: "reliable messages arrive once, in order, under loss, duplication and reordering",
        limit: .seconds(60)
    ) { context in
        let link = LinkProfile(
            latency: .milliseconds(15), jitter: .milliseconds(10), loss: 0.2, duplicate: 0.1, reorder: 0.2)
        let (pair, failure) = try await context.pair(link: link, within: .seconds(10)).players()
        guard let (a, _, b, _) = pair else { return failure! }
        defer { release(a, b) }
        let count = 25
        let fromA = (1...count).map { "a-\($0)" }
        let fromB = (1...count).map { "b-\($0)" }
        for (textA, textB) in zip(fromA, fromB) {
            a.send(.chat(Chat(text: textA)))
            b.send(.chat(Chat(text: textB)))
        }
        let limit = Duration.seconds(20)
        _ = await b.wait(limit) { $0.chats.count >= count }
        _ = await a.wait(limit) { $0.chats.count >= count }
        // A little longer for a late duplicate to show.
        try? await Task.sleep(for: .milliseconds(300))
        for (name, got, sent) in [("B", b.now.chats, fromA), ("A", a.now.chats, fromB)] {
            guard got == sent else {
                return .failed(
                    "player \(name) to receive \(sent.first!)…\(sent.last!) once each, in order",
                    "\(got.count) message(s)\(difference(got, sent))")
            }
        }
        return .pass
    }

    /// The server numbers its unreliable packets in increasing order and its reliable ones 1, 2, 3…
    static let unreliableNumbering = ConformanceCheck(
        id: "unreliable.numbering",
        title: "the server numbers unreliable packets increasingly and reliable ones from 1",
        transports: [.udp], limit: .seconds(20)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("num")), case .welcome = welcome.message else {
            return .failed("a Welcome", "none within 5 s")
        }
        guard welcome.number == 1 else {
            return .failed("the Welcome numbered 1 (reliable, first)", "\(welcome.number)")
        }
        // A partner, so that the match plays and the server sends snapshots.
        let partner = try await context.player("npart")
        defer { release(partner) }
        guard await partner.seated(within: .seconds(5) * context.patience) != nil else {
            return .failed("a second player seated beside the probe", partner.now.lastState)
        }
        // Pings, so that unreliable packets (Pongs) come whatever the game: a Snap or Suns table sends no snapshots.
        for count in 0..<20 { probe.send(.ping(Ping(player: 1, count: 0x4E55_0000 + UInt32(count), sendTime: 1))) }
        var unreliable: [UInt32] = []
        var reliable: [UInt32] = [welcome.number]
        let end = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < end {
            guard let packet = await probe.receive(within: end - ContinuousClock.now, where: { _ in true }) else {
                break
            }
            switch packet.message.type.delivery {
            case .unreliable: unreliable.append(packet.number)
            case .reliable: if !reliable.contains(packet.number) { reliable.append(packet.number) }
            case .handshake:
                guard packet.number == 0 else {
                    return .failed("number 0 on \(packet.message.type)", "number \(packet.number)")
                }
            }
        }
        guard unreliable.count >= 10 else {
            return .failed(
                "at least 10 unreliable packets (Pongs to 20 Pings, snapshots) in 2 s", "\(unreliable.count)")
        }
        for (earlier, later) in zip(unreliable, unreliable.dropFirst()) where !SerialNumber.follows(later, earlier) {
            return .failed("each unreliable number newer than the one before", "\(later) after \(earlier)")
        }
        guard !unreliable.contains(0) else { return .failed("non-zero unreliable numbers over UDP", "a 0") }
        let sorted = reliable.sorted()
        guard sorted == Array(1...UInt32(sorted.count)) else {
            return .failed("reliable numbers 1, 2, 3… without gaps", "\(sorted.prefix(12))")
        }
        return .pass
    }

    /// The server drops a stale, duplicate, far-future or serially-older unreliable packet instead of acting on it.
    static let unreliableStaleInput = ConformanceCheck(
        id: "unreliable.stale", title: "stale, duplicate, far-future and wrapped-back input is dropped",
        transports: [.udp], needs: .game(.puck), limit: .seconds(20)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("old")), case .welcome = welcome.message else {
            return .failed("a Welcome", "none within 5 s")
        }
        let partner = try await context.player("spart")
        defer { release(partner) }
        guard await partner.seated(within: .seconds(5) * context.patience) != nil else {
            return .failed("a second player seated beside the probe", partner.now.lastState)
        }
        func paddle(number: UInt32, step: UInt32) {
            probe.send(Packet(number: number, .paddleState(PaddleState(inputStep: step, x: 160, y: 400, vx: 0, vy: 0))))
        }
        var seen: Set<UInt32> = []
        func applied(step: UInt32) async -> Bool {
            await probe.receive(within: .seconds(3)) { packet in
                guard case .tableSnapshot(let snapshot) = packet.message else { return false }
                seen.insert(snapshot.lastInputStep)
                return snapshot.lastInputStep == step
            } != nil
        }
        paddle(number: 10, step: 5)
        guard await applied(step: 5) else {
            return .failed("a snapshot applying input step 5 (packet 10)", "none within 3 s; steps \(seen.sorted())")
        }
        let refused: [(number: UInt32, step: UInt32, what: String)] = [
            (8, 9, "a stale packet (8 after 10)"), (10, 7, "a duplicate packet number (10)"),
            (10 + 5_000, 11, "a far-future packet (5010 after 10)"),
            (0xFFFF_FF00, 13, "a packet numbered 0xFFFFFF00, older than 10 in serial arithmetic"),
        ]
        // One at a time, each followed by a few snapshots: an input the server wrongly took shows in them before
        // the next one can overwrite it.
        for packet in refused {
            paddle(number: packet.number, step: packet.step)
            var snapshots = 0
            _ = await probe.receive(within: .milliseconds(500)) { reply in
                guard case .tableSnapshot(let snapshot) = reply.message else { return false }
                seen.insert(snapshot.lastInputStep)
                snapshots += 1
                return snapshots >= 4
            }
            if seen.contains(packet.step) {
                return .failed("\(packet.what) dropped", "its input step \(packet.step) applied")
            }
        }
        paddle(number: 11, step: 20)
        let reached = await applied(step: 20)
        guard reached else {
            return .failed("the next packet (11, step 20) applied", "steps \(seen.sorted()) within 3 s")
        }
        return .pass
    }
}

/// Where `got` first differs from `sent`, for a failure line.
func difference(_ got: [String], _ sent: [String]) -> String {
    for (index, (a, b)) in zip(got, sent).enumerated() where a != b {
        return "; #\(index + 1) was \(a) instead of \(b)"
    }
    if got.count < sent.count { return "; missing from \(sent[got.count])" }
    if got.count > sent.count { return "; extra \(got[sent.count])" }
    return ""
}
