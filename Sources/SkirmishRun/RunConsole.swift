import SkirmishSwarm

/// Where a command's parts write what people and scripts read: results on stdout, notes and progress on stderr.
///
/// The executable passes its console; tests pass ``silent`` or one that records.
package struct RunConsole: Sendable {
    /// A line of results (the summary table, `listening …`), on stdout.
    package var line: @Sendable (String) -> Void
    /// A note for the person watching, on stderr.
    package var note: @Sendable (String) -> Void
    /// A progress update, with the condition to show after it (a collector failing right now) or `nil`.
    package var progress: @Sendable (SwarmProgress, _ status: String?) -> Void
    /// The run ended: the progress line gives way to the summary.
    package var progressEnd: @Sendable () -> Void

    package init(
        line: @escaping @Sendable (String) -> Void, note: @escaping @Sendable (String) -> Void,
        progress: @escaping @Sendable (SwarmProgress, String?) -> Void = { _, _ in },
        progressEnd: @escaping @Sendable () -> Void = {}
    ) {
        self.line = line
        self.note = note
        self.progress = progress
        self.progressEnd = progressEnd
    }

    /// Writes nothing.
    package static let silent = RunConsole(line: { _ in }, note: { _ in })
}
