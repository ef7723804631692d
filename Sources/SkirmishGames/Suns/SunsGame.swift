import SkirmishWire

/// One client's view of a Suns race (two seats), computed by the client itself; the server only relays.
///
/// The rules, precisely (see also the "Suns" article of the module documentation):
/// - Each client proposes a coin toss and a layout (``propose(coinToss:suns:)``) and receives the other's
///   (``receiveStart(_:)``). The k-th proposal of one side is paired with the k-th of the other (the relay keeps
///   each direction in order). The higher toss's layout is played; an equal toss means both propose again. After
///   ``maxTossRounds`` tied rounds seat 0's layout of the last round is played, so tossing always ends.
/// - A strike at (x, y) with radius r at game time t captures every sun within r (distance ≤ r, Euclidean) at
///   t + 0.25 × (distance / r). Strikes at game time ≥ ``duration`` capture nothing.
/// - A seat's claim on a sun is the earliest capture time of its own strikes (reported in `SunsCapture`). When both
///   seats claim a sun the earlier time wins and a tie goes to the lower seat. The result is a minimum over the set
///   of claims, so it does not depend on the order in which captures arrive: two clients that have seen the same
///   captures have the same tally.
public struct SunsGame: Sendable, Hashable {
    /// A claim on one sun by one seat.
    public struct Claim: Sendable, Hashable {
        /// The claiming seat (0 or 1).
        public var seat: Int
        /// The capture time, in game seconds (0…``SunsGame/duration``).
        public var time: Float

        /// A claim on a sun by `seat` at `time` game seconds.
        public init(seat: Int, time: Float) {
            self.seat = seat
            self.time = time
        }
    }

    /// What a toss round came to.
    public enum StartResult: Sendable, Hashable {
        /// The other side's proposal for this round has not arrived yet.
        case waiting
        /// Both sides play this layout from now on.
        case adopted([SunsStart.Sun])
        /// The tosses were equal: propose again with a new toss.
        case retoss
    }

    /// Game seconds after which strikes capture nothing.
    public static let duration: Float = 60
    /// A client sends its `SunsTally` this long (game seconds) after the last capture it knows of.
    public static let tallyDelay: Float = 2
    /// Tied toss rounds after which seat 0's layout is played.
    public static let maxTossRounds = 16

    /// This client's seat, 0 or 1.
    public let seat: Int
    /// This client's proposals, in order.
    public private(set) var myProposals: [SunsStart] = []
    /// The other side's proposals, in order.
    public private(set) var theirProposals: [SunsStart] = []
    /// The layout in play, once adopted.
    public internal(set) var layout: [SunsStart.Sun]?
    /// `best[s][i]`: seat `s`'s earliest capture time of sun `i`.
    public internal(set) var best: [[Float?]] = [[], []]

    /// A game seen from `seat` (0 or 1): no proposals yet, no layout, no captures.
    public init(seat: Int) {
        self.seat = seat
    }

    /// Records this client's proposal for the next round (send `SunsStart(coinToss:suns:)` to the other side).
    @discardableResult
    public mutating func propose(coinToss: UInt32, suns: [SunsStart.Sun]) -> StartResult {
        guard layout == nil, myProposals.count < Self.maxTossRounds else { return resolve() }
        myProposals.append(SunsStart(coinToss: coinToss, suns: suns))
        return resolve()
    }

    /// Records the other side's proposal for its next round.
    @discardableResult
    public mutating func receiveStart(_ start: SunsStart) -> StartResult {
        guard layout == nil, theirProposals.count < Self.maxTossRounds else { return resolve() }
        theirProposals.append(start)
        return resolve()
    }

    private mutating func resolve() -> StartResult {
        if let layout { return .adopted(layout) }
        let round = min(myProposals.count, theirProposals.count) - 1
        guard round >= 0, myProposals.count == theirProposals.count else { return .waiting }
        let mine = myProposals[round]
        let theirs = theirProposals[round]
        let chosen: SunsStart
        if mine.coinToss != theirs.coinToss {
            chosen = mine.coinToss > theirs.coinToss ? mine : theirs
        } else if round + 1 >= Self.maxTossRounds {
            chosen = seat == 0 ? mine : theirs
        } else {
            return .retoss
        }
        let suns = Array(chosen.suns.prefix(WireLimits.maxSuns))
        layout = suns
        best = [[Float?](repeating: nil, count: suns.count), [Float?](repeating: nil, count: suns.count)]
        return .adopted(suns)
    }

