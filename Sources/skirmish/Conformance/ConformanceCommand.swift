import ArgumentParser
import SkirmishConformance
import SkirmishNet
import SkirmishWire

/// `skirmish conformance`: checks a server that claims to speak the Skirmish protocol, rule by rule.
struct ConformanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Check that a server speaks the Skirmish protocol: one line per rule, pass or fail, exit 0 or 1.",
        discussion: """
            For teams writing their own server (the h2spec or Autobahn of this protocol). Each check exercises one \
            rule of the wire protocol over a real connection — which games the server hosts, handshake and cookie \
            rules, the order of a Hello's checks, the spec's example bytes, acks within the 50 ms deadline, resends that \
            back off and honour an Ack's bit 0, the 10 s ack timeout (run alongside the other checks), Pongs that echo their Ping, reliable delivery under emulated loss, \
            duplication and reordering, unreliable numbering and stale packets, Puck's mirroring, paddle limits, \
            snapshot rate and tick step, state hashes against a replica for both seats, a forfeit's result for seat \
            1, Snap's deal, the Suns relay, timeouts, resume (also of a seat whose owner is still connected), an \
            oversize TCP frame, WebSocket close codes, hostile input — and prints

              PASS  id  title
              FAIL  id  title: expected X, saw Y
              SKIP  id  title: not applicable to tcp

            then a summary. Exit status: 0 when every check that ran passed, 1 when one failed, 2 for bad input (a \
            target that does not parse or does not answer). Rules that only exist over UDP (cookie, amplification, \
            session trailer, acks, the ack timeout, numbering) are skipped on TCP and WebSocket, and the skips are counted. The first \
            check asks for each built-in game: a Reject(4) means the server does not host it, and that game's checks \
            are skipped with that reason; a handshake that gets no Welcome at all fails once, and the checks that need \
            a seat are skipped as depending on it. Every check has a time limit, so a run ends by itself: about \
            \(ConformanceSuite.usualSeconds(on: .udp)) s over UDP, \(ConformanceSuite.usualSeconds(on: .tcp)) s over \
            TCP or WebSocket, against a local server.

            --format json or --format junit prints one document on stdout instead (the PASS/FAIL lines go to \
            stderr as the run goes): JUnit XML has one testcase per check, failures and skips with their messages, \
            for a CI system's test report.

            Examples:
              skirmish serve &          the reference server; it prints its listening lines
              skirmish conformance --target udp://127.0.0.1:4000
              skirmish conformance --target udp://127.0.0.1:4000 --format junit > conformance.xml
              skirmish conformance --target ws://127.0.0.1:8080/ws --only session.resume
              skirmish conformance --target udp://10.0.0.5:4000 --patience 3    a server across a slow link
              skirmish conformance --list
            """
    )

    @Option(
        help: ArgumentHelp(
            "The server to check: udp://HOST:PORT, tcp://HOST:PORT or ws://HOST:PORT/PATH.", valueName: "url"))
    var target: String?

    @Option(
        name: .customLong("only"),
        help: ArgumentHelp("Run only this check (repeat for more); see --list for the ids.", valueName: "check-id"))
    var only: [String] = []

    @Flag(help: "List the checks (id, transports, title) and exit.")
    var list = false

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, junit
    }

    @Option(help: ArgumentHelp("What stdout holds: PASS/FAIL lines (text), or one JSON or JUnit XML document."))
    var format: Format = .text

    @Option(
        help: ArgumentHelp(
            "Give every check N times its time limit, for a target on a slow link or a loaded machine (at least 1).",
            valueName: "N"))
    var patience: Double = 1

    func validate() throws {
        if list { return }
        guard let target else {
            throw ValidationError("--target is required, for example --target udp://127.0.0.1:4000.")
        }
        do {
            _ = try Target(parsing: target)
        } catch {
            throw ValidationError("--target: \(error)")
        }
        guard patience.isFinite, patience >= 1, patience <= 100 else {
            throw ValidationError(
                "--patience \(patience): must be a number from 1 to 100 (how many times its limit a check may take).")
        }
        let unknown = only.filter { !ConformanceSuite.ids.contains($0) }
        guard unknown.isEmpty else {
            throw ValidationError(
                "--only \(unknown.joined(separator: ", ")): no such check. The checks are: "
                    + ConformanceSuite.ids.joined(separator: ", ") + ".")
        }
    }

    func run() async throws {
        if list {
            for check in ConformanceSuite.all {
                let transports = check.transports.map(\.rawValue).sorted().joined(separator: ",")
                print("\(check.id)  [\(transports)]  \(check.title)")
            }
            return
        }
        let target = try Target(parsing: target ?? "")
        do {
            try await ConformanceSuite.reach(target)
        } catch {
            // One line naming the target and what to check, never the usage text: the input parsed, it is the
            // server that did not answer.
            Console.note("conformance --target \(target): \(error)")
            throw ExitCode(2)
        }
        let suite = ConformanceSuite(only: only, patience: patience)
        // The lines go to stdout as the report itself, or to stderr beside a JSON or JUnit document.
        let toStdout = format == .text
        let progress: @Sendable (String) -> Void = { line in
            if toStdout { print(line) } else { Console.note(line) }
        }
        let bound = "each check time-limited, at most \(Int(suite.limit.seconds)) s in all"
        let usual =
            suite.checks.count == ConformanceSuite.all.count
            ? "about \(ConformanceSuite.usualSeconds(on: target.transport)) s against a local server; " : ""
        progress("conformance of \(target): \(suite.checks.count) checks (\(usual)\(bound))")
        let report = await suite.run(against: target) { result in progress(result.line) }
        progress(report.summary)
        switch format {
        case .text: break
        case .json: print(report.json(target: target))
        case .junit: print(report.junit(target: target), terminator: "")
        }
        if !report.allPassed { throw ExitCode(1) }
    }
}
