import SkirmishNet
import SkirmishWire

extension ENetConnection {
    /// Bytes a held packet costs beyond its payload, against the incoming limit (its record and bookkeeping).
    static var heldOverhead: Int { 64 }

    /// A send command: delivers, holds or drops its packet by the channel's sequence rules (peer.c,
    /// `enet_peer_queue_incoming_command` and the dispatch functions after it). `false` stops the datagram
    /// unacknowledged, as libenet stops at a command it cannot take.
    mutating func handleData(
        _ decoded: DecodedCommand, in bytes: UnsafeRawBufferPointer, fragments: inout Int,
        into actions: inout ClientActions<Self>
    ) -> Bool {
        guard acceptsTraffic else {
            actions.record(.error(kind: MetricCatalog.Failure.unexpectedCommand.rawValue))
            return false
        }
        let channel = Int(decoded.header.channelID)
        guard channel < channels.count else {
            actions.record(.error(kind: MetricCatalog.Failure.badChannel.rawValue))
            return false
        }
        guard decoded.payload.count <= configuration.maxMessageSize else {
            actions.record(.error(kind: MetricCatalog.Failure.oversizedPacket.rawValue))
            return false
        }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[decoded.payload])
        let sequence = decoded.header.reliableSequenceNumber
        switch decoded.command {
        case .sendReliable:
            return receiveReliable(
                payload, sequence: sequence, channel: channel, wireBytes: decoded.wireSize, into: &actions)
        case .sendUnreliable(let unreliableSequence):
            return receiveUnreliable(
                payload, sequence: sequence, unreliable: unreliableSequence, channel: channel,
                wireBytes: decoded.wireSize, into: &actions)
        case .sendUnsequenced(let group):
            guard case .connected = phase, unsequencedWindow.accept(group) else { return true }
            deliver(payload, channel: channel, delivery: .unsequenced, wireBytes: decoded.wireSize, into: &actions)
            return true
        case .sendFragment(let fragment):
            return receiveFragment(
                payload, fragment, reliable: true, sequence: fragment.startSequenceNumber, unreliable: 0,
                channel: channel, fragments: &fragments, into: &actions)
        case .sendUnreliableFragment(let fragment):
            return receiveFragment(
                payload, fragment, reliable: false, sequence: sequence, unreliable: fragment.startSequenceNumber,
                channel: channel, fragments: &fragments, into: &actions)
        case .acknowledge, .connect, .verifyConnect, .disconnect, .ping, .bandwidthLimit, .throttleConfigure:
            preconditionFailure("\(decoded.command.number) is not a send command")
        }
    }

    /// Counts a reliable sequence number outside the receive window: a duplicate when it is behind, an overflow
    /// when it is ahead (which no libenet sender produces). Both are dropped and acknowledged, as libenet does.
    private func discardOutsideWindow(_ sequence: UInt16, channel: Int, into actions: inout ClientActions<Self>) {
        if Int16(bitPattern: channels[channel].distance(sequence)) <= 0 {
            actions.record(.event(index: MetricCatalog.Event.duplicates.rawValue, count: 1))
        } else {
            actions.record(.error(kind: MetricCatalog.Failure.windowOverflow.rawValue))
        }
    }

    private mutating func receiveReliable(
        _ payload: UnsafeRawBufferPointer, sequence: UInt16, channel: Int, wireBytes: Int,
        into actions: inout ClientActions<Self>
    ) -> Bool {
        guard channels[channel].acceptsWindow(of: sequence),
            sequence != channels[channel].incomingReliableSequenceNumber
        else {
            discardOutsideWindow(sequence, channel: channel, into: &actions)
            return true
        }
        guard phase == .connected else { return true }
        if sequence == channels[channel].incomingReliableSequenceNumber &+ 1 {
            deliver(payload, channel: channel, delivery: .reliable, wireBytes: wireBytes, into: &actions)
            channels[channel].incomingReliableSequenceNumber = sequence
            channels[channel].incomingUnreliableSequenceNumber = 0
            dispatchReliable(channel: channel, into: &actions)
            return true
        }
        if channels[channel].heldReliable.contains(where: { $0.reliableSequenceNumber == sequence }) {
            actions.record(.event(index: MetricCatalog.Event.duplicates.rawValue, count: 1))
            return true
        }
        guard let held = hold(payload, sequence: sequence, unreliable: 0, delivery: .reliable, wireBytes: wireBytes)
        else {
            actions.record(.error(kind: MetricCatalog.Failure.incomingLimit.rawValue))
            return false
        }
        insertReliable(held, channel: channel)
        return true
    }

    private mutating func receiveUnreliable(
        _ payload: UnsafeRawBufferPointer, sequence: UInt16, unreliable: UInt16, channel: Int, wireBytes: Int,
        into actions: inout ClientActions<Self>
    ) -> Bool {
        guard channels[channel].acceptsWindow(of: sequence) else {
            if Int16(bitPattern: channels[channel].distance(sequence)) > 0 {
                actions.record(.error(kind: MetricCatalog.Failure.windowOverflow.rawValue))
            }
            return true
        }
        let current = channels[channel].incomingReliableSequenceNumber
        if sequence == current, unreliable <= channels[channel].incomingUnreliableSequenceNumber { return true }
        guard phase == .connected else { return true }
        if sequence == current {
            deliverUnreliable(payload, unreliable: unreliable, channel: channel, wireBytes: wireBytes, into: &actions)
            return true
        }
        if channels[channel].heldUnreliable.contains(where: {
            $0.reliableSequenceNumber == sequence && $0.unreliableSequenceNumber == unreliable
        }) {
            return true
        }
        guard
            let held = hold(
                payload, sequence: sequence, unreliable: unreliable, delivery: .unreliable, wireBytes: wireBytes)
        else {
            actions.record(.error(kind: MetricCatalog.Failure.incomingLimit.rawValue))
            return false
        }
        insertUnreliable(held, channel: channel)
        return true
    }

    /// A piece of a fragmented packet: the first piece to arrive sets up its buffer and bitmap, every new piece is
    /// copied in, and the last one makes it deliverable (protocol.c, `enet_protocol_handle_send_fragment` and
    /// `…_send_unreliable_fragment`). Reliable fragments are keyed by their first fragment's sequence number,
    /// unreliable ones by the reliable number and their packet's unreliable number.
    private mutating func receiveFragment(
        _ payload: UnsafeRawBufferPointer, _ fragment: FragmentHeader, reliable: Bool, sequence: UInt16,
        unreliable: UInt16, channel: Int, fragments: inout Int, into actions: inout ClientActions<Self>
    ) -> Bool {
        guard channels[channel].acceptsWindow(of: sequence) else {
            if reliable {
                discardOutsideWindow(sequence, channel: channel, into: &actions)
            } else if Int16(bitPattern: channels[channel].distance(sequence)) > 0 {
                actions.record(.error(kind: MetricCatalog.Failure.windowOverflow.rawValue))
            }
            return true
        }
        let current = channels[channel].incomingReliableSequenceNumber
        if !reliable, sequence == current, unreliable <= channels[channel].incomingUnreliableSequenceNumber {
            return true
        }
        if reliable, sequence == current {
            actions.record(.event(index: MetricCatalog.Event.duplicates.rawValue, count: 1))
            return true
        }
        guard Int(fragment.totalLength) <= configuration.maxMessageSize else {
            actions.record(.error(kind: MetricCatalog.Failure.oversizedPacket.rawValue))
            return false
        }
        guard phase == .connected else { return true }
        var index: Int
        if reliable {
            if let found = channels[channel].heldReliable.firstIndex(where: { $0.reliableSequenceNumber == sequence }) {
                index = found
            } else {
                guard let held = reassembly(fragment, sequence: sequence, unreliable: 0, delivery: .reliable) else {
                    actions.record(.error(kind: MetricCatalog.Failure.incomingLimit.rawValue))
                    return false
                }
                index = insertReliable(held, channel: channel)
            }
        } else {
            if let found = channels[channel].heldUnreliable.firstIndex(where: {
                $0.reliableSequenceNumber == sequence && $0.unreliableSequenceNumber == unreliable
            }) {
                index = found
            } else {
                guard let held = reassembly(fragment, sequence: sequence, unreliable: unreliable, delivery: .unreliable)
                else {
                    actions.record(.error(kind: MetricCatalog.Failure.incomingLimit.rawValue))
                    return false
                }
                index = insertUnreliable(held, channel: channel)
            }
        }
        var held = reliable ? channels[channel].heldReliable[index] : channels[channel].heldUnreliable[index]
        guard held.bitmapSlot >= 0, pool.count(held.slot) == Int(fragment.totalLength),
            held.fragmentCount == fragment.fragmentCount
        else {
            actions.record(.error(kind: MetricCatalog.Failure.fragmentMismatch.rawValue))
            return false
        }
        let number = Int(fragment.fragmentNumber)
        let isNew = pool.withMutableBytes(held.bitmapSlot) { bitmap in
            let mask = UInt8(1) << UInt8(number % 8)
            guard bitmap[number / 8] & mask == 0 else { return false }
            bitmap[number / 8] |= mask
            return true
        }
        guard isNew else { return true }
        held.fragmentsRemaining -= 1
        fragments += 1
        let offset = Int(fragment.fragmentOffset)
        let length = min(payload.count, Int(fragment.totalLength) - offset)
        pool.withMutableBytes(held.slot) { buffer in
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + length)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: payload[0..<length]))
        }
        if reliable {
            channels[channel].heldReliable[index] = held
            if held.isComplete { dispatchReliable(channel: channel, into: &actions) }
        } else {
            channels[channel].heldUnreliable[index] = held
            if held.isComplete, sequence == current { dispatchUnreliable(channel: channel, into: &actions) }
        }
        return true
    }

    /// A packet's buffer and fragment bitmap, or `nil` past the incoming limit.
    private mutating func reassembly(
        _ fragment: FragmentHeader, sequence: UInt16, unreliable: UInt16, delivery: ENetDelivery
    ) -> HeldPacket? {
        let total = Int(fragment.totalLength)
        let bitmapBytes = (Int(fragment.fragmentCount) + 7) / 8
        let footprint = total + bitmapBytes + Self.heldOverhead
        guard heldBytes + footprint <= configuration.maxIncomingBytes else { return nil }
        heldBytes += footprint
        let slot = pool.acquire()
        pool.resize(slot, to: total)
        let bitmap = pool.acquire()
        pool.resize(bitmap, to: bitmapBytes)
        return HeldPacket(
            reliableSequenceNumber: sequence, unreliableSequenceNumber: unreliable, delivery: delivery, slot: slot,
            bitmapSlot: bitmap, fragmentCount: fragment.fragmentCount, fragmentsRemaining: fragment.fragmentCount,
            wireBytes: Int(fragment.fragmentCount) * CommandNumber.sendFragment.size + total, footprint: footprint)
    }

    /// A copy of a whole packet to deliver later, or `nil` past the incoming limit.
    private mutating func hold(
        _ payload: UnsafeRawBufferPointer, sequence: UInt16, unreliable: UInt16, delivery: ENetDelivery, wireBytes: Int
    ) -> HeldPacket? {
        let footprint = payload.count + Self.heldOverhead
        guard heldBytes + footprint <= configuration.maxIncomingBytes else { return nil }
        heldBytes += footprint
        let slot = pool.acquire()
        var buffer = pool.take(slot)
        buffer.append(contentsOf: payload)
        pool.put(slot, buffer)
        return HeldPacket(
            reliableSequenceNumber: sequence, unreliableSequenceNumber: unreliable, delivery: delivery, slot: slot,
            wireBytes: wireBytes, footprint: footprint)
    }

    /// Inserts a held reliable packet in sequence order; returns its index.
    @discardableResult
    private mutating func insertReliable(_ held: HeldPacket, channel: Int) -> Int {
        let distance = channels[channel].distance(held.reliableSequenceNumber)
        let index =
            channels[channel].heldReliable.firstIndex {
                channels[channel].distance($0.reliableSequenceNumber) > distance
            }
            ?? channels[channel].heldReliable.count
        channels[channel].heldReliable.insert(held, at: index)
        return index
    }

    /// Inserts a held unreliable packet in (reliable, unreliable) order; returns its index.
    @discardableResult
    private mutating func insertUnreliable(_ held: HeldPacket, channel: Int) -> Int {
        let key = (channels[channel].distance(held.reliableSequenceNumber), held.unreliableSequenceNumber)
        let index =
            channels[channel].heldUnreliable.firstIndex {
                (channels[channel].distance($0.reliableSequenceNumber), $0.unreliableSequenceNumber) > key
            } ?? channels[channel].heldUnreliable.count
        channels[channel].heldUnreliable.insert(held, at: index)
        return index
    }

    /// Delivers the held reliable packets that are next in order, then the unreliable ones that waited for them
    /// (peer.c, `enet_peer_dispatch_incoming_reliable_commands`).
    private mutating func dispatchReliable(channel: Int, into actions: inout ClientActions<Self>) {
        while let first = channels[channel].heldReliable.first, first.isComplete,
            first.reliableSequenceNumber == channels[channel].incomingReliableSequenceNumber &+ 1
        {
            channels[channel].heldReliable.removeFirst()
            deliverHeld(first, channel: channel, into: &actions)
            // A fragmented packet took one sequence number per fragment.
            let span = first.fragmentCount > 0 ? UInt16(truncatingIfNeeded: first.fragmentCount - 1) : 0
            channels[channel].incomingReliableSequenceNumber = first.reliableSequenceNumber &+ span
            channels[channel].incomingUnreliableSequenceNumber = 0
        }
        dispatchUnreliable(channel: channel, into: &actions)
    }

    /// Delivers held unreliable packets of the current reliable number in order, and drops those left behind: the
    /// ones of an earlier reliable number, and unfinished ones older than what was delivered (peer.c,
    /// `enet_peer_dispatch_incoming_unreliable_commands`).
    private mutating func dispatchUnreliable(channel: Int, into actions: inout ClientActions<Self>) {
        guard !channels[channel].heldUnreliable.isEmpty else { return }
        let current = channels[channel].incomingReliableSequenceNumber
        var index = 0
        while index < channels[channel].heldUnreliable.count {
            let held = channels[channel].heldUnreliable[index]
            if held.reliableSequenceNumber == current {
                if held.isComplete, held.unreliableSequenceNumber > channels[channel].incomingUnreliableSequenceNumber {
                    channels[channel].heldUnreliable.remove(at: index)
                    let buffer = pool.take(held.slot)
                    buffer.withUnsafeBytes { bytes in
                        deliverUnreliable(
                            bytes, unreliable: held.unreliableSequenceNumber, channel: channel,
                            wireBytes: held.wireBytes, into: &actions)
                    }
                    pool.put(held.slot, buffer)
                    releaseHeld(held)
                    heldBytes -= held.footprint
                    continue
                }
                if held.unreliableSequenceNumber <= channels[channel].incomingUnreliableSequenceNumber {
                    channels[channel].heldUnreliable.remove(at: index)
                    releaseHeld(held)
                    heldBytes -= held.footprint
                    continue
                }
                index += 1
            } else if channels[channel].acceptsWindow(of: held.reliableSequenceNumber) {
                index += 1
            } else {
                channels[channel].heldUnreliable.remove(at: index)
                releaseHeld(held)
                heldBytes -= held.footprint
            }
        }
    }

    /// Delivers an unreliable packet of the current reliable number: numbers skipped since the last one are counted
    /// lost, and unfinished packets older than it are dropped.
    private mutating func deliverUnreliable(
        _ payload: UnsafeRawBufferPointer, unreliable: UInt16, channel: Int, wireBytes: Int,
        into actions: inout ClientActions<Self>
    ) {
        let last = channels[channel].incomingUnreliableSequenceNumber
        if unreliable > last &+ 1 { actions.record(.lost(count: Int(unreliable - last - 1))) }
        channels[channel].incomingUnreliableSequenceNumber = unreliable
        deliver(payload, channel: channel, delivery: .unreliable, wireBytes: wireBytes, into: &actions)
        let current = channels[channel].incomingReliableSequenceNumber
        var index = 0
        while index < channels[channel].heldUnreliable.count {
            let held = channels[channel].heldUnreliable[index]
            guard held.reliableSequenceNumber == current, held.unreliableSequenceNumber <= unreliable else {
                index += 1
                continue
            }
            channels[channel].heldUnreliable.remove(at: index)
            releaseHeld(held)
            heldBytes -= held.footprint
        }
    }

    /// Delivers a held packet and frees its storage.
    private mutating func deliverHeld(_ held: HeldPacket, channel: Int, into actions: inout ClientActions<Self>) {
        let buffer = pool.take(held.slot)
        buffer.withUnsafeBytes {
            deliver($0, channel: channel, delivery: held.delivery, wireBytes: held.wireBytes, into: &actions)
        }
        pool.put(held.slot, buffer)
        releaseHeld(held)
        heldBytes -= held.footprint
    }

    /// Hands a packet to the codec and its message to the agent, and counts it.
    private mutating func deliver(
        _ payload: UnsafeRawBufferPointer, channel: Int, delivery: ENetDelivery, wireBytes: Int,
        into actions: inout ClientActions<Self>
    ) {
        let route = ENetRoute(channel: UInt8(channel), delivery: delivery)
        actions.record(
            .received(
                kind: MetricCatalog.data(delivery, channel: route.channel), bytes: wireBytes + takeReceivedHeaderShare()
            ))
        if let message = codec.decode(payload, route: route) {
            actions.deliver(message)
        } else {
            actions.record(.error(kind: MetricCatalog.Failure.undecodableMessage.rawValue))
        }
    }
}
