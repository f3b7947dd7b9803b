import Bolts
import Foundation
import Testing

@testable import BoltsAppLinks

/// Waits for a Bolts task and returns its outcome as a Swift `Result` (cancellation is a `CancelledError`).
func outcome<T>(of task: Task<T>) async -> Result<T, any Error> {
    do {
        return .success(try await task.value)
    } catch {
        return .failure(error)
    }
}

/// The resolution error a task faulted with, or nil (and a recorded issue) when it did not fault with one.
func resolutionError<T>(of task: Task<T>, sourceLocation: SourceLocation = #_sourceLocation) async
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
func page(withTags tags: [(String, String?)], body: String = "Hello") -> String {
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
func dataURL(forHTML html: String) -> URL {
    URL(string: "data:text/html;charset=utf-8;base64," + Data(html.utf8).base64EncodedString())!
}

/// Collects the measurement events whose arguments mention `marker`, while `body` runs.
func events(mentioning marker: String, during body: () throws -> Void) rethrows -> [AppLinkMeasurementEvent] {
    let collected = Locked<[AppLinkMeasurementEvent]>([])
    let observation = AppLinkMeasurementEvent.addObserver { event in
        if event.args.values.contains(where: { $0.contains(marker) }) {
            collected.withLock { $0.append(event) }
        }
    }
    defer { observation.cancel() }
    try body()
    return collected.current
}

/// A unique marker for URLs, so that tests running in parallel can tell their events apart.
func uniqueMarker() -> String {
    "m" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
}
