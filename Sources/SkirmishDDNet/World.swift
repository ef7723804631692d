/// What the newest verified snapshot shows: the tick, which player this bot is, and where every character is.
///
/// A connection delivers one with every snapshot that decoded and matched its checksum
/// (``DDNetConnection/Message/world(_:)``) and keeps the latest in ``DDNetConnection/world``. Its character array
/// keeps its storage between snapshots, so updating it allocates nothing once the runtime has let go of the last
/// delivered copy. Positions are world units (32 per tile), velocities world units per tick × 256, as the game sends
/// them (`CNetObj_CharacterCore` in `datasrc/network.py`).
public struct World: Sendable, Hashable {
    /// One player's character as the snapshot shows it.
    public struct Character: Sendable, Hashable {
        /// The player's client id (the item id).
        public var clientID: Int
        /// Horizontal position in world units.
        public var x: Int
        /// Vertical position in world units (down is positive).
        public var y: Int
        /// Horizontal velocity in world units per tick, × 256.
        public var velocityX: Int
        /// Vertical velocity in world units per tick, × 256.
        public var velocityY: Int
        /// -1 left, 0 still, 1 right.
        public var direction: Int
        /// The hook's state (`HOOK_*`: 0 idle, positive while flying or grabbed).
        public var hookState: Int
        /// Health (0…10; sent for the bot's own character and whoever it spectates, 0 for the others).
        public var health: Int
        /// Armour (0…10), sent like health.
        public var armor: Int
        /// The active weapon (`WEAPON_*`).
        public var weapon: Int

        /// A character with these fields.
        public init(
            clientID: Int, x: Int, y: Int, velocityX: Int = 0, velocityY: Int = 0, direction: Int = 0,
            hookState: Int = 0, health: Int = 0, armor: Int = 0, weapon: Int = 0
        ) {
            self.clientID = clientID
            self.x = x
            self.y = y
            self.velocityX = velocityX
            self.velocityY = velocityY
            self.direction = direction
            self.hookState = hookState
            self.health = health
            self.armor = armor
            self.weapon = weapon
        }
    }

    /// The server tick of the snapshot; -1 before the first.
    public var tick: Int
    /// This bot's client id, from the snapshot's player info marked local; `nil` until one says so.
    public var localClientID: Int?
    /// Every character in the snapshot, in snapshot order.
    public var characters: [Character]

    /// A world at `tick`.
    public init(tick: Int = -1, localClientID: Int? = nil, characters: [Character] = []) {
        self.tick = tick
        self.localClientID = localClientID
        self.characters = characters
    }

    /// This bot's own character, when it is alive in the snapshot.
    public var local: Character? {
        guard let localClientID else { return nil }
        return characters.first { $0.clientID == localClientID }
    }

    /// Everybody else's characters.
    public var others: [Character] { characters.filter { $0.clientID != localClientID } }
}
