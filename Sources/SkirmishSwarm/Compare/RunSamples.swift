import SkirmishScript
import SkirmishTelemetry

/// A run cut into consecutive blocks of time, with each persona's figures per block: what `skirmish compare`
/// resamples to tell a real difference between two runs from the noise inside each.
///
/// Samples inside one second of a run are not independent (a stall delays every bot at once), so the comparison
/// resamples whole blocks (a block bootstrap), never single samples. A block's distributions are the HDR values
/// recorded in it, exact to the histogram's precision; adding every block gives the run's whole distribution. At
/// most ``capacity`` blocks are kept: past it, neighbouring blocks merge and later blocks grow to match, so a
/// day-long soak writes as much as a one-minute run.
public struct RunSamples: Sendable, Codable, Equatable {
    /// One persona's figures in one block.
    public struct Figures: Sendable, Codable, Equatable {
        /// Round trips recorded in the block, in seconds; `nil` when there were none.
        public var rtt: SparseDistribution?
        /// Snapshot ages recorded in the block, in seconds; `nil` when there were none.
        public var snapshotAge: SparseDistribution?
        /// Tick lateness recorded in the block, in seconds; `nil` when there were none.
        public var tickLateness: SparseDistribution?
        /// Packets sent plus received.
        public var packets: UInt64 = 0
        /// Errors of every kind in the block.
        public var errors: UInt64 = 0
        /// Desync episodes in the block.
        public var desyncs: UInt64 = 0
        /// Mispredictions (puck more than 2 pixels from its prediction) in the block.
        public var mispredictions: UInt64 = 0
        /// Predictions judged in the block (the denominator of the misprediction rate); `nil` in summaries written
        /// before 0.22.
        public var predictions: UInt64? = nil
        /// Matches completed in the block.
        public var matchesCompleted: UInt64 = 0
        /// Replies that failed a check in the block.
        public var checksFailed: UInt64 = 0
        /// Connected bots times seconds: the exposure counts are normalised by.
        public var botSeconds: Double = 0

        mutating func add(_ other: Figures) {
            rtt = Self.sum(rtt, other.rtt)
            snapshotAge = Self.sum(snapshotAge, other.snapshotAge)
            tickLateness = Self.sum(tickLateness, other.tickLateness)
            packets &+= other.packets
            errors &+= other.errors
            desyncs &+= other.desyncs
            mispredictions &+= other.mispredictions
            if predictions != nil || other.predictions != nil {
                predictions = (predictions ?? 0) &+ (other.predictions ?? 0)
            }
            matchesCompleted &+= other.matchesCompleted
            checksFailed &+= other.checksFailed
            botSeconds += other.botSeconds
        }

        private static func sum(_ a: SparseDistribution?, _ b: SparseDistribution?) -> SparseDistribution? {
            guard var a else { return b }
            if let b { a.add(b) }
            return a
        }
    }

    /// A stretch of the run.
    public struct Block: Sendable, Codable, Equatable {
        /// Its length in seconds.
        public var seconds: Double
        /// Figures by persona name (legitimate personas only).
        public var personas: [String: Figures]

        mutating func add(_ other: Block) {
            seconds += other.seconds
            for (name, figures) in other.personas { personas[name, default: Figures()].add(figures) }
        }
    }

    /// The blocks, oldest first.
    public private(set) var blocks: [Block] = []
    /// The most blocks kept.
    public let capacity: Int
    /// The length a block is filled to before the next starts (doubles each time the blocks merge).
    public private(set) var blockSeconds: Double = 1

    private var pending: Block?
    private var previous: [String: Figures] = [:]
    private var previousSeconds: Double = 0

    private enum CodingKeys: String, CodingKey {
        case blocks, capacity, blockSeconds
    }

    /// An empty record keeping at most `capacity` blocks (at least 8).
    public init(capacity: Int = 64) {
        self.capacity = max(8, capacity)
    }

    /// Adds the stretch since the previous snapshot, from the merged snapshot taken `seconds` into the run, for
    /// the personas in `personas`.
    public mutating func record(_ snapshot: MetricsSnapshot, at seconds: Double, personas: [String]) {
        let length = seconds - previousSeconds
        guard length > 0 else { return }
        var block = Block(seconds: length, personas: [:])
        for persona in personas {
            let current = Self.cumulative(snapshot, persona: persona)
            block.personas[persona] = Self.step(from: previous[persona] ?? Figures(), to: current, seconds: length)
            previous[persona] = current
        }
        previousSeconds = seconds
        if pending == nil { pending = block } else { pending!.add(block) }
        if pending!.seconds >= blockSeconds * 0.95 { closePending() }
    }

    /// Closes the block being filled (at the end of the run).
    public mutating func finish() {
        if pending != nil { closePending() }
    }

    /// Every block added up: the whole run, by persona.
    public var total: [String: Figures] {
        var sum: [String: Figures] = [:]
        for block in blocks {
            for (name, figures) in block.personas { sum[name, default: Figures()].add(figures) }
        }
        return sum
    }

