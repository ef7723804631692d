import Logging
import NIOCore
@_spi(Runtime) import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// All the bots one client loop owns, by population: which closed-model bots should be alive, the open-model
/// arrivals, and that loop's metrics.
///
/// The bots themselves live in ``Squad``s, one per agent type, each a ``Shell`` that owns its bots' sockets and wakes
/// them on deadlines fixed in advance; a tick costs the bots that are due, never a sweep over all of them, which is
/// what lets one loop hold tens of thousands of idle bots. The group adds and retires bots as the controller asks
/// (``setClosedTarget(_:now:)``, ``arrive(_:now:)``) and hears from each bot when its steps end. Confined to its
/// loop; nothing here is shared with another thread except through `EventLoop.submit`.
final class BotGroup: BotSupervising {
    let loop: ClientLoop
    let index: Int
    let groupCount: Int
    let context: SwarmContext
    let shard: MetricsShard
    /// Where every squad's sockets come from.
    let shellSettings: ShellSettings
    /// The run's seed: each bot's generator and link derive from it and the bot's number.
    let seed: UInt64

    private var squads: [any BotSquad] = []
    private var squadOfType: [ObjectIdentifier: Int] = [:]
    /// Each persona's squad and profile there, made on the persona's first bot.
    private var personaProfiles: [(squad: Int, profile: Int)?]
    private var personaMeters: [Meters?]
    /// The closed-model bots of this loop by number: their squad and slot.
    private var closed: [Int: (squad: Int, slot: UInt32)] = [:]
    /// The closed-model target this loop last followed, per scenario.
    private var closedTargets: [Int]
    /// The largest closed-model target this loop followed, every scenario's together (the run's peak, whichever
    /// loop reports it).
    private(set) var peakTarget = 0
    /// The largest closed-model target this loop followed, per scenario.
    private(set) var peakTargets: [Int]
    /// Open-model bots alive on this loop, per scenario: each scenario's arrivals are capped by its own stages.
    private var openCounts: [Int]
    /// The scenario of each open-model bot alive (arrivals only; a runner's players count under scenario 0).
    private var openScenario: [Int: Int] = [:]
    private var stopped = false
    /// The run's logger with this loop's index (`loop`).
    let logger: Logger
    /// Bot events that can come from thousands of bots at once (a server restart fails every resume): one line per
    /// kind per 10 s on this loop, with how many it stands for.
    private var botEvents = LogRateLimiter<String>(interval: .seconds(10))
    private var lastFlush = Instant.zero

    init(loop: ClientLoop, index: Int, groupCount: Int, context: SwarmContext) {
        self.loop = loop
        self.index = index
        self.groupCount = groupCount
        self.context = context
        shard = MetricsShard(constantLabels: context.constantLabels, tagNames: context.tagNames)
        seed = context.seed
        var settings = ShellSettings(localPorts: context.localPorts, streamLoops: context.streamLoops)
        settings.resolved = context.resolved
        shellSettings = settings
        closedTargets = Array(repeating: 0, count: context.personas.closedBase.count)
        openCounts = closedTargets
        peakTargets = closedTargets
        personaProfiles = Array(repeating: nil, count: context.personas.personas.count)
        personaMeters = Array(repeating: nil, count: context.personas.personas.count)
        var logger = context.logger
        logger[metadataKey: "loop"] = "\(index)"
        self.logger = logger
        // Every persona's series exist from the start, bots or not (dashboards read "No data" as "not measured").
        for persona in context.personas.personas.indices { _ = meters(forPersona: persona) }
    }

    /// No bot starts another match from now on: the first step of stopping a run, taken on every group before any
    /// bot says goodbye. Otherwise the goodbyes of one group's bots end their tables for another group's, whose
    /// bots would join new tables in the moments before their own group stops.
    private(set) var windingDown = false

    func windDown() {
        windingDown = true
        unfollow()
    }

    // MARK: Following the plan

    /// The loop delegate that follows the plan, while it does.
    private var follower: UInt8?

    /// Follows `plan`'s closed-model population from `start`, every 100 ms, on this loop's own thread: bots come and
    /// go on time even when the run's controller task is slow to be scheduled (a machine whose cores are busy, a
    /// process whose other tasks block their threads — which once left a 5 s run with 2 of its 8 bots). A loop
    /// delegate rather than a repeated NIO task, so following allocates nothing per step.
    func follow(_ plan: LoadPlan, from start: NIODeadline) {
        guard follower == nil, !stopped else { return }
        var next = start.uptimeNanoseconds
        follower = loop.register(
            .timer(
                nextTick: { next },
                tick: { [weak self] now in
                    let elapsed = Duration(now - start)
                    guard let self, elapsed < plan.duration else {
                        next = .max
                        return
                    }
                    next = now.uptimeNanoseconds + 100_000_000
                    for scenario in plan.scenarios.indices {
                        setClosedTarget(plan.closedBots(at: elapsed, scenario: scenario), scenario: scenario, now: now)
                    }
                    // Once every scenario has moved: one scenario's bots leaving as another's arrive is no peak.
                    peakTarget = max(peakTarget, closedTargets.reduce(0, +))
                }))
    }

