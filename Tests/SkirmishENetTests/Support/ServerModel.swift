import SkirmishWire

@testable import SkirmishENet

/// A small ENet server peer for one client, written for the tests from enet/protocol.h and the rules of libenet's
/// protocol.c: it answers the connect request, acknowledges reliable commands with their sent time, delivers
/// reliable packets (whole or in fragments) in order exactly once, and sends reliable, unreliable and fragmented
/// packets of its own with a fixed resend timeout.
///
/// It is deliberately simpler than libenet (no throttle, no windows): the point is a second, independent
/// implementation of the wire rules for the pure tests to play whole sessions against; the real libenet is what the
/// loopback tests play against.
struct ServerModel {
    struct Delivery: Equatable {
        var channel: UInt8
        var delivery: ENetDelivery
        var bytes: [UInt8]
    }

    private struct Queued {
        var header: CommandHeader
        var command: Command
        var payload: [UInt8]
        var sentAt: Instant?
    }

    var checksum = false
    /// The id this server gives the client (its `incomingPeerID` for it).
    var serverPeerID: UInt16 = 5
    /// Sessions it picks: what it sends with, and what it expects from the client.
    var sendSession: UInt8 = 1
    var expectSession: UInt8 = 2
    var channelLimit = 255
    var mtu = 1400
    var resendTimeout = Duration.milliseconds(150)
    /// Whether it acknowledges the client's reliable commands (off: it plays a server that stopped answering).
    var acknowledges = true

    private(set) var connectID: UInt32 = 0
    private(set) var connectData: UInt32?
    private(set) var clientPeerID = ProtocolLimits.maximumPeerID
    private(set) var channelCount = 0
    /// Whether the client acknowledged the verify-connect.
    private(set) var connected = false
    private(set) var delivered: [Delivery] = []
    private(set) var disconnectData: UInt32?
    /// Datagrams from the client whose header or checksum broke the rules.
    private(set) var headerErrors = 0
    private(set) var datagramsReceived = 0

    private var controlSequence: UInt16 = 0
    private var reliableOut: [UInt16] = []
    private var unreliableOut: [UInt16] = []
    private var reliableIn: [UInt16] = []
    private var unreliableIn: [UInt16] = []
    private var held: [[UInt16: Delivery]] = []
    private var fragments: [[UInt16: (count: UInt32, received: Set<UInt32>, bytes: [UInt8])]] = []
    private var queue: [Queued] = []
    private var unacknowledged: [Queued] = []
    private var acknowledgements: [(channel: UInt8, sequence: UInt16, sentTime: UInt16)] = []

    init() {}

    /// Takes a datagram from the client.
    mutating func receive(_ datagram: [UInt8], now: Instant) {
        datagramsReceived += 1
        datagram.withUnsafeBytes { bytes in
            guard var reader = try? DatagramReader(bytes, checksum: checksum) else {
                headerErrors += 1
                return
            }
            let fromNoPeer = reader.header.peerID == ProtocolLimits.maximumPeerID
            if !fromNoPeer, reader.header.peerID != serverPeerID || reader.header.sessionID != expectSession {
                headerErrors += 1
                return
            }
            // A datagram from no peer yet (the connect request) is checksummed with 0, later ones with the connect id.
            if checksum, !reader.checksumMatches(seed: fromNoPeer ? 0 : connectID) {
                headerErrors += 1
                return
            }
            while let decoded = try? reader.next() {
                handle(decoded, bytes: bytes, sentTime: reader.header.sentTime)
            }
        }
    }

