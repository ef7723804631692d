import SkirmishScript

/// The `payload` behaviour's settings, from a persona's `payload:` key.
///
/// ```yaml
/// payload: {channel: 1, delivery: reliable, rate: 20hz,
///           template: [{bytes: "0a0b"}, {sequence: u32}, {random: 8}, {time: f64}]}
/// ```
struct PayloadOptions: Sendable, Hashable {
    /// The channel messages go on.
    var channel: UInt8 = 0
    /// How they are delivered.
    var delivery = ENetDelivery.reliable
    /// Messages per second; `nil`: the persona's `input_rate`.
    var rate: Double?
    /// What each message holds.
    var template = PayloadTemplate([.sequence(.u32)])
    /// Messages to send before the bot leaves (once the replies are in, or after ``linger``); `nil`: no end.
    var count: Int?
    /// How long after its last message a bot with a ``count`` waits for the replies still missing.
    var linger = Duration.seconds(2)
    /// Whether replies carry the sequence number back: then each is matched to its request, checked and timed.
    var echo = true
    /// The channel replies arrive on.
    var replyChannel: UInt8 = 0

    /// The persona keys the behaviour reads.
    static let keys = ["payload"]
    /// The keys of the `payload:` mapping.
    static let payloadKeys = ["channel", "delivery", "rate", "template", "count", "linger", "echo", "reply_channel"]
    /// The keys of a template item.
    static let fieldKeys = ["bytes", "text", "sequence", "random", "zeros", "time"]

    /// Reads a persona's `payload:` for a connection configured as `configuration`; the defaults when it has none.
    static func read<Codec>(
        _ persona: inout ScriptOptions, configuration: ENetConnection<Codec>.Configuration
    ) throws(ScriptError) -> PayloadOptions {
        var result = PayloadOptions()
        guard var options = try persona.options("payload") else { return result }
        if let channel = try options.integer("channel", in: 0...254) {
            guard channel < configuration.channelCount else {
                throw options.error(
                    at: "channel",
                    "channel \(channel) is not one of the \(configuration.channelCount) channels asked for",
                    hint: "channels count from 0; ask for more with `protocol: {name: enet, channels: \(channel + 1)}`")
            }
            result.channel = UInt8(channel)
        }
        result.replyChannel = result.channel
        if let delivery = try options.choice("delivery", ENetDelivery.self) { result.delivery = delivery }
        result.rate = try options.rate("rate", max: 10_000)
        if let items = try options.list("template", limit: 64) {
            guard !items.isEmpty else {
                throw options.error(at: "template", "the template is empty", hint: "e.g. [{sequence: u32}]")
            }
            var fields: [PayloadTemplate.Field] = []
            for var item in items { fields.append(try field(&item)) }
            guard fields.filter({ if case .sequence = $0 { true } else { false } }).count <= 1 else {
                throw options.error(
                    at: "template", "the template has more than one `sequence` field",
                    hint: "replies are matched by one sequence number")
            }
            result.template = PayloadTemplate(fields)
            guard result.template.size <= configuration.maxMessageSize else {
                throw options.error(
                    at: "template",
                    "the template makes \(result.template.size)-byte messages, over the \(configuration.maxMessageSize) "
                        + "bytes a message may have",
                    hint: "raise `max_message_size` in the `protocol:` block")
            }
        }
        result.count = try options.integer("count", in: 1...100_000_000)
        if let linger = try options.duration("linger") { result.linger = linger }
        result.echo = result.template.sequence != nil
        if let echo = try options.flag("echo") {
            guard !echo || result.template.sequence != nil else {
                throw options.error(
                    at: "echo", "`echo: true` needs a sequence number to match replies by",
                    hint: "add {sequence: u32} to the template")
            }
            result.echo = echo
        }
        if let channel = try options.integer("reply_channel", in: 0...254) { result.replyChannel = UInt8(channel) }
        try options.finish(known: payloadKeys)
        return result
    }

    /// One template item: a mapping with exactly one of ``fieldKeys``.
    private static func field(_ item: inout ScriptOptions) throws(ScriptError) -> PayloadTemplate.Field {
        let keys = item.unreadKeys
        guard keys.count == 1, let key = keys.first else {
            throw item.error(
                keys == ["value"] ? "a template item is a mapping with one key" : "a template item has exactly one key",
                hint: "one of {bytes: \"0a0b\"}, {text: \"hello\"}, {sequence: u32}, {random: 8}, {zeros: 100}, "
                    + "{time: f64}")
        }
        // An unknown key is refused with the closest known one.
        guard fieldKeys.contains(key) else {
            try item.finish(known: fieldKeys)
            throw item.error("unknown template item `\(key)`")
        }
        let field: PayloadTemplate.Field
        switch key {
        case "bytes":
            let text = try item.string("bytes") ?? ""
            guard let bytes = hexBytes(text), !bytes.isEmpty else {
                throw item.error(
                    at: "bytes", "`\(text)` is not hexadecimal bytes", hint: "two hex digits a byte, e.g. \"0a0b\"")
            }
            field = .bytes(bytes)
        case "text":
            let text = try item.string("text") ?? ""
            guard !text.isEmpty else { throw item.error(at: "text", "the text is empty") }
            field = .bytes(Array(text.utf8))
        case "sequence":
            field = .sequence(try item.choice("sequence", PayloadTemplate.Integer.self) ?? .u32)
        case "random":
            field = .random(try item.integer("random", in: 1...65_536) ?? 1)
        case "zeros":
            field = .zeros(try item.integer("zeros", in: 1...(1 << 24)) ?? 1)
        default:
            field = .time(try item.choice("time", PayloadTemplate.Time.self) ?? .f64)
        }
        try item.finish(known: fieldKeys)
        return field
    }

    /// The bytes `text` spells in hexadecimal (spaces allowed between bytes, an optional `0x`); `nil` when it spells
    /// none.
    static func hexBytes(_ text: String) -> [UInt8]? {
        var digits = Array(text.utf8.filter { $0 != UInt8(ascii: " ") })
        if digits.count >= 2, digits[0] == UInt8(ascii: "0"), digits[1] | 0x20 == UInt8(ascii: "x") {
            digits.removeFirst(2)
        }
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
