import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// The `payload` behaviour: load an ENet server with bytes a script lays out, no Swift needed.
///
/// Once connected it sends a message built from its ``PayloadTemplate`` on its channel with its delivery, at its
/// rate, on a schedule fixed when the connection opened (a late loop skips what it missed rather than bunching it).
/// With a sequence number in the template and `echo` on (the default then), every reply on the reply channel is read
/// for the number it carries back: matched to the request that sent it, it is timed from that request's send
/// (`skirmish_request_rtt_seconds`, ``AgentContext/recordRequestRoundTrip(seconds:)``) and judged by the checks
/// `echo_matched` (it answers a request still waiting: not unknown, not a second answer) and, for reliable
/// requests, `echo_in_order` (it answers the next request in order). ENet's own round trip is measured by the
/// connection beside it (`skirmish_rtt_seconds`).
///
/// With a `count` it sends that many messages, then leaves once every reply is in or `linger` has passed.
///
/// Per message it allocates nothing: the bytes are written into one buffer it keeps (the connection copies them out
/// before the next), and requests in flight live in a fixed ring of send times indexed by sequence number.
struct PayloadAgent: Agent {
    typealias Connection = ENetConnection<ENetRawCodec>

    /// A request in flight: its number (``empty`` once answered or forgotten) and when it left.
    private struct Request {
        var sequence: UInt64
        var sentAt: Instant

        static let empty = UInt64.max
    }

    /// How long requests are remembered at the persona's rate, which sizes the ring.
    static let memory = 10.0

    let options: PayloadOptions
    /// Nanoseconds between messages.
    let period: Int64
    private var next: Instant?
    private var sequence: UInt64 = 0
    private var buffer: [UInt8]
    private var requests: [Request]
    private let ringMask: Int
    private var outstanding = 0
    /// The sequence number the next reliable reply must carry.
    private var expectedReply: UInt64 = 0
    /// When a bot with a `count` leaves, whatever is still missing.
    private var leaveAt: Instant?
    private(set) var isMatchOver = false

    init(context: inout AgentContext<Connection>) {
        options = context.persona.options.get(PayloadOptions.self) ?? PayloadOptions()
        let rate = options.rate ?? context.persona.inputRate
        period = max(Int64(1e9 / max(rate, 0.001)), 1)
        buffer = []
        buffer.reserveCapacity(options.template.size)
        // A power of two that holds `memory` seconds of requests (16 to 1,024) and divides the sequence numbers'
        // range, so consecutive numbers take distinct slots even after they wrap.
        var size = 16
        while size < 1024, Double(size) < rate * Self.memory { size *= 2 }
        if let format = options.template.sequence?.format { size = min(size, Int(min(format.mask, 1 << 20)) + 1) }
        ringMask = size - 1
        requests = options.echo ? Array(repeating: Request(sequence: Request.empty, sentAt: .zero), count: size) : []
    }

    var nextWake: Instant? {
        guard let leaveAt else { return next }
        return min(next ?? leaveAt, leaveAt)
    }

    mutating func established(_ session: ENetSession, context: inout AgentContext<Connection>) {
        next = context.now
    }

    mutating func wake(context: inout AgentContext<Connection>) {
        if let leaveAt, context.now >= leaveAt {
            isMatchOver = true
            return
        }
        guard let due = next, context.now >= due else { return }
        send(context: &context)
        let missed = max(0, context.now.nanoseconds(since: due)) / period
        next = due.advanced(byNanoseconds: period * (missed + 1))
        if let count = options.count, sequence >= UInt64(count) {
            next = nil
            leaveAt = context.now + options.linger
            if options.echo, outstanding == 0 { isMatchOver = true }
        }
    }

    private mutating func send(context: inout AgentContext<Connection>) {
        options.template.write(sequence: sequence, now: context.now, random: &context.random, into: &buffer)
        if options.echo {
            let index = Int(truncatingIfNeeded: sequence) & ringMask
            // A request still waiting here is a ring's length old: forgotten, and a late answer to it is unknown.
            if requests[index].sequence == Request.empty { outstanding += 1 }
            requests[index] = Request(sequence: sequence, sentAt: context.now)
        }
        sequence &+= 1
        context.send(ENetPacket(channel: options.channel, delivery: options.delivery, bytes: buffer))
    }

    mutating func received(_ packet: ENetPacket, context: inout AgentContext<Connection>) {
        guard options.echo, packet.channel == options.replyChannel,
            let format = options.template.sequence?.format,
            let number = options.template.sequenceNumber(in: packet.bytes)
        else { return }
        let index = Int(truncatingIfNeeded: number) & ringMask
        let request = requests[index]
        let matched = request.sequence != Request.empty && request.sequence & format.mask == number
        context.check("echo_matched", passed: matched)
        if options.delivery == .reliable {
            context.check("echo_in_order", passed: number == expectedReply & format.mask)
            expectedReply = (matched ? request.sequence : expectedReply) &+ 1
        }
        guard matched else { return }
        context.recordRequestRoundTrip(seconds: Double(context.now.nanoseconds(since: request.sentAt)) / 1e9)
        requests[index].sequence = Request.empty
        outstanding -= 1
        if leaveAt != nil, outstanding == 0 { isMatchOver = true }
    }
}
