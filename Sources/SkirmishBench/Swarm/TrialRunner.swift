import Foundation
import SkirmishNet
import SkirmishSwarm
import SkirmishTelemetry

/// Runs trials one after another against one server.
package struct TrialRunner {
    package let server: BenchServer
    package let folder: URL
    package let botCore: Int
    package let realtime: Bool

    package init(server: BenchServer, folder: URL, botCore: Int, realtime: Bool) {
        self.server = server
        self.folder = folder
        self.botCore = botCore
        self.realtime = realtime
    }

    package func run(_ kind: Trial.Kind, bots: Int, hold: Int) async throws -> Trial {
        let ramp = max(3, (bots + 999) / 1_000)
        let persona =
            switch kind {
            case .sustained, .baseline:
                "{name: chaser, weight: 1, game: puck, behavior: chaser, input_rate: 30hz, "
                    + "steps: [{play: until_match_over}, {repeat: true}]}"
            case .idle:
                "{name: idle, weight: 1, game: snap, seats: 4, behavior: idle}"
            }
        let name = "\(kind.rawValue)-\(bots)"
        let script = folder.appendingPathComponent("\(name).yaml")
        try """
        name: bench-\(kind.rawValue)
        profile: [{ramp: {to: \(bots), over: \(ramp)s}}, {hold: {for: \(hold)s}}]
        personas: [\(persona)]
        """.write(to: script, atomically: true, encoding: .utf8)
        let out = folder.appendingPathComponent(name)

        let before = try server.metrics()
        let dropsBefore = UDPKernelCounters.receiveBufferErrors()
        let serverDropsBefore = UDPKernelCounters.socketDrops(localPort: server.udpPort)
        let swarm = try BenchProcess(
            name: "skirmish swarm",
            arguments: [
                "swarm", script.path, "--target", "udp://127.0.0.1:\(server.udpPort)", "--loops", "1", "--out",
                out.path, "--plain-progress", "--seed", "1",
            ], core: botCore, realtime: realtime, captureOutput: false,
            log: folder.appendingPathComponent("\(name).log"))
        let started = ContinuousClock.now
        let holdStart = started + .seconds(ramp) + .milliseconds(500)
        let holdEnd = started + .seconds(ramp + hold)
        var swarmCPU: (start: Double, end: Double)?
        var swarmKernel: (start: Double, end: Double)?
        var serverCPU: (start: Double, end: Double)?
        var peakKiB = 0
        var sessionsPeak = 0
        var lastSessionsPoll = started
        let limit = started + .seconds(ramp + hold + 90)
        while swarm.isRunning, ContinuousClock.now < limit {
            try await Task.sleep(for: .milliseconds(200))
            let now = ContinuousClock.now
            peakKiB = max(peakKiB, swarm.statusKiB("VmHWM") ?? 0)
            if now >= holdStart, swarmCPU == nil, let swarmNow = swarm.cpuTimes(),
                let serverNow = server.process.cpuSeconds()
            {
                swarmCPU = (swarmNow.user + swarmNow.system, swarmNow.user + swarmNow.system)
                swarmKernel = (swarmNow.system, swarmNow.system)
                serverCPU = (serverNow, serverNow)
            }
            if now >= holdStart, now <= holdEnd {
                if let swarmNow = swarm.cpuTimes() {
                    swarmCPU?.end = swarmNow.user + swarmNow.system
                    swarmKernel?.end = swarmNow.system
                }
                if let serverNow = server.process.cpuSeconds() { serverCPU?.end = serverNow }
                if now - lastSessionsPoll >= .seconds(1) {
                    lastSessionsPoll = now
                    let sessions = try? server.metrics().sum("skirmish_server_sessions")
                    sessionsPeak = max(sessionsPeak, Int(sessions ?? 0))
                }
            }
        }
        let finishedInTime = !swarm.isRunning
        // A swarm that cannot keep up may not stop on its own: SIGTERM makes it stop and write its summary.
        if !finishedInTime { await swarm.stop(grace: .seconds(30)) }
        swarm.process.waitUntilExit()
        let after = try server.metrics()
        let summary = (try? Data(contentsOf: out.appendingPathComponent("summary.json"))).flatMap {
            try? JSONDecoder().decode(RunSummary.self, from: $0)
        }
        let holdSeconds = Double(hold) - 0.5
        func share(_ cpu: (start: Double, end: Double)?) -> Double {
            cpu.map { ($0.end - $0.start) / holdSeconds } ?? 0
        }
        func delta(_ name: String, _ labels: [String: String] = [:]) -> Double {
            after.sum(name, labels: labels) - before.sum(name, labels: labels)
        }
        return Trial(
            kind: kind, bots: bots, summary: summary, finishedInTime: finishedInTime,
            serverSent: delta("skirmish_server_packets_sent_total"),
            rateLimited: delta("skirmish_server_rejected_packets_total", ["reason": "rate_limited"]),
            serverLateTicks: delta("skirmish_server_late_ticks_total"), serverSessionsPeak: sessionsPeak,
            kernelDrops: UDPKernelCounters.receiveBufferErrors() &- dropsBefore,
            serverSocketDrops: UDPKernelCounters.socketDrops(localPort: server.udpPort) &- serverDropsBefore,
            swarmCPU: share(swarmCPU), swarmKernelCPU: share(swarmKernel),
            serverCPU: share(serverCPU), peakKiB: peakKiB, exitStatus: swarm.process.terminationStatus)
    }
}
