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
