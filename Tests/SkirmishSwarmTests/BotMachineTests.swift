import Logging
@_spi(Runtime) import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire
import Synchronization
import Testing

@testable import SkirmishSwarm

/// The bot as a value machine, driven by hand: a scripted protocol stands in for a server, time moves only when a test
/// moves it, and what the bot asks of its socket is read from its ``ShellIO`` — no socket, no loop, no sleep.
@Suite struct BotMachineTests {
    // MARK: A protocol and an agent the tests script

    /// A protocol of text packets: `hello` opens, the server's `welcome` accepts, `msg:X` carries a message (several
    /// joined by `|` in one packet), `refuse` and `drop` end the connection, `pong` gives a round trip.
    struct Scripted: ClientProtocol {
        struct Configuration: Sendable, Hashable {
            var resumable = true
            var handshakeTimeout: Duration = .seconds(60)
        }

        typealias Message = String
        typealias Established = Int

        static let description = ProtocolDescription(
            name: "scripted", transports: [.udp],
            packetKinds: [PacketKind("text", delivery: "reliable")], figures: [.roundTrip, .handshake],
            errorKinds: ["refused"])

        enum State: Equatable {
            case idle
            case handshaking(resuming: Bool)
            case open, suspended, closed
        }

        let configuration: Configuration
        var state = State.idle
        var deadline = Instant.distantFuture
        var welcomes = 0

        init(configuration: Configuration, setup: ConnectionSetup) { self.configuration = configuration }

        var nextDeadline: Instant { deadline }

        mutating func start(now: Instant, into actions: inout ClientActions<Scripted>) {
            state = .handshaking(resuming: false)
            deadline = now + configuration.handshakeTimeout
            actions.write(Array("hello".utf8))
        }

        mutating func receive(
            _ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Scripted>
        ) {
            for command in String(decoding: bytes, as: UTF8.self).split(separator: "|") {
                guard state != .closed else { return }
                switch command {
                case "welcome":
                    guard case .handshaking(let resuming) = state else { continue }
                    state = .open
                    deadline = .distantFuture
                    welcomes += 1
                    if resuming { actions.resumed(welcomes) } else { actions.established(welcomes) }
                case "refuse": finish(CloseReason(kind: "refused", detail: "no", isOutage: false), into: &actions)
                case "drop": finish(.silence(), into: &actions)
                case "quit": finish(CloseReason(kind: "server_quit", detail: "bye", isOutage: true), into: &actions)
                case "pong": actions.record(.roundTrip(.milliseconds(10)))
                default:
                    if command.hasPrefix("msg:"), state == .open { actions.deliver(String(command.dropFirst(4))) }
                }
            }
        }

        mutating func send(_ message: String, now: Instant, into actions: inout ClientActions<Scripted>) {
            guard state == .open else { return }
            actions.write(Array("text:\(message)".utf8))
            actions.record(.sent(kind: 0, bytes: message.utf8.count))
        }

        mutating func tick(now: Instant, into actions: inout ClientActions<Scripted>) {
            if case .handshaking = state, now >= deadline { finish(.handshakeTimeout(), into: &actions) }
        }

        mutating func close(now: Instant, into actions: inout ClientActions<Scripted>) {
            if state == .open { actions.write(Array("bye".utf8)) }
            state = .closed
            deadline = .distantFuture
        }

        mutating func transportFailed(_ reason: String, now: Instant, into actions: inout ClientActions<Scripted>) {
            finish(.transport(reason), into: &actions)
        }

        mutating func suspend(now: Instant, into actions: inout ClientActions<Scripted>) {
            guard configuration.resumable else { return finish(.local, into: &actions) }
            state = .suspended
        }

        mutating func resume(now: Instant, into actions: inout ClientActions<Scripted>) {
            state = .handshaking(resuming: true)
            deadline = now + configuration.handshakeTimeout
            actions.write(Array("resume".utf8))
        }

        private mutating func finish(_ reason: CloseReason, into actions: inout ClientActions<Scripted>) {
            guard state != .closed else { return }
            state = .closed
            deadline = .distantFuture
            actions.closed(reason)
        }
    }

    /// What every agent of a test did, in order.
    final class Tally: Sendable {
        private let recorded = Mutex<[String]>([])
        var calls: [String] { recorded.withLock { $0 } }
        func add(_ call: String) { recorded.withLock { $0.append(call) } }
    }

    /// An agent that records its calls, sends `tick` every 100 ms once established, leaves its match on `over` and
    /// drops its socket for a second on `suspend`.
    struct Recorder: Agent {
        typealias Connection = Scripted
        let tally: Tally
        var next: Instant?
        var isMatchOver = false

        var nextWake: Instant? { isMatchOver ? nil : next }

        mutating func established(_ established: Int, context: inout AgentContext<Scripted>) {
            tally.add("established \(established)")
            next = context.now + .milliseconds(100)
        }