    private func unfollow() {
        guard let follower else { return }
        loop.unregister(follower)
        self.follower = nil
    }

    /// Bots alive on this loop (closed-model and open-model).
    var liveBots: Int { closed.count + openCounts.reduce(0, +) }

    /// CPU time this loop's thread has used so far, in seconds; call it on the loop.
    ///
    /// Compared with the wall clock it tells whether the generator kept up: a loop busy nearly all the time delays
    /// its own sends and reads, whatever the server does.
    func threadCPUSeconds() -> Double { WallTime.threadCPUSeconds() }

    // MARK: Logs

    /// Logs a bot event that many bots may have at once (`kind`: `resume_failed`, `handshake_failed`, …) as a
    /// warning, at most one line per kind per 10 s on this loop: the line shows the bot it came from and `count`, the
    /// events of this kind it stands for (itself and those suppressed since the previous line).
    func warnLimited(_ kind: String, _ message: Logger.Message, now: Instant, metadata: () -> Logger.Metadata) {
        guard logger.logLevel <= .warning else { return }
        guard let count = botEvents.record(kind, now: .nanoseconds(Int64(now.nanoseconds))) else { return }
        var fields = metadata()
        fields["event"] = "\(kind)"
        fields["count"] = "\(count)"
        fields["suppressed"] = "\(count - 1)"
        logger.warning(message, metadata: fields)
    }

    /// Writes what ``warnLimited(_:_:now:metadata:)`` owes for windows that have ended: once a second while the
    /// controller drives the group, and at the end of a run (`final`) for every window, ended or not, so the counts
    /// add up to the counters.
    private func flushLimitedWarnings(now: Instant, final: Bool) {
        let instant = Duration.nanoseconds(Int64(now.nanoseconds))
        for (kind, count) in botEvents.due(now: final ? instant + botEvents.interval : instant) {
            logger.warning(
                "bot events since the last line",
                metadata: ["event": "\(kind)", "count": "\(count)", "suppressed": "\(count)"])
        }
    }

    // MARK: Population

    /// Makes the first `total` closed-model bots of scenario `scenario` that belong to this loop alive, and retires
    /// the scenario's others.
    func setClosedTarget(_ total: Int, scenario: Int = 0, now deadline: NIODeadline) {
        let now = Instant(deadline)
        if now.nanoseconds(since: lastFlush) >= 1_000_000_000 {
            lastFlush = now
            flushLimitedWarnings(now: now, final: false)
        }
        // Called every 100 ms; only a change of target costs anything, and then only the bots that come or go.
        let current = closedTargets[scenario]
        guard !stopped, total != current else { return }
        // Scenario `scenario`'s bots are numbered from its base, in a block as large as its peak on this shard.
        let base = context.personas.closedBase[scenario]
        if total > current {
            var number = firstNumber(atLeast: base + current)
            while number < base + total {
                if closed[number] == nil { spawn(number: number, arrival: nil, now: now) }
                number += groupCount
            }
        } else {
            var number = firstNumber(atLeast: base + total)
            while number < base + current {
                if let (squad, slot) = closed.removeValue(forKey: number), squad >= 0 {
                    squads[squad].retire(slot: slot, number: number, now: now)
                }
                number += groupCount
            }
        }
        closedTargets[scenario] = total
        peakTargets[scenario] = max(peakTargets[scenario], total)
        if closedTargets.count == 1 { peakTarget = max(peakTarget, total) }
    }

    /// The smallest bot number at or above `number` that this loop owns (bots are dealt round-robin over loops).
    private func firstNumber(atLeast number: Int) -> Int {
        number + ((index - number % groupCount) % groupCount + groupCount) % groupCount
    }

    /// Starts an open-model arrival unless this loop already holds its share of the stage's cap.
    func arrive(_ arrival: LoadPlan.Arrival, now: NIODeadline) {
        guard !stopped else { return }
        let cap = max(1, arrival.cap / groupCount)
        guard openCounts[arrival.scenario] < cap else {
            meters(forPersona: context.personas.index(forArrival: arrival)).error("arrival_capped")
            return
        }
        spawn(number: arrival.number, arrival: arrival, now: Instant(now))
    }

