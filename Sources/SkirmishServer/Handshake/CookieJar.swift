import SkirmishWire

/// Issues and checks the handshake's stateless cookies.
///
/// A cookie is `(epoch, MAC(key, address ‖ epoch))`: the epoch is the time in 10-second buckets, counted from a
/// random point drawn at start-up (so it tells nobody how long the host has been up), and the MAC is SipHash-2-4
/// under a secret drawn at start-up. Checking one needs no state, so a flood of `Hello`s from spoofed
/// addresses allocates nothing: only a client that can receive at its address learns a valid cookie. A cookie is
/// accepted for 20–30 seconds (its own epoch and the two before).
package struct CookieJar: Sendable {
    /// Length of one epoch, in nanoseconds of the server's clock.
    package static let epochLength: UInt64 = 10_000_000_000
    /// Epochs accepted before the current one.
    package static let acceptedAge: UInt64 = 2

    private let key0: UInt64
    private let key1: UInt64
    /// Added to the monotonic clock (uptime) before it is cut into epochs: the epoch on the wire is opaque.
    private let offset: UInt64

    /// A jar with a fresh random secret and clock offset.
    package init() {
        var generator = SystemRandomNumberGenerator()
        // Below 2⁶², so that offset + uptime never wraps.
        self.init(key0: generator.next(), key1: generator.next(), offset: generator.next() >> 2)
    }

    /// A jar with a given secret and clock offset (tests; several server processes sharing cookies).
    package init(key0: UInt64, key1: UInt64, offset: UInt64 = 0) {
        self.key0 = key0
        self.key1 = key1
        self.offset = offset
    }

    /// The cookie for `address` (its bytes: IP and port) at `now` (nanoseconds on a monotonic clock).
    package func cookie(for address: some Sequence<UInt8>, now: UInt64) -> Cookie {
        let epoch = (now &+ offset) / Self.epochLength
        return Cookie(high: epoch, low: mac(address, epoch: epoch))
    }

    /// Whether `cookie` was issued by this jar for `address` recently enough.
    package func isValid(_ cookie: Cookie, for address: some Sequence<UInt8>, now: UInt64) -> Bool {
        let current = (now &+ offset) / Self.epochLength
        guard cookie.high <= current, current - cookie.high <= Self.acceptedAge else { return false }
        return mac(address, epoch: cookie.high) == cookie.low
    }

    private func mac(_ address: some Sequence<UInt8>, epoch: UInt64) -> UInt64 {
        var hash = SipHash(key0: key0, key1: key1)
        hash.combine(address)
        hash.combine(epoch)
        return hash.finalize()
    }
}
