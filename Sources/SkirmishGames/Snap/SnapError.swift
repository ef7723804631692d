/// Why a Snap action or message was refused. Refusals change nothing.
public enum SnapError: Error, Sendable, Hashable {
    /// The seat is not at this table.
    case invalidSeat
    /// Someone else is to turn a card.
    case notYourTurn
    /// The game has a winner; nothing more happens.
    case gameOver
    /// The seat holds no cards any more (it is out, or it quit).
    case eliminated
    /// `ServerReady` and `DealCards` do not describe one table (2–4 seats, hands in seat order, 52 distinct cards).
    case invalidDeal
}
