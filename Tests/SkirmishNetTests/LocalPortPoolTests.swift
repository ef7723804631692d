import NIOCore
import Testing

@testable import SkirmishNet

@Suite struct LocalPortPoolTests {
    @Test func aReturnedPortRestsBeforeItIsHandedOutAgain() throws {
        let pool = LocalPortPool(range: 40_000...40_003, quarantine: .seconds(15), seed: 7)
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let ports = (0..<4).compactMap { _ in pool.take(now: start) }
        #expect(Set(ports).count == 4)
        #expect(pool.take(now: start) == nil)
        #expect(pool.inUse == 4)

        pool.giveBack(ports[0], now: start)
        #expect(pool.inUse == 3)
        // Resting: not before the quarantine is over, whatever is asked in between.
        #expect(pool.take(now: start + .seconds(14)) == nil)
        #expect(pool.take(now: start + .seconds(15)) == ports[0])
    }

    @Test func portsFromManySocketsNeverRepeatWhileTheyAreOpenOrResting() {
        let pool = LocalPortPool(range: 50_000...50_999, quarantine: .seconds(10), seed: 3)
        var now = NIODeadline.uptimeNanoseconds(5_000_000_000)
        var open: [Int] = []
        var recentlyClosed: [(port: Int, at: NIODeadline)] = []
        for round in 0..<2_000 {
            now = now + .milliseconds(100)
            recentlyClosed.removeAll { now - $0.at >= .seconds(10) }
            guard let port = pool.take(now: now) else {
                Issue.record("the pool ran dry at round \(round) with \(open.count) open")
                return
            }
            #expect(!open.contains(port))
            #expect(!recentlyClosed.contains { $0.port == port }, "port \(port) reused while resting")
            open.append(port)
            if open.count > 300 {
                let closed = open.removeFirst()
                pool.giveBack(closed, now: now)
                recentlyClosed.append((closed, now))
            }
        }
    }

    @Test func theSystemRangeIsAnEphemeralRange() {
        let range = LocalPortPool.systemEphemeralRange()
        #expect(range.lowerBound >= 1_024 && range.upperBound <= 65_535 && range.count > 1_000)
    }
}