        mutating func received(_ message: String, context: inout AgentContext<Scripted>) {
            tally.add("received \(message)")
            if message == "over" { isMatchOver = true }
            if message == "suspend" { context.suspend(for: .seconds(1)) }
        }

        mutating func wake(context: inout AgentContext<Scripted>) {
            tally.add("wake")
            context.send("tick")
            next = context.now + .milliseconds(100)
        }

        mutating func resumed(context: inout AgentContext<Scripted>) {
            tally.add("resumed")
            next = context.now + .milliseconds(100)
        }

        mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<Scripted>) {
            tally.add("disconnected \(reason.kind)")
        }
    }

    final class Supervisor: BotSupervising {
        let seed: UInt64 = 5
        var windingDown = false
        var ended: [Int] = []
        var warnings: [String] = []
        func botEnded(number: Int, oneShot: Bool) { ended.append(number) }
        func warnLimited(_ kind: String, _ message: Logger.Message, now: Instant, metadata: () -> Logger.Metadata) {
            warnings.append(kind)
        }
    }

    // MARK: The harness

    /// One bot, its environment and what it asked for since the test last looked.
    struct Harness {
        let tally = Tally()
        let supervisor = Supervisor()
        let shard = MetricsShard(constantLabels: Labels([:]))
        let environment: BotEnvironment<Recorder>
        let meters: Meters
        var bot: Bot<Recorder>
        var io = ShellIO<Scripted>()
        var now = Instant(nanoseconds: 1_000_000_000_000)
        /// Packets written, as text, with `open` and `close` for the socket operations between them.
        var wire: [String] = []

        init(
            steps: [Step] = [.playUntilMatchOver, .repeat(times: nil)], configuration: Scripted.Configuration = .init(),
            single: Bool = false, seed: UInt64 = 1
        ) {
            let persona = Persona(
                name: "p", gameName: "scripted", behavior: BehaviorName(rawValue: "recorder"), steps: steps,
                connection: OptionValue(configuration))
            environment = BotEnvironment(group: supervisor)
            meters = Meters(shard: shard, spec: persona, plan: Meters.Plan(description: Scripted.description))
            let tally = tally
            _ = environment.add(
                BotEnvironment<Recorder>.Profile(
                    persona: persona, meters: meters, configuration: configuration,
                    target: Target(transport: .udp, host: "127.0.0.1", port: 9), steps: steps,
                    make: { _ in Recorder(tally: tally) }, chat: { "chat:\($0)" }, single: single))
            bot = Bot(number: 3, profile: 0, meters: meters, random: SeededRandom(seed: seed), oneShot: false)
        }

        /// Executes what the bot asked for as a shell does: packets and socket operations in order, then the news of
        /// a socket that opened.
        mutating func execute() {
            for _ in 0..<8 {
                var written = 0
                var opened = false
                for (after, operation) in io.operations {
                    while written < after {
                        wire.append(io.actions.withPacket(written) { String(decoding: $0, as: UTF8.self) })
                        written += 1
                    }
                    switch operation {
                    case .open:
                        wire.append("open")
                        opened = true
                    case .close:
                        wire.append("close")
                        opened = false
                    }
                }
                while written < io.actions.packetCount {
                    wire.append(io.actions.withPacket(written) { String(decoding: $0, as: UTF8.self) })
                    written += 1
                }
                io.removeAll()
                guard opened else { return }
                bot.transportOpened(now: now, environment: environment, io: &io)
            }
        }

        /// Moves the clock to `time` after the start and wakes the bot if it is due by then.
        mutating func advance(to offset: Duration) {
            now = Instant(nanoseconds: 1_000_000_000_000) + offset
            if let wake = bot.nextWake, wake <= now {
                bot.wake(now: now, environment: environment, io: &io)
                execute()
            }
        }

        /// Runs the bot's wakes, one by one, up to `offset` after the start.
        mutating func run(until offset: Duration) {
            let end = Instant(nanoseconds: 1_000_000_000_000) + offset
            var guardrail = 0
            while let wake = bot.nextWake, wake <= end, guardrail < 10_000 {
                guardrail += 1
                now = max(now, wake)
                bot.wake(now: now, environment: environment, io: &io)
                execute()
            }
            now = end
        }

        mutating func serverSends(_ text: String) {
            Array(text.utf8).withUnsafeBytes { bot.received($0, now: now, environment: environment, io: &io) }
            execute()
        }

        mutating func takeWire() -> [String] {
            defer { wire = [] }
            return wire
        }

        func count(_ id: CounterID) -> UInt64 { shard.value(id) }

        func errors(_ kind: String) -> UInt64 {
            shard.snapshot(at: 0).counterTotal(SkirmishMetrics.errors, where: ["kind": kind])
        }
    }

    // MARK: Steps

    @Test func aMatchConnectsPlaysSendsItsChatAndEndsWithAGoodbye() {
        var harness = Harness(steps: [.chat("gl hf"), .playUntilMatchOver, .quit])
        harness.advance(to: .zero)
        #expect(harness.takeWire() == ["open", "hello"])
        #expect(harness.bot.phase == .connecting(since: harness.now, until: nil, outage: nil))
        harness.serverSends("welcome")
        #expect(harness.takeWire() == ["text:chat:gl hf"])
        #expect(harness.tally.calls == ["established 1"])
        #expect(harness.bot.phase.isConnected)
        #expect(harness.shard.value(harness.meters.botsConnected) == 1)
        harness.run(until: .milliseconds(350))
        #expect(harness.takeWire() == ["text:tick", "text:tick", "text:tick"])
        harness.serverSends("msg:over")
        // The goodbye before the socket closes; then `quit` ends the bot.
        #expect(harness.takeWire() == ["bye", "close"])
        #expect(harness.bot.phase == .done)
        #expect(harness.supervisor.ended == [3])
        #expect(harness.shard.value(harness.meters.botsConnected) == 0)
        #expect(harness.count(harness.meters.handshakes) == 1)
    }

    @Test func aTimedPlayEndsOnTimeAndTheThinkWaitsARandomTimeInItsRange() throws {
        var harness = Harness(steps: [.play(for: .seconds(2)), .think(.seconds(1) ... .seconds(3)), .quit])
        harness.advance(to: .zero)
        harness.serverSends("welcome")
        _ = harness.takeWire()
        harness.run(until: .milliseconds(1_990))
        #expect(!harness.takeWire().contains("close"))
        harness.run(until: .seconds(2))
        #expect(harness.takeWire().suffix(2) == ["bye", "close"])
        guard case .waiting(let until, nil) = harness.bot.phase else {
            Issue.record("not thinking: \(harness.bot.phase)")
            return
        }
        let think = until - harness.now
        #expect(think >= .seconds(1) && think <= .seconds(3))
        harness.run(until: .seconds(6))
        #expect(harness.bot.phase == .done)
    }

    @Test func aRepeatCountEndsTheProgramAfterItsRounds() {
        var harness = Harness(steps: [.playUntilMatchOver, .repeat(times: 2)])
        for round in 1...3 {
            harness.run(until: .seconds(round * 10))
            harness.serverSends("welcome|msg:over")
        }
        // Two repeats: three matches in all, then the steps end.
        #expect(harness.tally.calls.filter { $0.hasPrefix("established") }.count == 3)
        #expect(harness.bot.phase == .done)
    }

    @Test func aBotThatWindsDownStartsNoMatch() {
        var harness = Harness()
        harness.supervisor.windingDown = true
        harness.advance(to: .zero)
        #expect(harness.takeWire().isEmpty)
        #expect(harness.bot.phase == .done)
    }

    // MARK: Backoff

    /// Full jitter: the n-th failure in a row waits between 50 ms and min(30 s, 0.5 s × 2ⁿ), and bots with other
    /// seeds wait different times.
    @Test func refusedHandshakesBackOffWithinWideningJitteredWindows() {
        var delays: [[Duration]] = []
        for seed in UInt64(1)...40 {
            var harness = Harness(seed: seed)
            var waits: [Duration] = []
            var at = Duration.zero
            for _ in 0..<4 {
                harness.run(until: at)
                harness.serverSends("refuse")
                guard case .waiting(let until, nil) = harness.bot.phase else {
                    Issue.record("not waiting after a refusal: \(harness.bot.phase)")
                    return
                }
                waits.append(until - harness.now)
                at = until - Instant(nanoseconds: 1_000_000_000_000)
            }
            #expect(harness.errors("refused") == 4)
            #expect(harness.count(harness.meters.handshakeFailures) == 4)
            delays.append(waits)
        }
        for (failure, ceiling) in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0)] {
            let column = delays.map { $0[failure] }
            #expect(column.allSatisfy { $0 >= .milliseconds(50) && $0 <= .seconds(ceiling) })
            #expect(Set(column).count > 30, "jittered, not synchronised")
        }
    }

    @Test func aHandshakeNobodyAnswersIsGivenUpAfterSixSecondsEvenIfTheProtocolWaitsLonger() {
        var harness = Harness(configuration: Scripted.Configuration(handshakeTimeout: .seconds(60)))
        harness.advance(to: .zero)
        harness.run(until: .milliseconds(5_990))
        guard case .connecting = harness.bot.phase else {
            Issue.record("gave up early: \(harness.bot.phase)")
            return
        }
        harness.run(until: .seconds(6))
        #expect(harness.errors("handshake_timeout") == 1)
        guard case .waiting = harness.bot.phase else {
            Issue.record("not backing off: \(harness.bot.phase)")
            return
        }
    }

    // MARK: Outages and resume

    @Test func aLostConnectionIsAnOutageTimedUntilTheBotPlaysAgain() throws {
        var harness = Harness()
        harness.advance(to: .zero)
        harness.serverSends("welcome")
        harness.run(until: .seconds(1))
        let lostAt = harness.now
        harness.serverSends("drop")
        #expect(harness.errors("silence_timeout") == 1)
        #expect(harness.tally.calls.last == "disconnected silence_timeout")
        guard case .waiting(let until, let outage) = harness.bot.phase else {
            Issue.record("not backing off: \(harness.bot.phase)")
            return
        }
        #expect(outage == lostAt)
        harness.run(until: until - Instant(nanoseconds: 1_000_000_000_000))
        #expect(harness.takeWire().suffix(2) == ["open", "hello"])
        harness.serverSends("welcome")
        #expect(harness.count(harness.meters.reconnects) == 1)
        let reconnect = try #require(
            harness.shard.snapshot(at: 0).series.first { $0.family.name == SkirmishMetrics.reconnect.name })
        guard case .histogram(let histogram) = reconnect.value else {
            Issue.record("reconnect is not a histogram")
            return
        }
        #expect(histogram.count == 1)
    }

    @Test func theServerGoingAwayIsAnOutageToo() {
        var harness = Harness()
        harness.advance(to: .zero)
        harness.serverSends("welcome")
        harness.serverSends("quit")
        #expect(harness.errors("server_quit") == 1)
        guard case .waiting(_, .some) = harness.bot.phase else {
            Issue.record("no outage recorded: \(harness.bot.phase)")
            return
        }
    }

    @Test func anAgentDropsItsSocketAndComesBackToItsSeat() {
        var harness = Harness()
        harness.advance(to: .zero)
        harness.serverSends("welcome")
        _ = harness.takeWire()
        harness.serverSends("msg:suspend")
        #expect(harness.takeWire() == ["close"])
        #expect(harness.shard.value(harness.meters.botsConnected) == 0)
        // Offline: no ticks are sent, however long the agent's schedule said.
        harness.run(until: .milliseconds(990))
        #expect(harness.takeWire().isEmpty)
        harness.run(until: .seconds(1))
        #expect(harness.takeWire() == ["open", "resume"])
        harness.serverSends("welcome")
        #expect(harness.tally.calls.suffix(2) == ["received suspend", "resumed"])
        #expect(harness.count(harness.meters.reconnects) == 1)
        #expect(harness.shard.value(harness.meters.botsConnected) == 1)
    }

    @Test func aProtocolWithoutResumeComesBackWithANewConnection() {
        var harness = Harness(configuration: Scripted.Configuration(resumable: false))
        harness.advance(to: .zero)
        harness.serverSends("welcome")
        _ = harness.takeWire()
        harness.serverSends("msg:suspend")
        #expect(harness.takeWire() == ["close"])
        harness.run(until: .seconds(1))
        #expect(harness.takeWire() == ["open", "hello"])
        harness.serverSends("welcome")
        // A new seat: the agent hears it as one.
        #expect(harness.tally.calls.suffix(2) == ["received suspend", "established 1"])
    }

    // MARK: Events after a close

    @Test func nothingAPacketReleasedIsHandedOverAfterTheMatchEnds() {
        var harness = Harness(steps: [.playUntilMatchOver, .think(.seconds(5) ... .seconds(5)), .repeat(times: nil)])
        harness.advance(to: .zero)
        harness.serverSends("welcome")
        harness.serverSends("msg:one|msg:over|msg:late")
        #expect(harness.tally.calls == ["established 1", "received one", "received over"])
        guard case .waiting = harness.bot.phase else {
            Issue.record("the match did not end: \(harness.bot.phase)")
            return
        }
    }

    @Test func aRunnersPlayerEndsWhenItsConnectionIsRefused() {
        var harness = Harness(steps: [.playUntilMatchOver, .quit], single: true)
        harness.advance(to: .zero)
        harness.serverSends("refuse")
        #expect(harness.tally.calls == ["disconnected refused"])
        #expect(harness.bot.phase == .done)
        #expect(harness.supervisor.warnings == ["player_ended"])
    }

    @Test func roundTripsFromTheProtocolReachTheAgentsContextAndTheMetrics() {
        var harness = Harness()
        harness.advance(to: .zero)
        harness.serverSends("welcome|pong|pong")
        let snapshot = harness.shard.snapshot(at: 0)
        let rtt = snapshot.series.first { $0.family.name == SkirmishMetrics.rtt.name }
        guard case .histogram(let histogram)? = rtt?.value else {
            Issue.record("no rtt series")
            return
        }
        #expect(histogram.count == 2)
    }
}
