import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// A Chrome DevTools Protocol client over NIO's WebSocket client: commands out as JSON text, answers matched by id.
///
/// Just enough for the page tests: open a tab, evaluate script, send mouse and touch input, capture screenshots.
/// Events (messages without an id) are ignored.
final class DevTools: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let channel: any Channel
    private let pending: Pending

    private init(channel: any Channel, pending: Pending) {
        self.channel = channel
        self.pending = pending
    }

    /// Connects to the browser endpoint `ws://127.0.0.1:port/path` that Chromium wrote to `DevToolsActivePort`.
    static func connect(port: Int, path: String) async throws -> DevTools {
        let pending = Pending()
        let upgraded = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOWebSocketClientUpgrader(
                        maxFrameSize: 1 << 26,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(TextCollector(pending: pending))
                                upgraded.succeed(())
                            }
                        })
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                    try channel.pipeline.syncOperations.addHandler(UpgradeRequest(port: port, path: path))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(10)) {
            upgraded.fail(Failure(description: "the DevTools WebSocket upgrade did not finish in 10 s"))
        }
        defer { timeout.cancel() }
        try await upgraded.futureResult.get()
        return DevTools(channel: channel, pending: pending)
    }

    /// Sends one command and returns its `result` object; a CDP error, or no answer within `timeout`, throws.
    @discardableResult
    func send(
        _ method: String, _ params: [String: Any] = [:], session: String? = nil, timeout: Duration = .seconds(30)
    ) async throws -> [String: Any] {
        let id = pending.nextID()
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        let data = try JSONSerialization.data(withJSONObject: message)
        let text = try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask { try await self.pending.wait(id) }
            group.addTask {
                try await Task.sleep(for: timeout)
                self.pending.forget(id) // ends the waiter, so the group can finish
                throw Failure(description: "\(method) got no answer in \(timeout)")
            }
            defer {
                group.cancelAll()
                pending.forget(id)
            }
            var buffer = channel.allocator.buffer(capacity: data.count)
            buffer.writeBytes(data)
            try await channel.writeAndFlush(
                WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
            ).get()
            return try await group.next()!
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw Failure(description: "\(method): the answer is not a JSON object: \(text.prefix(200))")
        }
        if let error = object["error"] as? [String: Any] {
            throw Failure(description: "\(method) failed: \(error["message"] ?? error)")
        }
        return object["result"] as? [String: Any] ?? [:]
    }

    func close() async {
        try? await channel.close()
    }
}

/// Answers waiting for their command ids; an answer may arrive before its waiter.
private final class Pending: Sendable {
    private struct State {
        var next = 0
        var waiters: [Int: CheckedContinuation<String, any Error>] = [:]
        var arrived: [Int: String] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    func nextID() -> Int {
        state.withLock { state in
            state.next += 1
            return state.next
        }
    }

    func wait(_ id: Int) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<String, any Error>? = state.withLock { state in
                if let text = state.arrived.removeValue(forKey: id) { return .success(text) }
                if state.closed { return .failure(DevTools.Failure(description: "the DevTools connection closed")) }
                state.waiters[id] = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    func forget(_ id: Int) {
        let waiter = state.withLock { state in
            state.arrived[id] = nil
            return state.waiters.removeValue(forKey: id)
        }
        waiter?.resume(throwing: CancellationError())
    }

    func deliver(_ text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let id = object["id"] as? Int
        else { return }
        let waiter = state.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.arrived[id] = text
                return nil as CheckedContinuation<String, any Error>?
            }
            return waiter
        }
        waiter?.resume(returning: text)
    }

    func close() {
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters {
            waiter.resume(throwing: DevTools.Failure(description: "the DevTools connection closed"))
        }
    }
}

/// Joins fragmented text messages and hands each whole one to ``Pending``.
private final class TextCollector: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let pending: Pending
    private var partial: ByteBuffer?

    init(pending: Pending) {
        self.pending = pending
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .continuation:
            var data = frame.unmaskedData
            if partial == nil { partial = data } else { partial!.writeBuffer(&data) }
            if frame.fin, let whole = partial {
                partial = nil
                pending.deliver(String(buffer: whole))
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            pending.close()
            context.close(promise: nil)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending.close()
        context.fireChannelInactive()
    }
}

/// Sends the GET that asks for the upgrade once connected.
private final class UpgradeRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let port: Int
    private let path: String

    init(port: Int, path: String) {
        self.port = port
        self.path = path
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "127.0.0.1:\(port)")
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }
}
