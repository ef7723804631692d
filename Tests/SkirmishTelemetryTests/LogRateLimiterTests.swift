import Testing

@testable import SkirmishTelemetry

/// The rate limiter behind every repeated log line: one line per key per interval, and every event counted in
/// exactly one line.
@Suite struct LogRateLimiterTests {
    @Test func theFirstEventLogsAndTheRestOfTheIntervalIsCounted() {
        var limiter = LogRateLimiter<String>(interval: .seconds(10))
        #expect(limiter.record("bad_magic", now: .seconds(100)) == 1)
        for second in 101..<110 { #expect(limiter.record("bad_magic", now: .seconds(second)) == nil) }
        #expect(limiter.suppressed == ["bad_magic": 9])
        // The first event after the interval carries the nine suppressed ones.
        #expect(limiter.record("bad_magic", now: .seconds(110)) == 10)
        #expect(limiter.suppressed.isEmpty)
    }

    @Test func keysAreLimitedApart() {
        var limiter = LogRateLimiter<Int>(interval: .seconds(5))
        #expect(limiter.record(1, count: 40, now: .zero) == 40)
        #expect(limiter.record(2, count: 3, now: .milliseconds(1)) == 3)
        #expect(limiter.record(1, now: .seconds(1)) == nil)
        #expect(limiter.record(2, now: .seconds(1)) == nil)
        #expect(limiter.suppressed == [1: 1, 2: 1])
    }

    @Test func whatIsOwedIsDueOnceTheIntervalEnds() {
        var limiter = LogRateLimiter<String>(interval: .seconds(10))
        _ = limiter.record("a", now: .seconds(0))
        _ = limiter.record("a", count: 5, now: .seconds(1))
        _ = limiter.record("b", now: .seconds(2))
        _ = limiter.record("b", count: 2, now: .seconds(3))
        #expect(limiter.due(now: .seconds(9)).isEmpty)
        let due = limiter.due(now: .seconds(10))
        #expect(due.map(\.key) == ["a"] && due.map(\.count) == [5])
        // The line just written starts a new interval: `b` is owed at 12, `a` gets no line before 20.
        #expect(limiter.due(now: .seconds(11)).isEmpty)
        #expect(limiter.due(now: .seconds(12)).map(\.count) == [2])
        #expect(limiter.record("a", now: .seconds(15)) == nil)
        #expect(limiter.record("a", now: .seconds(20)) == 2)
        #expect(limiter.record("c", count: 0, now: .seconds(20)) == nil)
    }

    @Test(arguments: [1 as UInt64, 2, 3, 4, 5])
    func everyEventIsInExactlyOneLineAndLinesOfAKeyAreAnIntervalApart(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var limiter = LogRateLimiter<Int>(interval: .seconds(3))
        var events = [0, 0, 0]
        var counted = [0, 0, 0]
        var lastLine: [Duration?] = [nil, nil, nil]
        func line(_ key: Int, _ count: Int, at now: Duration) {
            counted[key] += count
            if let last = lastLine[key] { #expect(now - last >= .seconds(3)) }
            lastLine[key] = now
        }
        var now = Duration.zero
        for _ in 0..<2_000 {
            now += .milliseconds(Int64(random.next() % 200))
            let key = Int(random.next() % 3)
            let count = Int(random.next() % 4)
            events[key] += count
            if let logged = limiter.record(key, count: count, now: now) { line(key, logged, at: now) }
            if random.next() % 10 == 0 {
                for (key, count) in limiter.due(now: now) { line(key, count, at: now) }
            }
        }
        for (key, count) in limiter.due(now: now + .seconds(3)) { line(key, count, at: now + .seconds(3)) }
        #expect(counted == events)
        #expect(limiter.suppressed.isEmpty)
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }
}
