import SkirmishTelemetry

/// Absent or 0: whether the personas read have any series of a family, and their figures only when they do.
extension SnapshotReader {
    /// Whether any persona read (the legitimate ones, or all) has a series of `family` matching `filter`.
    func has(_ family: MetricFamily, where filter: [String: String] = [:]) -> Bool {
        let filter = scope.merging(filter) { $1 }
        guard let personas else { return !snapshot.series(of: family, where: filter).isEmpty }
        return personas.contains { persona in
            !snapshot.series(of: family, where: filter.merging(["persona": persona]) { $1 }).isEmpty
        }
    }

    /// Whether the personas read measured `figure` at all.
    func measures(_ figure: RunFigure, where filter: [String: String] = [:]) -> Bool {
        figure.families.contains { has($0, where: filter) }
    }

    /// A counter's total, or `nil` when `figure` was not measured (no series, rather than a series at 0).
    func total(
        _ family: MetricFamily, of figure: RunFigure, where filter: [String: String] = [:]
    ) -> UInt64? {
        measures(figure, where: filter) ? total(family, where: filter) : nil
    }

    /// A distribution's percentiles, or `nil` when it has no series (not measured, rather than measured empty).
    func measuredPercentiles(_ family: MetricFamily, where filter: [String: String] = [:]) -> RunSummary.Percentiles? {
        has(family, where: filter) ? percentiles(family, where: filter) : nil
    }

    /// The figures whose series exist for the personas read, in ``RunFigure`` order.
    func figures(where filter: [String: String] = [:]) -> [String] {
        RunFigure.allCases.filter { measures($0, where: filter) }.map(\.rawValue)
    }
}