    private mutating func handle(_ decoded: DecodedCommand, bytes: UnsafeRawBufferPointer, sentTime: UInt16?) {
        let header = decoded.header
        let payload = Array(bytes[decoded.payload])
        let channel = Int(header.channelID)
        switch decoded.command {
        case .connect(let parameters, let data):
            guard connectData == nil else { return queueAcknowledgement(header, sentTime) }
            connectID = parameters.connectID
            connectData = data
            clientPeerID = parameters.outgoingPeerID
            channelCount = min(Int(parameters.channelCount), channelLimit)
            mtu = min(mtu, Int(parameters.mtu))
            reliableOut = Array(repeating: 0, count: channelCount)
            unreliableOut = reliableOut
            reliableIn = reliableOut
            unreliableIn = reliableOut
            held = Array(repeating: [:], count: channelCount)
            fragments = Array(repeating: [:], count: channelCount)
            var verify = parameters
            verify.outgoingPeerID = serverPeerID
            verify.incomingSessionID = sendSession
            verify.outgoingSessionID = expectSession
            verify.channelCount = UInt32(channelCount)
            verify.mtu = UInt32(mtu)
            verify.incomingBandwidth = 0
            verify.outgoingBandwidth = 0
            queueControl(.verifyConnect(verify), reliable: true)
            return // libenet does not acknowledge the connect: the verify-connect is the answer
        case .acknowledge(let sequence, _):
            if let index = unacknowledged.firstIndex(where: {
                $0.header.reliableSequenceNumber == sequence && $0.header.channelID == header.channelID
            }) {
                if unacknowledged[index].header.number == .verifyConnect { connected = true }
                unacknowledged.remove(at: index)
            }
        case .disconnect(let data):
            disconnectData = data
        case .ping, .bandwidthLimit, .throttleConfigure, .verifyConnect:
            break
        case .sendReliable:
            guard connected else { return } // libenet refuses data until the verify-connect is acknowledged
            takeReliable(
                header.reliableSequenceNumber, Delivery(channel: header.channelID, delivery: .reliable, bytes: payload))
        case .sendFragment(let fragment):
            guard connected else { return }
            let start = fragment.startSequenceNumber
            let ahead = start &- reliableIn[channel]
            if ahead != 0, ahead < 0x8000 {
                var entry =
                    fragments[channel][start] ?? (
                        fragment.fragmentCount, [], Array(repeating: 0, count: Int(fragment.totalLength))
                    )
                if !entry.received.contains(fragment.fragmentNumber) {
                    entry.received.insert(fragment.fragmentNumber)
                    let offset = Int(fragment.fragmentOffset)
                    entry.bytes.replaceSubrange(offset..<(offset + payload.count), with: payload)
                }
                fragments[channel][start] = entry
                if entry.received.count == Int(entry.count) {
                    fragments[channel][start] = nil
                    takeReliable(
                        start, Delivery(channel: header.channelID, delivery: .reliable, bytes: entry.bytes),
                        span: entry.count)
                }
            }
        case .sendUnreliable(let unreliable):
            guard connected else { return }
            if header.reliableSequenceNumber == reliableIn[channel], unreliable > unreliableIn[channel] {
                unreliableIn[channel] = unreliable
                delivered.append(Delivery(channel: header.channelID, delivery: .unreliable, bytes: payload))
            }
        case .sendUnsequenced:
            guard connected else { return }
            delivered.append(Delivery(channel: header.channelID, delivery: .unsequenced, bytes: payload))
        case .sendUnreliableFragment:
            break
        }
        if header.acknowledge { queueAcknowledgement(header, sentTime) }
    }

    private mutating func queueAcknowledgement(_ header: CommandHeader, _ sentTime: UInt16?) {
        guard acknowledges, let sentTime else { return }
        acknowledgements.append((header.channelID, header.reliableSequenceNumber, sentTime))
    }

    /// Delivers reliable packet `sequence` (spanning `span` numbers) in order, holding it while a gap is open.
    private mutating func takeReliable(_ sequence: UInt16, _ delivery: Delivery, span: UInt32 = 1) {
        let channel = Int(delivery.channel)
        let ahead = sequence &- reliableIn[channel]
        guard ahead != 0, ahead < 0x8000 else { return }
        held[channel][sequence] = delivery
        spans[sequence] = span
        while let next = held[channel][reliableIn[channel] &+ 1] {
            let number = reliableIn[channel] &+ 1
            held[channel][number] = nil
            delivered.append(next)
            reliableIn[channel] = number &+ UInt16(truncatingIfNeeded: (spans[number] ?? 1) - 1)
            unreliableIn[channel] = 0
        }
    }

    private var spans: [UInt16: UInt32] = [:]

    private mutating func queueControl(_ command: Command, reliable: Bool) {
        controlSequence &+= 1
        queue.append(
            Queued(
                header: CommandHeader(
                    command.number, channelID: ProtocolLimits.controlChannel, reliableSequenceNumber: controlSequence,
                    acknowledge: reliable),
                command: command, payload: []))
    }

