/// Bandwidth: what operators look at first, per connected bot and per running match, each way.
extension SkirmishMetrics {
    /// Bytes per second one connected bot sent or received (`direction` `sent` or `received`), one sample per bot
    /// and direction for each second it was connected.
    ///
    /// A bot samples its own byte counts once a second while it is seated (a resume starts a new second); the part
    /// of a second before it leaves is not sampled. Rogue personas record none, like every other distribution.
    public static let botBytesPerSecond = MetricFamily(
        name: "skirmish_bot_bytes_per_second",
        help: "Bytes per second one connected bot sent or received, sampled each second.",
        kind: .histogram(.bytesPerSecond), labelNames: botLabels + ["direction"])

    /// Bytes per second one running match moved (`direction` `sent` by the server to its players, `received` from
    /// them), by game: one sample per match and direction about once a second, from the tick it started.
    public static let serverMatchBytesPerSecond = MetricFamily(
        name: "skirmish_server_match_bytes_per_second",
        help: "Bytes per second one running match sent to or received from its players, sampled each second.",
        kind: .histogram(.bytesPerSecond), labelNames: ["game", "direction"])
}