    /// A strike by `seat` at its game time (`strike.gameTime`): records the seat's improved claims and returns them
    /// as `SunsCapture`s (for this client's own strikes, the messages to send). Invalid strikes capture nothing.
    public mutating func strike(_ strike: SunsStrike, by seat: Int) -> [SunsCapture] {
        var captures: [SunsCapture] = []
        apply(strike, by: seat) { captures.append(SunsCapture(sunIndex: UInt32($0), gameTime: $1)) }
        return captures
    }

    /// Applies a strike by `seat` with the shared rules, calling `improved` with each sun whose claim it improves and
    /// the new time, in layout order; allocates nothing. Invalid strikes capture nothing.
    ///
    /// Each step is binary32, in the order the rules state (`d = sqrt(dx·dx + dy·dy)`, `d ≤ r`, `t + 0.25 × (d ÷ r)`),
    /// so the receiver of a strike computes the striker's capture times bit for bit.
    mutating func apply(_ strike: SunsStrike, by seat: Int, improved: (Int, Float) -> Void) {
        let gameTime = strike.gameTime
        guard let layout, (0...1).contains(seat), gameTime.isFinite, gameTime >= 0,
            gameTime < Self.duration, strike.x.isFinite, strike.y.isFinite, strike.radius.isFinite, strike.radius > 0
        else { return }
        for i in layout.indices {
            let sun = layout[i]
            let dx = sun.x - strike.x
            let dy = sun.y - strike.y
            let distance = (dx * dx + dy * dy).squareRoot()
            guard distance <= strike.radius else { continue }
            let time = gameTime + 0.25 * (distance / strike.radius)
            if record(sun: i, seat: seat, time: time) { improved(i, time) }
        }
    }

    /// Records a capture reported by `seat`; returns false when it is invalid (no layout, bad index or time) or
    /// not earlier than that seat's known claim.
    @discardableResult
    public mutating func receiveCapture(_ capture: SunsCapture, by seat: Int) -> Bool {
        guard let layout, (0...1).contains(seat), capture.sunIndex < layout.count, capture.gameTime.isFinite,
            capture.gameTime >= 0
        else { return false }
        return record(sun: Int(capture.sunIndex), seat: seat, time: capture.gameTime)
    }

    private mutating func record(sun: Int, seat: Int, time: Float) -> Bool {
        if let known = best[seat][sun], !(time < known) { return false }
        best[seat][sun] = time
        return true
    }

    /// Who owns sun `index`: the earlier claim, ties to the lower seat.
    public func owner(of index: Int) -> Claim? {
        guard index < best[0].count else { return nil }
        switch (best[0][index], best[1][index]) {
        case (nil, nil): return nil
        case (let a?, nil): return Claim(seat: 0, time: a)
        case (nil, let b?): return Claim(seat: 1, time: b)
        case (let a?, let b?): return b < a ? Claim(seat: 1, time: b) : Claim(seat: 0, time: a)
        }
    }

    /// This client's view: each sun's owner (255 when nobody) and winning time (0 when nobody).
    public func tally() -> SunsTally {
        SunsTally(
            entries: (0..<(layout?.count ?? 0)).map { i in
                guard let claim = owner(of: i) else { return SunsTally.Entry(owner: SunsTally.Entry.unowned, time: 0) }
                return SunsTally.Entry(owner: UInt8(claim.seat), time: claim.time)
            })
    }

    /// Whether every sun has been captured.
    public var isOver: Bool {
        guard layout != nil else { return false }
        return (0..<best[0].count).allSatisfy { owner(of: $0) != nil }
    }

    /// Whether the game is over at `gameTime`: every sun captured, or the duration passed.
    public func isOver(at gameTime: Float) -> Bool {
        isOver || (layout != nil && gameTime >= Self.duration)
    }

    /// Whether this client should send its `SunsTally` at `gameTime`: the game is over and ``tallyDelay`` has
    /// passed since the latest capture it knows of, so the other side's captures can no longer change its view.
    public func isTallyDue(at gameTime: Float) -> Bool {
        isOver(at: gameTime) && gameTime >= lastCaptureTime + Self.tallyDelay
    }

    /// The latest capture time this client knows of (0 when none).
    public var lastCaptureTime: Float {
        var latest: Float = 0
        for times in best {
            for case let time? in times where time > latest {
                latest = time
            }
        }
        return latest
    }
}
