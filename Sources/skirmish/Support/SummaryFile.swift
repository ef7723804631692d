import ArgumentParser
import SkirmishSwarm

/// Reads a run's `summary.json`, turning every problem into one clear line and exit status 2.
enum SummaryFile {
    /// The summary at `path`; `role` names it in errors ("baseline", "summary").
    static func load(_ path: String, role: String = "summary") throws -> RunSummary {
        do {
            return try RunSummary.load(path: path, role: role)
        } catch {
            Console.note(error.description)
            throw ExitCode(2)
        }
    }
}
