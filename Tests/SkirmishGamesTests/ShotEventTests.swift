import SkirmishWire
import Testing

@testable import SkirmishGames

/// The shot machine's announcements: one encoder and one decoder, exact to the bit, refusing anything else.
@Suite struct ShotEventTests {
    @Test func aServedShotDecodesToTheExactBitsThatWereSent() {
        var random = SeededRandom(seed: 7)
        for number in UInt32(1)...500 {
            func value(_ range: Float) -> Float {
                Float(Int64(bitPattern: random.next()) % 1_000_000) / 1_000_000 * range
            }
            let puck = TableSnapshot.Puck(
                x: value(480), y: value(800), vx: value(30), vy: value(30), angle: value(6.3), spin: value(1))
            let event = ShotEvent.served(number: number, tick: number &* 97, puck: puck, bounces: Int(number % 3))
            let decoded = ShotEvent(text: event.text)
            #expect(decoded == event, "\(event.text)")
            if case .served(_, _, let back, _) = decoded {
                #expect(back.x.bitPattern == puck.x.bitPattern && back.vy.bitPattern == puck.vy.bitPattern)
            }
        }
        for outcome in ShotReferee.Outcome.allCases {
            for (error, offset): (Float?, Float?) in [(nil, nil), (0, 59.75), (12.625, nil), (301.5, 0)] {
                let ended = ShotEvent.ended(number: 42, outcome: outcome, interceptError: error, contactOffset: offset)
                #expect(ShotEvent(text: ended.text) == ended, "\(ended.text)")
            }
        }
    }

    @Test(arguments: [
        "hello", "shot", "shot x saved", "shot 1 scored", "shot 1 saved now", "shot 1 served tick=1", "shot 1 saved",
        "shot 1 goal", "shot 1 goal error=-1 offset=none", "shot 1 stopped error=nan offset=1", "shot 1 goal error=1",
        "shot 1 timeout err=1 offset=1", "shot 1 returned error=1 offset=inf", "shot 1 stopped offset=1 error=1",
        "shot 1 served tick=1 x=1 y=1 vx=1 vy=1 angle=0 spin=0 bounces=-1",
        "shot 1 served tick=1 x=nan y=1 vx=1 vy=1 angle=0 spin=0 bounces=0",
        "shot 1 served tick=1 x=1 x=2 y=1 vx=1 vy=1 angle=0 spin=0 bounces=0",
        "shot 1 served tick=1 x=1 y=1 vx=1 vy=1 angle=0 spin=0 bounces=0 extra=1",
    ])
    func anythingElseIsNotAShotEvent(text: String) {
        #expect(ShotEvent(text: text) == nil)
    }
}
