import SkirmishWire
import Testing

@Suite struct CatalogueTests {
    @Test func deliveryClassesFollowTheCatalogue() {
        let handshake: Set<MessageType> = [.hello, .challenge, .reject, .ack, .disconnect]
        let unreliable: Set<MessageType> = [.ping, .pong, .paddleState, .tableSnapshot, .gameUnreliable]
        for type in MessageType.allCases {
            let expected: Delivery =
                handshake.contains(type) ? .handshake : unreliable.contains(type) ? .unreliable : .reliable
            #expect(type.delivery == expected, "\(type.name)")
        }
    }

    @Test func directionsRefuseWrongWayPackets() {
        #expect(MessageType.tableSnapshot.direction.allows(.server))
        #expect(!MessageType.tableSnapshot.direction.allows(.client))
        #expect(MessageType.paddleState.direction.allows(.client))
        #expect(!MessageType.paddleState.direction.allows(.server))
        #expect(!MessageType.welcome.direction.allows(.client))
        #expect(!MessageType.hello.direction.allows(.server))
        for type in [MessageType.ping, .pong, .ack, .chat, .disconnect, .sunsStart, .sunsStrike, .sunsCapture] {
            #expect(type.direction == .both, "\(type.name)")
        }
        #expect(MessageType.sunsTally.direction == .clientToServer)
    }

    @Test func indicesAreDenseAndNamesUnique() {
        #expect(MessageType.allCases.map(\.index) == Array(0..<MessageType.allCases.count))
        #expect(Set(MessageType.allCases.map(\.name)).count == MessageType.allCases.count)
    }

    @Test func cardsEncodeSuitAndRank() {
        #expect(Card(rawValue: 52) == nil)
        #expect(Card(suit: 3, rank: 12)?.rawValue == 51)
        #expect(Card(suit: 1, rank: 0)?.rawValue == 13)
        #expect(Card(suit: 4, rank: 0) == nil)
        #expect(Card.deck.count == 52)
        #expect(Card(rawValue: 25)?.rank == 12)
    }
}

@Suite struct SerialNumberTests {
    @Test(arguments: [
        (UInt32(1), UInt32(2), true), (UInt32.max, 0, true), (UInt32.max - 5, 3, true), (0, UInt32.max, false),
        (5, 5, false), (0, 0x7FFF_FFFF, true), (0, 0x8000_0000, false), (0x8000_0000, 0, false),
        (10, 0x8000_0009, true), (10, 0x8000_000A, false),
    ])
    func precedesWrapsAroundPerRFC1982(a: UInt32, b: UInt32, expected: Bool) {
        #expect(SerialNumber.precedes(a, b) == expected)
        if a != b, SerialNumber.distance(from: a, to: b) != Int32.min {
            #expect(SerialNumber.follows(b, a) == expected)
        }
    }

    @Test func distanceIsSignedAcrossTheWrap() {
        #expect(SerialNumber.distance(from: UInt32.max, to: 1) == 2)
        #expect(SerialNumber.distance(from: 1, to: UInt32.max) == -2)
    }

    @Test func seededRandomIsReproducibleAndDerivedStreamsDiffer() {
        var a = SeededRandom(seed: 42)
        var b = SeededRandom(seed: 42)
        #expect((0..<100).map { _ in a.next() } == (0..<100).map { _ in b.next() })
        var c = SeededRandom(seed: 42).derived(1)
        var d = SeededRandom(seed: 42).derived(2)
        #expect(c.next() != d.next())
    }
}
