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
        // A second (per unit of patience): the 20 Pongs come at once, and the numbers seen in it are what is judged.
        let listen = Duration.seconds(1) * context.patience
        let end = ContinuousClock.now + listen
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
                "at least 10 unreliable packets (Pongs to 20 Pings, snapshots) in \(listen.milliseconds) ms",
                "\(unreliable.count)")
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

    /// The server drops a stale, duplicate, far-future or serially-older unreliable packet instead of acting on it,
    /// and measures a session's first unreliable number from 0: shown with Pings, which every server answers
    /// whatever game it hosts (a dropped Ping gets no Pong).
    static let unreliableStaleInput = ConformanceCheck(
        id: "unreliable.stale",
        title: "stale, duplicate, far-future and wrapped-back unreliable packets are dropped (no Pong)",
        transports: [.udp], limit: .seconds(15)
    ) { context in
        let probe = try await context.probe()
        defer { probe.close() }
        guard let welcome = await probe.handshake(context.hello("old")), case .welcome = welcome.message else {
            return .failed("a Welcome", "none within 5 s")
        }
        let base: UInt32 = 0x5354_0000
        func ping(number: UInt32, count: UInt32) {
            probe.send(Packet(number: number, .ping(Ping(player: 0, count: base + count, sendTime: 1))))
        }
        var answered: Set<UInt32> = []
        /// Waits for the Pong of `count`, noting every Pong of the check's that comes meanwhile.
        func pong(_ count: UInt32) async -> Bool {
            await probe.receive(within: .seconds(2) * context.patience) { packet in
                guard case .pong(let pong) = packet.message, pong.count & 0xFFFF_0000 == base else { return false }
                answered.insert(pong.count - base)
                return pong.count == base + count
            } != nil
        }
        let refused: [(number: UInt32, count: UInt32, what: String)] = [
            (8, 2, "a stale packet (8 after 10)"), (10, 3, "a duplicate packet number (10)"),
            (10 + 5_000, 4, "a far-future packet (5010 after 10)"),
            (0xFFFF_FF00, 5, "a packet numbered 0xFFFFFF00, older than 10 in serial arithmetic"),
        ]
        // The session's first unreliable number is measured from 0: 5000 is more than 4,096 ahead, and refused.
        ping(number: 5_000, count: 0)
        ping(number: 10, count: 1)
        guard await pong(1) else {
            return .failed("a Pong to a Ping numbered 10, the session's first accepted", "none within 2 s")
        }
        for packet in refused { ping(number: packet.number, count: packet.count) }
        ping(number: 11, count: 6)
        // Datagrams on loopback arrive in order, and a server answers each Ping as it reads it: once the Pong of the
        // last one is in, a Pong to any refused one would have come before it. A little longer for a late one.
        guard await pong(6) else {
            return .failed("a Pong to the next Ping (11) after the refused ones", "none within 2 s")
        }
        _ = await probe.receive(within: .milliseconds(300)) { packet in
            if case .pong(let pong) = packet.message, pong.count & 0xFFFF_0000 == base {
                answered.insert(pong.count - base)
            }
            return false
        }
        if answered.contains(0) {
            return .failed(
                "a first unreliable packet numbered 5000 (more than 4,096 ahead of 0) dropped (no Pong)", "a Pong")
        }
        for packet in refused where answered.contains(packet.count) {
            return .failed("\(packet.what) dropped (no Pong)", "a Pong to it")
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
