@_spi(Runtime) import SkirmishNet
import SkirmishWire

/// The bots of one agent type on one loop, whatever their types: what a ``BotGroup`` holds a list of.
protocol BotSquad: AnyObject {
    /// Bots alive in the squad.
    var count: Int { get }
    /// Starts bot `number` with the profile `profile`; returns its slot.
    func spawn(number: Int, profile: Int, random: SeededRandom, oneShot: Bool, now: Instant) -> UInt32
    /// Retires bot `number` in `slot` (a polite goodbye if it is connected); nothing if another bot holds the slot.
    func retire(slot: UInt32, number: Int, now: Instant)
    /// Retires every bot.
    func retireAll(now: Instant)
    /// Closes every socket and leaves the loop.
    func stop()
}

/// The bots of one agent type on one loop: their ``Shell`` (sockets, links, wake heap) and their shared
/// ``BotEnvironment``. Every call on them is specialised to `A`.
final class Squad<A: Agent>: BotSquad {
    let environment: BotEnvironment<A>
    let shell: Shell<Bot<A>>

    /// Always inlined, so the shell's loop closures are made where `A` is concrete (see ``TypedBehavior``).
    @inline(__always)
    init(group: BotGroup) {
        environment = BotEnvironment(group: group)
        shell = Shell(loop: group.loop, environment: environment, settings: group.shellSettings)
        shell.attach()
    }

    var count: Int { shell.count }

    func spawn(number: Int, profile: Int, random: SeededRandom, oneShot: Bool, now: Instant) -> UInt32 {
        shell.add(
            Bot(
                number: number, profile: profile, meters: environment.meters(profile), random: random, oneShot: oneShot),
            now: now)
    }

    func retire(slot: UInt32, number: Int, now: Instant) {
        shell.update(slot, now: now) { bot, environment, io in
            guard bot.number == number else { return }
            bot.retire(now: now, environment: environment, io: &io)
        }
    }

    func retireAll(now: Instant) {
        shell.updateAll(now: now) { bot, environment, io in bot.retire(now: now, environment: environment, io: &io) }
    }

    func stop() { shell.stop() }
}
