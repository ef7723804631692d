import Foundation
import SkirmishTestSupport
import SkirmishWire
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Headless Chromium (Debian's `chromium`, installed by `make test-deps`) with the DevTools protocol on a free port.
///
/// Started for one test and killed after it. When it cannot start at all the test is cancelled (reported as skipped)
/// with the reason; everything after a successful start is a real failure.
final class Chromium {
    let devTools: DevTools
    private let process: ChildProcess
    private let profile: URL

    /// Starts the browser, or cancels the running test when there is no browser to start.
    static func startOrCancel() async throws -> Chromium {
        guard
            let binary = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            try Test.cancel("Chromium is not installed (`make test-deps` installs Debian's chromium package)")
        }
        do {
            return try await Chromium(binary: binary)
        } catch let failure as StartFailure {
            try Test.cancel("Chromium could not start: \(failure.description)")
        }
    }

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    private init(binary: String) async throws {
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-chromium-\(UUID())")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
            // Keep animation frames and timers running in a background (headless) tab.
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
            "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir=\(profile.path)",
            "--window-size=480,860", "about:blank",
        ]
        let log = profile.appendingPathComponent("chromium.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        do {
            try process.run()
        } catch {
            throw StartFailure(description: "\(binary): \(error)")
        }
        // Chromium writes its DevTools port and browser path here once it listens.
        let portFile = profile.appendingPathComponent("DevToolsActivePort")
        let endpoint = await poll(timeout: .seconds(40)) { () -> (Int, String)? in
            guard let text = try? String(contentsOf: portFile, encoding: .utf8) else { return nil }
            let lines = text.split(separator: "\n").map(String.init)
            guard lines.count >= 2, let port = Int(lines[0]) else { return nil }
            return (port, lines[1])
        }
        guard let (port, path) = endpoint else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            Self.kill(process)
            throw StartFailure(description: "no DevTools port within 40 s; its output:\n\(output.suffix(2000))")
        }
        do {
            devTools = try await DevTools.connect(port: port, path: path)
        } catch {
            Self.kill(process)
            throw error
        }
    }

    deinit {
        Self.kill(process)
        try? FileManager.default.removeItem(at: profile)
    }

    func close() async {
        await devTools.close()
        Self.kill(process)
    }

    private static func kill(_ process: ChildProcess) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.send(SIGKILL) }
        process.waitUntilExit()
    }

    /// Opens a blank tab and returns it, attached (flattened session); ``Tab/navigate(to:)`` loads a page.
    func openTab() async throws -> Tab {
        let target = try await devTools.send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else { throw StartFailure(description: "no targetId") }
        let attached = try await devTools.send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached["sessionId"] as? String else { throw StartFailure(description: "no sessionId") }
        let tab = Tab(devTools: devTools, session: session)
        try await tab.send("Page.enable")
        try await tab.send("Runtime.enable")
        return tab
    }
}

/// One page in the browser: evaluate script, send input, take screenshots.
struct Tab: Sendable {
    let devTools: DevTools
    let session: String

    @discardableResult
    func send(_ method: String, _ params: [String: Any] = [:]) async throws -> [String: Any] {
        try await devTools.send(method, params, session: session)
    }

    func navigate(to url: String) async throws {
        try await send("Page.navigate", ["url": url])
    }

    /// Evaluates `expression` in the page and returns its value (JSON-serialisable values only).
    func evaluate(_ expression: String) async throws -> Any? {
        let answer = try await send(
            "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = answer["exceptionDetails"] as? [String: Any] {
            throw Chromium.StartFailure(description: "`\(expression)` threw: \(exception)")
        }
        return (answer["result"] as? [String: Any])?["value"]
    }

    /// Where table point (x, y) is on the page, from the page's own layout.
    func clientPoint(_ x: Double, _ y: Double) async throws -> (x: Double, y: Double) {
        let value = try await evaluate("JSON.stringify(window.practice.clientPoint(\(x), \(y)))") as? String
        let object = try JSONSerialization.jsonObject(with: Data((value ?? "{}").utf8)) as? [String: Double]
        guard let px = object?["x"], let py = object?["y"] else {
            throw Chromium.StartFailure(description: "the page has no layout yet: \(value ?? "nil")")
        }
        return (px, py)
    }

    func moveMouse(toTable x: Double, _ y: Double) async throws {
        let point = try await clientPoint(x, y)
        try await send("Input.dispatchMouseEvent", ["type": "mouseMoved", "x": point.x, "y": point.y])
    }

    func click(atPage x: Double, _ y: Double) async throws {
        for type in ["mouseMoved", "mousePressed", "mouseReleased"] {
            var params: [String: Any] = ["type": type, "x": x, "y": y]
            if type != "mouseMoved" {
                params["button"] = "left"
                params["clickCount"] = 1
            }
            try await send("Input.dispatchMouseEvent", params)
        }
    }

    func screenshot(to path: String) async throws {
        let shot = try await send("Page.captureScreenshot", ["format": "png"])
        guard let base64 = shot["data"] as? String, let data = Data(base64Encoded: base64) else {
            throw Chromium.StartFailure(description: "Page.captureScreenshot returned no image")
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}

/// Calls `probe` every 20 ms until it returns a value or `timeout` passes.
func poll<T>(timeout: Duration, _ probe: () async throws -> T?) async rethrows -> T? {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var attempts = 0
    while attempts < 100_000 {
        attempts += 1
        if let value = try await probe() { return value }
        if clock.now >= deadline { return nil }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return nil
}
