import NIOCore
import SkirmishWire

/// One side of one connection's delivery rules, as a pure state machine driven by a clock passed in.
///
/// Both the client session and the server keep one per peer. Over UDP (``Mode-swift.enum/datagram``) it numbers
/// packets per delivery class, acknowledges reliable ones with a cumulative number and a 32-bit bitfield, resends
/// what is not acknowledged on a retransmission timeout of `max(minRTO, SRTT + 4·RTTVAR)` that doubles per retry,
/// delivers reliable messages in order exactly once, drops stale and duplicate unreliable ones and counts the gaps as
/// loss. A timeout also backs the estimate off for packets sent after it until an unambiguous round trip is measured
/// (RFC 6298 §5.5): without that, a path slower than the initial timeout would never yield a sample under Karn's rule
/// and every reliable packet would be resent forever. Over TCP and WebSocket (``Mode-swift.enum/stream``) the
/// transport already orders and retransmits, so numbers are 0 and only the keepalive and silence rules apply. It never
/// reads a clock and never touches a socket: the owner feeds it packets and time and sends what it emits, which is what
/// lets the tests drive thousands of lossy, duplicating, reordering exchanges without a socket or a sleep.
public struct ReliableEndpoint: Sendable {
    /// Which transport the endpoint runs over, and so which rules apply.
    public enum Mode: Sendable, Hashable {
        /// UDP: numbering, acks, resends, stale drops.
        case datagram
        /// TCP or WebSocket: the transport orders and retransmits; numbers are 0.
        case stream
    }

    /// Timers and limits of the reliability rules; the defaults are DESIGN's.
    public struct Configuration: Sendable, Hashable {
        /// Datagram (UDP: numbering, acks, resends) or stream (TCP, WebSocket: keepalive and silence only).
        public var mode: Mode
        /// The smallest retransmission timeout (DESIGN: 50 ms).
        public var minRTO: TimeAmount
        /// The largest, after doubling.
        public var maxRTO: TimeAmount
        /// The timeout before the first round-trip sample.
        public var initialRTO: TimeAmount
        /// A reliable packet unacknowledged this long drops the connection (DESIGN: 10 s).
        public var ackTimeout: TimeAmount
        /// Nothing received for this long drops the connection (DESIGN: 5 s).
        public var silenceTimeout: TimeAmount
        /// Nothing sent for this long sends a keepalive Ping (DESIGN: 1 s).
        public var keepaliveInterval: TimeAmount
        /// Reliable messages awaiting an ack, at most; more is an error (a peer that stopped acking).
        public var maxPendingReliable: Int
        /// Out-of-order reliable messages held for in-order delivery, at most; a reliable number further ahead is
        /// refused as far-future.
        public var maxReorderBuffer: Int
        /// How far ahead of the newest unreliable number the next may jump (the loss an honest link can cause);
        /// further is refused as far-future and never adopted, so one forged packet numbered 2³¹ − 1 ahead cannot
        /// make every later honest one stale.
        public var maxUnreliableJump: UInt32 = 4_096

        /// A configuration with DESIGN's values: RTO 50 ms to 2 s starting at 200 ms, ack timeout 10 s, silence 5 s,
        /// keepalive 1 s, 1,024 pending reliable messages and a 256-packet reorder window.
        public init(
            mode: Mode = .datagram, minRTO: TimeAmount = .milliseconds(50), maxRTO: TimeAmount = .seconds(2),
            initialRTO: TimeAmount = .milliseconds(200), ackTimeout: TimeAmount = .seconds(10),
            silenceTimeout: TimeAmount = .seconds(5), keepaliveInterval: TimeAmount = .seconds(1),
            maxPendingReliable: Int = 1_024, maxReorderBuffer: Int = 256
        ) {
            self.mode = mode
            self.minRTO = minRTO
            self.maxRTO = maxRTO
            self.initialRTO = initialRTO
            self.ackTimeout = ackTimeout
            self.silenceTimeout = silenceTimeout
            self.keepaliveInterval = keepaliveInterval
            self.maxPendingReliable = maxPendingReliable
            self.maxReorderBuffer = maxReorderBuffer
        }
    }

    private struct Pending: Sendable {
        var number: UInt32
        var message: Message
        var firstSent: NIODeadline
        var due: NIODeadline
        var retries: Int
        /// The retransmission timeout when first sent; each retry waits twice the one before.
        var rto: Int64
    }

    /// The timers and limits this endpoint runs with.
    public let configuration: Configuration
    /// What the endpoint has sent, received, resent, lost and dropped, and its round-trip estimate.
    public private(set) var stats = EndpointStats()

