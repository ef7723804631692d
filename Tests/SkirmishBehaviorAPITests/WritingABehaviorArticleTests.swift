import Foundation
import NIOPosix
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishTestSupport
import SkirmishWire
import Testing

/// The DocC article "Writing a behaviour" is this target's code: every Swift block in it appears verbatim in the
/// target's sources (which the tests below run), its package manifest names this package's real products, and its
/// scripts load — so the article cannot show code that does not compile and pass.
@Suite struct WritingABehaviorArticleTests {
    static func article() throws -> ArticleCode {
        try ArticleCode(article: "WritingABehavior.md", module: "SkirmishSwarm", testFile: #filePath)
    }

    /// A block that is a package manifest rather than code of this target.
    static func isManifest(_ block: ArticleCode.Block) -> Bool { block.text.hasPrefix("// swift-tools-version") }

    @Test func everySwiftBlockIsCodeOfThisTarget() throws {
        let blocks = try Self.article().blocks(in: "swift").filter { !Self.isManifest($0) }
        let sources = try ArticleCode.targetSources(of: #filePath)
        #expect(blocks.count >= 7, "the article shows the agent, its tally and options, the catalogue, a runner, a run")
        for block in blocks {
            #expect(
                sources.contains(block.text),
                "line \(block.line), not in the target's sources:\n\(block.text.prefix(200))")
        }
    }

    /// The manifest a reader copies names products and dependencies this package has, with its tools version, and
    /// every module the example imports.
    @Test func thePackageManifestNamesThisPackagesProducts() throws {
        let manifests = try Self.article().blocks(in: "swift").filter(Self.isManifest)
        #expect(manifests.count == 1)
        let manifest = try #require(manifests.first).text
        let root = ArticleCode.packageRoot(of: #filePath)
        let package = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.split(separator: "\n").first == package.split(separator: "\n").first)

        let products = manifest.matches(of: /\.product\(name: "(\w+)", package: "skirmish"\)/).map { String($0.1) }
        #expect(products.count >= 5)
        for product in products {
            #expect(package.contains(".library(name: \"\(product)\""), "`\(product)` is not a product of this package")
        }
        let dependencies = manifest.matches(of: /\.package\(url: "[^"]+", from: "[^"]+"\)/).map { String($0.0) }
        #expect(!dependencies.isEmpty)
        for dependency in dependencies {
            #expect(package.contains(dependency), "this package does not depend on \(dependency)")
        }
        let nio = manifest.matches(of: /\.product\(name: "(\w+)", package: "swift-nio"\)/).map { String($0.1) }

        // Every module the example's files import is one the manifest names.
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let example = try FileManager.default.contentsOfDirectory(atPath: here.path).filter { $0.hasPrefix("Mirror") }
        #expect(example.count >= 4)
        for file in example {
            let text = try String(contentsOf: here.appendingPathComponent(file), encoding: .utf8)
            for module in text.matches(of: /^import ((?:Skirmish|NIO)\w*)$/.anchorsMatchLineEndings()).map(\.1) {
                #expect(products.contains(String(module)) || nio.contains(String(module)), "\(file) imports \(module)")
            }
        }
    }

    @Test func everyScriptLoadsWithTheMirrorsCatalogue() throws {
        let blocks = try Self.article().blocks(in: "yaml")
        #expect(!blocks.isEmpty)
        let loader = Catalogue.withMirror(tally: MirrorTally()).scriptLoader
        for block in blocks {
            let script = try loader.parse(block.text, file: "WritingABehavior.md:\(block.line)")
            let mirror = try #require(script.personas.first { $0.behavior.rawValue == "mirror" })
            // The persona key reached the behaviour's options; the registration made the game Puck.
            #expect(mirror.options.get(MirrorOptions.self)?.depth == 80)
            #expect(mirror.game == .puck)
        }
    }

    /// What the article says the loader does with the mirror's own key.
    @Test func theMirrorsKeyIsCheckedAsStrictlyAsABuiltInOne() throws {
        let loader = Catalogue.withMirror(tally: MirrorTally()).scriptLoader
        let tooDeep = try #require(throws: ScriptError.self) {
            try loader.parse(
                "name: deep\npersonas: [{name: m, behavior: mirror, depth: 500}]\n", file: "deep.yaml")
        }
        #expect(tooDeep.message == "depth must be between 0 and 160, got 500", "\(tooDeep)")
        let elsewhere = try #require(throws: ScriptError.self) {
            try loader.parse(
                "name: other\npersonas: [{name: c, game: puck, behavior: chaser, depth: 80}]\n", file: "other.yaml")
        }
        #expect(elsewhere.message == "`depth` does not apply to this persona", "\(elsewhere)")
        #expect(elsewhere.hint?.contains("only behavior `mirror` uses it") == true, "\(elsewhere)")
    }
}

