import SkirmishNet
import SkirmishWire

extension ENetConnection {
    /// Takes one datagram: checks its header (peer id, session, compression, checksum), then handles its commands in
    /// order until the end or the first that cannot be taken (protocol.c, `enet_protocol_handle_incoming_commands`).
    mutating func handleDatagram(_ bytes: UnsafeRawBufferPointer, into actions: inout ClientActions<Self>) {
        var reader: DatagramReader
        do {
            reader = try DatagramReader(bytes, checksum: configuration.checksum)
        } catch {
            return actions.record(.error(kind: error.kind))
        }
        let header = reader.header
        guard header.peerID != ProtocolLimits.maximumPeerID else {
            // Addressed to no peer: only a connect request is, and a client takes none.
            return actions.record(.error(kind: MetricCatalog.Failure.unexpectedCommand.rawValue))
        }
        guard header.peerID == incomingPeerID else {
            return actions.record(.error(kind: MetricCatalog.Failure.peerIDOutOfRange.rawValue))
        }
        if outgoingPeerID < ProtocolLimits.maximumPeerID, header.sessionID != incomingSessionID {
            return actions.record(.error(kind: MetricCatalog.Failure.sessionMismatch.rawValue))
        }
        guard !header.compressed else {
            return actions.record(.error(kind: MetricCatalog.Failure.compressedUnsupported.rawValue))
        }
        guard reader.checksumMatches(seed: connectID) else {
            actions.record(.error(kind: MetricCatalog.Failure.badChecksum.rawValue))
            if phase == .connecting {
                handshakeChecksumFailures += 1
                if answersWithoutChecksum(bytes) {
                    end(
                        CloseReason(
                            kind: MetricCatalog.Close.checksumMismatch.rawValue,
                            detail: "the server answered the connect request without a CRC-32 checksum: it runs "
                                + "without checksums and this client with them; both ends must agree",
                            isOutage: false),
                        into: &actions)
                }
            }
            return
        }
        unattributedReceivedHeaderBytes += reader.headerSize
        var fragments = 0
        while phase != .closed {
            let decoded: DecodedCommand?
            do {
                decoded = try reader.next()
            } catch {
                actions.record(.error(kind: error.kind))
                break
            }
            guard let decoded,
                handle(decoded, in: bytes, sentTime: header.sentTime, fragments: &fragments, into: &actions)
            else { break }
        }
        if fragments > 0 {
            actions.record(.event(index: MetricCatalog.Event.fragmentsReceived.rawValue, count: fragments))
        }
    }

    /// Whether a datagram that failed the checksum reads, without one, as this connection's verify-connect: proof
    /// that the server does not use checksums.
    private func answersWithoutChecksum(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var reader = try? DatagramReader(bytes, checksum: false), reader.header.peerID == incomingPeerID else {
            return false
        }
        while let decoded = try? reader.next() {
            if case .verifyConnect(let parameters) = decoded.command, parameters.connectID == connectID { return true }
        }
        return false
    }