    private mutating func closePending() {
        blocks.append(pending!)
        pending = nil
        guard blocks.count >= capacity else { return }
        var merged: [Block] = []
        var index = 0
        while index < blocks.count {
            var block = blocks[index]
            if index + 1 < blocks.count { block.add(blocks[index + 1]) }
            merged.append(block)
            index += 2
        }
        blocks = merged
        blockSeconds *= 2
    }

    /// The record of a run whose shards each kept their own: each shard's blocks added into a grid of the coarsest
    /// shard's block length, by where each block starts. Every figure adds up exactly (distributions are counts);
    /// only where a block falls moves, by less than one grid block, when the shards' blocks differ in length.
    static func merging(_ shards: [RunSamples]) -> RunSamples? {
        guard let grid = shards.max(by: { $0.blockSeconds < $1.blockSeconds }) else { return nil }
        var merged = RunSamples(capacity: shards.map(\.capacity).max() ?? grid.capacity)
        merged.blockSeconds = grid.blockSeconds
        var blocks: [Block] = []
        for shard in shards {
            var start = 0.0
            var lengths: [Int: Double] = [:]
            for block in shard.blocks {
                let slot = min(Int(start / grid.blockSeconds + 1e-9), merged.capacity - 1)
                while blocks.count <= slot { blocks.append(Block(seconds: 0, personas: [:])) }
                for (name, figures) in block.personas { blocks[slot].personas[name, default: Figures()].add(figures) }
                lengths[slot, default: 0] += block.seconds
                start += block.seconds
            }
            // A grid block lasts as long as the longest shard's stretch in it (the shards ran side by side).
            for (slot, length) in lengths { blocks[slot].seconds = max(blocks[slot].seconds, length) }
        }
        merged.blocks = blocks
        return merged
    }

    /// What happened between two cumulative readings `seconds` apart (``cumulative(_:persona:)``'s).
    static func step(from before: Figures, to current: Figures, seconds length: Double) -> Figures {
        var step = Figures()
        step.rtt = difference(current.rtt, before.rtt)
        step.snapshotAge = difference(current.snapshotAge, before.snapshotAge)
        step.tickLateness = difference(current.tickLateness, before.tickLateness)
        step.packets = current.packets - min(current.packets, before.packets)
        step.errors = current.errors - min(current.errors, before.errors)
        step.desyncs = current.desyncs - min(current.desyncs, before.desyncs)
        step.mispredictions = current.mispredictions - min(current.mispredictions, before.mispredictions)
        step.predictions = (current.predictions ?? 0) - min(current.predictions ?? 0, before.predictions ?? 0)
        step.matchesCompleted = current.matchesCompleted - min(current.matchesCompleted, before.matchesCompleted)
        step.checksFailed = current.checksFailed - min(current.checksFailed, before.checksFailed)
        // Bots connected at both ends of the stretch, averaged: the last stretch ends after the bots stopped.
        step.botSeconds = (current.botSeconds + before.botSeconds) / 2 * length
        return step
    }

    /// A persona's cumulative figures in a snapshot; `botSeconds` holds the bots connected now.
    static func cumulative(_ snapshot: MetricsSnapshot, persona: String) -> Figures {
        let only = ["persona": persona]
        var figures = Figures()
        figures.rtt = snapshot.histogram(SkirmishMetrics.rtt, where: only).map(SparseDistribution.init)
        figures.snapshotAge = snapshot.histogram(SkirmishMetrics.snapshotAge, where: only).map(SparseDistribution.init)
        figures.tickLateness = snapshot.histogram(SkirmishMetrics.tickLateness, where: only).map(
            SparseDistribution.init)
        figures.packets =
            snapshot.counterTotal(SkirmishMetrics.packetsSent, where: only)
            &+ snapshot.counterTotal(SkirmishMetrics.packetsReceived, where: only)
        figures.errors = snapshot.counterTotal(SkirmishMetrics.errors, where: only)
        figures.desyncs = snapshot.counterTotal(SkirmishMetrics.desyncs, where: only)
        figures.mispredictions = snapshot.counterTotal(SkirmishMetrics.mispredictions, where: only)
        figures.predictions = snapshot.histogram(SkirmishMetrics.predictionError, where: only)?.count ?? 0
        figures.matchesCompleted = snapshot.counterTotal(SkirmishMetrics.matchesCompleted, where: only)
        figures.checksFailed = snapshot.counterTotal(SkirmishMetrics.checksFailed, where: only)
        figures.botSeconds = max(0, snapshot.gaugeTotal(SkirmishMetrics.botsConnected, where: only))
        return figures
    }

    private static func difference(_ current: SparseDistribution?, _ before: SparseDistribution?) -> SparseDistribution?
    {
        guard let current else { return nil }
        guard let before else { return current.isEmpty ? nil : current }
        let step = current.subtracting(before)
        return step.isEmpty ? nil : step
    }
}
