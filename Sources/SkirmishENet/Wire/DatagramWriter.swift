/// Writes one ENet datagram into a caller's buffer: commands first, the header last, because whether the header
/// carries a sent time depends on which commands made it in (libenet sets `ENET_PROTOCOL_HEADER_FLAG_SENT_TIME` when
/// a reliable command is among them).
///
/// Room for the longest header is kept in front of the commands; ``finish(peerID:sessionID:sentTime:checksumSeed:)``
/// moves the commands down when the header is shorter, then fills in the checksum. Allocates nothing.
struct DatagramWriter {
    /// Where the datagram goes; its size is the most the datagram may take (the MTU).
    let buffer: UnsafeMutableRawBufferPointer
    /// Whether a CRC-32 follows the header.
    let checksum: Bool
    /// Bytes used so far, the reserved header included.
    private(set) var count: Int
    /// Commands appended so far.
    private(set) var commandCount = 0

    /// Bytes kept in front for the longest header: peer field, sent time, and the checksum when on.
    var reserved: Int { checksum ? 8 : 4 }

    /// A writer into `buffer`, which must hold at least the header.
    init(into buffer: UnsafeMutableRawBufferPointer, checksum: Bool) {
        self.buffer = buffer
        self.checksum = checksum
        count = checksum ? 8 : 4
        precondition(buffer.count >= count, "a datagram buffer must hold its header")
    }

    /// Bytes still free.
    var remaining: Int { buffer.count - count }

    /// Whether a command of `size` bytes (payload included) still fits, in bytes and in count.
    func fits(_ size: Int) -> Bool {
        commandCount < ProtocolLimits.maximumPacketCommands && size <= remaining
    }

    /// Appends a command and its payload, or returns `false` (writing nothing) when it does not fit.
    @discardableResult
    mutating func append(_ header: CommandHeader, _ command: Command, payload: UnsafeRawBufferPointer) -> Bool {
        precondition(header.number == command.number, "header and fields disagree on the command")
        let size = command.number.size + payload.count
        guard fits(size), payload.count <= Int(UInt16.max) else { return false }
        let start = count
        buffer[start] = header.commandByte
        buffer[start + 1] = header.channelID
        RawBytes.store(header.reliableSequenceNumber, buffer, start + 2)
        let body = start + 4
        let length = UInt16(payload.count)
        switch command {
        case .acknowledge(let sequence, let sentTime):
            RawBytes.store(sequence, buffer, body)
            RawBytes.store(sentTime, buffer, body + 2)
        case .connect(let parameters, let data):
            store(parameters, at: body)
            RawBytes.store(data, buffer, body + ConnectParameters.size)
        case .verifyConnect(let parameters):
            store(parameters, at: body)
        case .disconnect(let data):
            RawBytes.store(data, buffer, body)
        case .ping:
            break
        case .sendReliable:
            RawBytes.store(length, buffer, body)
        case .sendUnreliable(let sequence):
            RawBytes.store(sequence, buffer, body)
            RawBytes.store(length, buffer, body + 2)
        case .sendUnsequenced(let group):
            RawBytes.store(group, buffer, body)
            RawBytes.store(length, buffer, body + 2)
        case .sendFragment(let fragment), .sendUnreliableFragment(let fragment):
            RawBytes.store(fragment.startSequenceNumber, buffer, body)
            RawBytes.store(length, buffer, body + 2)
            RawBytes.store(fragment.fragmentCount, buffer, body + 4)
            RawBytes.store(fragment.fragmentNumber, buffer, body + 8)
            RawBytes.store(fragment.totalLength, buffer, body + 12)
            RawBytes.store(fragment.fragmentOffset, buffer, body + 16)
        case .bandwidthLimit(let incoming, let outgoing):
            RawBytes.store(incoming, buffer, body)
            RawBytes.store(outgoing, buffer, body + 4)
        case .throttleConfigure(let interval, let acceleration, let deceleration):
            RawBytes.store(interval, buffer, body)
            RawBytes.store(acceleration, buffer, body + 4)
            RawBytes.store(deceleration, buffer, body + 8)
        }
        if !payload.isEmpty {
            UnsafeMutableRawBufferPointer(rebasing: buffer[(start + command.number.size)..<(start + size)])
                .copyMemory(from: payload)
        }
        count += size
        commandCount += 1
        return true
    }

    /// Writes the header in front of the commands and returns the datagram's length; the datagram then starts at
    /// `buffer[0]`. `checksumSeed` is what the checksum field holds while the CRC is computed (protocol.c: the
    /// connect id once the peer has an id, else 0).
    func finish(peerID: UInt16, sessionID: UInt8, sentTime: UInt16?, checksumSeed: UInt32) -> Int {
        let header = DatagramHeader(peerID: peerID, sessionID: sessionID, compressed: false, sentTime: sentTime)
        let size = header.size(checksum: checksum)
        let shift = reserved - size
        if shift > 0, count > reserved {
            let source = UnsafeRawBufferPointer(rebasing: buffer[reserved..<count])
            UnsafeMutableRawBufferPointer(rebasing: buffer[size..<(count - shift)]).copyMemory(from: source)
        }
        RawBytes.store(header.peerField, buffer, 0)
        if let sentTime { RawBytes.store(sentTime, buffer, 2) }
        let length = count - shift
        if checksum {
            let offset = size - 4
            let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
            RawBytes.store(CRC32.checksum(datagram, seedAt: offset, seed: checksumSeed), buffer, offset)
        }
        return length
    }

    private func store(_ parameters: ConnectParameters, at offset: Int) {
        RawBytes.store(parameters.outgoingPeerID, buffer, offset)
        buffer[offset + 2] = parameters.incomingSessionID
        buffer[offset + 3] = parameters.outgoingSessionID
        RawBytes.store(parameters.mtu, buffer, offset + 4)
        RawBytes.store(parameters.windowSize, buffer, offset + 8)
        RawBytes.store(parameters.channelCount, buffer, offset + 12)
        RawBytes.store(parameters.incomingBandwidth, buffer, offset + 16)
        RawBytes.store(parameters.outgoingBandwidth, buffer, offset + 20)
        RawBytes.store(parameters.packetThrottleInterval, buffer, offset + 24)
        RawBytes.store(parameters.packetThrottleAcceleration, buffer, offset + 28)
        RawBytes.store(parameters.packetThrottleDeceleration, buffer, offset + 32)
        RawBytes.store(parameters.connectID, buffer, offset + 36)
    }
}
