/// Coordinates in Suns are unit coordinates; anything outside [0, 1] is `badValue`.
let unitRange: ClosedRange<Float> = 0...1

/// `SunsStart` (0x012C, C→S→C, reliable): a coin toss and a proposed layout. The higher toss's layout is played.
public struct SunsStart: Sendable, Hashable {
    public struct Sun: Sendable, Hashable {
        public var x: Float
        public var y: Float

        public init(x: Float, y: Float) {
            self.x = x
            self.y = y
        }
    }

    public var coinToss: UInt32
    /// At most 16 suns, each in the unit square.
    public var suns: [Sun]

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

/// `SunsStrike` (0x012D, C→S→C, reliable): a strike at (x, y) with radius r, all in unit coordinates, r > 0.
public struct SunsStrike: Sendable, Hashable {
    public var x: Float
    public var y: Float
    public var radius: Float

    public init(x: Float, y: Float, radius: Float) {
        self.x = x
        self.y = y
        self.radius = radius
    }

    static let radiusRange: ClosedRange<Float> = Float.leastNormalMagnitude...1
}

extension SunsStrike: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        x = try reader.f32(in: unitRange)
        y = try reader.f32(in: unitRange)
        radius = try reader.f32(in: Self.radiusRange)
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.f32(x, in: unitRange)
        try writer.f32(y, in: unitRange)
        try writer.f32(radius, in: Self.radiusRange)
    }
}

/// `SunsCapture` (0x012E, C→S→C, reliable): the sender captured a sun at a game time (seconds, ≥ 0).
public struct SunsCapture: Sendable, Hashable {
    /// Below 16.
    public var sunIndex: UInt32
    public var gameTime: Float

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
    public struct Entry: Sendable, Hashable {
        /// The owning seat (0–3), or 255 when nobody captured the sun.
        public var owner: UInt8
        public var time: Float

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

    public var entries: [Entry]

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
