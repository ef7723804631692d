import SkirmishNet
import SkirmishWire

extension ENetConnection {
    /// Encodes `message` with the codec and queues it as ENet would (peer.c, `enet_peer_send`): one command, or
    /// fragments when it does not fit a datagram.
    mutating func queueMessage(_ message: Message, into actions: inout ClientActions<Self>) {
        guard phase == .connected else {
            return actions.record(.error(kind: MetricCatalog.Failure.sendNotConnected.rawValue))
        }
        let slot = pool.acquire()
        var buffer = pool.take(slot)
        let route = codec.encode(message, into: &buffer)
        let length = buffer.count
        pool.put(slot, buffer)
        let channel = Int(route.channel)
        guard channel < channels.count else {
            pool.release(slot)
            return actions.record(.error(kind: MetricCatalog.Failure.sendBadChannel.rawValue))
        }
        let fragmentLength = mtu - 4 - CommandNumber.sendFragment.size - (configuration.checksum ? 4 : 0)
        let commands = length > fragmentLength ? (length + fragmentLength - 1) / fragmentLength : 1
        let footprint = length + commands * OutgoingCommand.overhead
        guard length <= configuration.maxMessageSize, queuedBytes + footprint <= configuration.maxQueuedBytes else {
            pool.release(slot)
            if route.delivery == .reliable, length <= configuration.maxMessageSize {
                return end(
                    .unacknowledged(
                        "more than \(configuration.maxQueuedBytes) bytes of messages queued or unacknowledged"),
                    into: &actions)
            }
            return actions.record(.error(kind: MetricCatalog.Failure.sendDropped.rawValue))
        }
        if length > fragmentLength {
            queueFragments(slot: slot, length: length, fragmentLength: fragmentLength, route: route, into: &actions)
            return
        }
        queuedBytes += footprint
        var header: CommandHeader
        var command: Command
        var delivery = route.delivery
        if route.delivery == .unsequenced {
            header = CommandHeader(.sendUnsequenced, channelID: route.channel, unsequenced: true)
            command = .sendUnsequenced(unsequencedGroup: 0)
        } else if route.delivery == .reliable || channels[channel].outgoingUnreliableSequenceNumber >= 0xFFFF {
            // A channel that ran out of unreliable numbers since its last reliable packet sends this one reliably,
            // which starts the numbers over (peer.c, `enet_peer_send`).
            header = CommandHeader(.sendReliable, channelID: route.channel, acknowledge: true)
            command = .sendReliable
            delivery = .reliable
        } else {
            header = CommandHeader(.sendUnreliable, channelID: route.channel)
            command = .sendUnreliable(unreliableSequenceNumber: 0)
        }
        var outgoingCommand = OutgoingCommand(
            header: header, command: command, slot: slot, fragmentLength: length,
            kind: MetricCatalog.data(delivery, channel: route.channel))
        outgoingCommand.reportBytes = header.number.size + length
        setUp(&outgoingCommand)
        outgoing.append(outgoingCommand)
    }

    /// Cuts a packet too large for one datagram into fragments sharing its slot: reliable fragments, or unreliable
    /// ones when configured and the channel has unreliable numbers left.
    private mutating func queueFragments(
        slot: Int, length: Int, fragmentLength: Int, route: ENetRoute, into actions: inout ClientActions<Self>
    ) {
        let count = (length + fragmentLength - 1) / fragmentLength
        guard count <= Int(ProtocolLimits.maximumFragmentCount) else {
            pool.release(slot)
            return actions.record(.error(kind: MetricCatalog.Failure.sendDropped.rawValue))
        }
        queuedBytes += length + count * OutgoingCommand.overhead
        let channel = Int(route.channel)
        let unreliable =
            route.delivery != .reliable && configuration.unreliableFragments
            && channels[channel].outgoingUnreliableSequenceNumber < 0xFFFF
        let number: CommandNumber = unreliable ? .sendUnreliableFragment : .sendFragment
        let start =
            unreliable
            ? channels[channel].outgoingUnreliableSequenceNumber &+ 1
            : channels[channel].outgoingReliableSequenceNumber &+ 1
        let kind = MetricCatalog.data(unreliable ? .unreliable : .reliable, channel: route.channel)
        pool.retain(slot, by: count - 1)
        for index in 0..<count {
            let offset = index * fragmentLength
            let fragment = FragmentHeader(
                startSequenceNumber: start, fragmentCount: UInt32(count), fragmentNumber: UInt32(index),
                totalLength: UInt32(length), fragmentOffset: UInt32(offset))
            var command = OutgoingCommand(
                header: CommandHeader(number, channelID: route.channel, acknowledge: !unreliable),
                command: unreliable ? .sendUnreliableFragment(fragment) : .sendFragment(fragment), slot: slot,
                fragmentOffset: offset, fragmentLength: min(fragmentLength, length - offset), kind: kind)
            if index == 0 { command.reportBytes = count * number.size + length }
            setUp(&command)
            outgoing.append(command)
        }
    }

