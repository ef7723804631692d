import SkirmishGames
import SkirmishWire
import Testing

/// The receiver's check of the other player's captures: computed from its strikes with the shared rules, bit for bit.
@Suite struct SunsReplicaTests {
    static let suns = [
        SunsStart.Sun(x: 0.5, y: 0.5), SunsStart.Sun(x: 0.1, y: 0.1), SunsStart.Sun(x: 0.9, y: 0.9),
        SunsStart.Sun(x: 0.52, y: 0.47),
    ]

    /// The striker (seat 0, a plain game as a client keeps it) and the receiver's replica (seat 1), both on `suns`.
    static func pair(_ suns: [SunsStart.Sun] = Self.suns) -> (SunsGame, SunsReplica) {
        var striker = SunsGame(seat: 0)
        striker.propose(coinToss: 10, suns: suns)
        striker.receiveStart(SunsStart(coinToss: 1, suns: suns))
        var receiver = SunsReplica(seat: 1)
        receiver.game.propose(coinToss: 1, suns: suns)
        receiver.game.receiveStart(SunsStart(coinToss: 10, suns: suns))
        return (striker, receiver)
    }

    func throughTheWire(_ message: Message) throws -> Message {
        try Packet.decode(try Packet(number: 1, message).encoded()).message
    }

    @Test func honestStrikesAndCapturesPassEveryCheckAndGiveTheStrikersClaims() throws {
        var inputs = Inputs(seed: 77)
        var checked = 0
        for _ in 0..<300 {
            let layout = (0..<(1 + inputs.below(16))).map { _ in SunsStart.Sun(x: inputs.unit(), y: inputs.unit()) }
            var (striker, receiver) = Self.pair(layout)
            var time: Float = 0
            for _ in 0..<20 {
                time += inputs.unit() * 2
                guard time < SunsGame.duration else { break }
                let strike = SunsStrike(
                    x: inputs.unit(), y: inputs.unit(), radius: max(0.01, inputs.unit() * 0.6), gameTime: time)
                let captures = striker.strike(strike, by: 0)
                guard case .sunsStrike(let received) = try throughTheWire(.sunsStrike(strike)) else {
                    Issue.record("not a strike")
                    return
                }
                #expect(receiver.receive(received) == .ok)
                for capture in captures {
                    guard case .sunsCapture(let c) = try throughTheWire(.sunsCapture(capture)) else {
                        Issue.record("not a capture")
                        return
                    }
                    #expect(receiver.receive(c) == .ok, "\(String(describing: receiver.divergence))")
                    checked += 1
                }
            }
            #expect(receiver.game.best[0].map { $0?.bitPattern } == striker.best[0].map { $0?.bitPattern })
        }
        #expect(checked > 1_000)
    }

    @Test func aCaptureTimeOneULPOffIsACapturesDesyncWithBothTimes() throws {
        var (striker, receiver) = Self.pair()
        let strike = SunsStrike(x: 0.5, y: 0.45, radius: 0.1, gameTime: 3.5)
        let captures = striker.strike(strike, by: 0)
        #expect(captures.map(\.sunIndex) == [0, 3])
        #expect(receiver.receive(strike) == .ok)
        var changed = captures[1]
        changed.gameTime = changed.gameTime.nextUp
        #expect(receiver.receive(captures[0]) == .ok)
        #expect(receiver.receive(changed) == .desync(part: "captures"))
        let divergence = try #require(receiver.divergence)
        #expect(divergence.part == "captures" && divergence.tick == nil)
        #expect(divergence.expected == "sun=3 time=\(SunsReplica.describe(captures[1].gameTime))")
        #expect(divergence.observed == "sun=3 time=\(SunsReplica.describe(changed.gameTime))")
        #expect(divergence.expected.contains("0x") && divergence.expected != divergence.observed)
        // The replica keeps the claim its rules computed, and the next strike checks clean again.
        #expect(receiver.game.best[0][3] == captures[1].gameTime)
        #expect(receiver.receive(SunsStrike(x: 0.9, y: 0.9, radius: 0.05, gameTime: 4)) == .ok)
        #expect(receiver.divergence == nil)
    }

    @Test func aCaptureOfASunNoStrikeReachedIsADesync() throws {
        var (striker, receiver) = Self.pair()
        let strike = SunsStrike(x: 0.1, y: 0.1, radius: 0.05, gameTime: 1)
        #expect(striker.strike(strike, by: 0) == [SunsCapture(sunIndex: 1, gameTime: 1)])
        #expect(receiver.receive(strike) == .ok)
        #expect(receiver.receive(SunsCapture(sunIndex: 1, gameTime: 1)) == .ok)
        #expect(receiver.receive(SunsCapture(sunIndex: 2, gameTime: 1)) == .desync(part: "captures"))
        #expect(receiver.divergence?.expected == "sun=2 unreached by seat 0's strikes")
        #expect(receiver.divergence?.observed == "sun=2 time=0x3f800000 (1.0)")
        #expect(receiver.game.best[0][2] == nil)
        // A sun outside the layout is one no strike reached either.
        #expect(receiver.receive(SunsCapture(sunIndex: 9, gameTime: 1)) == .desync(part: "captures"))
        #expect(receiver.divergence?.expected == "a sun below 4")
    }

    @Test func aCaptureThatNeverCameIsADesyncAtTheNextStrike() throws {
        var (striker, receiver) = Self.pair()
        let first = SunsStrike(x: 0.9, y: 0.88, radius: 0.05, gameTime: 2)
        let captures = striker.strike(first, by: 0)
        #expect(captures.count == 1)
        #expect(receiver.receive(first) == .ok)
        #expect(receiver.receive(SunsStrike(x: 0.1, y: 0.1, radius: 0.05, gameTime: 3)) == .desync(part: "captures"))
        #expect(
            receiver.divergence?.expected == "sun=2 time=\(SunsReplica.describe(captures[0].gameTime))"
                && receiver.divergence?.observed == "sun=2 no SunsCapture before the next SunsStrike")
    }

    @Test func aCaptureBeforeAnyStrikeOrLayoutIsADesync() {
        var (_, receiver) = Self.pair()
        #expect(receiver.receive(SunsCapture(sunIndex: 0, gameTime: 0.25)) == .desync(part: "captures"))
        var unseated = SunsReplica(seat: 0)
        #expect(unseated.receive(SunsCapture(sunIndex: 0, gameTime: 0.25)) == .desync(part: "captures"))
    }

    @Test func timesAreWrittenAsBitPatternAndShortestDecimal() {
        #expect(SunsReplica.describe(1.125) == "0x3f900000 (1.125)")
        #expect(SunsReplica.describe(Float(1.125).nextUp) == "0x3f900001 (1.1250001)")
        #expect(SunsReplica.describe(0) == "0x00000000 (0.0)")
    }
}
