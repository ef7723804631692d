import NIOCore
import SkirmishNet
import Synchronization
import Testing

/// The client loop as an `EventLoop`: timers in deadline order, cancellation, and what a stopped loop does with work
/// it can no longer run. No sockets: these are the loop's own promises.
@Suite struct ClientLoopTests {
    @Test func scheduledTasksRunOnTheLoopInDeadlineOrder() async throws {
        let loop = try ClientLoop(name: "test-order")
        defer { loop.stop() }
        let order = Mutex<[Int]>([])
        let start = NIODeadline.now()
        let futures = [30, 10, 20].map { milliseconds in
            loop.scheduleTask(deadline: start + .milliseconds(Int64(milliseconds))) {
                precondition(loop.inEventLoop)
                order.withLock { $0.append(milliseconds) }
            }.futureResult
        }
        for future in futures { try await future.get() }
        #expect(order.withLock { $0 } == [10, 20, 30])
    }

    @Test func aTaskCancelledBeforeItsDeadlineNeverRuns() async throws {
        let loop = try ClientLoop(name: "test-cancel")
        defer { loop.stop() }
        let ran = Atomic<Bool>(false)
        let doomed = loop.scheduleTask(in: .milliseconds(50)) { ran.store(true, ordering: .relaxed) }
        doomed.cancel()
        // A later task on the same loop: once it has run, the cancelled one's deadline has long passed.
        try await loop.scheduleTask(in: .milliseconds(150)) {}.futureResult.get()
        await #expect(throws: EventLoopError.cancelled) { try await doomed.futureResult.get() }
        #expect(ran.load(ordering: .relaxed) == false)
    }

    @Test func aStoppedLoopFailsWhatIsStillScheduledAndRefusesNewWork() async throws {
        let loop = try ClientLoop(name: "test-stop")
        let never = loop.scheduleTask(in: .hours(1)) {}
        // The task reached the loop's heap before the stop (a submit queued after it runs after it).
        try await loop.submit {}.get()
        loop.stop()
        await #expect(throws: EventLoopError.shutdown) { try await never.futureResult.get() }
        await #expect(throws: EventLoopError.shutdown) { try await loop.submit { 1 }.get() }
        await #expect(throws: EventLoopError.shutdown) {
            try await loop.scheduleTask(in: .milliseconds(1)) {}.futureResult.get()
        }
    }
}
