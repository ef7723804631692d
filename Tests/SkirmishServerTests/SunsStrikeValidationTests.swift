import NIOCore
import SkirmishWire
import Testing

@testable import SkirmishServer

/// The game time a `SunsStrike` carries is validated like its coordinates: a hostile value is a counted `badValue`
/// rejection and is never relayed; a valid one is relayed with the time unchanged.
@Suite struct SunsStrikeValidationTests {
    typealias Harness = ServerCoreTests.Harness

    @Test(arguments: [Float.nan, -1, -Float.leastNonzeroMagnitude, 60, Float(60).nextUp, .infinity, -.infinity])
    func aStrikeWithAnImpossibleGameTimeIsRejectedAndNotRelayed(time: Float) throws {
        var harness = Harness()
        let a = try ServerCoreTests.address(52_000)
        let b = try ServerCoreTests.address(52_001)
        _ = try harness.join(a, game: .suns, seats: 2)
        _ = try harness.join(b, game: .suns, seats: 2)
        _ = harness.drain()
        // Encoded with a valid time, then the time's four bytes (the payload's last) replaced: the encoder refuses it.
        var bytes = encode(Packet(number: 1, .sunsStrike(SunsStrike(x: 0.5, y: 0.5, radius: 0.1, gameTime: 1))))
        bytes.replaceSubrange((bytes.count - 4)..., with: withUnsafeBytes(of: time.bitPattern.bigEndian) { Array($0) })
        harness.sendRaw(bytes, from: a)
        #expect(harness.core.stats.rejections(.badValue) == 1)
        #expect(!harness.drain().contains { $0.packet.message.type == .sunsStrike })
        // The largest time below 60 is valid, and relayed unchanged.
        let last = SunsStrike(x: 0.5, y: 0.5, radius: 0.1, gameTime: Float(60).nextDown)
        harness.send(Packet(number: 1, .sunsStrike(last)), from: a)
        #expect(harness.core.stats.rejections(.badValue) == 1)
        let relayed = harness.drain().filter { $0.connection == b }.map(\.packet.message)
        #expect(relayed.contains(.sunsStrike(last)), "\(relayed)")
    }
}