    /// Handles one command, then queues its acknowledgement when it asks for one; `false` stops the datagram.
    private mutating func handle(
        _ decoded: DecodedCommand, in bytes: UnsafeRawBufferPointer, sentTime: UInt16?, fragments: inout Int,
        into actions: inout ClientActions<Self>
    ) -> Bool {
        let header = decoded.header
        switch decoded.command {
        case .acknowledge(let sequence, let receivedSentTime):
            guard handleAcknowledgement(sequence, channel: header.channelID, sentTime: receivedSentTime, into: &actions)
            else { return false }
        case .connect:
            actions.record(.error(kind: MetricCatalog.Failure.unexpectedCommand.rawValue))
            return false
        case .verifyConnect(let parameters):
            guard handleVerifyConnect(parameters, into: &actions) else { return false }
        case .disconnect(let data):
            handleDisconnect(data: data, acknowledged: header.acknowledge, into: &actions)
        case .ping:
            guard acceptsTraffic else { return unexpected(into: &actions) }
        case .bandwidthLimit(let incoming, let outgoing):
            guard acceptsTraffic else { return unexpected(into: &actions) }
            peerIncomingBandwidth = incoming
            peerOutgoingBandwidth = outgoing
            windowSize = Self.windowSize(peerIncoming: incoming, hostOutgoing: configuration.outgoingBandwidth)
            actions.record(.event(index: MetricCatalog.Event.bandwidthLimited.rawValue, count: 1))
        case .throttleConfigure(let interval, let acceleration, let deceleration):
            guard acceptsTraffic else { return unexpected(into: &actions) }
            roundTrip.packetThrottleInterval = interval
            roundTrip.packetThrottleAcceleration = acceleration
            roundTrip.packetThrottleDeceleration = deceleration
            actions.record(.event(index: MetricCatalog.Event.throttleConfigured.rawValue, count: 1))
        case .sendReliable, .sendUnreliable, .sendUnsequenced, .sendFragment, .sendUnreliableFragment:
            guard handleData(decoded, in: bytes, fragments: &fragments, into: &actions) else { return false }
        }
        if !decoded.command.carriesPayload {
            actions.record(
                .received(
                    kind: MetricCatalog.control(header.number), bytes: decoded.wireSize + takeReceivedHeaderShare()))
        }
        guard header.acknowledge else { return phase != .closed }
        guard let sentTime else {
            actions.record(.error(kind: MetricCatalog.Failure.missingSentTime.rawValue))
            return false
        }
        switch phase {
        case .idle, .disconnecting, .closed:
            break
        case .acknowledgingDisconnect:
            if header.number == .disconnect { queueAcknowledgement(header, sentTime: sentTime) }
        case .connecting, .connected, .disconnectLater:
            queueAcknowledgement(header, sentTime: sentTime)
        }
        return phase != .closed
    }

    /// Whether the connection takes data and control traffic now (libenet: connected or disconnecting later).
    var acceptsTraffic: Bool {
        switch phase {
        case .connected, .disconnectLater: true
        case .idle, .connecting, .disconnecting, .acknowledgingDisconnect, .closed: false
        }
    }

    private func unexpected(into actions: inout ClientActions<Self>) -> Bool {
        actions.record(.error(kind: MetricCatalog.Failure.unexpectedCommand.rawValue))
        return false
    }

    /// The datagram header's bytes, for the first packet counted from it; 0 after.
    mutating func takeReceivedHeaderShare() -> Int {
        defer { unattributedReceivedHeaderBytes = 0 }
        return unattributedReceivedHeaderBytes
    }

    /// Queues the acknowledgement of a reliable command (peer.c, `enet_peer_queue_acknowledgement`), unless its
    /// sequence number lies in the windows just past the ones this side takes, which libenet leaves unacknowledged.
    private mutating func queueAcknowledgement(_ header: CommandHeader, sentTime: UInt16) {
        let channel = Int(header.channelID)
        if channel < channels.count, channels[channel].refusesAcknowledgement(of: header.reliableSequenceNumber) {
            return
        }
        outgoingDataTotal &+= UInt32(CommandNumber.acknowledge.size)
        acknowledgements.append(
            PendingAcknowledgement(
                channelID: header.channelID, reliableSequenceNumber: header.reliableSequenceNumber,
                sentTime: sentTime, acknowledgesDisconnect: header.number == .disconnect))
    }

