/// Tuning of the exporter's queue, retries and shutdown; the defaults suit a 5 s push interval.
public struct ExporterConfiguration: Sendable {
    /// Payloads kept per target while its collector is slow or down; the oldest is dropped (and counted) beyond.
    public var queueCapacity: Int
    /// The first retry delay; each further failure doubles it, up to ``backoffCap``, times a jitter of 50–100 %.
    public var backoffBase: Duration
    /// The longest retry delay.
    public var backoffCap: Duration
    /// How long ``Exporter/stop(finalPush:)`` keeps trying to deliver the final push.
    public var finalPushTimeout: Duration

    /// A configuration; every value has a default.
    public init(
        queueCapacity: Int = 8,
        backoffBase: Duration = .milliseconds(250),
        backoffCap: Duration = .seconds(10),
        finalPushTimeout: Duration = .seconds(10)
    ) {
        self.queueCapacity = max(1, queueCapacity)
        self.backoffBase = backoffBase
        self.backoffCap = backoffCap
        self.finalPushTimeout = finalPushTimeout
    }
}
