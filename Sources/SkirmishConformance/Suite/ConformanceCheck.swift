import SkirmishNet
import SkirmishWire

/// One rule of the protocol that a server claiming to speak it must keep, checked over the wire.
public struct ConformanceCheck: Sendable, Identifiable {
    /// A short fixed name (`handshake.amplification`), what `--only` takes.
    public let id: String
    /// What the check proves, in a few words.
    public let title: String
    /// The transports the rule applies to; on another the check is skipped, and the skip is reported and counted.
    public let transports: Set<Transport>
    /// The longest the check may take before it fails as timed out.
    public let limit: Duration
    /// What the server must have shown before the check can run (a seat, a game hosted); otherwise it is skipped.
    let needs: Requirement
    /// Whether the check runs alongside the others from the start of the run (right after the survey) instead of
    /// in its turn: a check that mostly waits (`session.ack-timeout`), on a session no other check's player can meet.
    /// Its result is still reported in its place.
    let alongside: Bool
    let body: @Sendable (CheckContext) async throws -> CheckOutcome

    init(
        id: String, title: String, transports: Set<Transport> = [.udp, .tcp, .webSocket],
        needs: Requirement = .seat, limit: Duration = .seconds(20), alongside: Bool = false,
        body: @escaping @Sendable (CheckContext) async throws -> CheckOutcome
    ) {
        self.id = id
        self.title = title
        self.transports = transports
        self.needs = needs
        self.limit = limit
        self.alongside = alongside
        self.body = body
    }

    /// What a check depends on: the reason it is skipped rather than run when the server has not shown it.
    enum Requirement: Sendable, Hashable {
        /// Nothing: the check needs no Welcome (the cookie round, amplification, the survey itself).
        case nothing
        /// A seat in some built-in game the server hosts (the check plays whichever ``GameSurvey/game`` is).
        case seat
        /// A seat in this game: the server must host it.
        case game(GameKind)
        /// A table of any built-in game the server hosts, at any seat count it takes: the check picks which.
        case table
    }
}

/// How one check came out.
public enum CheckOutcome: Sendable, Hashable {
    /// The server kept the rule.
    case pass
    /// It did not: what the rule expects, and what the server did instead.
    case fail(expected: String, saw: String)
    /// The rule does not apply to the target's transport (or could not be exercised); why.
    case skip(String)

    /// A failure: `expected`, then `saw`.
    static func failed(_ expected: String, _ saw: String) -> CheckOutcome { .fail(expected: expected, saw: saw) }
}

/// One check's result: the check and its outcome.
public struct CheckResult: Sendable {
    /// The check that ran.
    public let check: ConformanceCheck
    /// How it came out.
    public let outcome: CheckOutcome
    /// How long it ran, in seconds (0 for a check skipped without running); for a check run alongside the others
    /// (`session.ack-timeout`), how long the run waited for it in its place, so that the results add up to
    /// the run's wall time.
    public var seconds: Double = 0
    /// What the check said about how it ran, where its title cannot: `snap.deal` says at how many seats it played
    /// (`played at 4 seats: …` on a server that seats Snap for four only). `nil` for most checks.
    public var note: String?

    /// A result.
    public init(check: ConformanceCheck, outcome: CheckOutcome, seconds: Double = 0, note: String? = nil) {
        self.check = check
        self.outcome = outcome
        self.seconds = seconds
        self.note = note
    }

    /// The line printed for it: `PASS  id  title`, `FAIL  id  title: expected X, saw Y`, or
    /// `SKIP  id  title: not applicable to tcp`; a check's ``note`` follows its title in parentheses.
    public var line: String {
        let title = note.map { "\(check.title) (\($0))" } ?? check.title
        return switch outcome {
        case .pass: "PASS  \(check.id)  \(title)"
        case .fail(let expected, let saw): "FAIL  \(check.id)  \(title): expected \(expected), saw \(saw)"
        case .skip(let why): "SKIP  \(check.id)  \(title): \(why)"
        }
    }
}
