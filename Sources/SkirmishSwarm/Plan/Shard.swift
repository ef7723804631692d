import Foundation

/// This process's slice of a run split across machines: shard `index` of `count` (`--shard i/n`).
///
/// Defaults come from a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`, `JOB_COMPLETIONS`), so N copies of the same
/// Job each take their slice with no coordinator; the collector adds them up (`sum by`).
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public static let whole = Shard(index: 0, count: 1)

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

    /// The shard named by the environment of a Kubernetes Indexed Job, or `nil` outside one.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Shard?
    {
        guard let index = environment["JOB_COMPLETION_INDEX"].flatMap({ Int($0) }) else { return nil }
        let count = environment["JOB_COMPLETIONS"].flatMap { Int($0) } ?? 1
        guard count >= 1, (0..<count).contains(index) else { return nil }
        return Shard(index: index, count: count)
    }

    /// How many of `total` bots (numbered 0..<total across all shards, dealt round-robin) belong to this shard.
    public func share(of total: Int) -> Int {
        guard total > index else { return 0 }
        return (total - index - 1) / count + 1
    }

    public var description: String { "\(index)/\(count)" }
}
