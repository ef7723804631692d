import SkirmishNet
import SkirmishWire

extension DDNetConnection {
    /// Sends a connect with the token magic, asking for a token (`CNetConnection::SendConnect`).
    mutating func sendConnect(now: Instant, into actions: inout ClientActions<Self>) {
        nextConnect = now + Self.connectInterval
        sendControl(.connect, now: now, into: &actions)
    }

    /// Sends one control message: connect carries `TKEN`, close this side's goodbye; every one carries the token
    /// (`CNetBase::SendControlMsg`, never compressed).
    mutating func sendControl(_ kind: Kind, now: Instant, into actions: inout ClientActions<Self>) {
        let message: UInt8
        var extra: [UInt8] = []
        switch kind {
        case .connect:
            message = Wire.Control.connect
            extra = PacketCodec.tokenMagic
        case .accept:
            message = Wire.Control.accept
        case .close:
            message = Wire.Control.close
        default:
            message = Wire.Control.keepAlive
        }
        let trailer = token.trailer
        let ack = ack
        let size = withUnsafeTemporaryAllocation(byteCount: 16, alignment: 1) { chunks in
            chunks[0] = message
            for (index, byte) in extra.enumerated() { chunks[1 + index] = byte }
            var size = 0
            actions.write(maxLength: PacketHeader.maxPacketSize) { output in
                size = PacketCodec.encode(
                    flags: .control, ack: ack, chunkCount: 0, chunks: chunks, chunkBytes: 1 + extra.count,
                    token: trailer, compress: false, into: output)
                return size
            }
            return size
        }
        actions.record(.sent(kind: kind.rawValue, bytes: size))
        lastSent = now
        ackDue = .distantFuture
    }

    /// Builds one message with `build` and queues it as a chunk, vital (kept until acknowledged) or not.
    mutating func queue(
        _ kind: Kind, vital: Bool, now: Instant, into actions: inout ClientActions<Self>,
        _ build: (inout Packer) -> Void
    ) {
        withUnsafeTemporaryAllocation(byteCount: ResendQueue.slotSize, alignment: 1) { buffer in
            var packer = Packer(buffer)
            build(&packer)
            guard !packer.failed else {
                actions.record(.error(kind: Rejection.queueFull))
                return
            }
            let data = UnsafeRawBufferPointer(rebasing: buffer[..<packer.count])
            var flags = 0
            var chunkSequence = -1
            if vital {
                let next = (sequence + 1) % ChunkHeader.sequenceModulus
                guard resendQueue.append(sequence: next, kind: kind.rawValue, data: data, now: now) else {
                    actions.record(.error(kind: Rejection.queueFull))
                    return
                }
                sequence = next
                flags = ChunkHeader.vital
                chunkSequence = next
            }
            queueChunk(
                ChunkHeader(flags: flags, size: data.count, sequence: chunkSequence), data, kind: kind,
                now: now, into: &actions)
        }
    }

    /// Appends a chunk to the outbox, sending the outbox first when it would not fit (`QueueChunkEx`).
    mutating func queueChunk(
        _ header: ChunkHeader, _ data: UnsafeRawBufferPointer, kind: Kind, now: Instant,
        into actions: inout ClientActions<Self>
    ) {
        if outboxBytes + ChunkHeader.maxSize + data.count > outbox.count - 4 { flush(now: now, into: &actions) }
        let start = outboxBytes
        outbox.withUnsafeMutableBytes { buffer in
            guard let body = header.write(into: buffer, at: start) else { return }
            UnsafeMutableRawBufferPointer(rebasing: buffer[body..<(body + data.count)]).copyMemory(from: data)
        }
        outboxBytes += header.length + data.count
        outboxKinds.append((kind, header.length + data.count))
    }

    /// Sends the outbox as one packet, with the acknowledgement and, if asked for, the resend flag; each chunk's
    /// share of the datagram is counted under its kind.
    mutating func flush(now: Instant, into actions: inout ClientActions<Self>) {
        guard !outboxKinds.isEmpty || resendRequested else { return }
        let flags: PacketHeader.Flags = resendRequested ? .resend : []
        let ack = ack
        let count = outboxKinds.count
        let used = outboxBytes
        let trailer = token.trailer
        var size = 0
        outbox.withUnsafeMutableBytes { chunks in
            actions.write(maxLength: PacketHeader.maxPacketSize) { output in
                size = PacketCodec.encode(
                    flags: flags, ack: ack, chunkCount: count, chunks: chunks, chunkBytes: used, token: trailer,
                    compress: true, into: output)
                return size
            }
        }
        if outboxKinds.isEmpty {
            actions.record(.sent(kind: Kind.empty.rawValue, bytes: size))
        } else {
            var left = size
            for (index, entry) in outboxKinds.enumerated() {
                let share = index == outboxKinds.count - 1 ? left : size * entry.bytes / max(used, 1)
                left -= share
                actions.record(.sent(kind: entry.kind.rawValue, bytes: share))
            }
        }
        outboxBytes = 0
        outboxKinds.removeAll(keepingCapacity: true)
        resendRequested = false
        lastSent = now
        ackDue = .distantFuture
    }

