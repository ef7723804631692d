import SkirmishNet
import SkirmishWire

extension DDNetConnection {
    /// What the plug-in counts packets as: control messages, the system and game messages a bot sends or reads, and
    /// the snapshot kinds; `…_other` for the rest. Its raw value indexes ``ProtocolDescription/packetKinds``.
    enum Kind: Int, CaseIterable {
        case keepAlive, connect, connectAccept, accept, close, empty
        case info, clientVersion, mapChange, mapDetails, capabilities, rconType, conReady, ready, enterGame
        case input, inputTiming, ping, pingReply, snap, snapSingle, snapEmpty, systemOther
        case startInfo, readyToEnter, say, chat, gameOther

        /// The `type` label.
        var name: String {
            switch self {
            case .keepAlive: "ctrl_keepalive"
            case .connect: "ctrl_connect"
            case .connectAccept: "ctrl_connect_accept"
            case .accept: "ctrl_accept"
            case .close: "ctrl_close"
            case .empty: "ack_only"
            case .info: "sys_info"
            case .clientVersion: "sys_clientver"
            case .mapChange: "sys_map_change"
            case .mapDetails: "sys_map_details"
            case .capabilities: "sys_capabilities"
            case .rconType: "sys_rcon_type"
            case .conReady: "sys_con_ready"
            case .ready: "sys_ready"
            case .enterGame: "sys_enter_game"
            case .input: "sys_input"
            case .inputTiming: "sys_input_timing"
            case .ping: "sys_ping"
            case .pingReply: "sys_ping_reply"
            case .snap: "snap"
            case .snapSingle: "snap_single"
            case .snapEmpty: "snap_empty"
            case .systemOther: "sys_other"
            case .startInfo: "game_start_info"
            case .readyToEnter: "game_ready_to_enter"
            case .say: "game_say"
            case .chat: "game_chat"
            case .gameOther: "game_other"
            }
        }

        /// The `delivery` label: how DDNet sends this kind.
        var delivery: String {
            switch self {
            case .keepAlive, .connect, .connectAccept, .accept, .close, .empty: "control"
            case .input, .inputTiming, .ping, .pingReply, .snap, .snapSingle, .snapEmpty: "unreliable"
            case .systemOther, .gameOther: "mixed"
            default: "vital"
            }
        }
    }

    /// The plug-in's own events, counted in `skirmish_protocol_events_total{event}`; raw values index
    /// ``ProtocolDescription/events``.
    enum Event: Int, CaseIterable {
        /// The bot asked for a full snapshot (acknowledged tick -1) after a checksum mismatch or a missing base.
        case fullSnapshotRequested
        /// A snapshot's delta base was no longer kept.
        case snapshotBaseMissing
        /// Parts of a multi-part snapshot were abandoned for a newer tick.
        case snapshotIncomplete
        /// The server said an input arrived after its tick began.
        case inputLate
        /// A vital chunk arrived out of order and the bot asked for a resend.
        case resendRequested

        /// The `event` label.
        var name: String {
            switch self {
            case .fullSnapshotRequested: "full_snapshot_requested"
            case .snapshotBaseMissing: "snapshot_base_missing"
            case .snapshotIncomplete: "snapshot_incomplete"
            case .inputLate: "input_late"
            case .resendRequested: "resend_requested"
            }
        }
    }

    /// Close kinds, from a closed set: the server's words go to ``CloseReason/detail`` only.
    enum Rejection {
        static let serverFull = "rejected_server_full"
        static let wrongPassword = "rejected_wrong_password"
        static let banned = "rejected_banned"
        static let wrongVersion = "rejected_version"
        static let connectionLimit = "rejected_connection_limit"
        static let shutdown = "server_shutdown"
        static let closed = "closed_by_server"
        /// A vital message found the resend queue full, or did not fit a chunk.
        static let queueFull = "queue_full"

        static let all = [
            serverFull, wrongPassword, banned, wrongVersion, connectionLimit, shutdown, closed, queueFull,
        ]
    }

    /// `ddnet` over UDP: the packet kinds, figures, error kinds, events and desync parts it reports.
    public static let description = ProtocolDescription(
        name: "ddnet", transports: [.udp],
        packetKinds: Kind.allCases.map { PacketKind($0.name, delivery: $0.delivery) },
        figures: [.roundTrip, .resends, .handshake, .snapshotAge, .snapshotInterval, .desyncs],
        errorKinds: Rejection.all + DecodeError.allCases.map(\.kind),
        events: Event.allCases.map(\.name),
        desyncParts: ["snapshot"] + Wire.Item.names)

    /// The reason for a server's close message: the kind from what the text starts with, the text as detail
    /// (`CNetServer::TryAcceptClient`, `CServer::ProcessClientPacket` and `CNetBan` word them).
    static func closeReason(_ text: String) -> CloseReason {
        let detail = text.isEmpty ? "closed by the server" : text
        func has(_ needle: String) -> Bool {
            let haystack = Array(text.utf8)
            let needle = Array(needle.utf8)
            guard needle.count <= haystack.count else { return false }
            return (0...(haystack.count - needle.count)).contains {
                haystack[$0..<($0 + needle.count)].elementsEqual(needle)
            }
        }
        let kind: String
        if has("server is full") {
            kind = Rejection.serverFull
        } else if has("Wrong password") {
            kind = Rejection.wrongPassword
        } else if has("banned") {
            kind = Rejection.banned
        } else if has("Wrong version") {
            kind = Rejection.wrongVersion
        } else if has("with the same IP") || has("Too many connections") {
            kind = Rejection.connectionLimit
        } else if has("Server shutdown") {
            return CloseReason(kind: Rejection.shutdown, detail: detail, isOutage: true)
        } else {
            kind = Rejection.closed
        }
        return CloseReason(kind: kind, detail: detail, isOutage: false)
    }
}
