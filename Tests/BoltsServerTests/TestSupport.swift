import Logging
import Synchronization

/// A swift-log handler that keeps every event in memory, for tests to read.
struct InMemoryLogHandler: LogHandler {
    /// The events logged through every copy of this handler, oldest first.
    final class Store: Sendable {
        private let storage = Mutex<[LogEvent]>([])

        var events: [LogEvent] { storage.withLock { $0 } }

        func append(_ event: LogEvent) { storage.withLock { $0.append(event) } }
    }

    let store: Store
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    init(store: Store) { self.store = store }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, new in new }
        }
        store.append(event)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}

extension Logger {
    /// A logger whose events land in `store`.
    static func inMemory(_ store: InMemoryLogHandler.Store, label: String = "test") -> Logger {
        Logger(label: label) { _ in InMemoryLogHandler(store: store) }
    }
}

/// Polls `condition` every millisecond until it holds or `seconds` have passed.
///
/// The limit is generous on purpose: `swift test` runs every target in one process, and
/// while other suites' synchronous stress and soak tests hold Swift Concurrency's two
/// cooperative threads (on a 2-CPU machine), the async work these tests wait for can
/// stall for tens of seconds (40 s was seen) before it runs. Only a test that is about to
/// fail waits that long.
func eventually(within seconds: Double = 180, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await _Concurrency.Task.sleep(for: .milliseconds(1))
    }
    return true
}
