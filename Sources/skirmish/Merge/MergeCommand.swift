import ArgumentParser
import Foundation
import SkirmishRun
import SkirmishScript
import SkirmishSwarm

/// `skirmish merge FOLDER…`: one summary, report and verdict for a run split over several processes.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Build one summary.json, report.html and verdict from the shards of a distributed run.",
        discussion: """
            A run split with --shard i/n (or a Kubernetes Indexed Job) leaves one results folder per shard, each \
            judged on its own bots. merge adds the shards' series up — counters summed, histograms merged from \
            their HDR counts, so every percentile (per persona, game and tag too) is the one a single process \
            holding every bot would report — and judges the script's thresholds on the whole run. Windowed \
            thresholds keep each shard's windows (a window fails the run when it failed in any shard), and the \
            timeline's percentile lines show the slowest shard's.

            Give the shards' folders, or the folder holding them (a run's /results/<run>/ in the Kubernetes \
            manifest). Shards of different runs, scripts or variables, a shard given twice, a missing shard and a \
            soak shard still running are refused (exit 2). The merged folder holds summary.json, report.html, \
            metrics.om, metrics.json and script.yaml, like a run's; its `shard` reads `all of n`.

            Exit status: 0 when every threshold held over the whole run, 99 when one failed, 2 for bad input.

            Examples:
              skirmish swarm bots/puck-ladder.yaml --shard 0/2 --run-id ladder-1 --out out/ladder-1/0 --target …
              skirmish swarm bots/puck-ladder.yaml --shard 1/2 --run-id ladder-1 --out out/ladder-1/1 --target …
              skirmish merge out/ladder-1                 writes out/ladder-1/merged
              skirmish merge out/ladder-1/0 out/ladder-1/1 --out ladder-1-report
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The shards' results folders, or the folder that holds one folder per shard.", valueName: "folder"))
    var folders: [String]

    @Option(
        help: ArgumentHelp(
            "Where to write the merged results (default: merged/ beside the shards' folders).", valueName: "dir"))
    var out: String?

    @Flag(help: "Merge the shards there are when some are missing; the summary names them and the run fails.")
    var allowMissing = false

    @Flag(help: "Replace what --out holds even when it is another run's results.")
    var overwrite = false

    @Option(
        name: .customLong("env"),
        help: ArgumentHelp(
            "A value for ${KEY} in the shards' script, as they had it (repeatable); it wins over the environment.",
            discussion: """
                Runs write which variables their script read and a digest of the values, never the values (a \
                script may read a secret): give each again, here or in the environment, and the merge checks it \
                reads them as the shards did.
                """,
            valueName: "KEY=VALUE"),
        transform: ScriptVariable.parse)
    var variables: [ScriptVariable] = []

    func run() throws {
        let merge: RunMerge
        let shardFolders: [String]
        do {
            shardFolders = try RunMerge.folders(in: folders)
            var loader = Catalogue.standard.scriptLoader
            loader.environment = ScriptVariable.environment(loader.environment, adding: variables)
            merge = try RunMerge(folders: shardFolders, loader: loader, allowMissing: allowMissing)
        } catch {
            Console.note("merge: \(error)")
            throw ExitCode(2)
        }
        let directory = out ?? Self.defaultOut(folders: folders, shards: shardFolders)
        let (summary, snapshot) = merge.merged()
        if !overwrite, FileManager.default.fileExists(atPath: directory + "/summary.json") {
            // Merging one run again replaces its merge; anything else in the folder is someone's results.
            let earlier = try? RunSummary.load(path: directory + "/summary.json", role: "earlier")
            if earlier?.run != summary.run || earlier?.shards == nil {
                let held =
                    earlier.map { $0.shards == nil ? "a shard's or a run's results" : "the merge of run \($0.run)" }
                    ?? "a summary.json that does not read"
                Console.note("merge: --out \(directory) already holds \(held): give another folder, or --overwrite")
                throw ExitCode(2)
            }
        }
        let written: [String]
        do {
            written = try RunOutput.write(
                summary: summary, snapshot: snapshot, script: merge.script.text, to: directory)
        } catch {
            Console.note("merge: \(error)")
            throw ExitCode(2)
        }
        Console.line(summary.table())
        Console.line("results: \(written.joined(separator: ", "))")
        if !merge.missing.isEmpty {
            Console.note(
                "merge: shards \(merge.missing.map(String.init).joined(separator: ", ")) of run \(summary.run) are "
                    + "missing: the figures cover the others, and the run does not pass")
        }
        if !summary.passed { throw ExitCode(99) }
    }

    /// `merged/` in the folder holding the shards: the one folder given when it held them, else the first shard's
    /// parent.
    static func defaultOut(folders: [String], shards: [String]) -> String {
        if folders.count == 1, !FileManager.default.fileExists(atPath: folders[0] + "/summary.json") {
            return folders[0] + "/" + RunMerge.mergedFolder
        }
        let parent = URL(fileURLWithPath: shards[0]).deletingLastPathComponent().path
        return parent + "/" + RunMerge.mergedFolder
    }
}
