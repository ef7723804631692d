import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire
import Testing

@testable import SkirmishENet

/// Scripts for the `enet` protocol: its `protocol:` block becomes the connection's configuration, the `payload`
/// behaviour's options its template; every mistake is refused with its line and a hint.
@Suite struct ScriptTests {
    typealias Configuration = ENetConnection<ENetRawCodec>.Configuration

    static let loader = Catalogue().registeringENet().scriptLoader

    static func script(protocol block: String = "enet", payload: String? = nil) -> String {
        """
        name: t
        protocol: \(block)
        personas:
          - name: p
            behavior: payload
        \(payload.map { "    payload: \($0)\n" } ?? "")
        """
    }

    static func error(_ text: String) throws -> ScriptError {
        try #require(throws: ScriptError.self) { try loader.parse(text, file: "t.yaml") }
    }

    @Test func theProtocolBlockSetsEveryOption() throws {
        let block = """
            {name: enet, channels: 4, incoming_bandwidth: 100000, outgoing_bandwidth: 65536, mtu: 1200, checksum: true,
              connect_data: 4294967295, handshake_timeout: 3s, timeout_limit: 8, timeout_minimum: 2s, timeout_maximum: 9s,
              ping_interval: 250ms, throttle_interval: 2s, throttle_acceleration: 3, throttle_deceleration: 0,
              unreliable_fragments: true, max_message_size: 65536, max_queued_bytes: 8192, max_incoming_bytes: 16384}
            """
        let script = try Self.loader.parse(Self.script(protocol: block), file: "t.yaml")
        let configuration = try #require(script.personas[0].connection.get(Configuration.self))
        #expect(configuration.channelCount == 4 && configuration.incomingBandwidth == 100_000)
        #expect(configuration.outgoingBandwidth == 65_536 && configuration.mtu == 1200 && configuration.checksum)
        #expect(configuration.connectData == .max && configuration.handshakeTimeout == .seconds(3))
        #expect(configuration.timeoutLimit == 8 && configuration.timeoutMinimum == .seconds(2))
        #expect(configuration.timeoutMaximum == .seconds(9) && configuration.pingInterval == .milliseconds(250))
        #expect(configuration.packetThrottleInterval == .seconds(2) && configuration.packetThrottleAcceleration == 3)
        #expect(configuration.packetThrottleDeceleration == 0 && configuration.unreliableFragments)
        #expect(configuration.maxMessageSize == 65_536 && configuration.maxQueuedBytes == 8192)
        #expect(configuration.maxIncomingBytes == 16_384)
        #expect(script.personas[0].gameName == "enet")
        // Without a block, libenet's defaults.
        let plain = try Self.loader.parse(Self.script(), file: "t.yaml")
        #expect(plain.personas[0].connection.get(Configuration.self) == Configuration())
    }

    @Test(arguments: [
        ("{name: enet, channels: 0}", "channels"),
        ("{name: enet, mtu: 100}", "mtu"),
        ("{name: enet, checksum: maybe}", "checksum"),
        ("{name: enet, connect_data: -1}", "connect_data"),
        ("{name: enet, ping_interval: 0.5ms}", "at least 1ms"),
        ("{name: enet, timeout_minimum: 40s}", "longer than timeout_maximum"),
        ("{name: enet, throttle_deceleration: 33}", "throttle_deceleration"),
    ])
    func aBadProtocolOptionIsRefusedAtItsLine(block: String, message: String) throws {
        let error = try Self.error(Self.script(protocol: block))
        #expect(error.line == 2, "\(error)")
        #expect(error.message.contains(message), "\(error)")
    }

    @Test func anUnknownProtocolKeyIsRefusedWithTheClosestKnownOne() throws {
        let error = try Self.error(Self.script(protocol: "{name: enet, chanels: 2}"))
        #expect(error.line == 2 && error.message == "unknown key `chanels` in `protocol`")
        #expect(error.hint?.contains("did you mean `channels`?") == true)
    }

