import Bolts
import NIOCore
import NIOPosix

/// Long-lived resources that scenarios share: made on first use, shut down once at the end,
/// so that no scenario measures thread start-up.
final class Environment {
    /// Event-loop threads for the task-operation peers: one loop, and every SwiftNIO
    /// task-operation scenario runs (and times itself) on it.
    private var peerLoopGroup: MultiThreadedEventLoopGroup?
    private var sharedPool: ThreadPool?

    /// The loop that SwiftNIO's task-operation peers run on.
    var peerLoop: any EventLoop {
        let group = peerLoopGroup ?? MultiThreadedEventLoopGroup(numberOfThreads: 1)
        peerLoopGroup = group
        return group.next()
    }

    /// The Bolts pool used by task operations that complete on a pool (one worker per CPU).
    var pool: ThreadPool {
        let pool = sharedPool ?? ThreadPool(threadCount: System.coreCount)
        sharedPool = pool
        return pool
    }

    func shutdown() {
        try? peerLoopGroup?.syncShutdownGracefully()
        peerLoopGroup = nil
        sharedPool?.shutdown()
        sharedPool = nil
    }
}
