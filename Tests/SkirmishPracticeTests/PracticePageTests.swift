import Foundation
import SkirmishOpponent
import SkirmishPractice
import SkirmishServer
import SkirmishWire
import Testing

/// The practice page in a real headless Chromium: it loads, connects, and a person's pointer moves their paddle.
///
/// Evidence is taken on the server's side: the opponent's snapshots (the server's view of the person's paddle,
/// mirrored into the opponent's frame) and the server's own packet counters, never the page's text alone.
@Suite(.serialized) struct PracticePageTests {
    @Test func aPersonPlaysWithTheMouseAndGetsARematch() async throws {
        try await Self.withPage(difficulty: .medium) { practice, chromium in
            let tab = try await chromium.openTab()
            // The kick-off: the page counts down to play from the server's pause (3, 2, 1 from the moment it joined),
            // and then the countdown is gone. The page itself notes what each frame showed, from before it loads its
            // script (a test that looked only once the page played could find the pause over on a busy machine), so
            // a slow poll misses nothing.
            _ = try await tab.send(
                "Page.addScriptToEvaluateOnNewDocument",
                [
                    "source": """
                    (() => { const seen = window.practiceCountdown = [];
                      (function frame() { const c = window.practice ? window.practice.countdown() : undefined;
                        if (c !== undefined && seen[seen.length - 1] !== c) seen.push(c);
                        if (c !== null || seen.length < 2) requestAnimationFrame(frame); })(); })()
                    """
                ])
            try await tab.navigate(to: practice.pageURL)
            let match = try #require(await tab.waitUntilPlaying())
            #expect(try await tab.evaluate("window.practice.game.difficulty") as? String == "medium")
            let shown = await poll(timeout: .seconds(15)) { () -> [Any]? in
                let value = try? await tab.evaluate("window.practiceCountdown") as? [Any]
                guard let value, value.count >= 2, value.last is NSNull else { return nil }
                return value
            }
            let counts = (shown ?? []).compactMap { $0 as? Int }
            #expect(shown != nil, "the countdown never ended")
            #expect(!counts.isEmpty && counts.last == 1 && counts == counts.sorted(by: >), "\(counts)")
            #expect(counts.allSatisfy { (1...3).contains($0) }, "\(counts)")

            let before = try await practice.server.stats()
            try await tab.moveMouse(toTable: 60, 420)
            #expect(await practice.opponentSeesOtherPaddle(match: match, near: 260, 60) != nil)
            try await tab.moveMouse(toTable: 250, 300)
            #expect(await practice.opponentSeesOtherPaddle(match: match, near: 70, 180) != nil)
            // Beyond the centre line the paddle stays in the person's half (the page clamps, the server agrees).
            try await tab.moveMouse(toTable: 160, 100)
            #expect(await practice.opponentSeesOtherPaddle(match: match, near: 160, 200) != nil)
            let after = try await practice.server.stats()
            #expect(
                after.packetsReceived[MessageType.paddleState.index]
                    > before.packetsReceived[MessageType.paddleState.index])
            #expect(after.totalRejected == 0)

            // Latency from Ping/Pong is shown once a round trip is measured.
            let latency = await poll(timeout: .seconds(10)) { () -> String? in
                let text = try? await tab.evaluate("document.getElementById('latency').textContent") as? String
                return text?.hasSuffix(" ms") == true ? text : nil
            }
            #expect(latency != nil)
            try await tab.moveMouse(toTable: 120, 400)
            try await tab.screenshot(to: "/tmp/practice.png")

            // The opponent leaves: the person wins by forfeit and is offered a rematch against a fresh opponent.
            let leaving = try #require(await practice.opponent(at: match), "the opponent left before it was stopped")
            let disconnects = try await practice.server.stats().packetsReceived[MessageType.disconnect.index]
            await leaving.stop()
            let title = await tab.waitForOverlay(titled: ["You win!"])
            if title != "You win!" {
                // What the server saw tells a lost goodbye (no Disconnect: the seat waits out its resume window)
                // from a page that did not show the result it was sent.
                let stats = try await practice.server.stats()
                let page = try? await tab.evaluate("JSON.stringify(window.practice.game)")
                Issue.record(
                    """
                    no "You win!" after the opponent left: server Disconnects \(disconnects) → \
                    \(stats.packetsReceived[MessageType.disconnect.index]), forfeits \(stats.forfeits), sessions \
                    \(stats.sessions) (\(stats.detached) detached), matches \(stats.matches); page \(page ?? "?")
                    """)
            }
            try await tab.screenshot(to: "/tmp/practice-over.png")
            let button = try #require(
                try await tab.evaluate(
                    """
                    (() => { const b = document.getElementById('action'); if (b.hidden) return null;
                      const r = b.getBoundingClientRect(); return [b.textContent, r.x + r.width / 2, r.y + r.height / 2]; })()
                    """) as? [Any])
            #expect(button.first as? String == "Rematch")
            try await tab.click(atPage: button[1] as? Double ?? 0, button[2] as? Double ?? 0)
            let rematch = try #require(await tab.waitUntilPlaying(notMatch: match))
            #expect(rematch != match)
            try await tab.moveMouse(toTable: 200, 380)
            #expect(await practice.opponentSeesOtherPaddle(match: rematch, near: 120, 100) != nil)

