import SkirmishScript

/// How a script's keys become a ``DDNetConnection/Configuration``: the player's introduction, checked against what
/// a DDNet server keeps, and chat lines it can relay.
enum DDNetOptions {
    /// The keys a protocol block and a persona share.
    static let playerKeys = ["player_name", "clan", "skin", "country", "password"]

    /// Digits `{n}` must leave room for in a name: bot numbers up to 99,999.
    static let numberDigits = 5

    /// Reads the player keys present over `configuration`.
    static func decodePlayer(
        _ options: inout ScriptOptions, into configuration: inout DDNetConnection.Configuration
    ) throws(ScriptError) {
        if let pattern = try options.string("player_name") {
            guard pattern.contains("{n}") else {
                throw options.error(
                    at: "player_name", "player_name must contain `{n}`, the bot's number",
                    hint: "a DDNet server renames players whose names repeat, e.g. `player_name: \"tee-{n}\"`")
            }
            let longest = pattern.replacing("{n}", with: String(repeating: "9", count: numberDigits))
            guard longest.utf8.count <= Wire.maxNameLength - 1 else {
                throw options.error(
                    at: "player_name",
                    "player_name `\(pattern)` leaves no room for the bot's number in a 15-byte name",
                    hint: "keep the text around `{n}` to \(Wire.maxNameLength - 1 - numberDigits) bytes")
            }
            try check(pattern, key: "player_name", bytes: .max, &options)
            configuration.namePattern = pattern
        }
        if let clan = try options.string("clan") {
            try check(clan, key: "clan", bytes: Wire.maxClanLength - 1, &options)
            configuration.clan = clan
        }
        if let skin = try options.string("skin") {
            guard !skin.isEmpty else {
                throw options.error(at: "skin", "skin is empty", hint: "`default`, or a skin the server's players know")
            }
            try check(skin, key: "skin", bytes: 23, &options)
            configuration.skin = skin
        }
        if let country = try options.integer("country", in: -1...999) {
            configuration.country = country
        }
        if let password = try options.string("password") {
            try check(password, key: "password", bytes: 127, &options)
            configuration.password = password
        }
    }

    /// The `chatter` keys: `chat_every` (at least a second, which is what a DDNet server allows between lines) and
    /// `echo_timeout`.
    static func decodeChatter(_ options: inout ScriptOptions) throws(ScriptError) -> EchoChatter.Options {
        var chatter = EchoChatter.Options()
        if let every = try options.durationRange("chat_every") {
            guard every.lowerBound >= .seconds(1) else {
                throw options.error(
                    at: "chat_every", "chat_every must be at least 1s",
                    hint: "a DDNet server drops a player's lines said less than about a second apart")
            }
            chatter.every = every
        }
        if let timeout = try options.duration("echo_timeout", positive: true) { chatter.echoTimeout = timeout }
        return chatter
    }

    /// Refuses text longer than `bytes` in UTF-8 or holding control characters (which a server would mangle).
    static func check(_ text: String, key: String, bytes: Int, _ options: inout ScriptOptions) throws(ScriptError) {
        if text.utf8.count > bytes {
            throw options.error(
                at: key, "\(key) is \(text.utf8.count) bytes long; a DDNet server keeps \(bytes)",
                hint: "shorten it")
        }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw options.error(at: key, "\(key) contains a control character", hint: "remove it")
        }
    }

    /// Why a chat line cannot be said, or `nil` when it can: 1 to 255 bytes, no control characters, and not a server
    /// command (a line starting with `/`, which a DDNet server runs instead of relaying).
    @Sendable
    static func chatProblem(_ text: String) -> String? {
        if text.trimmingWhitespace.isEmpty { return "a DDNet chat line must not be empty" }
        if text.utf8.count > 255 { return "a DDNet chat line is at most 255 bytes; this one is \(text.utf8.count)" }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "a DDNet chat line must not contain control characters"
        }
        if text.hasPrefix("/") { return "a line starting with `/` is a command to a DDNet server, not chat" }
        return nil
    }
}

extension String {
    /// The text without leading and trailing spaces, tabs and newlines.
    fileprivate var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
