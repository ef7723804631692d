import ServiceLifecycle
import SkirmishNet
import SkirmishPractice
import SkirmishWire

/// The practice lobby as a ``Service``: once the page's listener runs (``where`` says where the opponents connect and
/// which WebSocket URL the page is given), opens the lobby; when the group stops, stops every opponent.
package struct PracticeLobbyService: Service {
    package let lobby: PracticeLobby
    package let location: @Sendable () async throws -> (opponentsAt: Target, pageWebSocketURL: String?)
    package var onStart: @Sendable () -> Void = {}
    package var onStop: @Sendable () -> Void = {}

    package init(
        lobby: PracticeLobby,
        location: @escaping @Sendable () async throws -> (opponentsAt: Target, pageWebSocketURL: String?)
    ) {
        self.lobby = lobby
        self.location = location
    }

    package func run() async throws {
        let (target, url) = try await location()
        await lobby.serve(opponentsAt: target, pageWebSocketURL: url)
        onStart()
        if await Stopping.wait() == .graceful { onStop() }
        await lobby.close()
    }
}
