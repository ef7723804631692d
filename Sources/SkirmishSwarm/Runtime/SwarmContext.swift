import Logging
import NIOCore
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What every group of a run shares, fixed before the first bot starts.
struct SwarmContext: Sendable {
    var personas: PersonaDeal
    var seed: UInt64
    var constantLabels: Labels
    /// The script's tag names: extra labels of every bot series (see ``MetricsShard/tagNames``).
    var tagNames: [String] = []
    /// Where bots connect by default (the `--target`, or the embedded server's UDP address).
    var target: Target
    /// Addresses of the same server on the other transports, for personas that ask for one (`transport: tcp`).
    var alternates: [Transport: Target]
    /// Each target's host resolved once, so opening a session (every match of every bot) never blocks its loop on
    /// a name lookup; a target missing here is resolved by its sessions.
    var resolved: [Target: SocketAddress] = [:]
    /// Every bot's UDP port, so that no bot inherits the tail of another's stream (see ``LocalPortPool``).
    let localPorts: LocalPortPool
    /// The protocols and behaviours the run's personas name.
    var catalogue: Catalogue = .builtIn
    /// The protocol every persona speaks.
    var protocolName = "snap"
    /// The SwiftNIO loops that carry TCP and WebSocket sessions (UDP sockets belong to the client loops).
    var streamLoops: (any EventLoopGroup)?
    /// The run's logger (with `run` and `shard`); each group adds `loop`, each persona's meters `persona`.
    var logger = Logger(label: "skirmish.swarm")
    /// The run's first desync episodes in full, for `summary.json`.
    let episodes = DesyncEpisodeLog()

    init(personas: PersonaDeal, seed: UInt64, constantLabels: Labels, target: Target, alternates: [Transport: Target]) {
        self.personas = personas
        self.seed = seed
        self.constantLabels = constantLabels
        self.target = target
        self.alternates = alternates
        // One pool for the whole process: swarms and runners side by side must not hand out the same ports.
        localPorts = .shared
        for each in [target] + alternates.values + personas.personas.compactMap(\.target) where each.transport == .udp {
            resolved[each] = try? SocketAddress.makeAddressResolvingHost(each.host, port: each.port)
        }
    }

    /// The address a persona's bots connect to: its own server when it names one, else its own transport when it
    /// names one and the server offers it.
    func target(for persona: Persona) -> Target {
        if let own = persona.target { return own }
        guard let transport = persona.transport else { return target }
        if transport == target.transport { return target }
        return alternates[transport] ?? target
    }
}
