import SkirmishNet
import SkirmishWire

@testable import SkirmishDDNet

/// The server side of a scripted session, built from the plug-in's codec: datagrams as DDNet-Server writes them
/// (vital chunks numbered, the token appended), and a reader for what the client sent.
struct FakeServer {
    var token: UInt32 = 0x3875_AAA5
    /// The last vital sequence number used.
    var sequence = 0
    /// What the server acknowledges of the client's vital chunks.
    var ack = 0

    /// A message: `id << 1 | system`, then the fields `build` writes.
    static func message(system: Bool, _ id: Int32, _ build: (inout Packer) -> Void = { _ in }) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 1_400)
        let count = bytes.withUnsafeMutableBytes { raw in
            var packer = Packer(raw)
            packer.int(id << 1 | (system ? 1 : 0))
            build(&packer)
            return packer.count
        }
        return Array(bytes[..<count])
    }

    /// The connect-accept with the token (`CNetServer::OnTokenCtrlMsg`).
    func connectAccept() -> [UInt8] { control([Wire.Control.connectAccept] + PacketCodec.tokenMagic) }

    /// A control message with the token appended.
    func control(_ body: [UInt8], ack: Int = 0) -> [UInt8] {
        encode(flags: .control, ack: ack, chunks: body, count: 0, compress: false)
    }

    /// A packet of `messages`, each vital (numbered in turn) or not, compressed when smaller.
    mutating func packet(_ messages: [(vital: Bool, bytes: [UInt8])], flags: SkirmishDDNet.PacketHeader.Flags = [])
        -> [UInt8]
    {
        var chunks: [UInt8] = []
        for message in messages {
            var header = ChunkHeader(flags: 0, size: message.bytes.count, sequence: -1)
            if message.vital {
                sequence = (sequence + 1) % ChunkHeader.sequenceModulus
                header = ChunkHeader(flags: ChunkHeader.vital, size: message.bytes.count, sequence: sequence)
            }
            var raw = [UInt8](repeating: 0, count: 3)
            let end = raw.withUnsafeMutableBytes { header.write(into: $0, at: 0) } ?? 0
            chunks += raw[..<end] + message.bytes
        }
        return encode(flags: flags, ack: ack, chunks: chunks, count: messages.count, compress: true)
    }

    func encode(flags: SkirmishDDNet.PacketHeader.Flags, ack: Int, chunks: [UInt8], count: Int, compress: Bool)
        -> [UInt8]
    {
        var input = chunks + [0, 0, 0, 0]
        var output = [UInt8](repeating: 0, count: 1_400)
        let size = input.withUnsafeMutableBytes { raw in
            output.withUnsafeMutableBytes {
                PacketCodec.encode(
                    flags: flags, ack: ack, chunkCount: count, chunks: raw, chunkBytes: chunks.count, token: token,
                    compress: compress, into: $0)
            }
        }
        return Array(output[..<size])
    }

    /// What one datagram from the client holds: its header, and each message as (system, id, vital, sequence,
    /// fields), or the control byte and extra bytes.
    struct Sent {
        var header: SkirmishDDNet.PacketHeader
        var control: [UInt8]?
        var messages: [(system: Bool, id: Int32, vital: Bool, sequence: Int, fields: [UInt8])] = []
    }

    /// Reads a datagram the client sent (with the token it should carry).
    static func read(_ datagram: [UInt8], token: UInt32?) -> Sent? {
        var payload = [UInt8](repeating: 0, count: 1_400)
        let decoded = datagram.withUnsafeBytes { raw in
            payload.withUnsafeMutableBytes { try? PacketCodec.decode(raw, token: token, into: $0) }
        }
        guard let (header, count) = decoded else { return nil }
        if header.flags.contains(.control) { return Sent(header: header, control: Array(payload[..<count])) }
        var sent = Sent(header: header)
        payload.withUnsafeBytes { raw in
            var reader = ChunkReader(UnsafeRawBufferPointer(rebasing: raw[..<count]), count: header.chunkCount)
            while let chunk = try? reader.next() {
                var unpacker = Unpacker(chunk.data)
                let packed = unpacker.int()
                sent.messages.append(
                    (
                        packed & 1 == 1, packed >> 1, chunk.header.isVital, chunk.header.sequence,
                        Array(chunk.data[unpacker.offset...])
                    ))
            }
        }
        return sent
    }
}

