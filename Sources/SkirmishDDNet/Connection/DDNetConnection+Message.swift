extension DDNetConnection {
    /// What an agent sends to a DDNet server and what it hears back.
    public enum Message: Sendable, Hashable {
        /// To the server: the input to hold from now on. The connection sends the held input once per server tick
        /// (50 Hz) while in game, with the acknowledged snapshot tick, as the reference client does; an agent sends
        /// this only when its input changes.
        case input(Input)
        /// To the server: a public chat line (cut to 255 bytes).
        case say(String)
        /// From the server: a chat line (including this bot's own, echoed back).
        case chat(ChatLine)
        /// From the server: a snapshot decoded and verified against its checksum.
        case world(World)
        /// From the server: how early this bot's input for a tick arrived (`NETMSG_INPUTTIMING`).
        case inputTiming(InputTiming)
    }

    /// A player's controls for one tick (`CNetObj_PlayerInput`).
    public struct Input: Sendable, Hashable {
        /// -1 left, 0 none, 1 right.
        public var direction: Int
        /// Where the player aims, relative to the character, in world units; (0, 0) is read as straight up.
        public var targetX: Int
        /// The aim's vertical part (down is positive).
        public var targetY: Int
        /// Whether jump is held.
        public var jump: Bool
        /// Whether the hook is held.
        public var hook: Bool
        /// Whether fire is held; the connection turns it into the press counter the game expects.
        public var fire: Bool
        /// The weapon to switch to (`WEAPON_*` + 1), 0 for no change.
        public var wantedWeapon: Int

        /// Controls at rest: no movement, aiming right.
        public init(
            direction: Int = 0, targetX: Int = 100, targetY: Int = 0, jump: Bool = false, hook: Bool = false,
            fire: Bool = false, wantedWeapon: Int = 0
        ) {
            self.direction = direction
            self.targetX = targetX
            self.targetY = targetY
            self.jump = jump
            self.hook = hook
            self.fire = fire
            self.wantedWeapon = wantedWeapon
        }

        /// No input at all: what an idle player sends.
        public static let neutral = Input()
    }

    /// One chat line from the server (`NETMSGTYPE_SV_CHAT`).
    public struct ChatLine: Sendable, Hashable {
        /// Who said it; -1 for the server itself.
        public var clientID: Int
        /// Whether it went to the speaker's team only.
        public var team: Bool
        /// The text, control characters replaced.
        public var text: String

        /// A line said by `clientID`.
        public init(clientID: Int, team: Bool, text: String) {
            self.clientID = clientID
            self.team = team
            self.text = text
        }
    }

    /// The server's verdict on one input: it was meant for `tick`, and arrived `timeLeft` before that tick started
    /// (negative: late, so the server used it a tick later).
    public struct InputTiming: Sendable, Hashable {
        /// The tick the input was meant for.
        public var tick: Int
        /// Time from arrival to the start of that tick, as the server measured it (milliseconds on the wire).
        public var timeLeft: Duration

        /// A timing for `tick`.
        public init(tick: Int, timeLeft: Duration) {
            self.tick = tick
            self.timeLeft = timeLeft
        }
    }

    /// What the agent learns once the bot is in the game: who it is and on which map.
    public struct Session: Sendable, Hashable {
        /// The bot's client id, when the first snapshot named it.
        public var clientID: Int?
        /// The name the bot joined with.
        public var name: String
        /// The map the server runs (from `NETMSG_MAP_CHANGE`).
        public var map: String
        /// The map's CRC, as the server announced it.
        public var mapCRC: Int
        /// The map file's size in bytes.
        public var mapSize: Int
        /// The tick of the first snapshot.
        public var tick: Int
    }
}
