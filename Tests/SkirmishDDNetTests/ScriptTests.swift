import Foundation
import SkirmishScript
import SkirmishSwarm
import Testing

@testable import SkirmishDDNet

/// DDNet scripts as the catalogue loads them: the protocol block and persona keys decoded into connections and
/// behaviours, and every mistake refused with its line and a hint.
@Suite struct ScriptTests {
    private func load(_ yaml: String) throws(ScriptError) -> Script {
        try DDNetSwarm.catalogue.scriptLoader.parse(yaml, file: "ddnet.yaml")
    }

    /// The error `yaml` is refused with.
    private func refusal(_ yaml: String) -> ScriptError? {
        do {
            _ = try load(yaml)
            return nil
        } catch {
            return error
        }
    }

    @Test func theProtocolBlockSetsDefaultsAndPersonasOverrideThem() throws {
        let script = try load(
            """
            name: t
            protocol: {name: ddnet, password: secret, clan: crew, player_name: "tee-{n}", handshake_timeout: 5s}
            personas:
              - {name: a, behavior: runner}
              - {name: b, behavior: idle, player_name: "idle-{n}", skin: pinky, country: 276, password: other}
              - {name: c, behavior: chatter, chat_every: 3s..4s, echo_timeout: 2s}
              - {name: d}
            """)
        #expect(script.protocolName == "ddnet")
        let configurations = script.personas.map { $0.connection.get(DDNetConnection.Configuration.self) }
        let a = try #require(configurations[0])
        #expect(a.password == "secret" && a.clan == "crew" && a.namePattern == "tee-{n}")
        #expect(a.handshakeTimeout == .seconds(5))
        let b = try #require(configurations[1])
        #expect(b.password == "other" && b.clan == "crew" && b.namePattern == "idle-{n}")
        #expect(b.skin == "pinky" && b.country == 276)
        #expect(script.personas.map(\.gameName) == ["ddnet", "ddnet", "ddnet", "ddnet"])
        #expect(script.personas.map(\.behavior.rawValue) == ["runner", "idle", "chatter", "runner"])
        #expect(script.personas[0].inputRate == 50)
        let chatter = try #require(script.personas[2].options.get(EchoChatter.Options.self))
        #expect(chatter.every == .seconds(3) ... .seconds(4) && chatter.echoTimeout == .seconds(2))
        #expect(DDNetSwarm.catalogue.behaviors(of: "ddnet") == ["chatter", "idle", "runner"])
    }

    @Test func aNameIsBuiltFromThePatternAndCutToWhatTheServerKeeps() {
        var configuration = DDNetConnection.Configuration()
        configuration.namePattern = "tee-{n}"
        #expect(configuration.name(player: 42, fallback: "x") == "tee-42")
        configuration.namePattern = "ab{n}cd{n}"
        #expect(configuration.name(player: 7, fallback: "x") == "ab7cd7")
    }

    @Test(
        arguments: [
            ("{name: p, player_name: tee}", 3, "player_name must contain `{n}`"),
            ("{name: p, player_name: \"a-much-too-long-{n}\"}", 3, "leaves no room for the bot's number"),
            ("{name: p, clan: a-clan-too-long}", 3, "a DDNet server keeps 11"),
            ("{name: p, country: 1000}", 3, "country"),
            ("{name: p, skin: \"\"}", 3, "skin is empty"),
            ("{name: p, behavior: chatter, chat_every: 200ms}", 3, "chat_every must be at least 1s"),
            ("{name: p, behavior: runner, chat_every: 2s}", 3, "chat_every"),
            ("{name: p, behavior: chaser}", 3, "chaser"),
            ("{name: p, game: puck}", 3, "game"),
            ("{name: p, steps: [{chat: \"/kill\"}]}", 3, "a command to a DDNet server"),
        ] as [(String, Int, String)])
    func aMistakeIsRefusedWhereItIs(persona: String, line: Int, message: String) throws {
        let yaml = """
            name: t
            protocol: ddnet
            personas: [\(persona)]
            """
        let error = try #require(refusal(yaml), "accepted: \(persona)")
        #expect(error.line == line, "\(error)")
        #expect(error.description.contains(message), "\(error)")
    }

    @Test func anUnknownProtocolOptionIsRefusedWithASuggestion() throws {
        let error = try #require(
            refusal(
                """
                name: t
                protocol: {name: ddnet, pasword: x}
                personas: [{name: p}]
                """))
        #expect(error.line == 2)
        #expect(error.description.contains("password"), "\(error)")
    }

    @Test func theShippedScriptLoads() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("bots/ddnet.yaml").path
        let script = try DDNetSwarm.catalogue.scriptLoader.load(path: path)
        #expect(script.protocolName == "ddnet")
        #expect(Set(script.personas.map(\.behavior.rawValue)) == ["runner", "idle", "chatter"])
    }
}
