/// ENet's round-trip estimate and packet throttle, in libenet's own integer milliseconds.
///
/// Every acknowledgement carries back the sent time of the datagram that held the acknowledged command, and gives
/// one sample; the estimate moves an eighth of the way toward it and the variance a quarter (protocol.c,
/// `enet_protocol_handle_acknowledge`). The lowest estimate and highest variance over each throttle interval decide
/// whether the next samples speed the packet throttle up or slow it down (peer.c, `enet_peer_throttle`). Keeping
/// libenet's truncating arithmetic is deliberate: the estimate the metrics report and the resend timeouts it drives
/// are the ones a libenet peer on the same link would have.
struct RoundTripEstimate: Sendable, Hashable {
    /// The mean round trip (`roundTripTime`), milliseconds.
    var roundTripTime = ProtocolLimits.defaultRoundTripTime
    /// Its mean deviation (`roundTripTimeVariance`), milliseconds.
    var roundTripTimeVariance: UInt32 = 0
    var lowestRoundTripTime = ProtocolLimits.defaultRoundTripTime
    var highestRoundTripTimeVariance: UInt32 = 0
    var lastRoundTripTime = ProtocolLimits.defaultRoundTripTime
    var lastRoundTripTimeVariance: UInt32 = 0
    /// The share of unreliable packets let through, out of ``ProtocolLimits/packetThrottleScale``.
    var packetThrottle = ProtocolLimits.defaultPacketThrottle
    /// The most ``packetThrottle`` may reach, lowered by the bandwidth throttle.
    var packetThrottleLimit = ProtocolLimits.packetThrottleScale
    /// When the current throttle interval began; `nil` before the first sample.
    var packetThrottleEpoch: UInt32?
    var packetThrottleInterval = ProtocolLimits.packetThrottleInterval
    var packetThrottleAcceleration = ProtocolLimits.packetThrottleAcceleration
    var packetThrottleDeceleration = ProtocolLimits.packetThrottleDeceleration

    /// The resend timeout of a command sent now: the estimate plus four deviations.
    var retransmissionTimeout: UInt32 { roundTripTime &+ 4 &* roundTripTimeVariance }

    /// Takes one sample of `roundTrip` milliseconds at `serviceTime`; `first` when no acknowledgement came before.
    /// Returns whether the packet throttle changed.
    mutating func sample(_ roundTrip: UInt32, at serviceTime: UInt32, first: Bool) -> Bool {
        let throttle = packetThrottle
        if first {
            roundTripTime = roundTrip
            roundTripTimeVariance = (roundTrip &+ 1) / 2
        } else {
            adjustThrottle(roundTrip)
            roundTripTimeVariance -= roundTripTimeVariance / 4
            if roundTrip >= roundTripTime {
                let difference = roundTrip - roundTripTime
                roundTripTimeVariance &+= difference / 4
                roundTripTime &+= difference / 8
            } else {
                let difference = roundTripTime - roundTrip
                roundTripTimeVariance &+= difference / 4
                roundTripTime -= difference / 8
            }
        }
        lowestRoundTripTime = min(lowestRoundTripTime, roundTripTime)
        highestRoundTripTimeVariance = max(highestRoundTripTimeVariance, roundTripTimeVariance)
        if packetThrottleEpoch == nil
            || ServiceTime.difference(serviceTime, packetThrottleEpoch!) >= packetThrottleInterval
        {
            lastRoundTripTime = lowestRoundTripTime
            lastRoundTripTimeVariance = max(highestRoundTripTimeVariance, 1)
            lowestRoundTripTime = roundTripTime
            highestRoundTripTimeVariance = roundTripTimeVariance
            packetThrottleEpoch = serviceTime
        }
        return packetThrottle != throttle
    }

    /// `enet_peer_throttle`: open the throttle when round trips are at their interval's best, close it when they
    /// run two deviations above.
    private mutating func adjustThrottle(_ roundTrip: UInt32) {
        if lastRoundTripTime <= lastRoundTripTimeVariance {
            packetThrottle = packetThrottleLimit
        } else if roundTrip <= lastRoundTripTime {
            packetThrottle = min(packetThrottle &+ packetThrottleAcceleration, packetThrottleLimit)
        } else if roundTrip > lastRoundTripTime &+ 2 &* lastRoundTripTimeVariance {
            packetThrottle =
                packetThrottle > packetThrottleDeceleration ? packetThrottle - packetThrottleDeceleration : 0
        }
    }
}
