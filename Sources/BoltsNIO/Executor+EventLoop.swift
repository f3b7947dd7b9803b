import Bolts
import NIOCore

extension Executor {
    /// An executor that runs each job on `eventLoop`, through `EventLoop.execute`.
    ///
    /// Jobs are always enqueued, even when the caller is already on the loop: a chain of
    /// continuations then unwinds the stack between links instead of nesting, as SwiftNIO's
    /// own callbacks do. The loop must outlive the continuations that target it: SwiftNIO
    /// drops (and logs) a job given to a loop that has shut down, and a task waiting on such
    /// a continuation would never end.
    public static func eventLoop(_ eventLoop: any EventLoop) -> Executor {
        Executor(description: "EventLoop Executor: \(eventLoop)") { job in eventLoop.execute(job) }
    }
}

extension EventLoop {
    /// This loop as a Bolts executor: the same as ``Bolts/Executor/eventLoop(_:)``.
    public var boltsExecutor: Executor { .eventLoop(self) }
}
