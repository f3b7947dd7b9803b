import Bolts
import Dispatch

/// One worker of a pool, held in a job that waits on a semaphore (a wait the pool cannot see)
/// until ``release()``: in a pool of two, the other worker's queue is then its own alone.
package final class HeldWorker: Sendable {
    private let gate = DispatchSemaphore(value: 0)

    /// Holds one worker of `pool`; returns once the holding job runs.
    package init(of pool: ThreadPool) {
        let started = DispatchSemaphore(value: 0)
        pool.execute { [gate] in
            started.signal()
            gate.wait()
        }
        started.wait()
    }

    /// Lets the held worker go. Call it once.
    package func release() { gate.signal() }
}
