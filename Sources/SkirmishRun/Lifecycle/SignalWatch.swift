import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which termination signal stopped a command, and the way out for a user who does not want to wait.
///
/// The command's ``ServiceGroup`` turns SIGINT and SIGTERM into a graceful shutdown (final push, report, `ServerQuit`
/// to players); this service, first in the group so that it stops last, remembers which signal it was (the exit status
/// is `128 + signo`), says what happens now, and ends the process at once with 130 when a second signal arrives
/// while the first is being handled.
package final class SignalWatch: Service, Sendable {
    private let received = Mutex<UnixSignal?>(nil)
    private let onFirst: @Sendable (String) -> Void
    /// Fulfilled once the signals are trapped: a part that must not start before (the swarm) waits for it.
    package let armed = Ready<Void>()

    /// `onFirst` is told the first signal's name (`SIGINT`, `SIGTERM`) as soon as it arrives.
    package init(onFirst: @escaping @Sendable (String) -> Void = { _ in }) {
        self.onFirst = onFirst
    }

    /// The first termination signal received, if one was.
    package var signal: String? { received.withLock { $0 }.map(Self.name) }

    /// 130 after SIGINT, 143 after SIGTERM (the shell's convention), `nil` when no signal stopped the command.
    package var exitStatus: Int32? {
        switch received.withLock({ $0 }) {
        case .some(.sigint): 130
        case .some(.sigterm): 143
        default: nil
        }
    }

    package func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        armed.fulfil(())
        for await signal in signals.cancelOnGracefulShutdown() {
            let first = received.withLock { received -> Bool in
                guard received == nil else { return false }
                received = signal
                return true
            }
            // A second signal ends the process at once: `_exit`, because `exit` would run atexit handlers on this
            // thread while the loops are still running.
            guard first else { _exit(128 + signal.rawValue) }
            onFirst(Self.name(signal))
        }
    }

    private static func name(_ signal: UnixSignal) -> String {
        switch signal {
        case .sigint: "SIGINT"
        case .sigterm: "SIGTERM"
        default: "\(signal)"
        }
    }
}

/// The group every long-running command runs its parts in.
package enum CommandGroup {
    /// A group of `services` in start order (each waits for what it needs from the earlier ones; the group stops them
    /// in reverse) that shuts down gracefully on SIGINT and SIGTERM. A part that throws cancels the others and its
    /// error is what `run()` throws.
    package static func make(_ services: [ServiceGroupConfiguration.ServiceConfiguration]) -> ServiceGroup {
        ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: [.sigint, .sigterm], cancellationSignals: [],
                logger: Logger(label: "skirmish")))
    }

    /// A part that runs until the group stops: its natural end would be unexpected, its failure cancels the group.
    package static func part(_ service: any Service, _ name: String) -> ServiceGroupConfiguration.ServiceConfiguration {
        ServiceGroupConfiguration.ServiceConfiguration(service: service, serviceName: name)
    }
}
