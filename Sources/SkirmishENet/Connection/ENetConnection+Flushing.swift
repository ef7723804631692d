import SkirmishNet
import SkirmishWire

extension ENetConnection {
    /// Sends everything due, as many datagrams as it takes (protocol.c, `enet_protocol_send_outgoing_commands` for
    /// one peer): acknowledgements first, then queued commands in order, a ping when the line has been quiet.
    mutating func flush(into actions: inout ClientActions<Self>) {
        if handshakeExpired(into: &actions) { return }
        if !sentReliable.isEmpty, ServiceTime.greaterOrEqual(serviceTime, nextTimeout) {
            checkTimeouts(into: &actions)
        }
        while phase != .closed, phase != .idle {
            var more = false
            pendingMetrics.removeAll(keepingCapacity: true)
            actions.write(maxLength: mtu) { buffer in self.packDatagram(into: buffer, more: &more) }
            for metric in pendingMetrics { actions.record(metric) }
            if case .disconnectLater(let data) = phase, outgoing.isEmpty, sentReliable.isEmpty {
                beginDisconnect(data: data, into: &actions)
                more = true
            }
            if !more { break }
        }
        if case .acknowledgingDisconnect(let data) = phase, acknowledgements.isEmpty {
            end(
                CloseReason(
                    kind: MetricCatalog.Close.closedByServer.rawValue,
                    detail: "the server disconnected (data \(data))", isOutage: false,
                    code: data),
                into: &actions)
        }
    }

    /// Packs one datagram into `buffer` and returns its length (0: nothing to send); `more` says another is due.
    private mutating func packDatagram(into buffer: UnsafeMutableRawBufferPointer, more: inout Bool) -> Int {
        var writer = DatagramWriter(into: buffer, checksum: configuration.checksum)
        var written = 0
        for acknowledgement in acknowledgements {
            let header = CommandHeader(
                .acknowledge, channelID: acknowledgement.channelID,
                reliableSequenceNumber: acknowledgement.reliableSequenceNumber)
            let command = Command.acknowledge(
                receivedReliableSequenceNumber: acknowledgement.reliableSequenceNumber,
                receivedSentTime: acknowledgement.sentTime)
            guard writer.append(header, command, payload: UnsafeRawBufferPointer(start: nil, count: 0)) else {
                more = true
                break
            }
            pendingMetrics.append(.sent(kind: MetricCatalog.control(.acknowledge), bytes: command.number.size))
            written += 1
        }
        acknowledgements.removeFirst(written)
        var reliableIncluded = false
        var fragments = 0
        if !more {
            packCommands(into: &writer, more: &more, reliableIncluded: &reliableIncluded, fragments: &fragments)
            if !more, phase == .connected, sentReliable.isEmpty, writer.fits(CommandNumber.ping.size),
                lastReceiveTime.map({
                    ServiceTime.difference(serviceTime, $0) >= Self.milliseconds(configuration.pingInterval)
                }) ?? true
            {
                queueControl(.ping, acknowledge: true)
                packCommands(into: &writer, more: &more, reliableIncluded: &reliableIncluded, fragments: &fragments)
            }
        }
        guard writer.commandCount > 0 else {
            more = false
            return 0
        }
        if fragments > 0 {
            pendingMetrics.append(.event(index: MetricCatalog.Event.fragmentsSent.rawValue, count: fragments))
        }
        let connected = outgoingPeerID < ProtocolLimits.maximumPeerID
        let length = writer.finish(
            peerID: outgoingPeerID, sessionID: connected ? outgoingSessionID : 0,
            sentTime: reliableIncluded ? UInt16(truncatingIfNeeded: serviceTime) : nil,
            checksumSeed: connected ? connectID : 0)
        // The datagram's header is counted once, with the first packet counted in it; a datagram that counts none
        // (a fragment after the first, a resend) passes its header on to the next packet counted.
        unattributedHeaderBytes += (reliableIncluded ? 4 : 2) + (configuration.checksum ? 4 : 0)
        if let first = pendingMetrics.firstIndex(where: { if case .sent = $0 { true } else { false } }),
            case .sent(let kind, let bytes) = pendingMetrics[first]
        {
            pendingMetrics[first] = .sent(kind: kind, bytes: bytes + unattributedHeaderBytes)
            unattributedHeaderBytes = 0
        }
        return length
    }

