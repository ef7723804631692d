import ArgumentParser
import Foundation
import SkirmishSwarm

/// Reads a run's `summary.json`, turning every problem into one clear line and exit status 2.
enum SummaryFile {
    /// The summary at `path`; `role` names it in errors ("baseline", "summary").
    static func load(_ path: String, role: String = "summary") throws -> RunSummary {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            Console.note(
                "cannot read the \(role) \(path): \(error.localizedDescription). Pass the summary.json from a results "
                    + "folder (skirmish-out/<run id>/summary.json by default).")
            throw ExitCode(2)
        }
        do {
            return try JSONDecoder().decode(RunSummary.self, from: data)
        } catch {
            Console.note(
                "\(path) is not a Skirmish run summary (\(describe(error))). It must be the summary.json written by "
                    + "`skirmish swarm` or `skirmish soak`.")
            throw ExitCode(2)
        }
    }

    /// A decoding error as one short phrase that names the field.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field \(path(context.codingPath + [key]))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected value at \(path(context.codingPath))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "bad value at \(path(context.codingPath))"
        @unknown default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
