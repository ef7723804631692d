import NIOCore
import SkirmishNet
import SkirmishWire

/// What a SNAP connection reported, in the shape the tests compare: the connection's events with a close's SNAP cause,
/// and its round-trip samples.
enum SnapEvent: Equatable {
    case seated(Welcome)
    case resumed(Welcome)
    case message(Message)
    case rtt(TimeAmount)
    case closed(SnapConnection.Cause)
}

extension SnapConnection {
    /// The next event of `actions` not yet handed over, as a ``SnapEvent`` (a close carries the connection's cause).
    func nextEvent(from actions: inout ClientActions<SnapConnection>) -> SnapEvent? {
        guard let event = actions.nextEvent() else { return nil }
        switch event {
        case .established(let welcome): return .seated(welcome)
        case .resumed(let welcome): return .resumed(welcome)
        case .message(let message): return .message(message)
        case .closed(let reason):
            if case .closed(let cause) = state { return .closed(cause) }
            return .closed(.transportError(reason.detail))
        }
    }

    /// Every event and round trip of `actions`, in the order each kind was produced (round trips last).
    func events(in actions: ClientActions<SnapConnection>) -> [SnapEvent] {
        var copy = actions
        var events: [SnapEvent] = []
        while let event = nextEvent(from: &copy) { events.append(event) }
        for metric in actions.metrics {
            if case .roundTrip(let duration) = metric { events.append(.rtt(TimeAmount(duration))) }
        }
        return events
    }
}

extension SnapConnection.Configuration {
    /// A configuration as the tests write it: the name, and the transport a mode stands for (`.datagram`: UDP,
    /// `.stream`: TCP).
    init(game: GameKind, seats: UInt8, name: String, mode: ReliableEndpoint.Mode) {
        self.init(game: game, seats: seats)
        self.name = name
        pingInterval = nil
        reliability.mode = mode
    }

    /// The transport the configuration's mode stands for.
    var transport: Transport { reliability.mode == .datagram ? .udp : .tcp }
}
