import SkirmishNet
import SkirmishWire

extension ENetConnection {
    /// Resends reliable commands whose timeout passed, doubling it, and gives the server up when one has waited
    /// past `timeoutMaximum`, or past `timeoutMinimum` with its timeout at the limit (protocol.c,
    /// `enet_protocol_check_timeouts`). The handshake is bound by the same rule through its connect request.
    mutating func checkTimeouts(into actions: inout ClientActions<Self>) {
        keptScratch.removeAll(keepingCapacity: true)
        let minimum = Self.milliseconds(configuration.timeoutMinimum)
        let maximum = Self.milliseconds(configuration.timeoutMaximum)
        var remaining = 0
        for index in sentReliable.indices {
            var command = sentReliable[index]
            guard ServiceTime.difference(serviceTime, command.sentTime) >= command.roundTripTimeout else {
                sentReliable[remaining] = command
                remaining += 1
                continue
            }
            if earliestTimeout.map({ ServiceTime.less(command.sentTime, $0) }) ?? true {
                earliestTimeout = command.sentTime
            }
            let waited = ServiceTime.difference(serviceTime, earliestTimeout ?? command.sentTime)
            if waited >= maximum || (command.roundTripTimeout >= command.roundTripTimeoutLimit && waited >= minimum) {
                return end(timeoutReason(waited: waited), into: &actions)
            }
            reliableDataInTransit -= command.fragmentLength
            command.roundTripTimeout &*= 2
            keptScratch.append(command)
        }
        sentReliable.removeLast(sentReliable.count - remaining)
        if let first = sentReliable.first { nextTimeout = first.sentTime &+ first.roundTripTimeout }
        guard !keptScratch.isEmpty else { return }
        actions.record(.resent(count: keptScratch.count))
        // The timed-out commands go to the front of the queue, in the order they were sent.
        keptScratch.append(contentsOf: outgoing)
        swap(&outgoing, &keptScratch)
    }

    /// Ends the handshake when ``Configuration/handshakeTimeout`` passed without a verify-connect; `true` when it did.
    mutating func handshakeExpired(into actions: inout ClientActions<Self>) -> Bool {
        guard phase == .connecting, let limit = configuration.handshakeTimeout,
            ServiceTime.greaterOrEqual(serviceTime, Self.milliseconds(limit))
        else { return false }
        end(timeoutReason(waited: serviceTime), into: &actions)
        return true
    }

    /// Why the connection timed out, by what it was waiting for.
    private func timeoutReason(waited: UInt32) -> CloseReason {
        switch phase {
        case .connecting:
            if configuration.checksum, handshakeChecksumFailures > 0 {
                return CloseReason(
                    kind: MetricCatalog.Close.checksumMismatch.rawValue,
                    detail: "no valid verify-connect in \(waited) ms; \(handshakeChecksumFailures) datagrams from the "
                        + "server failed the CRC-32 checksum: the server runs without checksums, this client with them",
                    isOutage: false)
            }
            return .handshakeTimeout(
                "no verify-connect after \(connectAttempts) connect requests in \(waited) ms: the server is not "
                    + "listening, or it and this client disagree on CRC-32 checksums (a libenet server with checksums "
                    + "on drops connect requests without one, and one without misreads them; this client has them "
                    + (configuration.checksum ? "on)" : "off)"))
        case .disconnecting(let data):
            return CloseReason(
                kind: CloseReason.local.kind,
                detail: "disconnected (data \(data)); the server did not acknowledge within \(waited) ms",
                isOutage: false, code: data)
        case .idle, .connected, .disconnectLater, .acknowledgingDisconnect, .closed:
            return .silence("no acknowledgement from the server for \(waited) ms (ENet's peer timeout)")
        }
    }

