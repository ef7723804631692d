/// Coordinates in Suns are unit coordinates; anything outside [0, 1] is `badValue`.
let unitRange: ClosedRange<Float> = 0...1

/// `SunsStart` (0x012C, C→S→C, reliable): a coin toss and a proposed layout. The higher toss's layout is played.
public struct SunsStart: Sendable, Hashable {
    /// One sun of a proposed layout.
    public struct Sun: Sendable, Hashable {
        /// Horizontal position, in unit coordinates [0, 1].
        public var x: Float
        /// Vertical position, in unit coordinates [0, 1].
        public var y: Float

        /// A sun at (`x`, `y`), both in [0, 1].
        public init(x: Float, y: Float) {
            self.x = x
            self.y = y
        }
    }

    /// A random number; of two proposals the higher toss's layout is played (equal tosses propose again).
    public var coinToss: UInt32
    /// At most 16 suns, each in the unit square.
    public var suns: [Sun]

    /// A proposal of up to 16 suns with its coin toss.
    public init(coinToss: UInt32, suns: [Sun]) {
        self.coinToss = coinToss
        self.suns = suns
    }
}

extension SunsStart: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        coinToss = try reader.u32()
        let n = try reader.count(limit: WireLimits.maxSuns)
        suns = []
        suns.reserveCapacity(n)
        for _ in 0..<n {
            suns.append(Sun(x: try reader.f32(in: unitRange), y: try reader.f32(in: unitRange)))
        }
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(coinToss)
        try writer.count(suns.count, limit: WireLimits.maxSuns)
        for sun in suns {
            try writer.f32(sun.x, in: unitRange)
            try writer.f32(sun.y, in: unitRange)
        }
    }
}

/// `SunsStrike` (0x012D, C→S→C, reliable): a strike at (x, y) with radius r, all in unit coordinates, r > 0, at the
/// striker's game time t (seconds, 0 ≤ t < 60).
///
/// The time is what lets the receiver check the striker's `SunsCapture` messages: with the shared rules it computes
/// which suns the strike reaches and when, and each capture must carry exactly that time.
public struct SunsStrike: Sendable, Hashable {
    /// Centre x, in unit coordinates [0, 1].
    public var x: Float
    /// Centre y, in unit coordinates [0, 1].
    public var y: Float
    /// Radius, in unit coordinates (0, 1]; suns within it are hit.
    public var radius: Float
    /// The striker's game time of the strike, in seconds (0 ≤ t < 60): the base of its capture times.
    public var gameTime: Float

    /// A strike at (`x`, `y`) with `radius`, at `gameTime` seconds of the striker's game time.
    public init(x: Float, y: Float, radius: Float, gameTime: Float) {
        self.x = x
        self.y = y
        self.radius = radius
        self.gameTime = gameTime
    }

    static let radiusRange: ClosedRange<Float> = Float.leastNormalMagnitude...1
    /// [0, 60): strikes are made during the 60 s of a game; the bound is the largest `f32` below 60.
    static let gameTimeRange: ClosedRange<Float> = 0...Float(60).nextDown
}

extension SunsStrike: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        x = try reader.f32(in: unitRange)
        y = try reader.f32(in: unitRange)
        radius = try reader.f32(in: Self.radiusRange)
        gameTime = try reader.f32(in: Self.gameTimeRange)
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.f32(x, in: unitRange)
        try writer.f32(y, in: unitRange)
        try writer.f32(radius, in: Self.radiusRange)
        try writer.f32(gameTime, in: Self.gameTimeRange)
    }
}

/// `SunsCapture` (0x012E, C→S→C, reliable): the sender captured a sun at a game time (seconds, ≥ 0).
public struct SunsCapture: Sendable, Hashable {
    /// Below 16.
    public var sunIndex: UInt32
    /// When the sun was captured, in seconds of game time (≥ 0).
    public var gameTime: Float

    /// A capture of sun `sunIndex` (below 16) at `gameTime` seconds.
    public init(sunIndex: UInt32, gameTime: Float) {
        self.sunIndex = sunIndex
        self.gameTime = gameTime
    }
}

extension SunsCapture: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        sunIndex = try reader.u32()
        guard sunIndex < WireLimits.maxSuns else { throw .badValue }
        gameTime = try reader.f32(in: 0...Float.greatestFiniteMagnitude)
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        guard sunIndex < WireLimits.maxSuns else { throw .badValue }
        try writer.u32(sunIndex)
        try writer.f32(gameTime, in: 0...Float.greatestFiniteMagnitude)
    }
}

/// `SunsTally` (0x012F, C→S, reliable): the sender's final view — each sun's owner and capture time.
public struct SunsTally: Sendable, Hashable {
    /// One sun's final state as the sender saw it.
    public struct Entry: Sendable, Hashable {
        /// The owning seat (0–3), or 255 when nobody captured the sun.
        public var owner: UInt8
        /// When the owner captured the sun, in seconds of game time (≥ 0); 0 for an unowned sun.
        public var time: Float

        /// An entry; `owner` is a seat 0–3 or ``unowned``.
        public init(owner: UInt8, time: Float) {
            self.owner = owner
            self.time = time
        }

        /// The `owner` of a sun nobody captured.
        public static let unowned: UInt8 = 255

        var isValid: Bool {
            (owner < WireLimits.maxSeats || owner == Self.unowned) && time.isFinite && time >= 0
        }
    }

    /// One entry per sun, in layout order (at most 16).
    public var entries: [Entry]

    /// A tally of `entries`.
    public init(entries: [Entry]) { self.entries = entries }
}

extension SunsTally: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        let n = try reader.count(limit: WireLimits.maxSuns)
        entries = []
        entries.reserveCapacity(n)
        for _ in 0..<n {
            let entry = Entry(owner: try reader.u8(), time: try reader.f32())
            guard entry.isValid else { throw .badValue }
            entries.append(entry)
        }
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.count(entries.count, limit: WireLimits.maxSuns)
        for entry in entries {
            guard entry.isValid else { throw .badValue }
            try writer.u8(entry.owner)
            try writer.f32(entry.time)
        }
    }
}
