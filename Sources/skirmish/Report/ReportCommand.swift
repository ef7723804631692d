import ArgumentParser
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
        let decoded = try SummaryFile.load(summary)
        let path: String
        do {
            path = try RunOutput.writeReport(decoded, to: RunOutput.reportFolder(summaryPath: summary, out: out))
        } catch {
            Console.note(String(describing: error))
            throw ExitCode(2)
        }
        if decoded.timeline == nil {
            Console.note("\(summary) has no timeline (written by an older version): the report has no charts")
        }
        Console.line("report: \(path)")
    }
}