/// One connection driven by hand: time is a variable, datagrams are arrays.
struct Harness {
    var connection: DDNetConnection
    var actions = ClientActions<DDNetConnection>()
    var now = Instant(seconds: 1_000)
    var server = FakeServer()
    var sent: [[UInt8]] = []
    var events: [ClientEvent<DDNetConnection>] = []
    var metrics: [ClientMetric] = []

    init(configuration: DDNetConnection.Configuration = .init()) {
        connection = DDNetConnection(
            configuration: configuration, setup: ConnectionSetup(transport: .udp, player: 7, name: "x", seed: 42))
    }

    private mutating func collect() {
        sent += actions.packets
        events += actions.events
        metrics += actions.metrics
        actions.removeAll()
    }

    mutating func start() {
        connection.start(now: now, into: &actions)
        collect()
    }

    mutating func deliver(_ datagram: [UInt8]) {
        datagram.withUnsafeBytes { connection.receive($0, now: now, into: &actions) }
        collect()
    }

    mutating func send(_ message: DDNetConnection.Message) {
        connection.send(message, now: now, into: &actions)
        collect()
    }

    /// Moves time on by `span`, ticking at every deadline on the way (at most 100,000 ticks).
    mutating func advance(by span: Duration) {
        let end = now + span
        for _ in 0..<100_000 {
            let deadline = connection.nextDeadline
            guard deadline <= end else { break }
            now = max(now, deadline)
            connection.tick(now: now, into: &actions)
            collect()
        }
        now = end
    }

    /// Everything the client sent so far, read; forgets it.
    mutating func take() -> [FakeServer.Sent] {
        defer { sent.removeAll() }
        return sent.compactMap { FakeServer.read($0, token: server.token) }
    }

    /// The error kinds counted so far.
    var errors: [String] { metrics.compactMap { if case .error(let kind) = $0 { kind } else { nil } } }

    /// Plays the join up to `ENTERGAME` and the first snapshot: the connection is in game as client `clientID`.
    mutating func join(clientID: Int32 = 7) {
        start()
        deliver(server.connectAccept())
        server.ack = 2
        deliver(
            server.packet([
                (
                    true,
                    FakeServer.message(system: true, Wire.System.mapChange) { p in
                        p.string("dm1", limit: 100)
                        p.int(Int32(0x1234))
                        p.int(Int32(5_000))
                    }
                )
            ]))
        server.ack = 3
        deliver(server.packet([(true, FakeServer.message(system: true, Wire.System.conReady))]))
        server.ack = 4
        deliver(server.packet([(true, FakeServer.message(system: false, Wire.Game.readyToEnter))]))
        server.ack = 5
        deliver(snapshot(tick: 100, base: -1, words: Harness.firstSnapshot(clientID: clientID)))
    }

    /// A full snapshot: this player's info (local) and character at (320, 640).
    static func firstSnapshot(clientID: Int32) -> [Int32] {
        var character = [Int32](repeating: 0, count: 22)
        character[1] = 320
        character[2] = 640
        return [0, 2, 0, 10, clientID, 1, clientID, 0, 0, 0, 9, clientID] + character
    }

    /// A single-part snapshot of `tick` against `base` holding the delta `words`, with its checksum `crc` (by
    /// default the one the words make when applied to `baseSnapshot`).
    mutating func snapshot(tick: Int32, base: Int32, words: [Int32], crc: UInt32? = nil) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 4_096)
        let size = words.withUnsafeBufferPointer { input in
            bytes.withUnsafeMutableBytes { VarInt.compress(input, into: $0) ?? 0 }
        }
        var delta = SnapshotDelta()
        var out = Snapshot()
        let from = connection.snapshots.first { $0.tick == base } ?? Snapshot()
        _ = try? words.withUnsafeBufferPointer { try delta.apply($0, to: from, into: &out) }
        let checksum = crc ?? out.crc
        let message = FakeServer.message(system: true, Wire.System.snapSingle) { p in
            p.int(tick)
            p.int(tick - base)
            p.int(Int32(bitPattern: checksum))
            p.int(Int32(size))
            bytes.withUnsafeBytes { p.raw(UnsafeRawBufferPointer(rebasing: $0[..<size])) }
        }
        return server.packet([(false, message)])
    }
}