    private var nextReliable: UInt32 = 1
    private var nextUnreliable: UInt32 = 1
    private var pending: [Pending] = []
    private var srtt: Double?
    private var rttvar: Double = 0
    private var rtoNanos: Int64
    private var expected: UInt32 = 1
    private var reorder: [UInt32: Message] = [:]
    private var newestUnreliable: UInt32?
    private var ackOwed = false
    private var lastReceived: NIODeadline
    private var lastSent: NIODeadline
    private var keepalives: UInt32 = 0

    /// A fresh endpoint whose timers start at `now`; reliable and unreliable numbering both start at 1.
    public init(configuration: Configuration = .init(), now: NIODeadline) {
        self.configuration = configuration
        rtoNanos = configuration.initialRTO.nanoseconds
        lastReceived = now
        lastSent = now
    }

    /// Whether an Ack is waiting to be sent; the owner may ``poll(now:emit:)`` at once to send it.
    public var owesAck: Bool { ackOwed }

    /// The current retransmission timeout.
    public var rto: TimeAmount { .nanoseconds(rtoNanos) }

    /// Reliable messages sent and not yet acknowledged.
    public var pendingCount: Int { pending.count }

    /// Whether a reliable message of `type` was sent and is not yet acknowledged (the peer may not have it).
    public func awaitsAcknowledgement(of type: MessageType) -> Bool {
        pending.contains { $0.message.type == type }
    }

    // MARK: Sending

    /// Numbers an outgoing message by its delivery class and remembers a reliable one for resending.
    ///
    /// - Returns: the packet to send now.
    /// - Throws: ``EndpointError/queueFull`` when ``Configuration/maxPendingReliable`` messages already await acks.
    public mutating func stamp(_ message: Message, now: NIODeadline) throws(EndpointError) -> Packet {
        lastSent = now
        stats.sent &+= 1
        guard configuration.mode == .datagram else { return Packet(number: 0, message) }
        switch message.type.delivery {
        case .handshake:
            return Packet(number: 0, message)
        case .unreliable:
            let number = nextUnreliable
            nextUnreliable &+= 1
            if nextUnreliable == 0 { nextUnreliable = 1 }
            return Packet(number: number, message)
        case .reliable:
            guard pending.count < configuration.maxPendingReliable else {
                stats.sent &-= 1
                throw .queueFull
            }
            let number = nextReliable
            nextReliable &+= 1
            if nextReliable == 0 { nextReliable = 1 }
            pending.append(
                Pending(
                    number: number, message: message, firstSent: now, due: now + .nanoseconds(rtoNanos), retries: 0,
                    rto: rtoNanos))
            return Packet(number: number, message)
        }
    }

    // MARK: Receiving

    /// Processes one decoded packet from the peer, calling `deliver` for each message now deliverable, in order.
    public mutating func receive(
        _ packet: Packet, now: NIODeadline, deliver: (Message) -> Void
    ) -> ReceiveOutcome {
        // Only a packet that brings something new is a sign of life: a replayed or stale one (which verifies, if it
        // was sealed) must not keep a dead session's seat.
        stats.received &+= 1
        if case .ack(let ack) = packet.message {
            guard configuration.mode == .stream || acknowledgesOnlySent(ack) else {
                stats.unsentAcks &+= 1
                return .unsentAck
            }
            let pendingBefore = pending.count
            acknowledge(ack, now: now)
            if pending.count < pendingBefore || configuration.mode == .stream { lastReceived = now }
            return .acknowledged
        }
        guard configuration.mode == .datagram else {
            lastReceived = now
            deliver(packet.message)
            return .delivered
        }
        switch packet.message.type.delivery {
        case .handshake:
            lastReceived = now
            deliver(packet.message)
            return .delivered
        case .unreliable:
            let number = packet.number
            // Numbering starts at 1: before anything arrived, the jump is measured from 0.
            let base = newestUnreliable ?? 0
            guard
                Int64(SerialNumber.distance(from: base, to: number)) <= Int64(configuration.maxUnreliableJump)
                    || !SerialNumber.follows(number, base)
            else {
                stats.farFuture &+= 1
                return .farFuture
            }
            if let newest = newestUnreliable {
                guard SerialNumber.follows(number, newest) else {
                    if number == newest { stats.duplicates &+= 1 } else { stats.stale &+= 1 }
                    return number == newest ? .duplicate : .stale
                }
                var gap = UInt64(number &- newest &- 1)
                if number < newest, gap > 0 { gap -= 1 } // the sequence skips 0 when it wraps
                stats.lost &+= gap
            }
            newestUnreliable = number
            lastReceived = now
            deliver(packet.message)
            return .delivered
        case .reliable:
            ackOwed = true
            let number = packet.number
            if number == expected {
                lastReceived = now
                deliver(packet.message)
                advanceExpected()
                while let next = reorder.removeValue(forKey: expected) {
                    deliver(next)
                    advanceExpected()
                }
                return .delivered
            }
            guard SerialNumber.follows(number, expected) else {
                stats.duplicates &+= 1
                return .duplicate
            }
            let ahead = Int(SerialNumber.distance(from: expected, to: number))
            guard ahead < configuration.maxReorderBuffer else {
                stats.farFuture &+= 1
                return .farFuture
            }
            guard reorder[number] == nil else {
                stats.duplicates &+= 1
                return .duplicate
            }
            reorder[number] = packet.message
            lastReceived = now
            return .buffered
        }
    }

