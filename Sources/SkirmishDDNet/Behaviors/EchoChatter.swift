import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// The `chatter` behaviour: says a numbered line every `chat_every` and checks that the server echoes each one back.
///
/// A DDNet server relays a player's public chat to every player, the speaker included, under the speaker's client
/// id. So each line this bot says should come back to it: a line that does within `echo_timeout` passes the
/// `chat_echoed` check, one that does not fails it (`skirmish_checks_failed_total{check="chat_echoed"}`). That is
/// what a server host wants to know about chat under load — whether it is delivered at all, not only whether the
/// packets left — and it also shows the server's spam protection at work: DDNet drops lines said faster than about
/// one a second, and mutes the whole address for a minute when one player chats faster than one line in five seconds
/// for long, so the defaults stay below that. Between lines the player stands still, as ``Idler`` does.
///
/// A line reads `<persona> bot <n> line <k>`: the server's chat log tells who said what, and `k` (the trailing number)
/// matches an echo to the line without keeping the text.
struct EchoChatter: Agent {
    typealias Connection = DDNetConnection

    /// The behaviour's script options.
    struct Options: Sendable, Hashable {
        /// Time between lines, drawn uniformly for each.
        var every: ClosedRange<Duration> = .seconds(5) ... .seconds(10)
        /// How long a line may take to come back before its check fails.
        var echoTimeout: Duration = .seconds(5)
    }

    /// A line said and not yet echoed.
    private struct Pending {
        var line: Int
        var sentAt: Instant
    }

    /// Lines in flight beyond this many are judged lost, oldest first.
    static let maxPending = 16
    /// The check's name.
    static let check = "chat_echoed"

    private let options: Options
    private var clientID: Int?
    private var nextChat: Instant?
    private var said = 0
    private var pending: [Pending] = []
    /// Lines echoed and lines judged lost so far (for tests).
    private(set) var echoed = 0
    private(set) var lost = 0

    init(options: Options) {
        self.options = options
        pending.reserveCapacity(Self.maxPending)
    }

    var nextWake: Instant? {
        guard let first = pending.first else { return nextChat }
        let expiry = first.sentAt + options.echoTimeout
        return nextChat.map { min($0, expiry) } ?? expiry
    }

    var isMatchOver: Bool { false }

    mutating func established(_ session: DDNetConnection.Session, context: inout AgentContext<DDNetConnection>) {
        clientID = session.clientID
        nextChat = context.now + context.random.duration(in: options.every)
    }

    mutating func received(_ message: DDNetConnection.Message, context: inout AgentContext<DDNetConnection>) {
        switch message {
        case .world(let world):
            if clientID == nil, let local = world.localClientID { clientID = local }
        case .chat(let chat):
            guard let clientID, chat.clientID == clientID, let line = Self.lineNumber(chat.text) else { return }
            guard let index = pending.firstIndex(where: { $0.line == line }) else { return }
            // Lines come back in order; any said before this one and still pending were dropped by the server.
            for _ in 0..<index { judgeOldestLost(context: &context) }
            pending.removeFirst()
            echoed += 1
            context.check(Self.check, passed: true)
        default:
            break
        }
    }

    mutating func wake(context: inout AgentContext<DDNetConnection>) {
        let now = context.now
        while let first = pending.first, first.sentAt + options.echoTimeout <= now {
            judgeOldestLost(context: &context)
        }
        if let due = nextChat, due <= now {
            if pending.count >= Self.maxPending { judgeOldestLost(context: &context) }
            said += 1
            context.send(.say("\(context.persona.name) bot \(context.botNumber) line \(said)"))
            pending.append(Pending(line: said, sentAt: now))
            nextChat = now + context.random.duration(in: options.every)
        }
    }

    mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<DDNetConnection>) {
        // The connection's end is counted as its own error; lines in flight are judged by nobody.
        pending.removeAll(keepingCapacity: true)
        nextChat = nil
    }

    /// The oldest pending line was not echoed.
    private mutating func judgeOldestLost(context: inout AgentContext<DDNetConnection>) {
        pending.removeFirst()
        lost += 1
        context.check(Self.check, passed: false)
    }

    /// The number a line of this behaviour ends with, read without copying the text.
    static func lineNumber(_ text: String) -> Int? {
        var value = 0
        var scale = 1
        var digits = 0
        for byte in text.utf8.reversed() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            guard digits < 9 else { return nil }
            value += Int(byte - UInt8(ascii: "0")) * scale
            scale *= 10
            digits += 1
        }
        return digits > 0 ? value : nil
    }
}