/// The article's single player and its program, run for real: in the serialized suite of the swarm test, so that no
/// two swarms or servers of this target share the machine at once.
extension CustomBehaviorTests {
    /// Two mirrors started with the article's `startMirror(on:target:tally:)` meet at one table of the reference
    /// server and play, on the line their options set.
    @Test func mirrorsPlayOnAnAgentRunner() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ReferenceServer.start(configuration: ServerConfiguration(), group: group)
        let port = try #require(server.addresses.udp?.port)
        let target = Target(transport: .udp, host: "127.0.0.1", port: port)
        let tally = MirrorTally()
        let runner = try AgentRunner(name: "mirror-runner")
        let first = try await startMirror(on: runner, target: target, tally: tally)
        let second = try await startMirror(on: runner, target: target, tally: tally)

        // Two seconds of play each, waited for with a deadline far beyond what even a busy machine needs.
        let wanted = 2 * 30 * 2
        let deadline = ContinuousClock.now + .seconds(30)
        while tally[.playingSnapshots] < wanted || tally[.inputsApplied] < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        await runner.stop(first)
        await runner.stop(second)
        let metrics = await runner.snapshot()
        await server.shutdown()
        try await group.shutdownGracefully()

        #expect(tally[.seated] == 2)
        // The server applied both players' inputs: they shared a table.
        #expect(tally[.inputsApplied] == 2)
        let playing = tally[.playingSnapshots]
        #expect(playing >= wanted, "\(playing) playing snapshots")
        let atDepth = tally[.atDepth]
        #expect(Double(atDepth) >= 0.7 * Double(playing), "at depth in \(atDepth) of \(playing) playing snapshots")
        #expect(tally.deepest == 80, "the paddles stood at most \(tally.deepest) px up")
        let inputs = metrics.counterTotal(
            SkirmishMetrics.packetsSent, where: ["persona": "mirror", "type": "PaddleState"])
        #expect(inputs >= UInt64(wanted), "\(inputs) inputs")
    }

    /// The article's `MirrorSwarm.run` as a program would call it: a script file, the reference server in-process,
    /// a results folder.
    @Test func theProgramRunsAScriptFileAndWritesItsResults() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mirror-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("mirror.yaml").path
        try """
        name: mirror-program
        profile: [{ramp: {to: 4, over: 500ms}}, {hold: {for: 5s}}]
        personas: [{name: mirror, behavior: mirror, input_rate: 30hz, depth: 80}]
        thresholds: {desyncs: "== 0"}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let out = directory.appendingPathComponent("out").path
        let tally = MirrorTally()

        let summary = try await MirrorSwarm.run(scriptAt: path, tally: tally, out: out)

        #expect(summary.passed)
        #expect(summary.desyncs == 0)
        let persona = try #require(summary.personas.first)
        #expect(persona.behavior == "mirror")
        #expect(persona.game == "puck")
        #expect(persona.peakBots == 4)
        #expect(tally[.seated] >= 4)
        #expect(tally[.inputsApplied] >= 4)
        let playing = tally[.playingSnapshots]
        #expect(playing >= 4 * 30, "\(playing) playing snapshots")
        #expect(Double(tally[.atDepth]) >= 0.7 * Double(playing), "at depth in \(tally[.atDepth]) of \(playing)")
        #expect(tally.deepest == 80, "the paddles stood at most \(tally.deepest) px up")
        for file in ["summary.json", "metrics.om", "report.html"] {
            #expect(FileManager.default.fileExists(atPath: out + "/" + file), "\(file) was not written")
        }
        let written = try JSONDecoder().decode(
            RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/summary.json")))
        #expect(written.personas.map(\.behavior) == ["mirror"])
    }
}
