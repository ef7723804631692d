/// Reads one ENet datagram: its header, then its commands one at a time, each checked against the bytes that are
/// really there before a field is read.
///
/// Decoding is total: any byte string gives a header and commands, or a ``DatagramError`` — never a read past the
/// end, never a trap, never an allocation. What it checks is what needs no connection state: sizes, command numbers,
/// payload lengths against the datagram, and fragment fields against each other. What the connection must judge
/// (channels, sequence windows, the checksum's seed, limits on packet size) is left to it. This file and the rest of
/// `Wire/` import nothing but the standard library, so the fuzzer compiles them alone.
struct DatagramReader {
    /// The whole datagram; commands' payload ranges index into it.
    let bytes: UnsafeRawBufferPointer
    /// The datagram's header.
    let header: DatagramHeader
    /// The checksum field's offset, when checksums are on.
    let checksumOffset: Int?
    /// Where the next command starts.
    private(set) var offset: Int

    /// Reads the header of `bytes`; `checksum` says whether a 4-byte CRC follows it (a setting both ends share: the
    /// datagram itself does not say).
    init(_ bytes: UnsafeRawBufferPointer, checksum: Bool) throws(DatagramError) {
        guard bytes.count <= ProtocolLimits.maximumMTU else { throw .oversizedDatagram }
        guard bytes.count >= 2 else { throw .truncatedHeader }
        let field = RawBytes.uint16(bytes, 0)
        let hasSentTime = field & DatagramHeader.sentTimeFlag != 0
        let size = (hasSentTime ? 4 : 2) + (checksum ? 4 : 0)
        guard bytes.count >= size else { throw .truncatedHeader }
        self.bytes = bytes
        header = DatagramHeader(
            peerID: field & ProtocolLimits.maximumPeerID,
            sessionID: UInt8(truncatingIfNeeded: (field & DatagramHeader.sessionMask) >> DatagramHeader.sessionShift),
            compressed: field & DatagramHeader.compressedFlag != 0,
            sentTime: hasSentTime ? RawBytes.uint16(bytes, 2) : nil)
        checksumOffset = checksum ? size - 4 : nil
        offset = size
    }

    /// The checksum the datagram carries, when checksums are on.
    var checksum: UInt32? { checksumOffset.map { RawBytes.uint32(bytes, $0) } }

    /// The header's size, checksum included.
    var headerSize: Int { header.size(checksum: checksumOffset != nil) }

    /// Whether the checksum the datagram carries is its CRC-32 with `seed` in the checksum field (true when
    /// checksums are off).
    func checksumMatches(seed: UInt32) -> Bool {
        guard let checksumOffset else { return true }
        return CRC32.checksum(bytes, seedAt: checksumOffset, seed: seed) == RawBytes.uint32(bytes, checksumOffset)
    }

    /// The next command, or `nil` at the end of the datagram. After an error the reader is at the end: libenet reads
    /// nothing past a command it cannot take, and neither does anyone using this.
    mutating func next() throws(DatagramError) -> DecodedCommand? {
        guard offset < bytes.count else { return nil }
        do {
            let command = try read(at: offset)
            offset = command.payload.upperBound
            return command
        } catch {
            offset = bytes.count
            throw error
        }
    }

    private func read(at start: Int) throws(DatagramError) -> DecodedCommand {
        let left = bytes.count - start
        guard left >= 4 else { throw .truncatedCommand }
        let commandByte = bytes[start]
        guard let number = CommandNumber(rawValue: commandByte & CommandNumber.mask) else { throw .unknownCommand }
        guard left >= number.size else { throw .truncatedCommand }
        let header = CommandHeader(
            number, channelID: bytes[start + 1], reliableSequenceNumber: RawBytes.uint16(bytes, start + 2),
            acknowledge: commandByte & CommandNumber.acknowledgeFlag != 0,
            unsequenced: commandByte & CommandNumber.unsequencedFlag != 0)
        let body = start + 4
        let end = start + number.size
        let command: Command
        var dataLength = 0
        switch number {
        case .acknowledge:
            command = .acknowledge(
                receivedReliableSequenceNumber: RawBytes.uint16(bytes, body),
                receivedSentTime: RawBytes.uint16(bytes, body + 2))
        case .connect:
            command = .connect(parameters(at: body), data: RawBytes.uint32(bytes, body + ConnectParameters.size))
        case .verifyConnect:
            command = .verifyConnect(parameters(at: body))
        case .disconnect:
            command = .disconnect(data: RawBytes.uint32(bytes, body))
        case .ping:
            command = .ping
        case .sendReliable:
            command = .sendReliable
            dataLength = Int(RawBytes.uint16(bytes, body))
        case .sendUnreliable:
            command = .sendUnreliable(unreliableSequenceNumber: RawBytes.uint16(bytes, body))
            dataLength = Int(RawBytes.uint16(bytes, body + 2))
        case .sendUnsequenced:
            command = .sendUnsequenced(unsequencedGroup: RawBytes.uint16(bytes, body))
            dataLength = Int(RawBytes.uint16(bytes, body + 2))
        case .sendFragment, .sendUnreliableFragment:
            let fragment = FragmentHeader(
                startSequenceNumber: RawBytes.uint16(bytes, body), fragmentCount: RawBytes.uint32(bytes, body + 4),
                fragmentNumber: RawBytes.uint32(bytes, body + 8), totalLength: RawBytes.uint32(bytes, body + 12),
                fragmentOffset: RawBytes.uint32(bytes, body + 16))
            dataLength = Int(RawBytes.uint16(bytes, body + 2))
            command = number == .sendFragment ? .sendFragment(fragment) : .sendUnreliableFragment(fragment)
        case .bandwidthLimit:
            command = .bandwidthLimit(
                incoming: RawBytes.uint32(bytes, body), outgoing: RawBytes.uint32(bytes, body + 4))
        case .throttleConfigure:
            command = .throttleConfigure(
                interval: RawBytes.uint32(bytes, body), acceleration: RawBytes.uint32(bytes, body + 4),
                deceleration: RawBytes.uint32(bytes, body + 8))
        }
        guard dataLength <= bytes.count - end else { throw .truncatedPayload }
        switch command {
        case .sendFragment(let fragment), .sendUnreliableFragment(let fragment):
            guard fragment.isPlausible(dataLength: dataLength) else { throw .badFragment }
        default:
            break
        }
        return DecodedCommand(header: header, command: command, payload: end..<(end + dataLength))
    }

    /// The ``ConnectParameters`` starting at `offset` (the caller checked the command's whole size).
    private func parameters(at offset: Int) -> ConnectParameters {
        ConnectParameters(
            outgoingPeerID: RawBytes.uint16(bytes, offset), incomingSessionID: bytes[offset + 2],
            outgoingSessionID: bytes[offset + 3], mtu: RawBytes.uint32(bytes, offset + 4),
            windowSize: RawBytes.uint32(bytes, offset + 8), channelCount: RawBytes.uint32(bytes, offset + 12),
            incomingBandwidth: RawBytes.uint32(bytes, offset + 16),
            outgoingBandwidth: RawBytes.uint32(bytes, offset + 20),
            packetThrottleInterval: RawBytes.uint32(bytes, offset + 24),
            packetThrottleAcceleration: RawBytes.uint32(bytes, offset + 28),
            packetThrottleDeceleration: RawBytes.uint32(bytes, offset + 32),
            connectID: RawBytes.uint32(bytes, offset + 36))
    }
}
