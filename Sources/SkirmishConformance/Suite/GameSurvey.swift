import SkirmishWire
import Synchronization

/// Which built-in games the server hosts, as its answers to one Hello per game showed (`handshake.games`).
///
/// A `Reject(4 bad request)` is an answer: the server does not host that game, and the checks of that game are
/// skipped with that reason. A Welcome means it does. Anything else (silence, another Reject) is a broken handshake
/// for that game: `handshake.games` fails once, and the checks that need the game are skipped as depending on it.
/// A game refused for two seats but seated for another count (``otherSeats``) is hosted, and its check plays that
/// count (``seats(of:)``).
struct GameSurvey: Sendable, Hashable {
    /// The built-in games, in the order the suite prefers one to play the checks that fit any game.
    static let builtIn: [GameKind] = [.puck, .snap, .suns]

    /// Games whose Hello got a Welcome.
    var hosted: [GameKind] = []
    /// Games whose Hello got `Reject(4 bad request)`: not hosted.
    var refused: [GameKind] = []
    /// Games whose Hello got neither, with what came instead.
    var broken: [GameKind: String] = [:]
    /// Games refused for two seats but seated for another count the spec allows them (Snap: 3 or 4): hosted, though
    /// not for the two-player matches the checks of rules every game shares play. `Reject(4)` is also the answer to a
    /// seat count a server does not take, so a Snap refused at 2 seats is asked again at 4 and 3 before it counts as
    /// not hosted.
    var otherSeats: [GameKind: UInt8] = [:]

    /// The other seat counts worth asking for `game` when two seats got `Reject(4)`: Snap is played by 2 to 4.
    static func otherSeatCounts(for game: GameKind) -> [UInt8] { game == .snap ? [4, 3] : [] }

    /// A survey that found every built-in game hosted (a suite run without asking, in tests).
    static let everything = GameSurvey(hosted: builtIn)

    /// The game the checks that fit any game play: Puck when hosted (its snapshots show most), else Snap, else Suns.
    var game: GameKind { Self.builtIn.first { hosted.contains($0) } ?? .puck }

    /// How many seats the checks of `game` play: 2 where the server seats it for two, else the count it seated
    /// instead (``otherSeats``: Snap for 4 or 3); `nil` when it does not host the game.
    func seats(of game: GameKind) -> Int? {
        if hosted.contains(game) { return 2 }
        return otherSeats[game].map(Int.init)
    }

    /// The game the checks that fit any game play and the seats they ask for: ``game`` for two where the server
    /// seats a game for two, else a game seated for another count (Snap for 4 or 3); `nil` when none is hosted.
    var table: (game: GameKind, seats: UInt8)? {
        if !hosted.isEmpty { return (game, 2) }
        return otherSeats.sorted { $0.key.rawValue < $1.key.rawValue }.first.map { ($0.key, $0.value) }
    }

    /// Why a check needing `requirement` cannot run, or `nil` when it can.
    func skipReason(for requirement: ConformanceCheck.Requirement) -> String? {
        switch requirement {
        case .nothing:
            return nil
        case .seat, .table:
            guard hosted.isEmpty else { return nil }
            if let (game, seats) = otherSeats.first {
                if requirement == .table { return nil }
                return "needs a seat in a two-player match, and the server seats \(game) for \(seats) players only"
            }
            return refused.count == Self.builtIn.count
                ? "needs a seat, and the server refused a Hello for each of puck, snap and suns with Reject(4)"
                : "needs a seat, and no Hello for a built-in game got a Welcome (see handshake.games)"
        case .game(let game):
            // Seated for another count only, the game's check plays that count (``seats(of:)``): only Snap is asked
            // for other counts, and snap.deal plays any.
            if seats(of: game) != nil { return nil }
            if refused.contains(game) { return "the server does not host \(game) (Reject(4) to its Hello)" }
            return "needs a seat in \(game), and its Hello got no Welcome (see handshake.games)"
        }
    }
}

/// The survey of one run, made once and read by every later check.
final class SurveyBox: Sendable {
    private let survey = Mutex<GameSurvey?>(nil)

    init(_ survey: GameSurvey? = nil) { self.survey.withLock { $0 = survey } }

    var value: GameSurvey? {
        get { survey.withLock { $0 } }
        set { survey.withLock { $0 = newValue } }
    }
}