            // The server goes away: the page says so and offers to reconnect.
            await practice.server.shutdown()
            let gone = await tab.waitForOverlay(titled: ["Server stopped", "Disconnected"])
            #expect(gone != nil)
            #expect(try await tab.evaluate("document.getElementById('action').textContent") as? String == "Reconnect")
            #expect(try await tab.evaluate("document.getElementById('latency').textContent") as? String == "offline")
            try await tab.screenshot(to: "/tmp/practice-disconnected.png")
        }
    }

    /// The person picks the opponent's strength on the page; the lobby seats an opponent of that strength, which
    /// attacks a person who stands still, and the page shows both scores as the server counts them.
    @Test func aPersonPicksTheDifficultyAndSeesBothScores() async throws {
        try await Self.withPage(difficulty: .easy) { practice, chromium in
            let tab = try await chromium.openTab()
            try await tab.navigate(to: practice.pageURL)
            let first = try #require(await tab.waitUntilPlaying())
            #expect(try await tab.evaluate("document.getElementById('difficulty').value") as? String == "easy")
            #expect(await practice.opponent(at: first)?.difficulty == .easy)

            // Picking "expert" leaves this table and starts a match against an expert.
            _ = try await tab.evaluate(
                """
                (() => { const s = document.getElementById('difficulty'); s.value = 'expert';
                  s.dispatchEvent(new Event('change')); return s.value; })()
                """)
            let match = try #require(await tab.waitUntilPlaying(notMatch: first))
            let opponent = try #require(await practice.opponent(at: match))
            #expect(opponent.difficulty == .expert)
            #expect(try await tab.evaluate("window.practice.game.difficulty") as? String == "expert")
            #expect(
                try await tab.evaluate("document.getElementById('their-name').textContent") as? String == "AI · expert")

            // The person stands still in a corner; the expert scores, and the page shows the server's score.
            try await tab.moveMouse(toTable: 60, 440)
            let scored = await poll(timeout: .seconds(90)) { () -> TableSnapshot? in
                guard let snapshot = try? await opponent.lastSnapshot(), snapshot.myScore >= 1 else { return nil }
                return snapshot
            }
            let snapshot = try #require(scored, "the expert never scored against a paddle standing still")
            let shown = await poll(timeout: .seconds(10)) { () -> [String]? in
                let value = try? await tab.evaluate(
                    "[document.getElementById('my-score').textContent, document.getElementById('their-score').textContent]"
                )
                guard let texts = value as? [String], texts.count == 2, Int(texts[1]) ?? 0 >= Int(snapshot.myScore)
                else {
                    return nil
                }
                return texts
            }
            let texts = try #require(shown)
            // The opponent's score is the page's "them"; the page's own score is what the opponent conceded.
            let latest = try #require(try await opponent.lastSnapshot())
            #expect(Int(texts[1]) ?? -1 >= Int(snapshot.myScore) && Int(texts[1]) ?? -1 <= Int(latest.myScore))
            #expect(Int(texts[0]) == Int(latest.theirScore))
            try await tab.screenshot(to: "/tmp/practice-difficulty.png")
        }
    }

    @Test func aPersonPlaysWithAFingerOnAPhone() async throws {
        try await Self.withPage(difficulty: .expert) { practice, chromium in
            let tab = try await chromium.openTab()
            try await tab.send(
                "Emulation.setDeviceMetricsOverride",
                ["width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": true])
            try await tab.send("Emulation.setTouchEmulationEnabled", ["enabled": true, "maxTouchPoints": 5])
            try await tab.navigate(to: practice.pageURL)
            let match = try #require(await tab.waitUntilPlaying())

            // The table fits the narrow screen: no sideways scrolling, and the whole table is on screen.
            #expect(try await tab.evaluate("document.documentElement.scrollWidth") as? Int == 390)
            let topLeft = try await tab.clientPoint(-16, -16)
            let bottomRight = try await tab.clientPoint(336, 496)
            #expect(topLeft.x >= 0 && topLeft.y >= 0 && bottomRight.x <= 390 && bottomRight.y <= 844)

            let start = try await tab.clientPoint(100, 430)
            let end = try await tab.clientPoint(220, 330)
            try await tab.send(
                "Input.dispatchTouchEvent", ["type": "touchStart", "touchPoints": [["x": start.x, "y": start.y]]])
            #expect(await practice.opponentSeesOtherPaddle(match: match, near: 220, 50) != nil)
            try await tab.send(
                "Input.dispatchTouchEvent", ["type": "touchMove", "touchPoints": [["x": end.x, "y": end.y]]])
            #expect(await practice.opponentSeesOtherPaddle(match: match, near: 100, 150) != nil)
            try await tab.send("Input.dispatchTouchEvent", ["type": "touchEnd", "touchPoints": [[String: Any]]()])
            try await tab.screenshot(to: "/tmp/practice-mobile.png")
            #expect(try await practice.server.stats().totalRejected == 0)
        }
    }

    /// Starts a practice server whose opponent plays at `difficulty` and a headless Chromium, runs `body` with both,
    /// and closes the browser and stops the server whatever `body` did.
    static func withPage(
        difficulty: Opponent.Level, _ body: (PracticeFixture, Chromium) async throws -> Void
    ) async throws {
        let practice = try await PracticeFixture.start(difficulty: difficulty)
        let chromium: Chromium
        do {
            chromium = try await Chromium.startOrCancel()
        } catch {
            await practice.stop()
            throw error
        }
        let outcome = await Result { try await body(practice, chromium) }
        await chromium.close()
        await practice.stop()
        try outcome.get()
    }
}

extension Tab {
    /// Waits until the page has joined a match and play has started; returns the match id.
    func waitUntilPlaying(notMatch previous: UInt32? = nil, timeout: Duration = .seconds(30)) async -> UInt32? {
        await poll(timeout: timeout) { () -> UInt32? in
            let value = try? await evaluate(
                "window.practice && window.practice.game.status === 'playing' ? window.practice.game.match : 0")
            guard let match = (value as? Int).map(UInt32.init), match != 0, match != previous else { return nil }
            return match
        }
    }

    /// Waits until the overlay shows one of `titles`; returns the one shown.
    func waitForOverlay(titled titles: [String], timeout: Duration = .seconds(20)) async -> String? {
        await poll(timeout: timeout) { () -> String? in
            let value = try? await evaluate(
                "document.getElementById('overlay').hidden ? '' : document.getElementById('overlay-title').textContent")
            guard let title = value as? String, titles.contains(title) else { return nil }
            return title
        }
    }
}
