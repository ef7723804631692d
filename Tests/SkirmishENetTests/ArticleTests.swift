import Foundation
import SkirmishENet
import SkirmishScript
import SkirmishSwarm
import SkirmishTestSupport
import Testing

/// The DocC article "Your server speaks ENet" is checked against the code: every Swift block is code of the arena
/// example (`Arena/`), its script loads with the catalogue `skirmish` uses, and the error it quotes is the loader's.
@Suite struct ArticleTests {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    static func article() throws -> String {
        try String(
            contentsOf: here.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Sources/SkirmishENet/Documentation.docc/YourServerSpeaksENet.md"),
            encoding: .utf8)
    }

    /// The article's fenced blocks of `language` (empty: unlabelled), in order.
    static func blocks(_ language: String) throws -> [String] {
        try ArticleCode(article: "YourServerSpeaksENet.md", module: "SkirmishENet", testFile: #filePath)
            .blocks(in: language).map(\.text)
    }

    @Test func everySwiftBlockIsCodeOfTheArenaExample() throws {
        let folder = Self.here.appendingPathComponent("Arena")
        let sources = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }.joined(separator: "\n")
        let blocks = try Self.blocks("swift")
        #expect(blocks.count >= 6, "the messages, the codec, the behaviour, the catalogue and the run")
        for block in blocks {
            #expect(sources.contains(block), "not in Arena/:\n\(block.prefix(300))")
        }
    }

    @Test func theScriptLoadsAndTheQuotedErrorIsTheLoadersOwn() throws {
        let loader = Catalogue.builtIn.registeringENet().scriptLoader
        let yaml = try #require(try Self.blocks("yaml").first)
        let script = try loader.parse(yaml, file: "my-echo.yaml")
        #expect(script.protocolName == "enet" && script.personas.map(\.behavior.rawValue) == ["payload"])
        let wrong = yaml.replacingOccurrences(of: "      channel: 0", with: "      channel: 3")
        let error = try #require(throws: ScriptError.self) { try loader.parse(wrong, file: "my-echo.yaml") }
        let quoted = try Self.article().components(separatedBy: "\n```\nmy-echo.yaml:").dropFirst().first
            .map { "my-echo.yaml:" + $0.components(separatedBy: "\n```").first! }
        #expect(quoted == error.description)
    }
}
