import SkirmishNet
import SkirmishWire

extension ConformanceCheck {
    /// The server answers a Hello for each built-in game with a Welcome (it hosts the game) or `Reject(4 bad
    /// request)` (it does not); the answers decide which game-specific checks run.
    static let handshakeGames = ConformanceCheck(
        id: "handshake.games", title: "a Hello for each built-in game gets a Welcome or Reject(4)", needs: .nothing,
        limit: .seconds(15)
    ) { context in
        let survey = await GameSurvey.take(context)
        context.surveyBox.value = survey
        let broken = GameSurvey.builtIn.compactMap { game in survey.broken[game].map { "\(game): \($0)" } }
        guard broken.isEmpty else {
            return .failed(
                "a Welcome or Reject(4 bad request) to a Hello for each of puck, snap and suns",
                broken.joined(separator: "; "))
        }
        guard !survey.hosted.isEmpty else {
            return .failed("a Welcome to a Hello for at least one of puck, snap and suns", "Reject(4) to each")
        }
        return .pass
    }
}

extension GameSurvey {
    /// Asks the server for each built-in game at once, from a probe each (two seats, any match), and lets every
    /// probe go again: a Welcome is hosted, `Reject(4)` not hosted, anything else broken.
    static func take(_ context: CheckContext) async -> GameSurvey {
        let limit = Duration.seconds(5) * context.patience
        let answers = await withTaskGroup(of: (GameKind, String?).self) { group in
            for game in builtIn {
                group.addTask {
                    let probe: RawProbe
                    do {
                        probe = try await context.probe()
                    } catch {
                        return (game, "cannot connect (\(ConformanceSuite.reason(error)))")
                    }
                    defer { probe.close() }
                    let hello = Hello(game: game, seats: 2, name: "sv\(game.rawValue)-\(context.run)")
                    switch await probe.handshake(hello, within: limit)?.message {
                    case .welcome?: return (game, nil)
                    case .reject(let reject)? where reject.reason == .badRequest: return (game, "refused")
                    case .reject(let reject)?: return (game, "Reject(\(reject.reason))")
                    default: return (game, "no answer within \(limit)")
                    }
                }
            }
            var answers: [GameKind: String?] = [:]
            for await (game, answer) in group { answers[game] = answer }
            return answers
        }
        var survey = GameSurvey()
        for game in builtIn {
            switch answers[game] ?? "no answer" {
            case nil: survey.hosted.append(game)
            case "refused"?: survey.refused.append(game)
            case let other?: survey.broken[game] = other
            }
        }
        return survey
    }
}