    /// An acknowledgement: a round-trip sample from the echoed sent time, then the acknowledged command leaves the
    /// resend queue (protocol.c, `enet_protocol_handle_acknowledge`). `false` stops the datagram.
    private mutating func handleAcknowledgement(
        _ sequence: UInt16, channel: UInt8, sentTime: UInt16, into actions: inout ClientActions<Self>
    ) -> Bool {
        // The echo has 16 bits: take the high bits from now, and from the previous 64 s if that puts it ahead.
        var sent = UInt32(sentTime) | (serviceTime & 0xFFFF_0000)
        if sent & 0x8000 > serviceTime & 0x8000 { sent &-= 0x10000 }
        guard !ServiceTime.less(serviceTime, sent) else { return true }
        let sample = max(ServiceTime.difference(serviceTime, sent), 1)
        if roundTrip.sample(sample, at: serviceTime, first: lastReceiveTime == nil) { pendingThrottleChanges += 1 }
        actions.record(.roundTrip(.milliseconds(Int(roundTrip.roundTripTime))))
        lastReceiveTime = serviceTime
        earliestTimeout = nil
        let number = removeSentReliable(sequence, channel: channel)
        switch phase {
        case .disconnecting(let data):
            // libenet stops reading the datagram at an acknowledgement of anything else here, which loses the
            // disconnect's own acknowledgement when it follows one for a command the disconnect dropped; skipping
            // it is what makes the disconnect end on time.
            guard number == .disconnect else { return true }
            end(
                CloseReason(
                    kind: CloseReason.local.kind, detail: "disconnected (data \(data)), acknowledged by the server",
                    isOutage: false, code: data),
                into: &actions)
        case .disconnectLater(let data):
            if outgoing.isEmpty, sentReliable.isEmpty { beginDisconnect(data: data, into: &actions) }
        case .idle, .connecting, .connected, .acknowledgingDisconnect, .closed:
            break
        }
        return true
    }

    /// Takes the acknowledged command out of the resend queue, or out of the send queue when it timed out and waits
    /// there to be sent again (protocol.c, `enet_protocol_remove_sent_reliable_command`); returns its number.
    private mutating func removeSentReliable(_ sequence: UInt16, channel: UInt8) -> CommandNumber? {
        let command: OutgoingCommand
        var wasSent = true
        if let index = sentReliable.firstIndex(where: {
            $0.header.reliableSequenceNumber == sequence && $0.header.channelID == channel
        }) {
            command = sentReliable.remove(at: index)
        } else {
            var found: Int?
            for index in outgoing.indices where outgoing[index].isReliable {
                guard outgoing[index].sendAttempts > 0 else { break }
                if outgoing[index].header.reliableSequenceNumber == sequence,
                    outgoing[index].header.channelID == channel
                {
                    found = index
                    break
                }
            }
            guard let found else { return nil }
            command = outgoing.remove(at: found)
            wasSent = false
        }
        let channelIndex = Int(channel)
        if channelIndex < channels.count, channels[channelIndex].reliableInFlight > 0 {
            channels[channelIndex].reliableInFlight -= 1
        }
        if command.slot >= 0 {
            if wasSent { reliableDataInTransit -= command.fragmentLength }
            queuedBytes -= command.queuedFootprint
            pool.release(command.slot)
        }
        if let first = sentReliable.first { nextTimeout = first.sentTime &+ first.roundTripTimeout }
        return command.number
    }

