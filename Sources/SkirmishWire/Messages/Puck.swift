/// `PaddleState` (0x00C8, C→S, unreliable): where the sender wants its paddle, in its own frame (itself at the
/// bottom). The velocity is advisory: the server derives velocity from movement and never trusts this one.
public struct PaddleState: Sendable, Hashable {
    /// The sender's input counter; the server echoes the last one applied in `TableSnapshot`.
    public var inputStep: UInt32
    /// Where the sender wants its paddle's centre, in pixels across the 320-pixel table (sender's frame).
    public var x: Float
    /// Where the sender wants its paddle's centre, in pixels down the 480-pixel table; its own half is the bottom.
    public var y: Float
    /// Advisory x velocity, in pixels per tick; the server ignores it.
    public var vx: Float
    /// Advisory y velocity, in pixels per tick; the server ignores it.
    public var vy: Float

    /// An input; the server clamps the position to the sender's half and moves the paddle at most 40 pixels per tick.
    public init(inputStep: UInt32, x: Float, y: Float, vx: Float, vy: Float) {
        self.inputStep = inputStep
        self.x = x
        self.y = y
        self.vx = vx
        self.vy = vy
    }
}

extension PaddleState: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        inputStep = try reader.u32()
        x = try reader.f32()
        y = try reader.f32()
        vx = try reader.f32()
        vy = try reader.f32()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(inputStep)
        try writer.f32(x)
        try writer.f32(y)
        try writer.f32(vx)
        try writer.f32(vy)
    }
}

/// The phase of a Puck match.
public enum PuckPhase: UInt8, Sendable, Hashable, CaseIterable {
    case waiting = 0
    case playing = 1
    case goalPause = 2
    case over = 3
}

/// Which player, relative to the receiver.
public enum Side: UInt8, Sendable, Hashable, CaseIterable {
    case me = 0
    case them = 1
}

/// `TableSnapshot` (0x00C9, S→C, unreliable): the authoritative table at one tick, in the receiver's frame.
public struct TableSnapshot: Sendable, Hashable {
    /// A paddle's position and server-derived velocity.
    public struct Paddle: Sendable, Hashable {
        /// Centre x, in pixels (0–320) in the receiver's frame.
        public var x: Float
        /// Centre y, in pixels (0–480) in the receiver's frame; the receiver's own paddle is in the bottom half.
        public var y: Float
        /// X velocity derived by the server from movement, in pixels per tick.
        public var vx: Float
        /// Y velocity derived by the server from movement, in pixels per tick.
        public var vy: Float

        /// A paddle at (`x`, `y`) moving at (`vx`, `vy`) pixels per tick.
        public init(x: Float, y: Float, vx: Float, vy: Float) {
            self.x = x
            self.y = y
            self.vx = vx
            self.vy = vy
        }
    }

    /// The puck's position, velocity, angle and spin.
    public struct Puck: Sendable, Hashable {
        /// Centre x, in pixels (0–320) in the receiver's frame.
        public var x: Float
        /// Centre y, in pixels (0–480) in the receiver's frame.
        public var y: Float
        /// X velocity, in pixels per tick (at most ±40).
        public var vx: Float
        /// Y velocity, in pixels per tick (at most ±40).
        public var vy: Float
        /// Orientation, in radians (−π…π), turned by `spin` each tick; during a goal pause, the pause ticks left.
        public var angle: Float
        /// Angular velocity, in radians per tick (at most ±1); wall bounces add to it and it decays toward 0.
        public var spin: Float

        /// A puck state as the server simulated it.
        public init(x: Float, y: Float, vx: Float, vy: Float, angle: Float, spin: Float) {
            self.x = x
            self.y = y
            self.vx = vx
            self.vy = vy
            self.angle = angle
            self.spin = spin
        }
    }

    /// The server's simulation tick (60 per second) this snapshot shows; newer snapshots have larger ticks.
    public var tick: UInt32
    /// The receiver's last `PaddleState.inputStep` the server applied.
    public var lastInputStep: UInt32
    /// The receiver's paddle (bottom of its frame).
    public var me: Paddle
    /// The other paddle.
    public var them: Paddle
    /// The puck, in the receiver's frame.
    public var puck: Puck
    /// The receiver's goals so far (a match is won at 7).
    public var myScore: UInt8
    /// The other player's goals so far.
    public var theirScore: UInt8
    /// Waiting for a second player, playing, paused after a goal, or over.
    public var phase: PuckPhase
    /// FNV-1a state hash of the table at `tick` in the canonical frame; a replica compares its own against it.
    public var stateHash: UInt32

