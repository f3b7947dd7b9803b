import Bolts
import BoltsServer
import Logging
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

struct CheckoutFailed: Error, CustomStringConvertible {
    var orderID: Int
    var description: String { "checkout of order \(orderID) failed" }
}

/// Creates a task that fails with `error` and drops it unread; returns the line that
/// created it. (Not inside the exit test's closure: there `#line` is the macro's line.)
private func abandonFailedTask(_ error: some Error) -> Int {
    do { _ = Task<Int>(error: error) }
    return #line - 1
}

/// The unobserved-error handler is process-wide and other suites (BoltsTests' lifetime
/// tests) install their own while tests run in parallel: each test here runs in a process
/// of its own (an exit test), where it cannot take their reports or lose its own.
@Suite struct UnobservedErrorLoggingTests {
    @Test func anUnobservedErrorIsLoggedWithItsCreationPlaceAtTheChosenLevel() async {
        await #expect(processExitsWith: .success) {
            let store = InMemoryLogHandler.Store()
            TaskDiagnostics.logUnobservedErrors(to: .inMemory(store), level: .warning)

            let line = abandonFailedTask(CheckoutFailed(orderID: 42))

            let events = store.events
            #expect(events.count == 1)
            guard let event = events.first else { exit(1) }
            #expect(event.level == .warning)
            #expect((event.error as? CheckoutFailed)?.orderID == 42)
            #expect(event.message.description.contains("checkout of order 42 failed"))
            #expect(event.file == "BoltsServerTests/UnobservedErrorLoggingTests.swift")
            #expect(event.line == UInt(line))
            #expect(event.source == "BoltsServerTests")
            #expect(event.metadata?["task.file"] == "BoltsServerTests/UnobservedErrorLoggingTests.swift")
            #expect(event.metadata?["task.line"] == "\(line)")
            #expect(event.metadata?["error.type"] == "BoltsServerTests.CheckoutFailed")
        }
    }

    @Test func observedErrorsAndLevelsBelowTheLoggersAreNotLogged() async {
        await #expect(processExitsWith: .success) {
            let store = InMemoryLogHandler.Store()
            var logger = Logger.inMemory(store)
            TaskDiagnostics.logUnobservedErrors(to: logger, level: .error)

            do { _ = Task<Int>(error: CheckoutFailed(orderID: 1)).error }  // observed
            #expect(store.events.isEmpty)

            // The logger's own level still filters: below it, nothing is written.
            logger.logLevel = .critical
            TaskDiagnostics.logUnobservedErrors(to: logger, level: .error)
            do { _ = Task<Int>(error: CheckoutFailed(orderID: 2)) }
            #expect(store.events.isEmpty)

            TaskDiagnostics.logUnobservedErrors(to: logger, level: .critical)
            do { _ = Task<Int>(error: CheckoutFailed(orderID: 3)) }
            #expect(store.events.map { ($0.error as? CheckoutFailed)?.orderID } == [3])
            #expect(store.events.first?.level == .critical)
        }
    }
}
