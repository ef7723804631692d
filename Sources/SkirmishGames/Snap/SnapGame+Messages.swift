import SkirmishWire

/// Building the server's Snap messages from the game, so server and replica agree on their layout.
extension SnapGame {
    /// `DealCards` for the current hands, listed in seat order (`peers[s]` is seat `s`'s peer id). Send it before
    /// the first turn; a replica relies on the seat order.
    public func dealCards(peers: [UInt32]) -> DealCards {
        DealCards(hands: (0..<seats).map { DealCards.Hand(peer: peers[$0], cards: hands[$0]) })
    }

    /// `ServerReady` for `viewer`: every seat with its position relative to the viewer (0 = the viewer).
    public func serverReady(peers: [UInt32], names: [String], viewer: Int) -> ServerReady {
        ServerReady(
            players: (0..<seats).map {
                ServerReady.Player(
                    peer: peers[$0], position: UInt8(relativePosition(of: $0, viewer: viewer)), name: names[$0])
            })
    }
}