    /// A snapshot as the server sends it to one receiver, every field already in that receiver's frame.
    public init(
        tick: UInt32, lastInputStep: UInt32, me: Paddle, them: Paddle, puck: Puck, myScore: UInt8,
        theirScore: UInt8, phase: PuckPhase, stateHash: UInt32
    ) {
        self.tick = tick
        self.lastInputStep = lastInputStep
        self.me = me
        self.them = them
        self.puck = puck
        self.myScore = myScore
        self.theirScore = theirScore
        self.phase = phase
        self.stateHash = stateHash
    }
}

extension TableSnapshot.Paddle {
    init(reading reader: inout WireReader) throws(DecodeError) {
        x = try reader.f32()
        y = try reader.f32()
        vx = try reader.f32()
        vy = try reader.f32()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.f32(x)
        try writer.f32(y)
        try writer.f32(vx)
        try writer.f32(vy)
    }
}

extension TableSnapshot: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        tick = try reader.u32()
        lastInputStep = try reader.u32()
        me = try Paddle(reading: &reader)
        them = try Paddle(reading: &reader)
        puck = Puck(
            x: try reader.f32(), y: try reader.f32(), vx: try reader.f32(), vy: try reader.f32(),
            angle: try reader.f32(), spin: try reader.f32())
        myScore = try reader.u8()
        theirScore = try reader.u8()
        guard let phase = PuckPhase(rawValue: try reader.u8()) else { throw .badValue }
        self.phase = phase
        stateHash = try reader.u32()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(tick)
        try writer.u32(lastInputStep)
        try me.write(to: &writer)
        try them.write(to: &writer)
        try writer.f32(puck.x)
        try writer.f32(puck.y)
        try writer.f32(puck.vx)
        try writer.f32(puck.vy)
        try writer.f32(puck.angle)
        try writer.f32(puck.spin)
        try writer.u8(myScore)
        try writer.u8(theirScore)
        try writer.u8(phase.rawValue)
        try writer.u32(stateHash)
    }
}

/// `GoalScored` (0x00CA, S→C, reliable): a goal, with the score after it, in the receiver's frame.
public struct GoalScored: Sendable, Hashable {
    /// The server tick at which the puck crossed the end line.
    public var tick: UInt32
    /// Who scored, relative to the receiver.
    public var scorer: Side
    /// The receiver's goals after this one.
    public var myScore: UInt8
    /// The other player's goals after this one.
    public var theirScore: UInt8

    /// A goal event as sent to one receiver.
    public init(tick: UInt32, scorer: Side, myScore: UInt8, theirScore: UInt8) {
        self.tick = tick
        self.scorer = scorer
        self.myScore = myScore
        self.theirScore = theirScore
    }
}

extension GoalScored: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        tick = try reader.u32()
        guard let scorer = Side(rawValue: try reader.u8()) else { throw .badValue }
        self.scorer = scorer
        myScore = try reader.u8()
        theirScore = try reader.u8()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(tick)
        try writer.u8(scorer.rawValue)
        try writer.u8(myScore)
        try writer.u8(theirScore)
    }
}

/// `PuckMatchOver` (0x00CB, S→C, reliable): the winner and the final score, in the receiver's frame.
public struct PuckMatchOver: Sendable, Hashable {
    /// Who won, relative to the receiver.
    public var winner: Side
    /// The receiver's final goals.
    public var myScore: UInt8
    /// The other player's final goals.
    public var theirScore: UInt8

    /// The end of a match as sent to one receiver.
    public init(winner: Side, myScore: UInt8, theirScore: UInt8) {
        self.winner = winner
        self.myScore = myScore
        self.theirScore = theirScore
    }
}

extension PuckMatchOver: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        guard let winner = Side(rawValue: try reader.u8()) else { throw .badValue }
        self.winner = winner
        myScore = try reader.u8()
        theirScore = try reader.u8()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u8(winner.rawValue)
        try writer.u8(myScore)
        try writer.u8(theirScore)
    }
}
