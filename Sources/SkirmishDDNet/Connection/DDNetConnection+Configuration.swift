extension DDNetConnection {
    /// How a bot introduces itself to a DDNet server and how patient it is.
    ///
    /// The defaults join a stock DDNet 16.4 server as a DDNet 16.4 client would, with timeouts a load test wants
    /// (seconds, where the reference client waits 100 s, `conn_timeout`).
    public struct Configuration: Sendable, Hashable {
        /// The player name; `{n}` becomes the bot's number. Names are cut to 15 bytes (`MAX_NAME_LENGTH`), and a
        /// server renames duplicates, so keep `{n}` in it. Empty: the runtime's name for the bot.
        public var namePattern = "bot-{n}"
        /// The clan shown beside the name (cut to 11 bytes).
        public var clan = "skirmish"
        /// The skin's name.
        public var skin = "default"
        /// The country flag (ISO 3166-1 numeric; -1 none).
        public var country = -1
        /// Whether the body and feet colours below are used.
        public var useCustomColor = false
        /// The body colour, HSL packed as the game does.
        public var colorBody = 65_408
        /// The feet colour, HSL packed as the game does.
        public var colorFeet = 65_408
        /// The server password, empty for none.
        public var password = ""
        /// The net version `NETMSG_INFO` carries; a server refuses any other (`GAME_NETVERSION`).
        public var netVersion = "0.6 626fce9a778df4d4"
        /// The version number the DDNet client-version message says (`CLIENT_VERSIONNR`); it decides which
        /// DDNet extensions the server uses with this client.
        public var ddnetVersion = 16_040
        /// The version text of that message (`GAME_NAME GAME_RELEASE_VERSION`).
        public var ddnetVersionString = "DDNet 16.4"
        /// How long the join may take, from the first connect to the first snapshot.
        public var handshakeTimeout: Duration = .seconds(20)
        /// How long the server may stay silent, or leave a vital message unacknowledged, before the bot gives up.
        public var silenceTimeout: Duration = .seconds(15)
        /// How often a ping measures the round trip once in game.
        public var pingInterval: Duration = .seconds(1)

        /// The defaults.
        public init() {}

        /// The name for bot `player`, cut to what the server keeps.
        func name(player: Int, fallback: String) -> String {
            guard !namePattern.isEmpty else { return Self.clip(fallback, bytes: Wire.maxNameLength - 1) }
            var name = ""
            var rest = Substring(namePattern)
            while let first = rest.first {
                if rest.hasPrefix("{n}") {
                    name += String(player)
                    rest = rest.dropFirst(3)
                } else {
                    name.append(first)
                    rest = rest.dropFirst()
                }
            }
            return Self.clip(name, bytes: Wire.maxNameLength - 1)
        }

        /// `text` cut at a character boundary to at most `bytes` UTF-8 bytes.
        static func clip(_ text: String, bytes: Int) -> String {
            var result = ""
            var used = 0
            for character in text {
                used += character.utf8.count
                if used > bytes { break }
                result.append(character)
            }
            return result
        }
    }
}
