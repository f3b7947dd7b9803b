import Bolts
import BoltsAppLinks
import BoltsTestSupport
import Foundation
import Testing

/// Waits for a Bolts task and returns its outcome as a Swift `Result` (cancellation is a `CancelledError`).
package func outcome<T>(of task: Task<T>) async -> Result<T, any Error> {
    do {
        return .success(try await task.value)
    } catch {
        return .failure(error)
    }
}

/// The resolution error a task faulted with, or nil (and a recorded issue) when it did not fault with one.
package func resolutionError<T>(of task: Task<T>, sourceLocation: SourceLocation = #_sourceLocation) async
    -> AppLinkResolutionError?
{
    switch await outcome(of: task) {
    case .success(let value):
        Issue.record("expected a failure, got \(value)", sourceLocation: sourceLocation)
        return nil
    case .failure(let error):
        guard let error = error as? AppLinkResolutionError else {
            Issue.record("expected an AppLinkResolutionError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        return error
    }
}

/// A page holding `tags` as `<meta property content>` elements (a nil content omits the attribute).
package func page(withTags tags: [(String, String?)], body: String = "Hello") -> String {
    var html = "<!DOCTYPE html><html><head><title>Test</title>\n"
    for (property, content) in tags {
        if let content {
            html += "<meta property=\"\(property)\" content=\"\(content)\">\n"
        } else {
            html += "<meta property=\"\(property)\">\n"
        }
    }
    return html + "</head><body>\(body)</body></html>"
}

/// A `data:` URL whose body is `html`, base64-encoded.
package func dataURL(forHTML html: String) -> URL {
    URL(string: "data:text/html;charset=utf-8;base64," + Data(html.utf8).base64EncodedString())!
}

/// Collects the measurement events whose arguments mention `marker`, while `body` runs.
package func events(mentioning marker: String, during body: () throws -> Void) rethrows -> [AppLinkMeasurementEvent] {
    let collected = LockedValue<[AppLinkMeasurementEvent]>([])
    let observation = AppLinkMeasurementEvent.addObserver { event in
        if event.args.values.contains(where: { $0.contains(marker) }) {
            collected.withLock { $0.append(event) }
        }
    }
    defer { observation.cancel() }
    try body()
    return collected.withLock { $0 }
}

/// A unique marker for URLs, so that tests running in parallel can tell their events apart.
package func uniqueMarker() -> String {
    "m" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
}

extension AppLinkEgressPolicy {
    /// The default policy with loopback IPv4 allowed, for resolvers that talk to the test server.
    package static let testLoopback = AppLinkEgressPolicy.default.allowing(["127.0.0.0/8"])
}

/// An HTML resolver whose egress policy lets it reach the loopback test server.
package func loopbackResolver(
    _ configuration: HTMLAppLinkResolver.Configuration = .init(),
    fetcher: any AppLinkHTTPFetching = URLSessionAppLinkFetcher.shared
) -> HTMLAppLinkResolver {
    var configuration = configuration
    configuration.egressPolicy = .testLoopback
    return HTMLAppLinkResolver(fetcher: fetcher, configuration: configuration)
}

/// A host resolver the test controls: names map to fixed addresses, nothing is looked up for real, and every
/// lookup is recorded.
package final class StubHostResolver: AppLinkHostResolving {
    package let table: [String: [AppLinkIPAddress]]
    private let log = LockedValue<[String]>([])

    package init(_ table: [String: [String]]) {
        self.table = table.mapValues { $0.map { AppLinkIPAddress($0)! } }
    }

    /// The names looked up so far.
    package var lookups: [String] { log.withLock { $0 } }

    package func addresses(forHost host: String, cancellationToken: CancellationToken?) -> Task<[AppLinkIPAddress]> {
        log.withLock { $0.append(host) }
        guard let addresses = table[host] else {
            return Task(error: AppLinkHostLookupError(host: host, reason: "not in the test's table"))
        }
        return Task(addresses)
    }
}
