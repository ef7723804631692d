import SkirmishNet
import SkirmishWire

extension DDNetConnection {
    /// One datagram from the server: checked, decompressed, its acknowledgement applied, then its control message
    /// or chunks handled in order (`CNetClient::Recv`, `CNetConnection::Feed`, `CClient::ProcessServerPacket`).
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>)
    {
        guard phase != .idle, phase != .closed else { return }
        var payload: [UInt8] = []
        swap(&payload, &inbox)
        defer { swap(&payload, &inbox) }
        let expected = token.expected
        let decoded = payload.withUnsafeMutableBytes { buffer in
            Result { () throws(DecodeError) in try PacketCodec.decode(bytes, token: expected, into: buffer) }
        }
        let header: PacketHeader
        let count: Int
        switch decoded {
        case .success(let result): (header, count) = result
        case .failure(let error):
            actions.record(.error(kind: error.kind))
            return
        }
        // Connectionless packets (server info) are not part of the connection.
        if header.flags.contains(.connectionless) { return }
        guard acknowledgementIsValid(header.ack) else {
            actions.record(.error(kind: DecodeError.badAck.kind))
            return
        }
        peerAck = header.ack
        resendQueue.acknowledge(header.ack)
        lastReceived = now
        if header.flags.contains(.resend) { resend(all: true, now: now, into: &actions) }
        payload.withUnsafeBytes { buffer in
            let body = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            if header.flags.contains(.control) {
                receiveControl(body, datagram: bytes.count, now: now, into: &actions)
            } else {
                receiveChunks(body, count: header.chunkCount, datagram: bytes.count, now: now, into: &actions)
            }
        }
        guard phase != .closed else { return }
        flush(now: now, into: &actions)
    }

    /// Whether `ack` lies between the last acknowledgement and this side's sequence, wrapping as sequences do
    /// (`CNetConnection::Feed`): anything else acknowledges chunks never sent.
    func acknowledgementIsValid(_ ack: Int) -> Bool {
        if sequence >= peerAck { return ack >= peerAck && ack <= sequence }
        return !(ack < peerAck && ack > sequence)
    }

    /// A control packet: the connect-accept completes the handshake, a close ends the connection with the server's
    /// reason.
    mutating func receiveControl(
        _ body: UnsafeRawBufferPointer, datagram: Int, now: Instant, into actions: inout ClientActions<Self>
    ) {
        switch body[0] {
        case Wire.Control.connectAccept:
            actions.record(.received(kind: Kind.connectAccept.rawValue, bytes: datagram))
            guard phase == .connecting else { return }
            let magic = PacketCodec.tokenMagic
            if body.count >= 1 + magic.count + 4, body[1..<(1 + magic.count)].elementsEqual(magic) {
                token = .known(PacketCodec.readToken(body, at: 1 + magic.count))
            } else {
                token = .unsupported
            }
            phase = .loading
            sendControl(.accept, now: now, into: &actions)
            sendInfo(now: now, into: &actions)
        case Wire.Control.close:
            actions.record(.received(kind: Kind.close.rawValue, bytes: datagram))
            var end = 1
            while end < body.count, body[end] != 0 { end += 1 }
            let text = Unpacker.text(UnsafeRawBufferPointer(rebasing: body[1..<end]), limit: 127)
            self.end(Self.closeReason(text), into: &actions)
        case Wire.Control.keepAlive:
            actions.record(.received(kind: Kind.keepAlive.rawValue, bytes: datagram))
        default:
            actions.record(.received(kind: Kind.systemOther.rawValue, bytes: datagram))
        }
    }

    /// The chunks of a packet, in order; vital ones only when they are the next in sequence
    /// (`CNetRecvUnpacker::FetchChunk`): a duplicate is dropped, a gap asks for a resend.
    mutating func receiveChunks(
        _ body: UnsafeRawBufferPointer, count: Int, datagram: Int, now: Instant,
        into actions: inout ClientActions<Self>
    ) {
        if count == 0 {
            actions.record(.received(kind: Kind.empty.rawValue, bytes: datagram))
            return
        }
        var reader = ChunkReader(body, count: count)
        while phase != .closed {
            let chunk: ChunkReader.Chunk
            do {
                guard let next = try reader.next() else { return }
                chunk = next
            } catch {
                actions.record(.error(kind: error.kind))
                return
            }
            if chunk.header.isVital {
                ackDue = min(ackDue, now + Self.ackDelay)
                if chunk.header.sequence == (ack + 1) % ChunkHeader.sequenceModulus {
                    ack = chunk.header.sequence
                } else if ChunkHeader.isBehind(chunk.header.sequence, ack: ack) {
                    continue
                } else {
                    if !resendRequested { actions.record(.event(index: Event.resendRequested.rawValue, count: 1)) }
                    resendRequested = true
                    continue
                }
            }
            let share = datagram * (chunk.header.length + chunk.data.count) / max(body.count, 1)
            receiveMessage(chunk.data, vital: chunk.header.isVital, bytes: share, now: now, into: &actions)
        }
    }

    /// One message: a system message (engine) or a game message (mod), by the low bit of its id.
    mutating func receiveMessage(
        _ data: UnsafeRawBufferPointer, vital: Bool, bytes: Int, now: Instant, into actions: inout ClientActions<Self>
    ) {
        var unpacker = Unpacker(data)
        let packed = unpacker.int()
        guard !unpacker.failed, packed >= 0 else {
            actions.record(.error(kind: DecodeError.badMessage.kind))
            return
        }
        let id = packed >> 1
        let kind: Kind
        if packed & 1 == 1 {
            kind = receiveSystem(id, &unpacker, vital: vital, now: now, into: &actions)
        } else {
            kind = receiveGame(id, &unpacker, vital: vital, now: now, into: &actions)
        }
        if unpacker.failed {
            actions.record(
                .error(
                    kind: (kind == .snap || kind == .snapSingle || kind == .snapEmpty
                        ? DecodeError.badSnapshot : DecodeError.badMessage).kind))
            return
        }
        actions.record(.received(kind: kind.rawValue, bytes: bytes))
    }

    /// A system message; returns its kind for the counters.
    mutating func receiveSystem(
        _ id: Int32, _ unpacker: inout Unpacker, vital: Bool, now: Instant, into actions: inout ClientActions<Self>
    ) -> Kind {
        switch id {
        case Wire.System.ex:
            guard let uuid = unpacker.raw(16) else { return .systemOther }
            if uuid.elementsEqual(Wire.Extended.mapDetails) {
                _ = unpacker.string()
                _ = unpacker.raw(32)
                _ = unpacker.int()
                _ = unpacker.int()
                return .mapDetails
            }
            if uuid.elementsEqual(Wire.Extended.capabilities) {
                _ = unpacker.int()
                _ = unpacker.int()
                return .capabilities
            }
            if uuid.elementsEqual(Wire.Extended.rconType) { return .rconType }
            return .systemOther
        case Wire.System.mapChange:
            let name = unpacker.string()
            let crc = unpacker.int()
            let size = unpacker.int()
            guard let name, !unpacker.failed, vital else { return .mapChange }
            guard phase != .connecting else { return .mapChange }
            map = Unpacker.text(name, limit: 127)
            mapCRC = Int(crc)
            mapSize = Int(size)
            // The bot does not need the map's contents: it is "loaded" at once (`CClient::ProcessServerPacket`
            // would request `REQUEST_MAP_DATA` chunks only for a map it lacks). A change while in game starts over.
            if phase == .inGame { resetSnapshots() }
            phase = .ready
            sendSystem(Wire.System.ready, kind: .ready, now: now, into: &actions)
            return .mapChange
        case Wire.System.conReady:
            if vital && phase == .ready {
                phase = .starting
                sendStartInfo(now: now, into: &actions)
            }
            return .conReady
        case Wire.System.snap, Wire.System.snapSingle, Wire.System.snapEmpty:
            receiveSnapshot(id, &unpacker, now: now, into: &actions)
            return id == Wire.System.snap ? .snap : id == Wire.System.snapSingle ? .snapSingle : .snapEmpty
        case Wire.System.inputTiming:
            let tick = unpacker.int()
            let timeLeft = unpacker.int()
            guard !unpacker.failed else { return .inputTiming }
            if timeLeft < 0 {
                actions.record(.event(index: Event.inputLate.rawValue, count: 1))
                leadTicks = min(leadTicks + 1, 50)
            } else if timeLeft > 80 && leadTicks > 1 {
                leadTicks -= 1
            }
            actions.deliver(.inputTiming(InputTiming(tick: Int(tick), timeLeft: .milliseconds(timeLeft))))
            return .inputTiming
        case Wire.System.ping:
            queue(.pingReply, vital: false, now: now, into: &actions) { $0.int(Wire.System.pingReply << 1 | 1) }
            return .ping
        case Wire.System.pingReply:
            if let sent = pingSentAt {
                let roundTrip = now - sent
                pingSentAt = nil
                leastRoundTrip = min(leastRoundTrip ?? roundTrip, roundTrip)
                actions.record(.roundTrip(roundTrip))
            }
            return .pingReply
        default:
            return .systemOther
        }
    }

    /// A game message; returns its kind for the counters.
    mutating func receiveGame(
        _ id: Int32, _ unpacker: inout Unpacker, vital: Bool, now: Instant, into actions: inout ClientActions<Self>
    ) -> Kind {
        switch id {
        case Wire.Game.readyToEnter:
            if vital && phase == .starting {
                phase = .entering
                sendSystem(Wire.System.enterGame, kind: .enterGame, now: now, into: &actions)
            }
            return .readyToEnter
        case Wire.Game.chat:
            let team = unpacker.int()
            let clientID = unpacker.int()
            guard let text = unpacker.string(), !unpacker.failed else { return .chat }
            actions.deliver(.chat(ChatLine(clientID: Int(clientID), team: team != 0, text: Unpacker.text(text))))
            return .chat
        default:
            return .gameOther
        }
    }
}
