import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishWire

/// The checks a server that claims to speak the Skirmish protocol must pass, and how to run them against one.
///
/// Each check exercises one rule of the wire protocol (the SkirmishWire article *The Skirmish wire protocol*)
/// over a real connection to the target, with the same client runtime the swarm's bots use, and reports pass or
/// fail with what it expected and saw; a rule that does not apply to the target's transport is skipped, and the
/// skip is reported and counted. The article *SkirmishConformance* describes every check.
public struct ConformanceSuite: Sendable {
    /// The checks to run, in order.
    public let checks: [ConformanceCheck]
    /// How many times its ``ConformanceCheck/limit`` each check may take, and a check's waits for a seat: at least
    /// 1. More for a target on a slow link or a loaded machine, where the limits (set for a local server) would
    /// fail a correct server for being slow; the rules checked are the same.
    public let patience: Double

    /// The whole suite, or the checks whose id is in `only` (every check when `only` is empty).
    public init(only: [String] = [], patience: Double = 1) {
        checks = only.isEmpty ? Self.all : Self.all.filter { only.contains($0.id) }
        self.patience = max(1, patience)
    }

    /// A suite of exactly `checks` (tests).
    init(checks: [ConformanceCheck], patience: Double = 1) {
        self.checks = checks
        self.patience = max(1, patience)
    }

    /// Every check, in the order they run: which games the server hosts first (every check that needs a seat
    /// depends on it), then the handshake, delivery, the games, the session's lifetime, and hostile input last.
    public static var all: [ConformanceCheck] {
        [
            .handshakeGames, .handshakeVector, .handshakeAmplification, .handshakeCookie, .handshakeOrder,
            .sessionJoin, .sessionTrailer, .sessionPong, .sessionDisconnect, .reliableAck, .reliableUnsentAck,
            .reliableResend, .reliableRelay, .unreliableNumbering, .streamNumbering, .streamOversize,
            .streamWebSocketClose,
            .unreliableStaleInput, .puckMirroring, .puckLimits, .puckReplica, .puckRate, .puckOver, .snapDeal,
            .sunsRelay, .sessionResume, .sessionResumeLive, .sessionKeepalive, .sessionAckTimeout, .sessionTimeout,
            .hostileInput,
        ]
    }

    /// The ids of every check.
    public static var ids: [String] { all.map(\.id) }

    /// Runs the checks one after another against `target`, calling `report` with each result as it comes.
    ///
    /// Every check is bounded by its ``ConformanceCheck/limit`` (a check that runs out fails as timed out), so the
    /// whole run is bounded by their sum. Checks run one at a time, so that players of one never meet another's; a
    /// check that mostly waits on a session no other check can meet (`session.ack-timeout`) starts right
    /// after the survey instead and runs beside the others, and its result is reported in its place.
    public func run(
        against target: Target, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        report: @Sendable (CheckResult) -> Void = { _ in }
    ) async -> ConformanceReport {
        var results: [CheckResult] = []
        let survey = SurveyBox()
        // One context per check, made once: a check run alongside notes (CheckContext.note) into the same one its
        // result is read from in its place.
        let contexts = checks.indices.map { index in
            CheckContext(
                target: target, group: group, run: Self.runBase &+ index, patience: patience, surveyBox: survey)
        }
        func context(_ index: Int) -> CheckContext { contexts[index] }
        // The checks that run alongside start once the survey is known (after handshake.games, or before the first
        // check when the run leaves it out), each bounded by its own limit; their results wait for their place.
        var alongside: [Int: Task<CheckOutcome, Never>] = [:]
        func startAlongside() async {
            for (index, check) in checks.enumerated() where check.alongside {
                guard check.transports.contains(target.transport) else { continue }
                let context = context(index)
                guard await Self.surveyed(context).skipReason(for: check.needs) == nil else { continue }
                let limit = limit(of: check)
                alongside[index] = Task { await Self.run(check, within: limit, context: context) }
            }
        }
        let surveyFirst = checks.first?.id == ConformanceCheck.handshakeGames.id
        if !surveyFirst, checks.contains(where: \.alongside) { await startAlongside() }
        for (index, check) in checks.enumerated() {
            let outcome: CheckOutcome
            let started = ContinuousClock.now
            let context = context(index)
            if let task = alongside[index] {
                outcome = await task.value
            } else if !check.transports.contains(target.transport) {
                outcome = .skip("not applicable to \(target.transport.rawValue)")
            } else if check.needs != .nothing, let reason = await Self.surveyed(context).skipReason(for: check.needs) {
                outcome = .skip(reason)
            } else {
                // A check that needs no seat may still read what the survey found (handshake.vector does, over a
                // stream): a run that left handshake.games out takes it now.
                if check.id != ConformanceCheck.handshakeGames.id { _ = await Self.surveyed(context) }
                outcome = await Self.run(check, within: limit(of: check), context: context)
                await Goodbyes.drain()
            }
            let result = CheckResult(
                check: check, outcome: outcome, seconds: (ContinuousClock.now - started).seconds,
                note: context.progress.note)
            results.append(result)
            report(result)
            if index == 0, surveyFirst, checks.contains(where: \.alongside) { await startAlongside() }
        }
        return ConformanceReport(results: results)
    }

