import SkirmishWire
import Testing

@testable import SkirmishGames

/// Flipping any single bit of any replica's state changes its hash.
@Suite struct FaultInjectionTests {
    @Test func puckEveryBitOfTheTable() {
        var (match, _) = PuckReplicaTests.warmedUp(seed: 21, ticks: 777)
        match.score0 = 3
        match.score1 = 5
        let reference = match.hashes
        var undetected = 0
        var flips = 0
        func check(_ mutate: (inout PuckMatch) -> Void) {
            var copy = match
            mutate(&copy)
            flips += 1
            if copy.hashes.combined == reference.combined || copy.hashes.firstDifference(from: reference) == nil {
                undetected += 1
            }
        }
        let floats: [WritableKeyPath<PuckMatch, Float>] = [
            \.puck.x, \.puck.y, \.puck.vx, \.puck.vy, \.puck.angle, \.puck.spin,
            \.paddle0.x, \.paddle0.y, \.paddle0.vx, \.paddle0.vy, \.paddle1.x, \.paddle1.y, \.paddle1.vx, \.paddle1.vy,
        ]
        for path in floats {
            for bit in 0..<32 {
                check { $0[keyPath: path] = Float(bitPattern: $0[keyPath: path].bitPattern ^ (1 << UInt32(bit))) }
            }
        }
        for bit in 0..<8 {
            check { $0.score0 ^= 1 << UInt8(bit) }
            check { $0.score1 ^= 1 << UInt8(bit) }
        }
        for bit in 0..<32 {
            check { $0.tick ^= 1 << UInt32(bit) }
        }
        for phase in PuckPhase.allCases where phase != match.phase {
            check { $0.phase = phase }
        }
        #expect(flips == 14 * 32 + 16 + 32 + 3)
        #expect(undetected == 0)
    }

    @Test func snapEveryBitOfTheTable() throws {
        var game = SnapGame(seats: 3, seed: 77)
        for step in 0..<40 {
            _ = try? game.turnCard(by: game.turn)
            if step % 9 == 8 { _ = try? game.callSnap(by: step % 3) }
        }
        try #require(game.winner == nil)
        let reference = game.stateHash
        var undetected = 0
        var flips = 0
        func check(_ mutate: (inout SnapGame) -> Void) {
            var copy = game
            mutate(&copy)
            flips += 1
            undetected += copy.stateHash == reference ? 1 : 0
        }
        for seat in 0..<3 {
            for index in game.hands[seat].indices {
                for bit in 0..<8 {
                    guard let card = Card(rawValue: game.hands[seat][index].rawValue ^ (1 << UInt8(bit))) else {
                        continue
                    }
                    check { $0.hands[seat][index] = card }
                }
            }
            for index in game.piles[seat].indices {
                for bit in 0..<8 {
                    guard let card = Card(rawValue: game.piles[seat][index].rawValue ^ (1 << UInt8(bit))) else {
                        continue
                    }
                    check { $0.piles[seat][index] = card }
                }
            }
        }
        for bit in 0..<2 {
            check { $0.turn ^= 1 << bit }
        }
        for bit in 0..<32 {
            check { $0.turnsTaken ^= 1 << bit }
        }
        check { $0.pairClaimed.toggle() }
        check { $0.winner = 0 }
        #expect(flips > 200)
        #expect(undetected == 0)
    }

    @Test func sunsEveryBitOfTheView() {
        var game = SunsGame(seat: 0)
        game.propose(coinToss: 9, suns: (0..<5).map { SunsStart.Sun(x: Float($0) / 5, y: 0.5) })
        game.receiveStart(SunsStart(coinToss: 3, suns: []))
        _ = game.strike(SunsStrike(x: 0.2, y: 0.5, radius: 0.15, gameTime: 3), by: 0)
        game.receiveCapture(SunsCapture(sunIndex: 3, gameTime: 4.5), by: 1)
        game.receiveCapture(SunsCapture(sunIndex: 1, gameTime: 2.5), by: 1)
        let reference = game.hashes.combined
        var undetected = 0
        var flips = 0
        func check(_ mutate: (inout SunsGame) -> Void) {
            var copy = game
            mutate(&copy)
            flips += 1
            undetected += copy.hashes.combined == reference ? 1 : 0
        }
        for index in 0..<5 {
            for bit in 0..<32 {
                let flip: UInt32 = 1 << UInt32(bit)
                check { $0.layout![index].x = Float(bitPattern: $0.layout![index].x.bitPattern ^ flip) }
                check { $0.layout![index].y = Float(bitPattern: $0.layout![index].y.bitPattern ^ flip) }
                for seat in 0..<2 {
                    check {
                        let time = $0.best[seat][index] ?? 0
                        $0.best[seat][index] = Float(bitPattern: time.bitPattern ^ flip)
                    }
                }
            }
            for seat in 0..<2 {
                check { $0.best[seat][index] = $0.best[seat][index] == nil ? 0 : nil }
            }
        }
        #expect(flips == 5 * (32 * 4 + 2))
        #expect(undetected == 0)
    }
}
