import ArgumentParser
import Foundation
import SkirmishSwarm

/// `skirmish report summary.json`: rebuilds a run's `report.html` from its `summary.json`.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Rebuild a run's self-contained HTML report from its summary.json.",
        discussion: """
            Every swarm and soak run writes summary.json (with the run's timeline) and report.html into its \
            results folder. Use this to regenerate the page after an upgrade, or from a summary copied off a CI \
            machine or a soak checkpoint of a run that was killed:

              skirmish report skirmish-out/quickstart-20261124-101500/summary.json
              skirmish report nightly/summary.json --out /tmp/nightly-report

            The page needs no network: open it in any browser.
            """
    )

    @Argument(help: ArgumentHelp("The summary.json a swarm or soak run wrote.", valueName: "summary.json"))
    var summary: String

    @Option(help: ArgumentHelp("Folder to write report.html into (default: the summary's folder).", valueName: "dir"))
    var out: String?

    func run() throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: summary))
        } catch {
            Console.note(
                "cannot read \(summary): \(error.localizedDescription). Pass the summary.json from a results folder "
                    + "(skirmish-out/<run id>/summary.json by default).")
            throw ExitCode(2)
        }
        let decoded: RunSummary
        do {
            decoded = try JSONDecoder().decode(RunSummary.self, from: data)
        } catch {
            Console.note(
                "\(summary) is not a Skirmish run summary (\(Self.describe(error))). It must be the summary.json "
                    + "written by `skirmish swarm` or `skirmish soak`.")
            throw ExitCode(2)
        }
        let directory = out ?? URL(fileURLWithPath: summary).deletingLastPathComponent().path
        let path: String
        do {
            path = try RunOutput.writeReport(decoded, to: directory.isEmpty ? "." : directory)
        } catch {
            Console.note(String(describing: error))
            throw ExitCode(2)
        }
        if decoded.timeline == nil {
            Console.note("\(summary) has no timeline (written by an older version): the report has no charts")
        }
        Console.line("report: \(path)")
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
