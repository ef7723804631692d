import SkirmishWire

/// What the server's shot machine (an evaluation hook, not part of the game) tells the defending seat, carried as a
/// Chat line so no wire message exists for it: a shot served, and how it ended.
///
/// Encoded by ``text`` and decoded by ``init(text:)`` — the one place the format lives, so the server that writes it
/// and `skirmish ai-eval` that reads it cannot drift apart. Numbers are written in Swift's shortest round-trip form,
/// so a served puck decodes to exactly the bits the server put in play.
package enum ShotEvent: Sendable, Hashable {
    /// Shot `number` was put in play at `tick`; `puck` is exactly where the puck is at that tick, in the defender's
    /// frame; `bounces` is the side-wall bounces the shot was aimed with.
    case served(number: UInt32, tick: UInt32, puck: TableSnapshot.Puck, bounces: Int)
    /// Shot `number` ended as `outcome` (``ShotReferee``, judged on the server's own table); `interceptError` is the
    /// physical intercept error in px, `nil` when the shot ended before its tick came; `contactOffset` the contact
    /// offset in px, `nil` when the defender never touched the puck.
    case ended(number: UInt32, outcome: ShotReferee.Outcome, interceptError: Float?, contactOffset: Float?)

    /// The Chat text: `shot 3 served tick=120 x=… y=… vx=… vy=… angle=… spin=… bounces=1`,
    /// `shot 3 stopped error=12.5 offset=3.25` (`none` without a measurement).
    package var text: String {
        switch self {
        case .served(let number, let tick, let p, let bounces):
            "shot \(number) served tick=\(tick) x=\(p.x) y=\(p.y) vx=\(p.vx) vy=\(p.vy) angle=\(p.angle) "
                + "spin=\(p.spin) bounces=\(bounces)"
        case .ended(let number, let outcome, let error, let offset):
            "shot \(number) \(outcome.rawValue) error=\(error.map { "\($0)" } ?? "none") "
                + "offset=\(offset.map { "\($0)" } ?? "none")"
        }
    }

    /// The event a Chat line carries, or `nil` for any other text (a player's chat, a malformed line).
    package init?(text: String) {
        let words = text.split(separator: " ")
        guard words.count >= 3, words[0] == "shot", let number = UInt32(words[1]) else { return nil }
        switch words[2] {
        case let word where ShotReferee.Outcome(rawValue: String(word)) != nil:
            guard words.count == 5, let outcome = ShotReferee.Outcome(rawValue: String(word)),
                case .some(let error) = Self.measure(words[3], named: "error="),
                case .some(let offset) = Self.measure(words[4], named: "offset=")
            else { return nil }
            self = .ended(number: number, outcome: outcome, interceptError: error, contactOffset: offset)
        case "served":
            var fields: [Substring: Substring] = [:]
            for word in words.dropFirst(3) {
                let pair = word.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, fields[pair[0]] == nil else { return nil }
                fields[pair[0]] = pair[1]
            }
            func float(_ key: Substring) -> Float? {
                fields[key].flatMap { Float($0) }.flatMap { $0.isFinite ? $0 : nil }
            }
            guard fields.count == 8, let tick = fields["tick"].flatMap({ UInt32($0) }), let x = float("x"),
                let y = float("y"), let vx = float("vx"), let vy = float("vy"), let angle = float("angle"),
                let spin = float("spin"), let bounces = fields["bounces"].flatMap({ Int($0) }), bounces >= 0
            else { return nil }
            self = .served(
                number: number, tick: tick,
                puck: TableSnapshot.Puck(x: x, y: y, vx: vx, vy: vy, angle: angle, spin: spin),
                bounces: bounces)
        default:
            return nil
        }
    }

    /// `name` followed by a finite distance ≥ 0 (`.some(value)`) or `none` (`.some(nil)`); `nil` for anything else.
    private static func measure(_ word: Substring, named name: String) -> Float?? {
        guard word.hasPrefix(name) else { return nil }
        let value = word.dropFirst(name.count)
        if value == "none" { return .some(nil) }
        guard let number = Float(value), number.isFinite, number >= 0 else { return nil }
        return .some(number)
    }
}
