import Logging
@_spi(Runtime) import SkirmishNet
import SkirmishScript
import SkirmishWire

/// What the bots of one ``Squad`` share: each persona's (or runner player's) profile, the loop's group state, and a
/// reusable outbox for their agents' calls.
///
/// A ``Bot`` names its profile by index and is handed this environment on every call; it keeps no reference to it.
/// Confined to its loop.
final class BotEnvironment<A: Agent> {
    /// A bot handshaking longer than this is counted as a failed handshake, whatever its protocol's own timeouts.
    static var handshakeTimeout: Duration { .seconds(6) }

    /// How the bots of one persona (or one runner player) connect and play.
    struct Profile {
        var persona: Persona
        var meters: Meters
        var configuration: A.Connection.Configuration
        var target: Target
        var steps: [Step]
        var make: @Sendable (inout AgentContext<A.Connection>) -> A
        /// The protocol's chat message for a `chat:` step's text (`nil`: the protocol has no chat).
        var chat: (@Sendable (String) -> A.Connection.Message)?
        /// A runner's player: it plays one match and ends, and a failure ends it too.
        var single: Bool
    }

    /// Read by a bot on most calls, on the environment's loop alone: exclusivity not checked at run time (as the
    /// shell's storage).
    @exclusivity(unchecked) private(set) var profiles: [Profile] = []
    /// Profiles no bot uses any more (runner players that ended), reused before the array grows.
    private var freeProfiles: [Int] = []
    let group: any BotSupervising
    /// Lent to each agent call for what the agent sends (see ``AgentContext``).
    @exclusivity(unchecked) var outbox: [AgentContext<A.Connection>.Outgoing] = []

    init(group: any BotSupervising) {
        self.group = group
        outbox.reserveCapacity(8)
    }

    /// The meters of `profile`.
    @inline(__always)
    func meters(_ profile: Int) -> Meters { profiles[profile].meters }

    /// Adds a profile and returns its index.
    func add(_ profile: Profile) -> Int {
        if let free = freeProfiles.popLast() {
            profiles[free] = profile
            return free
        }
        profiles.append(profile)
        return profiles.count - 1
    }

    /// Frees a profile no bot uses any more.
    func remove(_ index: Int) {
        freeProfiles.append(index)
    }
}

/// What the bots of a loop answer to: the run's seed, whether new matches may start, the loop's rate-limited log, and
/// the population that counts them. A ``BotGroup`` in a swarm; a recorder in the tests.
protocol BotSupervising: AnyObject {
    /// The run's seed: each bot's generator, link and connection derive from it and the bot's number.
    var seed: UInt64 { get }
    /// No bot starts another match (the run is stopping).
    var windingDown: Bool { get }
    /// Bot `number`'s steps ended (or it was retired): it no longer counts.
    func botEnded(number: Int, oneShot: Bool)
    /// Logs an event many bots may have at once, rate-limited per kind.
    func warnLimited(_ kind: String, _ message: Logger.Message, now: Instant, metadata: () -> Logger.Metadata)
}