    private mutating func advanceExpected() {
        expected &+= 1
        if expected == 0 { expected = 1 }
    }

    /// Whether `ack` names only numbers this side has sent: an Ack for the future would otherwise clear messages the
    /// peer never received (and, once they are sent, acknowledge them unseen).
    private func acknowledgesOnlySent(_ ack: Ack) -> Bool {
        let newestSent = nextReliable &- 1
        if SerialNumber.follows(ack.cumulative, newestSent) { return false }
        let room = SerialNumber.distance(from: ack.cumulative, to: newestSent)
        guard ack.bitfield != 0 else { return true }
        // Bit i stands for cumulative + 1 + i: the highest set bit must not pass the newest number sent.
        let highest = 31 - ack.bitfield.leadingZeroBitCount
        return Int64(highest) < Int64(room)
    }

    private mutating func acknowledge(_ ack: Ack, now: NIODeadline) {
        var sample: Int64?
        pending.removeAll { item in
            let acked: Bool
            if !SerialNumber.follows(item.number, ack.cumulative) {
                acked = true
            } else {
                let offset = SerialNumber.distance(from: ack.cumulative, to: item.number) - 1
                acked = offset >= 0 && offset < 32 && ack.bitfield & (1 << UInt32(offset)) != 0
            }
            // Karn: only a packet sent exactly once gives an unambiguous round-trip sample.
            if acked, item.retries == 0 { sample = (now - item.firstSent).nanoseconds }
            return acked
        }
        if let sample { measure(Double(sample)) }
    }

    private mutating func measure(_ sample: Double) {
        if let smoothed = srtt {
            rttvar = 0.75 * rttvar + 0.25 * abs(smoothed - sample)
            srtt = 0.875 * smoothed + 0.125 * sample
        } else {
            srtt = sample
            rttvar = sample / 2
        }
        let raw = Int64((srtt ?? sample) + 4 * rttvar)
        rtoNanos = min(max(raw, configuration.minRTO.nanoseconds), configuration.maxRTO.nanoseconds)
        stats.srtt = .nanoseconds(Int64(srtt ?? sample))
        stats.rttvar = .nanoseconds(Int64(rttvar))
        stats.lastRTT = .nanoseconds(Int64(sample))
    }

    /// Starts the clocks afresh for a peer back on a new connection (a resume), and makes what it missed due now.
    ///
    /// The gap while it was away counts against neither the silence timeout nor the ack timeout (the resume itself
    /// is the sign of life, and a packet the peer could not receive was not really sent), and the backoff that grew
    /// while nothing could reach it is dropped: the retransmission timeout goes back to the measured estimate (or the
    /// initial one), so the resumed stream, which cannot deliver past its first gap, fills that gap at once.
    public mutating func reattached(now: NIODeadline) {
        lastReceived = now
        if let srtt {
            rtoNanos = min(
                max(Int64(srtt + 4 * rttvar), configuration.minRTO.nanoseconds), configuration.maxRTO.nanoseconds)
        } else {
            rtoNanos = configuration.initialRTO.nanoseconds
        }
        for index in pending.indices {
            pending[index].due = now
            pending[index].firstSent = now
            pending[index].retries = 0
            pending[index].rto = rtoNanos
        }
    }

    // MARK: Timers

