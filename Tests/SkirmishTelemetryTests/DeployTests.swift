import Foundation
import SkirmishTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `deploy/`: the runtime image built from scratch with Debian's buildah and run with podman, and the Kubernetes
/// manifest checked against the Kubernetes schemas.
@Suite(.serialized) struct DeployTests {
    static let deploy = RealRun.repositoryRoot.appendingPathComponent("deploy")

    /// The image builds with no base image to pull, carries the binary, its libraries and bots/, and its
    /// `skirmish swarm` plays against a server on the host's loopback, leaving its results in a mounted folder.
    @Test func theImageBuildsFromScratchAndItsSwarmPlaysAHostServer() async throws {
        let containerfile = try String(
            contentsOf: Self.deploy.appendingPathComponent("Containerfile"), encoding: .utf8)
        let bases = containerfile.split(separator: "\n").filter { $0.uppercased().hasPrefix("FROM ") }
        #expect(!bases.isEmpty && bases.allSatisfy { $0.split(separator: " ").dropFirst().first == "scratch" })
        for tool in ["/usr/bin/buildah", "/usr/bin/podman", "/usr/sbin/runc", "/usr/bin/strip"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            let other = "/usr/bin/" + (tool.split(separator: "/").last.map(String.init) ?? "")
            try #require(
                FileManager.default.isExecutableFile(atPath: other),
                "\(tool) is not installed: run `make test`, which installs buildah, podman, runc and binutils")
        }

