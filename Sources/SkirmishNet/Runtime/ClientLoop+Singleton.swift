extension ClientLoop {
    /// A client loop for the whole process, started on first use: where ``AsyncClientSession`` connects by default.
    ///
    /// Like SwiftNIO's `MultiThreadedEventLoopGroup.singleton`, it is never stopped. Failing to start one thread
    /// (no memory, no file descriptors for its epoll set) stops the process: nothing on the client side could run.
    package static let singleton: ClientLoop = {
        do {
            return try ClientLoop(name: "skirmish-client")
        } catch {
            fatalError("cannot start the shared client loop: \(error)")
        }
    }()
}
