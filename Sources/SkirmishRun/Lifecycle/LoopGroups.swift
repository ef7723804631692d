import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import Synchronization

/// The event loop groups one command creates, shut down when its service group has ended, however it ended.
package final class LoopGroups: Sendable {
    private let groups = Mutex<[MultiThreadedEventLoopGroup]>([])
    private let threads = Mutex<[Int32]>([])
    private let down = Mutex(false)

    package init() {}

    /// A new group of `threads` loops, owned here.
    package func make(threads count: Int) async -> MultiThreadedEventLoopGroup {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, count))
        groups.withLock { $0.append(group) }
        let ids = await LoopPrecedence.threadIDs(of: group)
        threads.withLock { $0 += ids }
        return group
    }

    /// The kernel's ids of every loop thread created here (to check from outside that they ended).
    package var threadIDs: [Int32] { threads.withLock { $0 } }

    /// Whether ``shutDown()`` completed for every group.
    package var isShutDown: Bool { down.withLock { $0 } }

    /// Shuts every group down and waits for their threads to end.
    package func shutDown() async {
        let all = groups.withLock { groups -> [MultiThreadedEventLoopGroup] in
            defer { groups.removeAll() }
            return groups
        }
        for group in all { try? await group.shutdownGracefully() }
        down.withLock { $0 = true }
    }
}
