import Bolts
import CBoltsRuntime
import CBoltsTuning
import Dispatch
import Foundation
import Synchronization
import Testing

/// The steal grace of the pool's invariant I10 on a pool of more than two workers: an idle
/// worker leaves a queue's only job to its busy owner for a moment, to one owner at a time,
/// so that jobs queued behind long jobs are taken within the bound however many owners
/// hold one.
@Suite(.serialized)
struct ThreadPoolStealGraceTests {
    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// How long each owner's short job waited in its queue (0 until it has run).
    private final class Record: Sendable {
        private let first = Atomic<UInt64>(0)
        private let second = Atomic<UInt64>(0)

        func ran(owner: Int, after nanoseconds: UInt64) {
            if owner == 0 {
                first.store(max(nanoseconds, 1), ordering: .relaxed)
            } else {
                second.store(max(nanoseconds, 1), ordering: .relaxed)
            }
        }

        func waited(owner: Int) -> UInt64 {
            owner == 0 ? first.load(ordering: .relaxed) : second.load(ordering: .relaxed)
        }
    }

    /// What the short jobs of one attempt of the restraint test count: jobs run, those of
    /// the last 64 per owner that ran before any owner woke, and owners awake.
    private final class Flags: Sendable {
        let ran = Atomic<Int>(0)
        let early = Atomic<Int>(0)
        let awake = Atomic<Int>(0)
    }

    /// How many of the two long jobs have started.
    private final class Started: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Runs a long job on each of two workers at once. Once both run, within a microsecond
    /// or so of each other (a spin, not a sleep, so that an idle worker's first look finds
    /// what both queue; bounded, so a pool that never ran them side by side fails in the
    /// caller's checks, not here), each calls `queue` with its number (0 or 1) to submit
    /// from its worker to its own queue, sleeps `sleep` ns where the pool cannot see, and
    /// calls `woke`. Returns when both have woken.
    private static func twoSleepingOwners(
        _ pool: ThreadPool,
        sleep: UInt64,
        queue: @escaping @Sendable (Int) -> Void,
        woke: @escaping @Sendable () -> Void = {}
    ) {
        let started = Started()
        let done = DispatchSemaphore(value: 0)
        for owner in 0..<2 {
            pool.execute {
                started.count.add(1, ordering: .relaxed)
                let deadline = now() + 2_000_000_000
                while started.count.load(ordering: .relaxed) < 2 && now() < deadline {}
                queue(owner)
                usleep(UInt32(sleep / 1000))
                woke()
                done.signal()
            }
        }
        done.wait()
        done.wait()
    }

    /// Two workers each run a long job (a plain sleep, which the pool cannot see), and each
    /// queues one short job on its own queue just before it sleeps. The two idle workers
    /// must take both short jobs long before the sleeps end. (A worker that watched the two
    /// owners in turn used to start each one's grace over at every look: it kept scanning
    /// and took neither job until an owner woke.)
    @Test func idleWorkersTakeTheOnlyJobOfEachOwnerBusyInALongJob() {
        let pool = ThreadPool(threadCount: 4, name: "grace")
        defer { pool.shutdown() }
        let sleep: UInt64 = 200_000_000
        for attempt in 0..<5 {
            let record = Record()
            Self.twoSleepingOwners(pool, sleep: sleep) { owner in
                let queuedAt = Self.now()
                pool.execute { record.ran(owner: owner, after: Self.now() - queuedAt) }
            }
            // After the long jobs, each owner runs what is still in its own queue: wait for
            // both short jobs before reading what they measured.
            let deadline = Self.now() + 10_000_000_000
            while (record.waited(owner: 0) == 0 || record.waited(owner: 1) == 0) && Self.now() < deadline { usleep(100) }
            for owner in 0..<2 {
                let waited = record.waited(owner: owner)
                #expect(
                    waited != 0 && waited < sleep / 2,
                    "attempt \(attempt): the job queued by owner \(owner) waited \(waited / 1000) µs (its owner slept \(sleep / 1_000_000) ms)"
                )
            }
        }
        #expect(BOLTS_POOL_STEAL_GRACE_NS < 1_000_000)
    }

    /// The same for the restraint of I11, which a worker also keeps toward one owner at a
    /// time: two owners each hand themselves short jobs (which the idle workers come to
    /// leave to them), queue 64 more and sleep where the pool cannot see. The idle workers
    /// must take all 128 before the sleeps end, once each owner's activity has stood still
    /// for BOLTS_POOL_RESTRAIN_NS. (A worker watching both owners in turn would have left
    /// both queues alone until the owners woke.)
    @Test func idleWorkersTakeTheShortJobsOfEachStalledOwner() {
        let pool = ThreadPool(threadCount: 4, name: "restrain2")
        defer { pool.shutdown() }
        let sleep: UInt64 = 200_000_000
        for attempt in 0..<3 {
            let flags = Flags()
            Self.twoSleepingOwners(pool, sleep: sleep) { _ in
                // Short jobs handed to itself, 300 ns apart: the idle workers take some,
                // see that they are short, and then leave the rest to this owner.
                for _ in 0..<2_048 {
                    pool.execute { flags.ran.add(1, ordering: .relaxed) }
                    let end = Self.now() + 300
                    while Self.now() < end {}
                }
                for _ in 0..<64 {
                    pool.execute {
                        if flags.awake.load(ordering: .acquiring) == 0 { flags.early.add(1, ordering: .relaxed) }
                        flags.ran.add(1, ordering: .relaxed)
                    }
                }
            } woke: {
                flags.awake.add(1, ordering: .releasing)
            }
            let deadline = Self.now() + 10_000_000_000
            while flags.ran.load(ordering: .relaxed) < 2 * (2_048 + 64) && Self.now() < deadline { usleep(100) }
            #expect(
                flags.early.load(ordering: .relaxed) == 128,
                "attempt \(attempt): \(flags.early.load(ordering: .relaxed)) of 128 jobs ran while their owners slept"
            )
        }
        #expect(BOLTS_POOL_RESTRAIN_NS < 20_000_000)
    }
}
