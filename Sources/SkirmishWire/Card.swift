/// A playing card as one byte: suit × 13 + rank, 0–51 (rank 0 = ace … 12 = king).
public struct Card: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The wire byte, 0–51: suit × 13 + rank.
    public let rawValue: UInt8

    /// A card from its wire byte; `nil` above 51.
    @inlinable
    public init?(rawValue: UInt8) {
        guard rawValue < 52 else { return nil }
        self.rawValue = rawValue
    }

    /// A card from suit (0–3) and rank (0 = ace … 12 = king); `nil` when either is out of range.
    public init?(suit: Int, rank: Int) {
        guard (0..<4).contains(suit), (0..<13).contains(rank) else { return nil }
        self.rawValue = UInt8(suit * 13 + rank)
    }

    /// 0–3.
    public var suit: Int { Int(rawValue) / 13 }
    /// 0 = ace … 12 = king. Snap compares ranks only.
    public var rank: Int { Int(rawValue) % 13 }

    /// Orders cards by their wire byte (suit first, then rank).
    public static func < (a: Card, b: Card) -> Bool { a.rawValue < b.rawValue }

    /// The rank and suit symbol, such as `A♣` or `10♥`.
    public var description: String {
        let ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
        let suits = ["♣", "♦", "♥", "♠"]
        return ranks[rank] + suits[suit]
    }

    /// All 52 cards in wire order.
    public static let deck: [Card] = (0..<52).map { Card(rawValue: UInt8($0))! }
}