    /// Runs the timers: resends what is due, sends an owed Ack, sends a keepalive Ping when idle.
    public mutating func poll(now: NIODeadline, emit: (Packet) -> Void) -> EndpointStatus {
        if now - lastReceived >= configuration.silenceTimeout { return .timedOut(.silence) }
        if configuration.mode == .datagram {
            if let oldest = pending.first, now - oldest.firstSent >= configuration.ackTimeout {
                return .timedOut(.unacknowledged)
            }
            for index in pending.indices where pending[index].due <= now {
                pending[index].retries += 1
                let base = pending[index].rto
                let backoff = min(base << min(pending[index].retries, 16), configuration.maxRTO.nanoseconds)
                pending[index].due = now + .nanoseconds(backoff)
                // A timeout under the current estimate backs it off for new packets too, until a sample resets it;
                // packets stamped under an older, smaller estimate do not back it off again.
                if base >= rtoNanos { rtoNanos = min(2 * rtoNanos, configuration.maxRTO.nanoseconds) }
                stats.resends &+= 1
                lastSent = now
                emit(Packet(number: pending[index].number, pending[index].message))
            }
            if ackOwed {
                ackOwed = false
                lastSent = now
                emit(Packet(number: 0, .ack(currentAck)))
            }
        }
        if now - lastSent >= configuration.keepaliveInterval {
            keepalives &+= 1
            let ping = Message.ping(
                Ping(player: 0, count: keepalives, sendTime: now.seconds))
            if let packet = try? stamp(ping, now: now) { emit(packet) }
        }
        return .alive
    }

    /// The cumulative number and the bitfield of later reliable numbers held for reordering.
    public var currentAck: Ack {
        let cumulative = expected &- 1
        var bits: UInt32 = 0
        for number in reorder.keys {
            let offset = SerialNumber.distance(from: cumulative, to: number) - 1
            if offset >= 0, offset < 32 { bits |= 1 << UInt32(offset) }
        }
        return Ack(cumulative: cumulative, bitfield: bits)
    }

    /// When ``poll(now:emit:)`` next has something to do.
    public var nextDeadline: NIODeadline {
        var next = min(lastReceived + configuration.silenceTimeout, lastSent + configuration.keepaliveInterval)
        guard configuration.mode == .datagram else { return next }
        if ackOwed { return lastReceived }
        if let oldest = pending.first { next = min(next, oldest.firstSent + configuration.ackTimeout) }
        for item in pending { next = min(next, item.due) }
        return next
    }
}

/// What ``ReliableEndpoint/receive(_:now:deliver:)`` made of a packet, for counting.
public enum ReceiveOutcome: Sendable, Hashable {
    case delivered
    case buffered
    case duplicate
    case stale
    case acknowledged
    /// A number beyond the reorder window (reliable) or the jump window (unreliable): refused, never adopted.
    case farFuture
    /// An Ack for numbers never sent: ignored.
    case unsentAck
}

/// Whether the connection is still alive after ``ReliableEndpoint/poll(now:emit:)``.
public enum EndpointStatus: Sendable, Hashable {
    case alive
    case timedOut(Timeout)

    /// Which timer expired.
    public enum Timeout: Sendable, Hashable {
        /// Nothing received for the silence timeout.
        case silence
        /// A reliable packet went unacknowledged for the ack timeout.
        case unacknowledged
    }
}

/// Why a message could not be stamped.
public enum EndpointError: Error, Sendable, Hashable, CustomStringConvertible {
    case queueFull

    /// What went wrong and why: the peer stopped acknowledging.
    public var description: String {
        "too many reliable messages await an acknowledgement; the peer has stopped acknowledging"
    }
}

/// Counters of one endpoint.
public struct EndpointStats: Sendable, Hashable {
    /// Packets stamped and handed to the owner to send (resends not included).
    public var sent: UInt64 = 0
    /// Packets taken in (Acks included), before duplicates and stale ones are dropped.
    public var received: UInt64 = 0
    /// Reliable packets sent again after their retransmission timeout.
    public var resends: UInt64 = 0
    /// Unreliable packets the peer sent that never arrived (gaps in their numbering).
    public var lost: UInt64 = 0
    /// Reliable packets that arrived again after they were delivered or while held for reordering.
    public var duplicates: UInt64 = 0
    /// Unreliable packets not newer than the newest seen on their class, dropped.
    public var stale: UInt64 = 0
    /// Packets numbered too far ahead, refused (``ReceiveOutcome/farFuture``).
    public var farFuture: UInt64 = 0
    /// Acks for numbers never sent, ignored (``ReceiveOutcome/unsentAck``).
    public var unsentAcks: UInt64 = 0
    /// The smoothed round trip (RFC 6298), once a sample was taken.
    public var srtt: TimeAmount?
    /// The round-trip variation (RFC 6298), once a sample was taken.
    public var rttvar: TimeAmount?
    /// The newest round-trip sample.
    public var lastRTT: TimeAmount?

    /// All counters at zero and no round-trip estimate.
    public init() {}
}