    @Test func thePayloadOptionsAndTemplateAreRead() throws {
        let payload = """
            {channel: 1, delivery: unsequenced, rate: 25hz, count: 7, linger: 3s, reply_channel: 0,
                  template: [{bytes: "0x0A 0b"}, {text: "hi"}, {sequence: u16le}, {random: 3}, {zeros: 2}, {time: u64}]}
            """
        let script = try Self.loader.parse(
            Self.script(protocol: "{name: enet, channels: 2}", payload: payload), file: "t.yaml")
        let options = try #require(script.personas[0].options.get(PayloadOptions.self))
        #expect(options.channel == 1 && options.delivery == .unsequenced && options.rate == 25)
        #expect(options.count == 7 && options.linger == .seconds(3) && options.replyChannel == 0 && options.echo)
        #expect(
            options.template.fields == [
                .bytes([0x0A, 0x0B]), .bytes(Array("hi".utf8)), .sequence(.u16le), .random(3), .zeros(2), .time(.u64),
            ])
        #expect(options.template.size == 2 + 2 + 2 + 3 + 2 + 8)
        #expect(options.template.sequence?.offset == 4)
        // Without `payload:`, a u32 sequence number on reliable channel 0 at the persona's rate, echo on.
        let defaults = try Self.loader.parse(Self.script(), file: "t.yaml")
        let plain = try #require(defaults.personas[0].options.get(PayloadOptions.self))
        #expect(plain == PayloadOptions() && plain.echo && plain.template.size == 4)
    }

    @Test(arguments: [
        ("{channel: 2}", "channel 2 is not one of the 2 channels"),
        ("{delivery: sometimes}", "delivery"),
        ("{template: []}", "the template is empty"),
        ("{template: [{bytes: \"0g\"}]}", "not hexadecimal"),
        ("{template: [{bytes: \"abc\"}]}", "not hexadecimal"),
        ("{template: [{sequence: u32}, {sequence: u8}]}", "more than one `sequence`"),
        ("{template: [{sequence: u24}]}", "sequence"),
        ("{template: [{random: 8, zeros: 2}]}", "exactly one key"),
        ("{template: [{random: 0}]}", "random"),
        ("{template: [{zeros: 2000000}]}", "over the 1048576 bytes"),
        ("{template: [{text: \"x\"}], echo: true}", "needs a sequence number"),
        ("{rate: 0hz}", "rate"),
        ("{colour: red}", "unknown key `colour`"),
    ])
    func aBadPayloadIsRefusedAtItsLine(payload: String, message: String) throws {
        let error = try Self.error(Self.script(protocol: "{name: enet, channels: 2}", payload: payload))
        #expect(error.line == 6, "\(error)")
        #expect(error.message.contains(message), "\(error)")
    }

    @Test func anUnknownTemplateItemIsRefusedWithTheClosestKnownOne() throws {
        let error = try Self.error(Self.script(payload: "{template: [{sequnce: u32}]}"))
        #expect(error.message.contains("unknown key `sequnce`"))
        #expect(error.hint?.contains("did you mean `sequence`?") == true)
    }

    /// The template's bytes, field by field, and the sequence number read back from where it was written.
    @Test func theTemplateWritesItsFieldsInOrder() {
        let template = PayloadTemplate([
            .bytes([0x0A, 0x0B]), .sequence(.u32), .random(3), .zeros(2), .time(.u64le), .sequence(.u16le),
        ])
        var random = SeededRandom(seed: 9)
        var expected = SeededRandom(seed: 9)
        var buffer: [UInt8] = []
        let now = Instant(nanoseconds: 0x0102_0304_0506_0708)
        template.write(sequence: 0x0A0B_0C0D, now: now, random: &random, into: &buffer)
        let draw = expected.next()
        let randomBytes = (0..<3).map { UInt8(truncatingIfNeeded: draw >> (8 * UInt64($0))) }
        #expect(
            buffer
                == [0x0A, 0x0B, 0x0A, 0x0B, 0x0C, 0x0D] + randomBytes + [0, 0]
                + [0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01] + [0x0D, 0x0C])
        #expect(template.size == buffer.count)
        // The first sequence field is the one replies are read by.
        #expect(template.sequenceNumber(in: buffer) == 0x0A0B_0C0D)
        #expect(template.sequenceNumber(in: Array(buffer.prefix(5))) == nil)
        // Little-endian and narrow formats wrap to their width.
        let narrow = PayloadTemplate([.sequence(.u16le)])
        narrow.write(sequence: 0x1_2345, now: now, random: &random, into: &buffer)
        #expect(buffer == [0x45, 0x23] && narrow.sequenceNumber(in: buffer) == 0x2345)
        // The time as seconds in an IEEE-754 double, big-endian.
        let seconds = PayloadTemplate([.time(.f64)])
        seconds.write(sequence: 0, now: Instant(nanoseconds: 1_500_000_000), random: &random, into: &buffer)
        #expect(buffer == (0..<8).map { UInt8(truncatingIfNeeded: (1.5).bitPattern >> (56 - 8 * UInt64($0))) })
    }

    @Test func hexBytesTakeSpacesAndAPrefix() {
        #expect(PayloadOptions.hexBytes("0a0B ff") == [0x0A, 0x0B, 0xFF])
        #expect(PayloadOptions.hexBytes("0XFF") == [0xFF])
        #expect(PayloadOptions.hexBytes("f") == nil && PayloadOptions.hexBytes("zz") == nil)
    }
}
