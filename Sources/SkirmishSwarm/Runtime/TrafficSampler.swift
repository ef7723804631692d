import SkirmishWire

/// One bot's byte counts and the once-a-second samples of them that `skirmish_bot_bytes_per_second` records.
///
/// The counts are two additions per packet beside the persona's shared counters; the sample is taken when the bot
/// wakes for it (at the same time as its once-a-second Ping, so it costs no extra wake-up). A sample covers the
/// whole time since the previous one — at least a second, a little more when the loop woke late — so its value is
/// bytes over that time. Sampling runs only while the bot is seated: ``start(now:)`` when it is (again), ``stop()``
/// when it is not, and the part of a second before it leaves is not sampled.
struct TrafficSampler {
    /// Bytes this bot has sent and received, over its whole life.
    var sent: UInt64 = 0
    var received: UInt64 = 0
    /// When the next sample is due; `nil` while the bot is not seated.
    private(set) var nextSample: Instant?
    private var since = Instant.zero
    private var sentBefore: UInt64 = 0
    private var receivedBefore: UInt64 = 0

    static let interval = Duration.seconds(1)

    /// The bot is seated at `now`: its first second starts.
    mutating func start(now: Instant) {
        since = now
        sentBefore = sent
        receivedBefore = received
        nextSample = now + Self.interval
    }

    /// Whether samples are being taken (the bot is seated).
    var isSampling: Bool { nextSample != nil }

    /// The bot is no longer seated: the second under way is dropped.
    mutating func stop() { nextSample = nil }

    /// The bytes per second each way since the previous sample, and the next second started; `nil` when no sample
    /// is due.
    mutating func sample(now: Instant) -> (sent: Double, received: Double)? {
        guard let due = nextSample, now >= due, now > since else { return nil }
        let seconds = (now - since).seconds
        let rates = (sent: Double(sent &- sentBefore) / seconds, received: Double(received &- receivedBefore) / seconds)
        since = now
        sentBefore = sent
        receivedBefore = received
        nextSample = now + Self.interval
        return rates
    }
}
