import SkirmishGames

/// What the opponent believes about its link, for display and evaluation.
public struct LatencyEstimate: Sendable, Hashable {
    /// Smoothed round trip (EWMA, gain 1/8), seconds; 0 before the first sample.
    public var roundTrip: Double
    /// Smoothed round-trip variation (EWMA of |sample − smoothed|, gain 1/4), seconds.
    public var roundTripVariation: Double
    /// Mean extra delay of snapshots over the fastest recent one (EWMA, gain 1/16), seconds: the downstream jitter.
    public var jitter: Double
    /// Round-trip samples seen.
    public var samples: Int
}

/// Round trips from pings, and the server's tick clock mapped onto the local clock from snapshot arrivals.
///
/// The mapping: every snapshot gives `arrival − tick / 60` = (the local time of the server's tick 0) + (that
/// snapshot's one-way delay). The minimum over a sliding window of two seconds is the tick-0 time plus the fastest
/// one-way delay, which is estimated as half the smallest recent round trip; so the server's tick at local time t is
/// `(t − minimum + fastestOneWay) × 60`. A window (not an all-time minimum) follows a server that re-anchors its
/// clock, and an offset that jumps up by more than ``pauseJump`` means the match tick stopped (a paused or new match):
/// the mapping restarts from it.
struct LatencyEstimator: Sendable {
    private(set) var smoothedRTT = 0.0
    private(set) var rttVariation = 0.0
    private(set) var samples = 0
    private(set) var jitter = 0.0
    private var rttWindow = WindowMinimum(length: 10)
    private var offsetWindow = WindowMinimum(length: 2)

    /// An offset this far above the window's minimum means the tick clock stopped: restart the mapping.
    static let pauseJump = 0.4

    mutating func observeRoundTrip(_ rtt: Double, at time: Double) {
        guard rtt.isFinite, rtt >= 0, rtt < 10 else { return }
        if samples == 0 {
            smoothedRTT = rtt
            rttVariation = rtt / 2
        } else {
            rttVariation += (abs(smoothedRTT - rtt) - rttVariation) / 4
            smoothedRTT += (rtt - smoothedRTT) / 8
        }
        samples += 1
        rttWindow.add(rtt, at: time)
    }

    mutating func observeSnapshot(tick: UInt32, at time: Double) {
        let offset = time - Double(tick) / Double(PuckConstants.tickRate)
        if let base = offsetWindow.minimum, offset - base > Self.pauseJump || base - offset > 10 {
            offsetWindow.reset()
        }
        offsetWindow.add(offset, at: time)
        if let base = offsetWindow.minimum { jitter += (offset - base - jitter) / 16 }
    }

    /// Whether a snapshot has been seen (the tick mapping exists).
    var isMapped: Bool { offsetWindow.minimum != nil }

    /// Half the smallest recent round trip: the fastest one-way delay; 0 before any sample.
    var fastestOneWay: Double { (rttWindow.minimum ?? 0) / 2 }

    /// The mean one-way delay of an input on its way to the server: half the smoothed round trip.
    var meanOneWay: Double { smoothedRTT / 2 }

    /// The server's tick (fractional) at local time `time`; `nil` before the first snapshot.
    func serverTick(at time: Double) -> Double? {
        guard let base = offsetWindow.minimum else { return nil }
        return (time - base + fastestOneWay) * Double(PuckConstants.tickRate)
    }

    var estimate: LatencyEstimate {
        LatencyEstimate(roundTrip: smoothedRTT, roundTripVariation: rttVariation, jitter: jitter, samples: samples)
    }
}

/// The minimum of the samples of the last one to two window lengths (two buckets), in O(1) per sample.
struct WindowMinimum: Sendable {
    let length: Double
    private var current = Double.infinity
    private var previous = Double.infinity
    private var started = -Double.infinity

    init(length: Double) {
        self.length = length
    }

    mutating func add(_ value: Double, at time: Double) {
        if time - started >= length {
            previous = time - started >= 2 * length ? .infinity : current
            current = .infinity
            started = time
        }
        current = min(current, value)
    }

    mutating func reset() {
        current = .infinity
        previous = .infinity
        started = -Double.infinity
    }

    var minimum: Double? {
        let value = min(current, previous)
        return value.isFinite ? value : nil
    }
}
