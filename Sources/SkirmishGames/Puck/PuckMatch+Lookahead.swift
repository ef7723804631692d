import SkirmishWire

/// Package-only hooks on the Puck rules for code that looks ahead (the AI opponent) and for evaluation (the reference
/// server's shot machine). They add no rule: the public game stays exactly the one of DESIGN §3.
extension PuckMatch {
    /// Advances a puck one tick as if no paddle were near: friction, caps, spin, motion and walls — the very code
    /// ``step(_:_:)`` runs for the puck, in the canonical frame.
    ///
    /// Returns the seat that scored when the puck left through a goal mouth (the puck is then past the end line and
    /// the caller should stop). A lookahead that only needs the puck's free path uses this instead of stepping a
    /// whole table, whose paddles would get in the way.
    package static func advanceFreePuck(_ puck: inout TableSnapshot.Puck) -> Int? {
        movePuck(&puck)
    }

    /// Puts `puck` (canonical frame) in play at once, for a shot machine: a test and evaluation hook, never reachable
    /// from the wire.
    ///
    /// The position is quantised like every position the physics produces, the phase becomes `.playing` (ending a
    /// goal pause early), and with `resettingScore` both scores return to 0 so a long series of shots never reaches
    /// the winning score. Does nothing once the match is over or while it waits for players.
    package mutating func serve(_ puck: TableSnapshot.Puck, resettingScore: Bool) {
        guard phase == .playing || phase == .goalPause else { return }
        var placed = puck
        placed.x = Self.quantise(Self.clamp(puck.x, K.puckRadius...(K.width - K.puckRadius)))
        placed.y = Self.quantise(Self.clamp(puck.y, K.puckRadius...(K.height - K.puckRadius)))
        self.puck = placed
        phase = .playing
        if resettingScore {
            score0 = 0
            score1 = 0
        }
    }
}
