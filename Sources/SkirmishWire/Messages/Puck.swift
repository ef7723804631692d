/// `PaddleState` (0x00C8, C→S, unreliable): where the sender wants its paddle, in its own frame (itself at the
/// bottom). The velocity is advisory: the server derives velocity from movement and never trusts this one.
public struct PaddleState: Sendable, Hashable {
    /// The sender's input counter; the server echoes the last one applied in `TableSnapshot`.
    public var inputStep: UInt32
    public var x: Float
    public var y: Float
    public var vx: Float
    public var vy: Float

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
        public var x: Float
        public var y: Float
        public var vx: Float
        public var vy: Float

        public init(x: Float, y: Float, vx: Float, vy: Float) {
            self.x = x
            self.y = y
            self.vx = vx
            self.vy = vy
        }
    }

    /// The puck's position, velocity, angle and spin.
    public struct Puck: Sendable, Hashable {
        public var x: Float
        public var y: Float
        public var vx: Float
        public var vy: Float
        public var angle: Float
        public var spin: Float

        public init(x: Float, y: Float, vx: Float, vy: Float, angle: Float, spin: Float) {
            self.x = x
            self.y = y
            self.vx = vx
            self.vy = vy
            self.angle = angle
            self.spin = spin
        }
    }

    public var tick: UInt32
    /// The receiver's last `PaddleState.inputStep` the server applied.
    public var lastInputStep: UInt32
    /// The receiver's paddle (bottom of its frame).
    public var me: Paddle
    /// The other paddle.
    public var them: Paddle
    public var puck: Puck
    public var myScore: UInt8
    public var theirScore: UInt8
    public var phase: PuckPhase
    public var stateHash: UInt32

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
    public var tick: UInt32
    public var scorer: Side
    public var myScore: UInt8
    public var theirScore: UInt8

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
    public var winner: Side
    public var myScore: UInt8
    public var theirScore: UInt8

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
