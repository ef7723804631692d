import SkirmishWire

extension Message {
    /// The server tick a game message names, for logs (a desync's `tick`); `nil` for messages without one.
    var gameTick: UInt32? {
        switch self {
        case .tableSnapshot(let snapshot): snapshot.tick
        case .goalScored(let goal): goal.tick
        default: nil
        }
    }
}
