import SkirmishNet
import SkirmishWire

/// The fixed lists behind ``ENetConnection``'s ``ProtocolDescription``: packet kinds, protocol events and error kinds,
/// and the index of each.
///
/// The lists cannot depend on a connection's configuration (the description is static, so every series exists at 0
/// before the first connection), and 255 channels × 3 deliveries would be 765 series per persona. So channels 0 to
/// 7 each get a series per delivery, and every higher channel is counted under `ch8+`: bounded, and exact for the
/// channel counts games use.
enum MetricCatalog {
    /// Channels with series of their own; the rest share `ch8+`.
    static let namedChannels = 8
    /// Series per delivery: the named channels and `ch8+`.
    static let seriesPerDelivery = namedChannels + 1

    /// The packet kind of a data packet on `channel`, as it travels on the wire.
    static func data(_ delivery: ENetDelivery, channel: UInt8) -> Int {
        let base =
            switch delivery {
            case .reliable: 0
            case .unreliable: seriesPerDelivery
            case .unsequenced: 2 * seriesPerDelivery
            }
        return base + min(Int(channel), namedChannels)
    }

    /// The first control kind's index.
    static let firstControl = 3 * seriesPerDelivery

    /// The packet kind of a control command (anything but the send commands).
    static func control(_ number: CommandNumber) -> Int {
        switch number {
        case .acknowledge: firstControl
        case .connect: firstControl + 1
        case .verifyConnect: firstControl + 2
        case .disconnect: firstControl + 3
        case .ping: firstControl + 4
        case .bandwidthLimit: firstControl + 5
        case .throttleConfigure: firstControl + 6
        case .sendReliable, .sendUnreliable, .sendFragment, .sendUnsequenced, .sendUnreliableFragment:
            preconditionFailure("\(number) is a data command")
        }
    }

    /// Every packet kind, in index order.
    static let packetKinds: [PacketKind] = {
        var kinds: [PacketKind] = []
        for delivery in ENetDelivery.allCases {
            for channel in 0..<namedChannels {
                kinds.append(PacketKind("\(delivery.rawValue)/ch\(channel)", delivery: delivery.rawValue))
            }
            kinds.append(PacketKind("\(delivery.rawValue)/ch\(namedChannels)+", delivery: delivery.rawValue))
        }
        for name in [
            "acknowledge", "connect", "verify_connect", "disconnect", "ping", "bandwidth_limit", "throttle_configure",
        ] {
            kinds.append(PacketKind(name, delivery: "control"))
        }
        return kinds
    }()

    /// The protocol's own events (``ClientMetric/event(index:count:)``), by index.
    enum Event: Int, CaseIterable {
        /// Fragment commands sent for the first time.
        case fragmentsSent
        /// Fragment commands taken in (new pieces only).
        case fragmentsReceived
        /// The packet throttle moved (round trips rose or fell against their interval's best, or a bandwidth limit).
        case throttleChanges
        /// The server sent a throttle configuration.
        case throttleConfigured
        /// The server sent its bandwidth limits.
        case bandwidthLimited
        /// Unreliable packets the packet throttle dropped before sending, as libenet does.
        case unreliableThrottled
        /// Reliable commands that arrived again (already delivered or held) and were acknowledged, not delivered.
        case duplicates

        /// The event's name.
        var name: String {
            switch self {
            case .fragmentsSent: "fragments_sent"
            case .fragmentsReceived: "fragments_received"
            case .throttleChanges: "throttle_changes"
            case .throttleConfigured: "throttle_configured"
            case .bandwidthLimited: "bandwidth_limited"
            case .unreliableThrottled: "unreliable_throttled"
            case .duplicates: "duplicates"
            }
        }
    }

    /// Error kinds the connection reports, besides the runtime's own and the decoder's (``DatagramError``).
    enum Failure: String, CaseIterable {
        /// The CRC-32 did not match.
        case badChecksum = "bad_checksum"
        /// The datagram is for another peer id than this connection's.
        case peerIDOutOfRange = "peer_id_out_of_range"
        /// The session id does not match the one the verify-connect set.
        case sessionMismatch = "session_mismatch"
        /// The datagram is compressed; no compressor is configured (libenet drops these too).
        case compressedUnsupported = "compressed_unsupported"
        /// A command on a channel the connection does not have.
        case badChannel = "bad_channel"
        /// A reliable sequence number beyond the receive window.
        case windowOverflow = "window_overflow"
        /// A fragment that disagrees with the earlier fragments of its packet.
        case fragmentMismatch = "fragment_mismatch"
        /// A packet larger than ``ENetConnection/Configuration/maxMessageSize``.
        case oversizedPacket = "oversized_packet"
        /// Held or reassembling packets would pass ``ENetConnection/Configuration/maxIncomingBytes``.
        case incomingLimit = "incoming_limit"
        /// A command this state does not take (a connect request, data before the verify-connect…).
        case unexpectedCommand = "unexpected_command"
        /// A reliable command in a datagram without a sent time, which cannot be acknowledged.
        case missingSentTime = "missing_sent_time"
        /// A verify-connect for another connect id (a stale answer to an earlier connection from this port).
        case staleVerifyConnect = "stale_verify_connect"
        /// The codec could not decode a packet.
        case undecodableMessage = "undecodable_message"
        /// A send before the connection is up or after it began to close.
        case sendNotConnected = "send_not_connected"
        /// A send on a channel the connection does not have.
        case sendBadChannel = "send_bad_channel"
        /// A send dropped: too large, or an unreliable one past ``ENetConnection/Configuration/maxQueuedBytes``.
        case sendDropped = "send_dropped"
    }

    /// Why a connection closed, besides the runtime's kinds.
    enum Close: String, CaseIterable {
        /// The server disconnected a connected peer.
        case closedByServer = "closed_by_server"
        /// The server disconnected during the handshake.
        case refusedByServer = "refused_by_server"
        /// The verify-connect broke the handshake's rules (channel count, throttle echo).
        case badVerifyConnect = "bad_verify_connect"
        /// The two ends disagree on checksums.
        case checksumMismatch = "checksum_mismatch"
    }

    /// Every error kind, for the description.
    static let errorKinds: [String] =
        DatagramError.allCases.map(\.kind) + Failure.allCases.map(\.rawValue) + Close.allCases.map(\.rawValue)

    /// The description every ``ENetConnection`` shares.
    static let description = ProtocolDescription(
        name: "enet", transports: [.udp], packetKinds: packetKinds,
        figures: [.roundTrip, .resends, .loss, .handshake], errorKinds: errorKinds,
        events: Event.allCases.map(\.name))
}