    /// Sends the oldest unacknowledged vital chunk again, or all of them when the server asked.
    mutating func resend(all: Bool, now: Instant, into actions: inout ClientActions<Self>) {
        let count = all ? resendQueue.count : min(1, resendQueue.count)
        guard count > 0 else { return }
        for position in 0..<count {
            var header = ChunkHeader(flags: 0, size: 0, sequence: 0)
            var kind = Kind.systemOther
            withUnsafeTemporaryAllocation(byteCount: ResendQueue.slotSize, alignment: 1) { buffer in
                var length = 0
                resendQueue.resend(position, now: now) { entry, data in
                    header = ChunkHeader(
                        flags: ChunkHeader.vital | ChunkHeader.resend, size: data.count, sequence: entry.sequence)
                    kind = Kind(rawValue: entry.kind) ?? .systemOther
                    UnsafeMutableRawBufferPointer(rebasing: buffer[..<data.count]).copyMemory(from: data)
                    length = data.count
                }
                queueChunk(
                    header, UnsafeRawBufferPointer(rebasing: buffer[..<length]), kind: kind, now: now,
                    into: &actions)
            }
        }
        actions.record(.resent(count: count))
        flush(now: now, into: &actions)
    }

    /// Sends the held input for the tick the server should apply it at (`CClient::SendInput`): the acknowledged
    /// snapshot tick, the intended tick, the size in bytes and the ten `CNetObj_PlayerInput` fields.
    mutating func sendInput(now: Instant, into actions: inout ClientActions<Self>) {
        let estimated = clock.estimatedTick(at: now) ?? Int32(clamping: max(world.tick, 0))
        let predicted = max(estimated &+ leadTicks, lastPredictedTick)
        lastPredictedTick = predicted
        let input = input
        let fire = fireCount
        let acknowledged = ackTick
        queue(.input, vital: false, now: now, into: &actions) { packer in
            packer.int(Wire.System.input << 1 | 1)
            packer.int(acknowledged)
            packer.int(predicted)
            packer.int(Int32(10 * 4))
            packer.int(input.direction)
            packer.int(input.targetX)
            packer.int(input.targetY)
            packer.int(input.jump ? 1 : 0)
            packer.int(fire)
            packer.int(input.hook ? 1 : 0)
            packer.int(1) // PLAYERFLAG_PLAYING
            packer.int(input.wantedWeapon)
            packer.int(0) // next weapon
            packer.int(0) // previous weapon
        }
    }

    /// The DDNet client version then `INFO`, in one packet (`CClient::SendInfo`).
    mutating func sendInfo(now: Instant, into actions: inout ClientActions<Self>) {
        let configuration = configuration
        let connectionID = connectionID
        queue(.clientVersion, vital: true, now: now, into: &actions) { packer in
            packer.int(Wire.System.ex << 1 | 1)
            packer.raw(Wire.Extended.clientVersion)
            packer.raw(connectionID)
            packer.int(configuration.ddnetVersion)
            packer.string(configuration.ddnetVersionString, limit: 100)
        }
        queue(.info, vital: true, now: now, into: &actions) { packer in
            packer.int(Wire.System.info << 1 | 1)
            packer.string(configuration.netVersion, limit: 128)
            packer.string(configuration.password, limit: 128)
        }
        flush(now: now, into: &actions)
    }

    /// A random-looking but seeded connection id for the client-version message (a version 4 UUID's layout).
    var connectionID: [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return bytes
    }

    /// The game's start info (`CGameClient::SendInfo(true)`): name, clan, country, skin, colours.
    mutating func sendStartInfo(now: Instant, into actions: inout ClientActions<Self>) {
        let configuration = configuration
        let name = name
        queue(.startInfo, vital: true, now: now, into: &actions) { packer in
            packer.int(Wire.Game.startInfo << 1)
            packer.string(name, limit: Wire.maxNameLength - 1)
            packer.string(configuration.clan, limit: Wire.maxClanLength - 1)
            packer.int(configuration.country)
            packer.string(configuration.skin, limit: 23)
            packer.int(configuration.useCustomColor ? 1 : 0)
            packer.int(configuration.colorBody)
            packer.int(configuration.colorFeet)
        }
        flush(now: now, into: &actions)
    }

    /// A system message without fields, vital: `READY` or `ENTERGAME`.
    mutating func sendSystem(_ id: Int32, kind: Kind, now: Instant, into actions: inout ClientActions<Self>) {
        queue(kind, vital: true, now: now, into: &actions) { $0.int(id << 1 | 1) }
        flush(now: now, into: &actions)
    }
}
