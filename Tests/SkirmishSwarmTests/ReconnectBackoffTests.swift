import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// The reconnect policy alone: windows that double to a cap, full jitter that spreads a crowd, reset on success.
@Suite struct ReconnectBackoffTests {
    @Test func windowsDoubleFromOneSecondToTheCap() {
        let backoff = ReconnectBackoff()
        #expect(backoff.ceiling(after: 1) == .seconds(1))
        #expect(backoff.ceiling(after: 2) == .seconds(2))
        #expect(backoff.ceiling(after: 5) == .seconds(16))
        #expect(backoff.ceiling(after: 6) == .seconds(30))
        #expect(backoff.ceiling(after: 1_000) == .seconds(30))
    }

    @Test func everyDelayFallsInItsWindowAndResetStartsOver() {
        var random = SeededRandom(seed: 42)
        var backoff = ReconnectBackoff()
        for failure in 1...12 {
            let delay = backoff.next(using: &random)
            #expect(delay >= .milliseconds(50))
            #expect(delay <= backoff.ceiling(after: failure))
            #expect(backoff.failures == failure)
        }
        backoff.reset()
        #expect(backoff.failures == 0)
        #expect(backoff.next(using: &random) <= .seconds(1))
    }

    @Test func aCrowdThatFailedTogetherComesBackSpreadOut() {
        // 2,000 bots lose the server at the same instant; their first retries cover the whole first window.
        var buckets = [Int](repeating: 0, count: 10)
        var delays: [Duration] = []
        for bot in 0..<2_000 {
            var random = SeededRandom(seed: 7).derived(UInt64(bot))
            var backoff = ReconnectBackoff()
            let delay = backoff.next(using: &random)
            delays.append(delay)
            buckets[min(9, Int(delay / .milliseconds(100)))] += 1
        }
        // No 100 ms slice of the first second takes more than twice its fair share, and none is empty.
        for count in buckets {
            #expect(count > 0)
            #expect(count < 2 * 2_000 / 10)
        }
        #expect(Set(delays).count > 1_900)
    }

    @Test func theSameSeedReplaysTheSameDelays() {
        var first = SeededRandom(seed: 3)
        var second = SeededRandom(seed: 3)
        var a = ReconnectBackoff()
        var b = ReconnectBackoff()
        for _ in 0..<8 { #expect(a.next(using: &first) == b.next(using: &second)) }
    }
}
