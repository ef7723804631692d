import ArgumentParser
import Foundation
import NIOCore
import SkirmishNet
import SkirmishOpponent
import SkirmishPractice
import SkirmishRun
import SkirmishServer
import SkirmishWire

/// `skirmish practice`: Puck in a browser against an AI opponent.
struct PracticeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "practice",
        abstract: "Play Puck in your browser against an AI opponent.",
        discussion: """
            Starts the reference match server on loopback (unless --target names another), and serves a page at \
            http://127.0.0.1:<port>/play. Open the printed URL: each time the page asks for a match, an AI \
            opponent at --difficulty sits down at a new table and the page joins it. Move your paddle with the \
            mouse or a finger; first to 7 goals wins, and Rematch starts a new match against a fresh opponent. The \
            page's difficulty selector starts a new match against an opponent of the level picked there \
            (GET /play/match/<level>). `adaptive` starts between easy and medium and adjusts the AI's skill within \
            the match, from the score and the shots each side saves, so that the match stays close whatever your \
            level.

            The page works offline: it is compiled into this binary and loads nothing else. It speaks the same \
            wire packets as every other client, over the server's WebSocket endpoint (/ws), and shows your score \
            and the AI's, your round-trip latency and the opponent's difficulty.

            With --target the page is served from a small local HTTP server instead, and both the page and the \
            opponent connect to the game server's WebSocket endpoint you name.

            Once ready it prints one line for scripts, then waits until SIGINT or SIGTERM:

              practice http://127.0.0.1:40125/play

            Examples:
              skirmish practice                                  medium opponent, free port
              skirmish practice --difficulty expert --http 127.0.0.1:8080
              skirmish practice --target ws://127.0.0.1:9000/ws   a server you started
            """
    )

    @Option(
        help: ArgumentHelp(
            "How hard the AI plays until the page picks another: easy, medium, hard, expert, or adaptive (it "
                + "adjusts its skill within each match to keep it close).", valueName: "level"),
        transform: PracticeCommand.parseDifficulty)
    var difficulty = Opponent.Level.medium

    @Option(
        help: ArgumentHelp(
            "Address of the page (and, without --target, of the server's /ws and /metrics). Port 0 picks a free one (default: 127.0.0.1:0).",
            valueName: "host:port"), transform: HostPort.parse)
    var http = HostPort(host: "127.0.0.1", port: 0)

    @Option(
        help: ArgumentHelp(
            "A game server's WebSocket endpoint to play on instead of the embedded one, e.g. ws://127.0.0.1:9000/ws. "
                + "The page is then another origin to that server: start it with --allow-origin and this page's "
                + "address (http://host:port).",
            valueName: "url"))
    var target: String?

    @Option(
        help: ArgumentHelp("Seconds an AI waits for its page to join before leaving its table.", valueName: "seconds"))
    var joinTimeout = 15

    @OptionGroup(title: "Logs") var logs: LogOptions

    func validate() throws {
        guard joinTimeout > 0 else {
            throw ValidationError("--join-timeout must be at least 1 second; got \(joinTimeout).")
        }
        if let target { _ = try Self.webSocketTarget(target) }
    }

    func run() async throws {
        let run = RunID.make(script: "practice", at: Date())
        let lobby = PracticeLobby(
            difficulty: difficulty, joinTimeout: .seconds(Int64(joinTimeout)),
            logger: logs.logger("skirmish.practice", run: run))
        let game = try target.map { try Self.webSocketTarget($0) }
        try await PracticeRun(
            lobby: lobby, host: http.host, port: http.port, target: game, console: .terminal,
            serverLogger: logs.logger("skirmish.server", run: run)
        ).run()
    }

    /// The game server named by `--target`: the page in a browser can only speak WebSocket.
    static func webSocketTarget(_ text: String) throws -> Target {
        let target: Target
        do {
            target = try Target(parsing: text)
        } catch {
            throw ValidationError("--target: \(error)")
        }
        guard target.transport == .webSocket else {
            throw ValidationError(
                "--target \(text): the practice page runs in a browser, which speaks only WebSocket; give the "
                    + "server's WebSocket endpoint instead, e.g. ws://127.0.0.1:9000/ws.")
        }
        return target
    }
}

extension PracticeCommand {
    /// Reads `--difficulty` case-insensitively: `easy`, `medium`, `hard`, `expert` or `adaptive`.
    static func parseDifficulty(_ text: String) throws -> Opponent.Level {
        guard let level = Opponent.Level(rawValue: text.lowercased()) else {
            throw ValidationError("`\(text)` is no difficulty; choose one of \(Opponent.Level.names).")
        }
        return level
    }
}
