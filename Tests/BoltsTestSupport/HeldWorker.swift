import Bolts
import Dispatch
import Synchronization

/// One worker of a pool, held in a job until ``release()``: in a pool of two, the other
/// worker's queue is then its own alone.
///
/// The job spins rather than sleeping: a worker asleep in a job while jobs wait is one the
/// pool compensates for (a monitor thread brings in another thread, invariant I12 of the C
/// core), while one that stays running, or runnable, is busy. It makes no system call, so
/// its thread is not seen asleep in an ordinary build. Under ThreadSanitizer it can be: the
/// sanitizer's runtime records each atomic load and now and then waits on a lock of its
/// own, rarely but often enough for the monitor to see, so a test whose premise is that no
/// other thread runs the pool's queues checks `metrics.compensations`, or keeps its task
/// pending by other means.
package final class HeldWorker: Sendable {
    private let released = Atomic<Bool>(false)

    /// Holds one worker of `pool`; returns once the holding job runs.
    package init(of pool: ThreadPool) {
        let started = DispatchSemaphore(value: 0)
        pool.execute { [self] in
            started.signal()
            while !self.released.load(ordering: .acquiring) {}
        }
        started.wait()
    }

    /// Lets the held worker go.
    package func release() { released.store(true, ordering: .releasing) }
}
