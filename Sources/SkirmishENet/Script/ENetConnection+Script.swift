import SkirmishScript

extension ENetConnection.Configuration {
    /// The keys of a script's `protocol:` block that ``read(_:)`` takes, for the loader's hints.
    public static var scriptKeys: [String] {
        [
            "channels", "incoming_bandwidth", "outgoing_bandwidth", "mtu", "checksum", "connect_data",
            "handshake_timeout", "timeout_limit", "timeout_minimum", "timeout_maximum", "ping_interval",
            "throttle_interval", "throttle_acceleration", "throttle_deceleration", "unreliable_fragments",
            "max_message_size", "max_queued_bytes", "max_incoming_bytes",
        ]
    }

    /// Reads ENet's settings from a script's `protocol:` block over these: every key is optional and keeps the
    /// libenet default it replaces; a value out of ENet's range is a located ``ScriptError`` with a hint.
    ///
    /// ```yaml
    /// protocol: {name: enet, channels: 2, mtu: 1400, checksum: true, connect_data: 7, ping_interval: 500ms,
    ///            timeout_minimum: 5s, timeout_maximum: 30s, outgoing_bandwidth: 65536}
    /// ```
    ///
    /// Bandwidths are bytes per second (0: unlimited), durations are ENet's whole milliseconds (at least `1ms`).
    public mutating func read(_ options: inout ScriptOptions) throws(ScriptError) {
        if let channels = try options.integer("channels", in: 1...255) { channelCount = channels }
        let bandwidth = 0...Int(UInt32.max)
        if let value = try options.integer("incoming_bandwidth", in: bandwidth) { incomingBandwidth = UInt32(value) }
        if let value = try options.integer("outgoing_bandwidth", in: bandwidth) { outgoingBandwidth = UInt32(value) }
        if let value = try options.integer("mtu", in: 576...4096) { mtu = value }
        if let value = try options.flag("checksum") { checksum = value }
        if let value = try options.integer("connect_data", in: 0...Int(UInt32.max)) { connectData = UInt32(value) }
        if let value = try Self.milliseconds("handshake_timeout", &options) { handshakeTimeout = value }
        if let value = try options.integer("timeout_limit", in: 1...1_000_000) { timeoutLimit = value }
        if let value = try Self.milliseconds("timeout_minimum", &options) { timeoutMinimum = value }
        if let value = try Self.milliseconds("timeout_maximum", &options) { timeoutMaximum = value }
        guard timeoutMinimum <= timeoutMaximum else {
            throw options.error(
                at: options.contains("timeout_minimum") ? "timeout_minimum" : "timeout_maximum",
                "timeout_minimum (\(timeoutMinimum)) is longer than timeout_maximum (\(timeoutMaximum))",
                hint: "libenet's defaults are 5s and 30s")
        }
        if let value = try Self.milliseconds("ping_interval", &options) { pingInterval = value }
        if let value = try Self.milliseconds("throttle_interval", &options) { packetThrottleInterval = value }
        if let value = try options.integer("throttle_acceleration", in: 0...32) {
            packetThrottleAcceleration = UInt32(value)
        }
        if let value = try options.integer("throttle_deceleration", in: 0...32) {
            packetThrottleDeceleration = UInt32(value)
        }
        if let value = try options.flag("unreliable_fragments") { unreliableFragments = value }
        if let value = try options.integer("max_message_size", in: 1...ProtocolLimits.maximumPacketSize) {
            maxMessageSize = value
        }
        if let value = try options.integer("max_queued_bytes", in: 4096...(1 << 30)) { maxQueuedBytes = value }
        if let value = try options.integer("max_incoming_bytes", in: 4096...(1 << 30)) { maxIncomingBytes = value }
    }

    /// `key` as a duration of at least one of ENet's milliseconds.
    private static func milliseconds(_ key: String, _ options: inout ScriptOptions) throws(ScriptError) -> Duration? {
        guard let value = try options.duration(key, positive: true) else { return nil }
        guard value >= .milliseconds(1) else {
            throw options.error(at: key, "\(key) must be at least 1ms: ENet counts whole milliseconds")
        }
        return value
    }
}