    /// Queues a packet for the client, cut into fragments when it does not fit a datagram.
    mutating func send(channel: UInt8, delivery: ENetDelivery, _ bytes: [UInt8]) {
        let index = Int(channel)
        let fragmentLength = mtu - 4 - 24 - (checksum ? 4 : 0)
        if bytes.count > fragmentLength {
            let count = (bytes.count + fragmentLength - 1) / fragmentLength
            let start = reliableOut[index] &+ 1
            for number in 0..<count {
                reliableOut[index] &+= 1
                let offset = number * fragmentLength
                let piece = Array(bytes[offset..<min(offset + fragmentLength, bytes.count)])
                let fragment = FragmentHeader(
                    startSequenceNumber: start, fragmentCount: UInt32(count), fragmentNumber: UInt32(number),
                    totalLength: UInt32(bytes.count), fragmentOffset: UInt32(offset))
                queue.append(
                    Queued(
                        header: CommandHeader(
                            .sendFragment, channelID: channel, reliableSequenceNumber: reliableOut[index],
                            acknowledge: true),
                        command: .sendFragment(fragment), payload: piece))
            }
            unreliableOut[index] = 0
            return
        }
        switch delivery {
        case .reliable:
            reliableOut[index] &+= 1
            unreliableOut[index] = 0
            queue.append(
                Queued(
                    header: CommandHeader(
                        .sendReliable, channelID: channel, reliableSequenceNumber: reliableOut[index], acknowledge: true
                    ),
                    command: .sendReliable, payload: bytes))
        case .unreliable:
            unreliableOut[index] &+= 1
            queue.append(
                Queued(
                    header: CommandHeader(
                        .sendUnreliable, channelID: channel, reliableSequenceNumber: reliableOut[index]),
                    command: .sendUnreliable(unreliableSequenceNumber: unreliableOut[index]), payload: bytes))
        case .unsequenced:
            queue.append(
                Queued(
                    header: CommandHeader(.sendUnsequenced, channelID: channel, unsequenced: true),
                    command: .sendUnsequenced(
                        unsequencedGroup: UInt16(truncatingIfNeeded: queue.count + delivered.count)),
                    payload: bytes))
        }
    }

    /// Disconnects the client with `data`, reliably.
    mutating func disconnect(data: UInt32) {
        queueControl(.disconnect(data: data), reliable: true)
    }

    /// Whether every reliable command it sent was acknowledged and nothing waits.
    var isIdle: Bool { queue.isEmpty && unacknowledged.isEmpty }

    /// The datagrams due at `now`: acknowledgements, new commands, and resends of what timed out.
    mutating func flush(now: Instant) -> [[UInt8]] {
        var due: [Queued] = []
        for index in unacknowledged.indices where now - unacknowledged[index].sentAt! >= resendTimeout {
            unacknowledged[index].sentAt = now
            due.append(unacknowledged[index])
        }
        for var command in queue {
            if command.header.acknowledge {
                command.sentAt = now
                unacknowledged.append(command)
            }
            due.append(command)
        }
        queue.removeAll()
        var datagrams: [[UInt8]] = []
        var pending = acknowledgements.map { acknowledgement in
            Queued(
                header: CommandHeader(
                    .acknowledge, channelID: acknowledgement.channel, reliableSequenceNumber: acknowledgement.sequence),
                command: .acknowledge(
                    receivedReliableSequenceNumber: acknowledgement.sequence, receivedSentTime: acknowledgement.sentTime
                ),
                payload: [])
        }
        acknowledgements.removeAll()
        pending += due
        while !pending.isEmpty {
            var datagram = [UInt8](repeating: 0, count: mtu)
            var reliable = false
            var taken = 0
            let length = datagram.withUnsafeMutableBytes { buffer -> Int in
                var writer = DatagramWriter(into: buffer, checksum: checksum)
                for command in pending {
                    let fits = command.payload.withUnsafeBytes {
                        writer.append(command.header, command.command, payload: $0)
                    }
                    guard fits else { break }
                    reliable = reliable || command.header.acknowledge
                    taken += 1
                }
                return writer.finish(
                    peerID: clientPeerID, sessionID: sendSession,
                    sentTime: reliable ? UInt16(truncatingIfNeeded: now.nanoseconds / 1_000_000) : nil,
                    checksumSeed: connectID)
            }
            pending.removeFirst(taken)
            datagrams.append(Array(datagram[0..<length]))
        }
        return datagrams
    }
}