    /// About how long a whole run takes against a local `skirmish serve` over `transport`, in seconds: what the help,
    /// the article and a run's first line say (measured, wall clock, with Puck's 3 s kick-off: 36.6 s over UDP, 27.2 s
    /// over TCP, 27.2 s over WebSocket; UDP has more checks).
    public static func usualSeconds(on transport: Transport) -> Int { transport == .udp ? 37 : 28 }

    /// The longest a whole run of `checks` may take: the sum of their limits, times ``patience``.
    public var limit: Duration { checks.reduce(.zero) { $0 + limit(of: $1) } }

    /// How long `check` may take in this suite: its limit times ``patience``.
    func limit(of check: ConformanceCheck) -> Duration { check.limit * patience }

    /// The run's survey of the games the server hosts: the one `handshake.games` made, or one made now (unreported,
    /// within 10 s) for a run that left that check out.
    private static func surveyed(_ context: CheckContext) async -> GameSurvey {
        if let survey = context.surveyBox.value { return survey }
        let survey = await GameSurvey.take(context)
        await Goodbyes.drain()
        context.surveyBox.value = survey
        return survey
    }

    /// A number per process, so that names of players of two runs against one server differ.
    private static let runBase = Int.random(in: 1_000..<9_000) * 100

    private static func run(
        _ check: ConformanceCheck, within limit: Duration, context: CheckContext
    ) async -> CheckOutcome {
        await withTaskGroup(of: CheckOutcome?.self) { group in
            group.addTask {
                do {
                    return try await check.body(context)
                } catch {
                    return .failed("the check to run", "an error: \(error)")
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                let stood = context.progress.last.map { " (\($0))" } ?? ""
                return Task.isCancelled
                    ? nil : .failed("an answer within \(limit)", "the check still waiting\(stood)")
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failed("an answer within \(limit)", "the check cancelled")
        }
    }
}

/// The results of a run.
public struct ConformanceReport: Sendable {
    /// One per check, in order.
    public let results: [CheckResult]

    /// Checks passed.
    public var passed: Int { results.filter { $0.outcome == .pass }.count }
    /// Checks failed.
    public var failed: Int {
        results.filter {
            if case .fail = $0.outcome { true } else { false }
        }.count
    }
    /// Checks skipped (not applicable to the transport).
    public var skipped: Int {
        results.filter {
            if case .skip = $0.outcome { true } else { false }
        }.count
    }

    /// The summary line: `12 passed, 0 failed, 2 skipped`.
    public var summary: String { "\(passed) passed, \(failed) failed, \(skipped) skipped" }

    /// The whole run's length, in seconds: its checks' added up.
    public var seconds: Double { results.reduce(0) { $0 + $1.seconds } }

    /// Whether every check that ran passed (skips do not fail a run).
    public var allPassed: Bool { failed == 0 }

    /// The outcome of the check `id`, if it ran.
    public func outcome(of id: String) -> CheckOutcome? { results.first { $0.check.id == id }?.outcome }
}

extension ConformanceSuite {
    /// Checks that something answers at `target` before the suite runs: a TCP or WebSocket connection (and upgrade)
    /// opens, or a UDP Hello gets any answer within 3 s.
    ///
    /// - Throws: ``Unreachable``, naming the target, what happened and what to try.
    public static func reach(_ target: Target, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton)
        async throws(Unreachable)
    {
        let probe: RawProbe
        do {
            probe = try await RawProbe.open(target, group: group, timeout: .seconds(3))
        } catch {
            throw Unreachable(target: target, problem: Self.reason(error))
        }
        defer { probe.close() }
        guard target.transport == .udp else { return }
        let hello = Hello(game: .puck, seats: 2, name: "reach")
        probe.send(Packet(.hello(hello)), sealed: false)
        guard await probe.receiveRaw(within: .seconds(3)) != nil else {
            throw Unreachable(target: target, problem: "no answer to a Hello within 3 s")
        }
    }

    /// What a failed connection comes to, in a person's words: the system's reason for the error number NIO
    /// reports (`connection refused`), not the error's dump.
    static func reason(_ error: any Error) -> String {
        let text = "\(error)"
        if let errno = text.range(of: "(errno: ").map({ text[$0.upperBound...].prefix { $0.isNumber } }),
            let number = Int32(errno)
        {
            return "cannot connect: " + String(cString: strerror(number)).lowercased()
        }
        if text.localizedCaseInsensitiveContains("timeout") || text.localizedCaseInsensitiveContains("timed out") {
            return "no connection within 3 s"
        }
        return "cannot connect"
    }

    /// A target that does not answer, with what to check.
    public struct Unreachable: Error, Sendable, CustomStringConvertible {
        /// The target as given.
        public var target: Target
        /// What happened.
        public var problem: String

        /// The target, the problem, and what to try.
        public var description: String {
            "\(target) does not answer (\(problem)). Check that a server listens there on that transport, for "
                + "example `skirmish serve` (which prints its listening lines), and that the host and port are right."
        }
    }
}
