import Foundation
import SkirmishNet
import SkirmishPractice
import SkirmishRun
import SkirmishServer
import SkirmishWire
import Testing

/// `skirmish practice` as one service group, in-process on loopback.
@Suite(.timeLimit(.minutes(5))) struct PracticeRunLifecycleTests {
    /// The page's port taken (embedded server, or the page server beside a `--target`): the run throws the typed
    /// error naming `--http`, the lobby never opened and no line for scripts was printed.
    @Test(arguments: [false, true])
    func aTakenPagePortLeavesNothingRunning(withTarget: Bool) async throws {
        let held = try Loopback.Held()
        defer { held.close() }
        let lobby = PracticeLobby(difficulty: .easy, joinTimeout: .seconds(5))
        let target = withTarget ? try Target(parsing: "ws://127.0.0.1:9/ws") : nil
        let recorder = RecordingConsole()
        let run = PracticeRun(
            lobby: lobby, host: "127.0.0.1", port: held.port, target: target, console: recorder.console)

        let error = await #expect(throws: ListenError.self) { try await run.run() }
        #expect(error?.transport == "http")
        #expect(error?.port == held.port)
        #expect(run.pageAddress.current == nil)
        #expect(recorder.lines.isEmpty)
        await #expect(throws: LobbyError.self) { _ = try await lobby.open() }
    }

    /// A graceful shutdown stops every opponent, then the listener: the page's port is free again.
    @Test func aGracefulShutdownStopsTheOpponentsThenTheListener() async throws {
        let lobby = PracticeLobby(difficulty: .easy, joinTimeout: .seconds(30))
        let recorder = RecordingConsole()
        let run = PracticeRun(lobby: lobby, host: "127.0.0.1", port: 0, target: nil, console: recorder.console)
        let running = Task { try await run.run() }
        #expect(await Loopback.eventually { recorder.lines.contains { $0.hasPrefix("practice http://127.0.0.1:") } })
        let port = try #require(run.pageAddress.current?.port)
        #expect(recorder.lines.contains("practice http://127.0.0.1:\(port)/play"))
        _ = try await lobby.open()
        #expect(await lobby.opponents().count == 1)

        await run.triggerGracefulShutdown()
        try await running.value
        #expect(await lobby.opponents().isEmpty)
        await #expect(throws: LobbyError.self) { _ = try await lobby.open() }
        #expect(await Loopback.eventually { Loopback.isFree(port) })
    }
}
