import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Back-off for a listening socket whose `accept(2)` fails, so that running out of descriptors does not spin.
///
/// At the open-file limit `accept` fails with `EMFILE` while the connection stays queued, so the listener is readable
/// again at once and the event loop retries in a tight loop at 100 % CPU, starving every other socket it serves. NIO's
/// own `AcceptBackoffHandler` cannot stop that here: after a failed accept the channel keeps its read pending and its
/// interest in readability, so no new `read()` ever reaches the handler to be delayed. This handler turns `autoRead`
/// off — which takes the listener out of the poll set — and back on after the delay.
package final class AcceptBackoff: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = any Channel
    package typealias InboundOut = any Channel

    private let onBackoff: (IOError) -> Void
    private var resume: Scheduled<Void>?

    /// `onBackoff` is told of each error the listener backs off from, on its loop.
    package init(onBackoff: @escaping (IOError) -> Void = { _ in }) {
        self.onBackoff = onBackoff
    }

    /// How long to stop accepting after `error`: longer when the process or system is out of descriptors or memory.
    package static func delay(after error: IOError) -> TimeAmount {
        switch error.errnoCode {
        case EMFILE, ENFILE, ENOBUFS, ENOMEM: .milliseconds(200)
        default: .milliseconds(20)
        }
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError else { return context.fireErrorCaught(error) }
        onBackoff(error)
        guard resume == nil, let options = context.channel.syncOptions else { return }
        try? options.setOption(.autoRead, value: false)
        let channel = context.channel
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        resume = context.eventLoop.scheduleTask(in: Self.delay(after: error)) {
            bound.value.resume = nil
            try? channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        resume?.cancel()
        resume = nil
        context.fireChannelInactive()
    }
}