        // Short: podman refuses a runroot longer than 50 characters.
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "skm-" + UUID().uuidString.prefix(8).lowercased())
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let storage = [
            "--root", work.appendingPathComponent("storage").path, "--runroot", work.appendingPathComponent("r").path,
            "--storage-driver", "vfs",
        ]
        let podmanOptions = storage + ["--runtime", "runc", "--cgroup-manager", "cgroupfs"]
        defer {
            // Clean-up in `defer` cannot await: it blocks a cooperative thread for the few seconds it takes.
            _ = try? Command.runBlocking("/usr/bin/podman", podmanOptions + ["rm", "--all", "--force"], timeout: 60)
            _ = try? Command.runBlocking("/usr/bin/buildah", storage + ["rmi", "--all", "--force"], timeout: 60)
            try? FileManager.default.removeItem(at: work)
        }
        let context = work.appendingPathComponent("context")
        let assembled = try await Command.run(
            "/bin/sh",
            [
                Self.deploy.appendingPathComponent("assemble-rootfs.sh").path, try RealRun.executable().path,
                context.path,
            ])
        try #require(assembled.status == 0, "\(assembled.output)")
        let size = try await Command.run("/usr/bin/du", ["-sm", context.appendingPathComponent("rootfs").path])
        let megabytes = Int(size.output.split(separator: "\t").first ?? "") ?? .max
        #expect(megabytes < 300, "the runtime image's files take \(megabytes) MB")

        let tag = "localhost/skirmish-test:\(UUID().uuidString.prefix(8).lowercased())"
        let built = try await Command.run(
            "/usr/bin/buildah",
            storage + [
                "build", "--pull=never", "--isolation", "chroot", "-f",
                Self.deploy.appendingPathComponent("Containerfile").path, "-t", tag, context.path,
            ], timeout: 300)
        try #require(built.status == 0, "\(built.output)")

        let server = try await HostServer()
        defer { server.stop() }
        let results = work.appendingPathComponent("results")
        try FileManager.default.createDirectory(at: results, withIntermediateDirectories: true)
        chmod(results.path, 0o777)
        // The shipped quickstart's personas, without its latency threshold: this test is about the image playing a
        // host server (no desync), not how fast a busy machine answers.
        let quickstart = try String(
            contentsOf: RealRun.repositoryRoot.appendingPathComponent("bots/quickstart.yaml"), encoding: .utf8)
        let script = quickstart.replacingOccurrences(of: "  rtt_p99: \"< 50ms\"\n", with: "")
        #expect(script != quickstart, "bots/quickstart.yaml no longer has the rtt_p99 threshold this test drops")
        try script.write(to: results.appendingPathComponent("plain.yaml"), atomically: true, encoding: .utf8)
        // The container shares the host's network, so the host's loopback server is its loopback server. The
        // ulimits stay within what an unprivileged CI container may set.
        let ran = try await Command.run(
            "/usr/bin/podman",
            podmanOptions + [
                "run", "--rm", "--network", "host", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
                "-v", "\(results.path):/results", tag, "swarm", "/results/plain.yaml", "--target",
                "udp://127.0.0.1:\(server.udpPort)", "--duration", "4s", "--bots", "4", "--out", "/results/run",
                "--plain-progress",
            ], timeout: 180)
        #expect(ran.status == 0, "\(ran.output)")
        #expect(ran.output.contains("all thresholds hold"), "\(ran.output)")
        let data = try Data(contentsOf: results.appendingPathComponent("run/summary.json"))
        let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((summary["settings"] as? [String: Any])?["target"] as? String == "udp://127.0.0.1:\(server.udpPort)")
        #expect(((summary["handshakes"] as? [String: Any])?["succeeded"] as? Int ?? 0) > 0)
        #expect(((summary["packets"] as? [String: Any])?["received"] as? Int ?? 0) > 0)
    }

    /// The manifest, as `kubectl apply -k deploy/` builds it, passes the Kubernetes schema strictly and says what
    /// sharding needs: a CronJob of Indexed Jobs (a fresh Job name, so a fresh run id, every night) whose shard
    /// count is written once (`completions`) and copied by the kustomization into `parallelism` and
    /// JOB_COMPLETIONS, the run id from the Job's name, the last pod merging (`--merge`), and the ReadWriteMany
    /// claim the pods write their results to.
    ///
    /// The kustomization's replacements are applied here as kustomize applies them (source field, target fields,
    /// created where absent, the value written as a string where the target is one), since a fresh Debian machine
    /// has no kustomize; changing `completions` must change the other two.
    @Test func theJobManifestIsValidKubernetes() async throws {
        let manifest = Self.deploy.appendingPathComponent("skirmish-job.yaml")
        let built = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-built-\(UUID()).yaml")
        defer { try? FileManager.default.removeItem(at: built) }
        let build = #"""
            import re, sys, yaml
            kustomization = yaml.safe_load(open(sys.argv[1] + '/kustomization.yaml'))
            assert kustomization['resources'] == ['skirmish-job.yaml'], kustomization['resources']
            docs = list(yaml.safe_load_all(open(sys.argv[1] + '/skirmish-job.yaml')))
            docs[1]['spec']['jobTemplate']['spec']['completions'] = int(sys.argv[3])
            def find(doc, kind, name):
                return next(d for d in doc if d['kind'] == kind and d['metadata']['name'] == name)
            def walk(node, path, create, value=None):
                parts = re.findall(r'\[[^]]*\]|[^.\[\]]+', path)
                for i, part in enumerate(parts):
                    last = i == len(parts) - 1
                    if part.startswith('['):
                        key, want = part[1:-1].split('=')
                        node = next(item for item in node if item.get(key) == want)
                    elif last:
                        if value is None: return node[part]
                        node[part] = str(value) if isinstance(node.get(part), str) else value
                    else:
                        node = node.setdefault(part, {}) if create else node[part]
                return node
            for rule in kustomization['replacements']:
                source = rule['source']
                value = walk(find(docs, source['kind'], source['name']), source['fieldPath'], False)
                for target in rule['targets']:
                    selected = find(docs, target['select']['kind'], target['select']['name'])
                    for path in target['fieldPaths']:
                        walk(selected, path, target.get('options', {}).get('create', False), value)
            yaml.safe_dump_all(docs, open(sys.argv[2], 'w'))
            """#
        let made = try await Command.run(
            "/usr/bin/env", ["python3", "-c", build, Self.deploy.path, built.path, "5"])
        #expect(made.status == 0, "\(made.output)")
        let valid = try await Command.run(
            "/usr/bin/env", ["python3", "-m", "kubernetes_validate", "--strict", built.path])
        #expect(valid.status == 0, "\(valid.output) (make test installs kubernetes-validate)")
        let script = """
            import sys, yaml
            docs = {d['kind']: d for d in yaml.safe_load_all(open(sys.argv[1]))}
            cron, claim = docs['CronJob'], docs['PersistentVolumeClaim']
            spec = cron['spec']['jobTemplate']['spec']
            pod = spec['template']['spec']
            container = pod['containers'][0]
            env = {e['name']: e for e in container.get('env', [])}
            volumes = {v['name']: v for v in pod['volumes']}
            print(spec['completionMode'], spec['completions'], spec['parallelism'], repr(env['JOB_COMPLETIONS']['value']),
                  env['SKIRMISH_RUN_ID']['valueFrom']['fieldRef']['fieldPath'], claim['spec']['accessModes'],
                  volumes['results']['persistentVolumeClaim']['claimName'] == claim['metadata']['name'],
                  '--merge' in container['args'])
            """
        let facts = try await Command.run("/usr/bin/env", ["python3", "-c", script, built.path])
        #expect(
            facts.output.trimmingCharacters(in: .whitespacesAndNewlines)
                == "Indexed 5 5 '5' metadata.labels['batch.kubernetes.io/job-name'] ['ReadWriteMany'] True True",
            "\(facts.output)")
        // The count is written once: the manifest holds no other number of shards.
        let text = try String(contentsOf: manifest, encoding: .utf8)
        #expect(!text.contains("parallelism:"))
        #expect(text.components(separatedBy: "completions: ").count == 2)
        // The validator is not a rubber stamp: a misspelt field fails it.
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-job-\(UUID()).yaml")
        try String(contentsOf: manifest, encoding: .utf8)
            .replacingOccurrences(of: "completionMode:", with: "completionMood:")
            .write(to: broken, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: broken) }
        let refused = try await Command.run(
            "/usr/bin/env", ["python3", "-m", "kubernetes_validate", "--strict", broken.path])
        #expect(refused.status != 0, "\(refused.output)")
    }
}

/// `skirmish serve` on the host's loopback, for clients outside this process (a container); stopped by SIGINT.
final class HostServer {
    let udpPort: Int
    let httpPort: Int
    private let process = ChildProcess()
    private let log: URL

    init() async throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-serve-\(UUID())")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = try RealRun.executable()
        process.arguments = ["serve", "--udp", "127.0.0.1:0", "--http", "127.0.0.1:0"]
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = FileHandle.nullDevice
        try process.run()
        let log = self.log
        func port(_ scheme: String) -> Int? {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening \(scheme)://") })
            else { return nil }
            return line.split(separator: ":").last.flatMap { Int($0) }
        }
        let ports = await Collector.poll(timeout: 30) { () -> (Int, Int)? in
            guard let udp = port("udp"), let http = port("http") else { return nil }
            return (udp, http)
        }
        guard let ports else {
            process.interrupt()
            process.waitUntilExit()
            throw RealRun.Failure(description: "skirmish serve printed no UDP address")
        }
        udpPort = ports.0
        httpPort = ports.1
    }

    func stop() {
        if process.isRunning {
            process.interrupt()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: log)
    }
}
