import SkirmishWire
import Testing

@testable import SkirmishSwarm

/// A bot's input times: fixed in advance from the moment its seat is granted, offset by the bot's own frame phase.
@Suite struct InputScheduleTests {
    static let period: Int64 = 33_333_333

    /// Bots seated in the same instant (one ramp step's Welcomes) send at phases spread over the whole period, as a
    /// crowd of players does, instead of all in one instant every period.
    @Test func botsSeatedTogetherSendAtPhasesSpreadOverThePeriod() {
        var random = SeededRandom(seed: 7)
        let seated = Instant(nanoseconds: 5_000_000_000)
        var tenths = [Int](repeating: 0, count: 10)
        var firstInputs = Set<UInt64>()
        for _ in 0..<300 {
            var schedule = InputSchedule(rate: 30, random: &random)
            schedule.begin(at: seated)
            let phase = schedule.next.nanoseconds(since: seated)
            #expect(phase >= 0 && phase < Self.period)
            tenths[Int(phase * 10 / Self.period)] += 1
            firstInputs.insert(schedule.next.nanoseconds)
        }
        // 30 expected in each tenth of the period; a fixed phase would put all 300 in one.
        #expect(tenths.allSatisfy { (10...60).contains($0) }, "\(tenths)")
        #expect(firstInputs.count > 290)
    }

    /// After the phase, input *k* is due exactly *k* periods later, and a new seat restarts the count at the phase.
    @Test func inputsFollowThePhaseByWholePeriodsAndANewSeatKeepsThePhase() {
        var random = SeededRandom(seed: 11)
        var schedule = InputSchedule(rate: 30, random: &random)
        let seated = Instant(nanoseconds: 1_000_000_000)
        schedule.begin(at: seated)
        let first = schedule.next
        let phase = first.nanoseconds(since: seated)
        // Skipping to a moment just after input 3 was due makes input 4 the next.
        schedule.skip(until: first.advanced(byNanoseconds: 3 * Self.period + 1))
        #expect(schedule.step == 4)
        #expect(schedule.next == first.advanced(byNanoseconds: 4 * Self.period))
        let reseated = Instant(nanoseconds: 9_000_000_000)
        schedule.begin(at: reseated)
        #expect(schedule.step == 0)
        #expect(schedule.next == reseated.advanced(byNanoseconds: phase))
    }
}
