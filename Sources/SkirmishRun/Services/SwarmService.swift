import Logging
import NIOCore
import ServiceLifecycle
import SkirmishSwarm

/// A swarm as a ``Service``: once what it needs has started (``prepare`` returns its configuration), creates the bot
/// loops, publishes the swarm in ``started`` and runs the plan. The plan's end is the service's natural end (the
/// group then shuts the rest down gracefully); a graceful shutdown before that stops the bots early, and the outcome
/// says so. Either way the outcome lands in ``finished`` for the report. The swarm's loop threads end when the last
/// reference to it goes: whoever holds ``started`` releases it once nothing collects its metrics any more.
package struct SwarmService: Service {
    package let prepare: @Sendable () async throws -> SwarmConfiguration
    package let group: any EventLoopGroup
    package let started: Ready<Swarm>
    package let finished: Ready<Finish>
    package var onStart: @Sendable (Swarm) -> Void = { _ in }
    package var progress: @Sendable (SwarmProgress) -> Void = { _ in }
    package var onEnd: @Sendable () -> Void = {}
    /// Where the swarm logs its start and finish, desync episodes and failed resumes.
    package var logger = Logger(label: "skirmish.swarm")
    /// Whether the process's other threads yield to the bot loops (``Swarm/yieldToLoops()``), checked every second
    /// while the swarm runs: for a process that runs the swarm alone.
    package var loopsFirst = false

    package init(
        group: any EventLoopGroup, started: Ready<Swarm> = Ready(), finished: Ready<Finish> = Ready(),
        prepare: @escaping @Sendable () async throws -> SwarmConfiguration
    ) {
        self.group = group
        self.started = started
        self.finished = finished
        self.prepare = prepare
    }

    package func run() async throws {
        let swarm: Swarm
        do {
            swarm = try await Swarm(configuration: try await prepare(), group: group, logger: logger)
        } catch {
            started.fail(error)
            finished.fail(error)
            throw error
        }
        started.fulfil(swarm)
        onStart(swarm)
        let progress = self.progress
        // Threads a pool starts later inherit from whichever thread started them: they are moved as they appear.
        let yielding: Task<Void, Never>? =
            loopsFirst
            ? Task {
                while !Task.isCancelled {
                    swarm.yieldToLoops()
                    try? await Task.sleep(for: .seconds(1))
                }
            } : nil
        defer { yielding?.cancel() }
        let plan = Task { await swarm.run(progress: progress) }
        let outcome = await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await plan.value
            } onGracefulShutdown: {
                plan.cancel()
            }
        } onCancel: {
            plan.cancel()
        }
        onEnd()
        finished.fulfil(Finish(outcome: outcome, configuration: swarm.configuration))
    }

    /// What a swarm measured, and the configuration it ran.
    package struct Finish: Sendable {
        package var outcome: SwarmOutcome
        package var configuration: SwarmConfiguration
    }
}
