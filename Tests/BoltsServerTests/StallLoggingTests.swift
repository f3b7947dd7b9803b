import Bolts
import BoltsServer
import BoltsTestSupport
import Dispatch
import Glibc
import Logging
import MetricsTestKit
import Testing

@inline(never)
func blockInsideRenderInvoiceSynchronously() {
    usleep(40_000)
}

@Suite struct StallLoggingTests {
    /// A job that blocks where the pool cannot see it is logged as one line when found
    /// (with its stack in the metadata) and when it ends, and its hold lands in the timer.
    @Test func stallsAreLoggedOnALineEachAndTimed() async throws {
        let pool = ThreadPool(threadCount: 1, name: "stall-log")
        defer { pool.shutdown() }
        let store = InMemoryLogHandler.Store()
        let metrics = TestMetrics()
        // Also on standard output, as swift-log's stream handler writes them: README.md
        // quotes the two lines this test prints.
        let logger = Logger(label: "server") { label in
            MultiplexLogHandler([InMemoryLogHandler(store: store), StreamLogHandler.standardOutput(label: label)])
        }
        pool.logStalls(to: logger, factory: metrics)
        let done = DispatchSemaphore(value: 0)
        pool.execute {
            blockInsideRenderInvoiceSynchronously()
            done.signal()
        }
        pool.execute { done.signal() }  // queued behind the blocked one
        done.wait()
        done.wait()
        #expect(await eventually { store.events.count >= 2 })
        let events = store.events
        let found = events.first { $0.level == .warning }
        let ended = events.first { $0.level == .info }
        #expect(found?.message.description.hasPrefix("stall found: stall-lo-0 (worker 0) blocked ") ?? false, "\(events)")
        #expect(found?.message.description.contains("blockInsideRenderInvoiceSynchronously") ?? false, "\(events)")
        #expect(found?.message.description.contains("in clock_nanosleep") ?? false, "\(events)")
        #expect(found?.metadata?["stack"]?.description.contains("blockInsideRenderInvoiceSynchronously") ?? false)
        #expect(ended?.message.description.hasPrefix("stall ended: stall-lo-0") ?? false, "\(events)")
        let timer = try metrics.expectTimer("bolts_pool_stall_duration", [("pool", "stall-log")])
        #expect(await eventually { timer.values.count == 1 })
        let held = Double(timer.values.first ?? 0) / 1e6
        #expect(held >= 40 * 0.6 && held <= 40 * 1.25, "the timer recorded \(held) ms for a 40 ms block")
    }
}