    /// A bot's steps ended (or it was retired): it no longer counts.
    func botEnded(number: Int, oneShot: Bool) {
        if oneShot {
            openCounts[openScenario.removeValue(forKey: number) ?? 0] -= 1
        } else if closed[number] != nil {
            // A closed-model bot whose steps ended keeps its place in the count but holds nothing.
            closed[number] = (-1, .max)
        }
    }

    /// Starts bot `number`: an open-model `arrival`, or closed-model bot `number` of this shard when `nil`.
    private func spawn(number: Int, arrival: LoadPlan.Arrival?, now: Instant) {
        let oneShot = arrival != nil
        let persona =
            arrival.map { context.personas.index(forArrival: $0) } ?? context.personas.index(forClosed: number)
        guard let (squad, profile) = profile(forPersona: persona) else { return }
        if let arrival {
            openCounts[arrival.scenario] += 1
            openScenario[number] = arrival.scenario
        }
        // Recorded before the bot starts: one whose steps end at once reports that back through `botEnded`.
        if !oneShot { closed[number] = (squad, UInt32.max) }
        let slot = squads[squad].spawn(
            number: number, profile: profile, random: SeededRandom(seed: seed).derived(UInt64(number)),
            oneShot: oneShot, now: now)
        if !oneShot, let entry = closed[number], entry.squad >= 0 { closed[number] = (squad, slot) }
    }

    /// The meters of persona `index` on this loop.
    private func meters(forPersona index: Int) -> Meters {
        if let meters = personaMeters[index] { return meters }
        let persona = context.personas.personas[index]
        let plan = Meters.Plan(of: persona, in: context.catalogue, protocolName: context.protocolName)
        let meters = Meters(shard: shard, spec: persona, plan: plan, logger: logger, episodes: context.episodes)
        personaMeters[index] = meters
        return meters
    }

    /// Persona `index`'s squad and profile, made on first use.
    private func profile(forPersona index: Int) -> (squad: Int, profile: Int)? {
        if let known = personaProfiles[index] { return known }
        let persona = context.personas.personas[index]
        guard let kind = context.catalogue.kind(of: persona, in: context.protocolName),
            let support = context.catalogue.support(of: context.protocolName)
        else { return nil }
        let squad = squad(for: kind)
        let profile = kind.addProfile(
            to: squads[squad], persona: persona, meters: meters(forPersona: index),
            target: context.target(for: persona),
            support: support, single: false)
        personaProfiles[index] = (squad, profile)
        return (squad, profile)
    }

    private func squad(for kind: any BehaviorKind) -> Int {
        if let known = squadOfType[kind.agentType] { return known }
        squads.append(kind.makeSquad(in: self))
        squadOfType[kind.agentType] = squads.count - 1
        return squads.count - 1
    }

    // MARK: Players outside a script

    private var adHocMeters: [Persona: Meters] = [:]
    private var players: [Int: (squad: Int, slot: UInt32)] = [:]

    /// Starts one player outside the script (see ``AgentRunner``): it plays one match with an agent of `make`.
    func spawnPlayer<A: Agent>(
        persona: Persona, target: Target, number: Int, now: Instant,
        make: @escaping @Sendable (inout AgentContext<A.Connection>) -> A
    ) {
        let kind = TypedBehavior<A>(make: make, series: { _ in BehaviorSeries() })
        let support = TypedProtocol<A.Connection>(chat: nil)
        let meters =
            adHocMeters[persona]
            ?? Meters(
                shard: shard, spec: persona,
                plan: Meters.Plan(
                    description: A.Connection.description,
                    expectsKind: { kind in support.expects(kind: kind, with: persona.connection) }),
                logger: logger, episodes: context.episodes)
        adHocMeters[persona] = meters
        let squad = squad(for: kind)
        let profile = kind.addProfile(
            to: squads[squad], persona: persona, meters: meters, target: target, support: support, single: true)
        openCounts[0] += 1
        let slot = squads[squad].spawn(
            number: number, profile: profile, random: SeededRandom(seed: seed).derived(UInt64(number)), oneShot: true,
            now: now)
        players[number] = (squad, slot)
    }

    /// Retires the player numbered `number` (a polite goodbye if it is seated); nothing if it is gone already.
    func retirePlayer(_ number: Int, now: Instant) {
        guard let (squad, slot) = players.removeValue(forKey: number) else { return }
        squads[squad].retire(slot: slot, number: number, now: now)
    }

    /// Retires every bot (a polite goodbye from those in a match) and closes every socket.
    func stop() {
        guard !stopped else { return }
        unfollow()
        stopped = true
        let now = Instant.now()
        for squad in squads { squad.retireAll(now: now) }
        for squad in squads { squad.stop() }
        flushLimitedWarnings(now: now, final: true)
        closed.removeAll()
        players.removeAll()
        for scenario in openCounts.indices { openCounts[scenario] = 0 }
        openScenario.removeAll()
    }
}
