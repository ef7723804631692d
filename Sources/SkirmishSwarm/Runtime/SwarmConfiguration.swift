import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// Everything a swarm run is told before it starts.
public struct SwarmConfiguration: Sendable {
    /// The loaded script: its personas, profile and thresholds.
    public var script: Script
    /// When bots come and go: the script's profile after the command-line overrides, sliced to this shard.
    public var plan: LoadPlan
    /// Where bots connect (the `--target`, or the embedded server).
    public var target: Target
    /// The same server on its other transports, for personas with `transport:`.
    public var alternates: [Transport: Target] = [:]
    /// Seeds every bot, persona deal and emulated link: the same seed replays the same run.
    public var seed: UInt64
    /// Labels every series of this run: `run` and `shard`.
    public var runID: String
    /// Client I/O threads the bots are spread over (one per core by default); each owns its bots' UDP sockets.
    public var loops: Int
    /// The protocols and behaviours the script may name: the built-in ones unless the program adds its own (load the
    /// script with the same catalogue's ``Catalogue/scriptLoader``).
    public var catalogue: Catalogue = .builtIn

    /// A configuration with the built-in behaviours, no alternate transports and one client loop per core.
    public init(
        script: Script, plan: LoadPlan, target: Target, seed: UInt64, runID: String,
        loops: Int = System.coreCount
    ) {
        self.script = script
        self.plan = plan
        self.target = target
        self.seed = seed
        self.runID = runID
        self.loops = loops
    }

    var constantLabels: Labels { Labels(["run": runID, "shard": plan.shard.description]) }
}
