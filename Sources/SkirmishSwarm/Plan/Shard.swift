import Foundation

/// This process's slice of a run split across machines: shard `index` of `count` (`--shard i/n`).
///
/// Defaults come from a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`, set by Kubernetes, and `JOB_COMPLETIONS`,
/// set by the manifest), so N copies of the same Job each take their slice with no coordinator; the collector adds
/// them up (`sum by`).
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// This process's shard, 0-based: 0 ≤ `index` < `count`.
    public var index: Int
    /// How many processes share the run (1 to 100,000).
    public var count: Int

    /// The whole run in one process (`0/1`).
    public static let whole = Shard(index: 0, count: 1)

    /// Shard `index` of `count`; the caller keeps 0 ≤ `index` < `count`.
    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `i/n` with 0 ≤ i < n.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, count <= 100_000,
            (0..<count).contains(index)
        else { return nil }
        self.init(index: index, count: count)
    }

    /// Environment variables that name no valid shard.
    public struct EnvironmentError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The environment variables and what is wrong with them.
        public var description: String
    }

    /// The shard named by the environment of a Kubernetes Indexed Job, or `nil` outside one.
    ///
    /// - Throws: ``EnvironmentError`` when `JOB_COMPLETION_INDEX` is set but the pair names no shard, rather than
    ///   silently running every bot in every copy of the Job.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(EnvironmentError) -> Shard? {
        guard let indexText = environment["JOB_COMPLETION_INDEX"] else { return nil }
        // Kubernetes sets only the index; the count comes from the manifest. Guessing 1 would let pod 0 take every
        // bot while the others exit, so a missing count is an error.
        guard let countText = environment["JOB_COMPLETIONS"] else {
            throw EnvironmentError(
                description: "JOB_COMPLETION_INDEX=\(indexText) is set but JOB_COMPLETIONS is not: Kubernetes sets "
                    + "only the index, so the Job's manifest must pass its completions as JOB_COMPLETIONS (as "
                    + "deploy/skirmish-job.yaml does), or pass --shard i/n.")
        }
        guard Int(countText) != nil else {
            throw EnvironmentError(
                description: "JOB_COMPLETIONS=\"\(countText)\" is not a number: it must hold the Job's completions. "
                    + "Apply deploy/ with `kubectl apply -k deploy/`, which copies them into it, or pass --shard i/n.")
        }
        guard let index = Int(indexText), let count = Int(countText), count >= 1, count <= 100_000,
            (0..<count).contains(index)
        else {
            throw EnvironmentError(
                description: "JOB_COMPLETION_INDEX=\(indexText) and JOB_COMPLETIONS=\(countText) name no shard: the "
                    + "index must be a whole number from 0 to the count less one. Fix the Job's completions, or pass "
                    + "--shard i/n to override the environment.")
        }
        return Shard(index: index, count: count)
    }

    /// How many of `total` bots (numbered 0..<total across all shards, dealt round-robin) belong to this shard.
    public func share(of total: Int) -> Int {
        guard total > index else { return 0 }
        return (total - index - 1) / count + 1
    }

    /// The `shard` label value: the index alone (`"2"`). A `/` would break the Grafana variable regexes (InfluxQL's
    /// `/^$shard$/` ends at it) and needs escaping in a Pushgateway path; the count is the same for every series.
    public var description: String { "\(index)" }

    /// `i/n`, for people (notes, the summary's settings).
    public var fraction: String { "\(index)/\(count)" }
}