    /// Walks the queue once, moving into the datagram every command the window, the throttle and the room allow
    /// (protocol.c, `enet_protocol_check_outgoing_commands`).
    private mutating func packCommands(
        into writer: inout DatagramWriter, more: inout Bool, reliableIncluded: inout Bool, fragments: inout Int
    ) {
        keptScratch.removeAll(keepingCapacity: true)
        var windowExceeded = false
        var stopped = false
        var index = 0
        while index < outgoing.count {
            var command = outgoing[index]
            index += 1
            if stopped {
                keptScratch.append(command)
                continue
            }
            let channel = Int(command.header.channelID)
            let onChannel = channel < channels.count
            if command.isReliable {
                if onChannel, command.sendAttempts == 0,
                    channels[channel].reliableInFlight >= Int(ProtocolLimits.reliableWindowSize)
                {
                    keptScratch.append(command)
                    continue
                }
                if command.slot >= 0 {
                    if !windowExceeded {
                        let window = Int(roundTrip.packetThrottle &* windowSize / ProtocolLimits.packetThrottleScale)
                        windowExceeded = reliableDataInTransit + command.fragmentLength > max(window, mtu)
                    }
                    if windowExceeded {
                        keptScratch.append(command)
                        continue
                    }
                }
            }
            let size = command.header.number.size + command.fragmentLength
            guard writer.fits(size) else {
                if writer.commandCount == 0 {
                    // Cannot fit even an empty datagram (the MTU shrank under it): drop rather than spin.
                    drop(command)
                    continue
                }
                more = true
                stopped = true
                keptScratch.append(command)
                continue
            }
            if !command.isReliable, command.slot >= 0, command.fragmentOffset == 0 {
                packetThrottleCounter =
                    (packetThrottleCounter + ProtocolLimits.packetThrottleCounter)
                    % ProtocolLimits.packetThrottleScale
                if packetThrottleCounter > roundTrip.packetThrottle {
                    drop(command)
                    while index < outgoing.count, outgoing[index].slot == command.slot,
                        outgoing[index].fragmentOffset != 0
                    {
                        drop(outgoing[index])
                        index += 1
                    }
                    pendingMetrics.append(.event(index: MetricCatalog.Event.unreliableThrottled.rawValue, count: 1))
                    continue
                }
            }
            if command.isReliable {
                if onChannel, command.sendAttempts == 0 { channels[channel].reliableInFlight += 1 }
                command.sendAttempts += 1
                if command.roundTripTimeout == 0 {
                    command.roundTripTimeout = roundTrip.retransmissionTimeout
                    command.roundTripTimeoutLimit =
                        UInt32(clamping: configuration.timeoutLimit) &* command.roundTripTimeout
                }
                if sentReliable.isEmpty { nextTimeout = serviceTime &+ command.roundTripTimeout }
                command.sentTime = serviceTime
                reliableIncluded = true
                reliableDataInTransit += command.fragmentLength
            }
            write(command, into: &writer)
            let first = !command.isReliable || command.sendAttempts == 1
            if first, command.reportBytes > 0 {
                pendingMetrics.append(.sent(kind: command.kind, bytes: command.reportBytes))
            }
            if first, command.header.number == .sendFragment || command.header.number == .sendUnreliableFragment {
                fragments += 1
            }
            if command.number == .connect { connectAttempts += 1 }
            if command.isReliable {
                sentReliable.append(command)
            } else if command.slot >= 0 {
                queuedBytes -= command.queuedFootprint
                pool.release(command.slot)
            }
        }
        swap(&outgoing, &keptScratch)
    }

    /// Writes `command` with its slice of the payload.
    private func write(_ command: OutgoingCommand, into writer: inout DatagramWriter) {
        if command.slot >= 0 {
            let range = command.fragmentOffset..<(command.fragmentOffset + command.fragmentLength)
            pool.withBytes(command.slot, range) { _ = writer.append(command.header, command.command, payload: $0) }
        } else {
            writer.append(command.header, command.command, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// Forgets a queued command without sending it.
    private mutating func drop(_ command: OutgoingCommand) {
        guard command.slot >= 0 else { return }
        queuedBytes -= command.queuedFootprint
        pool.release(command.slot)
    }
}

extension OutgoingCommand {
    /// The command's number.
    var number: CommandNumber { header.number }
}
