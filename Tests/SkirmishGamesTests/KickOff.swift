import SkirmishGames

extension PuckMatch {
    /// A match started and played through its kick-off with both paddles on their start spots: the first tick of
    /// play comes next.
    static func kickedOff() -> PuckMatch {
        var match = PuckMatch()
        match.start()
        for _ in 0..<PuckConstants.goalPauseTicks {
            _ = match.step(nil, nil)
        }
        precondition(match.phase == .playing, "the kick-off lasts goalPauseTicks")
        return match
    }
}
