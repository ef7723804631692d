/// ENet's clock arithmetic on 32-bit milliseconds (enet/time.h): comparisons and differences that stay right when
/// the clock wraps, because a difference of `ENET_TIME_OVERFLOW` or more is read as the other order.
///
/// The connection keeps every ENet timer in this unit, as libenet does, so that its round-trip estimate, resend
/// timeouts and throttle follow libenet's integer arithmetic step for step.
enum ServiceTime {
    /// `ENET_TIME_LESS(a, b)`.
    @inline(__always)
    static func less(_ a: UInt32, _ b: UInt32) -> Bool { a &- b >= ProtocolLimits.timeOverflow }

    /// `ENET_TIME_GREATER_EQUAL(a, b)`.
    @inline(__always)
    static func greaterOrEqual(_ a: UInt32, _ b: UInt32) -> Bool { !less(a, b) }

    /// `ENET_TIME_DIFFERENCE(a, b)`.
    @inline(__always)
    static func difference(_ a: UInt32, _ b: UInt32) -> UInt32 {
        a &- b >= ProtocolLimits.timeOverflow ? b &- a : a &- b
    }
}
