/// Message numbers and names of the 0.6 protocol as DDNet 16.4 speaks it.
///
/// A message starts with the varint `id << 1 | system` (`CMsgPacker`); id 0 (`NETMSG_EX`) is followed by a 16-byte
/// UUID naming an extended message (`src/engine/shared/protocol_ex_msgs.h`): the UUID is MD5 of the namespace
/// `e05ddaaa-c4e6-4cfb-b642-5d48e80c0029` and the name, made a version-3 UUID (`CalculateUuid` in
/// `src/engine/shared/uuid_manager.cpp`).
enum Wire {
    /// Control messages, the first payload byte of a control packet (`NET_CTRLMSG_*` in `network.h`).
    enum Control {
        static let keepAlive: UInt8 = 0
        static let connect: UInt8 = 1
        static let connectAccept: UInt8 = 2
        static let accept: UInt8 = 3
        static let close: UInt8 = 4
    }

    /// System messages (`NETMSG_*` in `src/engine/shared/protocol.h`).
    enum System {
        static let ex: Int32 = 0
        static let info: Int32 = 1
        static let mapChange: Int32 = 2
        static let mapData: Int32 = 3
        static let conReady: Int32 = 4
        static let snap: Int32 = 5
        static let snapEmpty: Int32 = 6
        static let snapSingle: Int32 = 7
        static let snapSmall: Int32 = 8
        static let inputTiming: Int32 = 9
        static let rconAuthStatus: Int32 = 10
        static let rconLine: Int32 = 11
        static let ready: Int32 = 14
        static let enterGame: Int32 = 15
        static let input: Int32 = 16
        static let requestMapData: Int32 = 19
        static let ping: Int32 = 22
        static let pingReply: Int32 = 23
    }

    /// Game messages (`NETMSGTYPE_*`, numbered in `datasrc/network.py`'s order).
    enum Game {
        static let motd: Int32 = 1
        static let broadcast: Int32 = 2
        static let chat: Int32 = 3
        static let readyToEnter: Int32 = 8
        static let say: Int32 = 17
        static let startInfo: Int32 = 20
    }

    /// UUIDs of the extended system messages a client meets while joining.
    enum Extended {
        /// `clientver@ddnet.tw`: the client's connection id and DDNet version, sent before `NETMSG_INFO`.
        static let clientVersion: [UInt8] = [
            0x8C, 0x00, 0x13, 0x04, 0x84, 0x61, 0x3E, 0x47, 0x87, 0x87, 0xF6, 0x72, 0xB3, 0x83, 0x5B, 0xD4,
        ]
        /// `map-details@ddnet.tw`: the map's name, SHA-256, CRC and size.
        static let mapDetails: [UInt8] = [
            0xF9, 0x11, 0x7B, 0x3C, 0x80, 0x39, 0x34, 0x16, 0x9F, 0xC0, 0xAE, 0xF2, 0xBC, 0xB7, 0x5C, 0x03,
        ]
        /// `capabilities@ddnet.tw`: the server's capability version and flags.
        static let capabilities: [UInt8] = [
            0xF6, 0x21, 0xA5, 0xA1, 0xF5, 0x85, 0x37, 0x75, 0x8E, 0x73, 0x41, 0xBE, 0xEE, 0x79, 0xF2, 0xB2,
        ]
        /// `rcon-type@ddnet.tw`: whether the remote console takes user names.
        static let rconType: [UInt8] = [
            0x12, 0x81, 0x0E, 0x1F, 0xA1, 0xDB, 0x33, 0x78, 0xB4, 0xFB, 0x16, 0x4E, 0xD6, 0x50, 0x59, 0x26,
        ]
    }

    /// The item types a bot reads (`NETOBJTYPE_*`), and names for the desync `part` label.
    enum Item {
        static let character: Int = 9
        static let playerInfo: Int = 10

        /// `NETOBJTYPE_*` / `NETEVENTTYPE_*` names of types 0…20, lowercased, for labels.
        static let names = [
            "ex", "player_input", "projectile", "laser", "pickup", "flag", "game_info", "game_data",
            "character_core", "character", "player_info", "client_info", "spectator_info", "event_common",
            "event_explosion", "event_spawn", "event_hammer_hit", "event_death", "event_sound_global",
            "event_sound_world", "event_damage_ind",
        ]
    }

    /// The server's tick rate (`SERVER_TICK_SPEED`).
    static let tickRate = 50
    /// `MAX_NAME_LENGTH` and `MAX_CLAN_LENGTH`, each counting the NUL.
    static let maxNameLength = 16
    static let maxClanLength = 12
}