    /// The verify-connect: the server accepted, and says what it settled (protocol.c,
    /// `enet_protocol_handle_verify_connect`). `false` stops the datagram unacknowledged.
    private mutating func handleVerifyConnect(
        _ parameters: ConnectParameters, into actions: inout ClientActions<Self>
    ) -> Bool {
        guard phase == .connecting else { return true }
        guard parameters.connectID == connectID else {
            actions.record(.error(kind: MetricCatalog.Failure.staleVerifyConnect.rawValue))
            return false
        }
        let channelRange = UInt32(ProtocolLimits.minimumChannelCount)...UInt32(ProtocolLimits.maximumChannelCount)
        guard channelRange.contains(parameters.channelCount),
            parameters.packetThrottleInterval == roundTrip.packetThrottleInterval,
            parameters.packetThrottleAcceleration == roundTrip.packetThrottleAcceleration,
            parameters.packetThrottleDeceleration == roundTrip.packetThrottleDeceleration,
            parameters.outgoingPeerID < ProtocolLimits.maximumPeerID
        else {
            end(
                CloseReason(
                    kind: MetricCatalog.Close.badVerifyConnect.rawValue,
                    detail:
                        "the server's verify-connect broke the handshake's rules (channels \(parameters.channelCount), "
                        + "throttle \(parameters.packetThrottleInterval)/\(parameters.packetThrottleAcceleration)/"
                        + "\(parameters.packetThrottleDeceleration), peer id \(parameters.outgoingPeerID))",
                    isOutage: false),
                into: &actions)
            return false
        }
        _ = removeSentReliable(1, channel: ProtocolLimits.controlChannel)
        if Int(parameters.channelCount) < channels.count {
            channels.removeLast(channels.count - Int(parameters.channelCount))
        }
        outgoingPeerID = parameters.outgoingPeerID
        incomingSessionID = parameters.incomingSessionID
        outgoingSessionID = parameters.outgoingSessionID
        let serverMTU = min(max(Int(parameters.mtu), ProtocolLimits.minimumMTU), ProtocolLimits.maximumMTU)
        mtu = min(mtu, serverMTU)
        let serverWindow = min(
            max(parameters.windowSize, ProtocolLimits.minimumWindowSize), ProtocolLimits.maximumWindowSize)
        windowSize = min(windowSize, serverWindow)
        peerIncomingBandwidth = parameters.incomingBandwidth
        peerOutgoingBandwidth = parameters.outgoingBandwidth
        phase = .connected
        recalculateBandwidthLimits = true
        actions.record(.handshake(now - startedAt))
        actions.established(
            ENetSession(
                peerID: outgoingPeerID, channelCount: channels.count, mtu: mtu, windowSize: Int(windowSize),
                serverIncomingBandwidth: peerIncomingBandwidth, serverOutgoingBandwidth: peerOutgoingBandwidth,
                connectID: connectID))
        return true
    }

    /// The server's disconnect (protocol.c, `enet_protocol_handle_disconnect`): the connection ends with the
    /// server's data as the close reason's ``CloseReason/code``, once the acknowledgement is sent when one is asked
    /// for.
    private mutating func handleDisconnect(data: UInt32, acknowledged: Bool, into actions: inout ClientActions<Self>) {
        switch phase {
        case .idle, .closed, .acknowledgingDisconnect:
            return
        case .connecting:
            end(
                CloseReason(
                    kind: MetricCatalog.Close.refusedByServer.rawValue,
                    detail: "the server refused the connection (data \(data))", isOutage: false,
                    code: data),
                into: &actions)
        case .disconnecting(let own):
            end(
                CloseReason(
                    kind: CloseReason.local.kind,
                    detail: "disconnected (data \(own)); the server disconnected too (data \(data))", isOutage: false,
                    code: data),
                into: &actions)
        case .connected, .disconnectLater:
            resetQueues()
            if acknowledged {
                phase = .acknowledgingDisconnect(data: data)
            } else {
                end(
                    CloseReason(
                        kind: MetricCatalog.Close.closedByServer.rawValue,
                        detail: "the server disconnected (data \(data))", isOutage: false, code: data),
                    into: &actions)
            }
        }
    }

    /// libenet's window toward a peer from the two bandwidths that bound it (protocol.c,
    /// `enet_protocol_handle_bandwidth_limit`).
    static func windowSize(peerIncoming: UInt32, hostOutgoing: UInt32) -> UInt32 {
        let size: UInt32
        if peerIncoming == 0, hostOutgoing == 0 {
            size = ProtocolLimits.maximumWindowSize
        } else if peerIncoming == 0 || hostOutgoing == 0 {
            size = (max(peerIncoming, hostOutgoing) / ProtocolLimits.windowSizeScale) * ProtocolLimits.minimumWindowSize
        } else {
            size = (min(peerIncoming, hostOutgoing) / ProtocolLimits.windowSizeScale) * ProtocolLimits.minimumWindowSize
        }
        return min(max(size, ProtocolLimits.minimumWindowSize), ProtocolLimits.maximumWindowSize)
    }
}
