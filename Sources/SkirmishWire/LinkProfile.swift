/// A bad network to emulate on the client side, seeded: latency ± jitter, loss, duplication and reordering.
///
/// Applied to each direction separately, so a 50 ms profile adds about 100 ms to a round trip. Emulation runs in the
/// client's process and needs no root, unlike `tc netem`. Scripts write it as a persona's `link:`; SkirmishNet's
/// `LinkEmulator` applies it.
public struct LinkProfile: Sendable, Hashable {
    /// One-way delay added to every packet.
    public var latency: Duration
    /// Uniform spread around the latency (±jitter).
    public var jitter: Duration
    /// Probability a packet is dropped.
    public var loss: Double
    /// Probability a packet is delivered twice.
    public var duplicate: Double
    /// Probability a packet is held back by an extra latency, so later packets overtake it.
    public var reorder: Double

    /// A profile; every default is zero, so `LinkProfile()` is ``perfect``.
    public init(
        latency: Duration = .zero, jitter: Duration = .zero, loss: Double = 0, duplicate: Double = 0,
        reorder: Double = 0
    ) {
        self.latency = latency
        self.jitter = jitter
        self.loss = loss
        self.duplicate = duplicate
        self.reorder = reorder
    }

    /// No emulation: packets go straight to the socket.
    public static let perfect = LinkProfile()

    /// Whether the profile changes nothing; a session on a perfect link sends straight to its socket.
    public var isPerfect: Bool { self == .perfect }
}