    /// libenet's bandwidth throttle for this one peer, once a second (host.c, `enet_host_bandwidth_throttle`):
    /// caps the packet throttle so this side sends no faster than its own upstream and the server's downstream
    /// bandwidth allow, and after connecting tells the server this side's limits with a bandwidth-limit command.
    mutating func runBandwidthThrottle() {
        let elapsed = serviceTime &- bandwidthThrottleEpoch
        guard elapsed >= ProtocolLimits.bandwidthThrottleInterval else { return }
        bandwidthThrottleEpoch = serviceTime
        switch phase {
        case .connected, .disconnectLater: break
        case .idle, .connecting, .disconnecting, .acknowledgingDisconnect, .closed: return
        }
        let scale = ProtocolLimits.packetThrottleScale
        let throttleBefore = roundTrip.packetThrottle
        var dataTotal = UInt32.max
        var bandwidth = UInt32.max
        if configuration.outgoingBandwidth != 0 {
            dataTotal = outgoingDataTotal
            bandwidth = configuration.outgoingBandwidth &* elapsed / 1000
        }
        var limited = false
        if peerIncomingBandwidth != 0 {
            let throttle = dataTotal <= bandwidth ? scale : bandwidth &* scale / dataTotal
            let peerBandwidth = peerIncomingBandwidth &* elapsed / 1000
            if throttle &* outgoingDataTotal / scale > peerBandwidth, outgoingDataTotal > 0 {
                roundTrip.packetThrottleLimit = max(peerBandwidth &* scale / outgoingDataTotal, 1)
                limited = true
            }
        }
        if !limited {
            roundTrip.packetThrottleLimit = dataTotal <= bandwidth ? scale : bandwidth &* scale / dataTotal
        }
        roundTrip.packetThrottle = min(roundTrip.packetThrottle, roundTrip.packetThrottleLimit)
        outgoingDataTotal = 0
        if roundTrip.packetThrottle != throttleBefore {
            pendingThrottleChanges += 1
        }
        guard recalculateBandwidthLimits else { return }
        recalculateBandwidthLimits = false
        // One peer: its share of this side's downstream is all of it, unless the server sends slower anyway, in
        // which case libenet reports the server's own upstream (0 when that is unlimited).
        var incoming: UInt32 = 0
        let downstream = configuration.incomingBandwidth
        if downstream != 0 {
            incoming =
                peerOutgoingBandwidth > 0 && peerOutgoingBandwidth >= downstream ? downstream : peerOutgoingBandwidth
        }
        queueControl(.bandwidthLimit(incoming: incoming, outgoing: configuration.outgoingBandwidth), acknowledge: true)
    }

    /// Works out ``nextDeadline`` from the timers: the oldest reliable command's timeout, the next ping, the next
    /// bandwidth throttle while it has work.
    mutating func updateDeadline() {
        switch phase {
        case .idle, .closed:
            deadline = .distantFuture
            return
        case .connecting, .connected, .disconnectLater, .disconnecting, .acknowledgingDisconnect:
            break
        }
        var next = UInt32.max
        func consider(_ time: UInt32) {
            let due = ServiceTime.less(time, serviceTime) ? serviceTime : time
            next = min(next, due)
        }
        if !sentReliable.isEmpty { consider(nextTimeout) }
        if phase == .connecting, let limit = configuration.handshakeTimeout { consider(Self.milliseconds(limit)) }
        if phase == .connected, sentReliable.isEmpty {
            consider((lastReceiveTime ?? serviceTime) &+ Self.milliseconds(configuration.pingInterval))
        }
        switch phase {
        case .connected, .disconnectLater:
            if recalculateBandwidthLimits || configuration.outgoingBandwidth != 0 || peerIncomingBandwidth != 0 {
                consider(bandwidthThrottleEpoch &+ ProtocolLimits.bandwidthThrottleInterval)
            }
        case .idle, .connecting, .disconnecting, .acknowledgingDisconnect, .closed:
            break
        }
        deadline = next == UInt32.max ? .distantFuture : instant(next)
    }
}