    /// Queues a command of the connection itself, on the control channel.
    mutating func queueControl(_ command: Command, acknowledge: Bool, unsequenced: Bool = false) {
        var outgoingCommand = OutgoingCommand(
            header: CommandHeader(
                command.number, channelID: ProtocolLimits.controlChannel, acknowledge: acknowledge,
                unsequenced: unsequenced),
            command: command, kind: MetricCatalog.control(command.number))
        outgoingCommand.reportBytes = command.number.size
        setUp(&outgoingCommand)
        outgoing.append(outgoingCommand)
    }

    /// Numbers a command as libenet does (peer.c, `enet_peer_setup_outgoing_command`): control commands on the
    /// connection's own reliable sequence, reliable ones on their channel's (which restarts its unreliable numbers),
    /// unsequenced ones by group, unreliable ones after their channel's latest reliable.
    mutating func setUp(_ command: inout OutgoingCommand) {
        outgoingDataTotal &+= UInt32(truncatingIfNeeded: command.header.number.size + command.fragmentLength)
        let channel = Int(command.header.channelID)
        if command.header.channelID == ProtocolLimits.controlChannel {
            outgoingReliableSequenceNumber &+= 1
            command.header.reliableSequenceNumber = outgoingReliableSequenceNumber
        } else if command.header.acknowledge {
            channels[channel].outgoingReliableSequenceNumber &+= 1
            channels[channel].outgoingUnreliableSequenceNumber = 0
            command.header.reliableSequenceNumber = channels[channel].outgoingReliableSequenceNumber
        } else if command.header.unsequenced {
            outgoingUnsequencedGroup &+= 1
            command.header.reliableSequenceNumber = 0
            command.command = .sendUnsequenced(unsequencedGroup: outgoingUnsequencedGroup)
        } else {
            if command.fragmentOffset == 0 { channels[channel].outgoingUnreliableSequenceNumber &+= 1 }
            command.header.reliableSequenceNumber = channels[channel].outgoingReliableSequenceNumber
            command.unreliableSequenceNumber = channels[channel].outgoingUnreliableSequenceNumber
            if case .sendUnreliable = command.command {
                command.command = .sendUnreliable(unreliableSequenceNumber: command.unreliableSequenceNumber)
            }
        }
    }

    /// `enet_peer_disconnect`: drop what is queued and say goodbye, reliably when connected; before the
    /// verify-connect the goodbye is unacknowledged and the connection ends at once.
    mutating func beginDisconnect(data: UInt32, into actions: inout ClientActions<Self>) {
        switch phase {
        case .connected, .disconnectLater:
            resetQueues()
            queueControl(.disconnect(data: data), acknowledge: true)
            phase = .disconnecting(data: data)
        case .connecting:
            resetQueues()
            queueControl(.disconnect(data: data), acknowledge: false, unsequenced: true)
            flush(into: &actions)
            end(
                CloseReason(
                    kind: CloseReason.local.kind, detail: "disconnected (data \(data)) before the server answered",
                    isOutage: false, code: data),
                into: &actions)
        case .idle, .disconnecting, .acknowledgingDisconnect, .closed:
            break
        }
    }
}
