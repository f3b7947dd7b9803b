import Bolts
import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

/// The App Links initializers that take seconds also take a `Duration`, and behave as the
/// seconds form given `duration / .seconds(1)`.
@Suite("Duration forms of the App Links initializers")
struct AppLinksDurationOverloadTests {
    @Test func aResolverConfiguredWithADurationTimesOutAfterIt() async throws {
        let configuration = HTMLAppLinkResolver.Configuration(maximumRedirects: 3, timeout: .milliseconds(500))
        #expect(configuration.timeout == 0.5 && configuration.maximumRedirects == 3)
        let server = try TestHTTPServer { _ in
            var response = TestHTTPServer.Response.html("<meta property='al:ios:url' content='x://y'>")
            response.delay = 3
            return response
        }
        defer { server.stop() }
        let error = await resolutionError(of: loopbackResolver(configuration).appLink(from: server.url("/slow")))
        guard case .timedOut(_, let seconds) = error else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            return
        }
        #expect(seconds == 0.5)
    }

    @Test func aRequestWithADurationTimeoutIsFetched() async throws {
        let server = try TestHTTPServer { _ in .status(418, body: "teapot") }
        defer { server.stop() }
        let request = AppLinkHTTPRequest(
            url: server.url("/t"), headers: [:], timeout: .seconds(60), maximumBodySize: 1000)
        #expect(request.timeout == 60)
        let fetcher = URLSessionAppLinkFetcher(idleTimeout: .seconds(60))
        let response = try await fetcher.fetch(request).value
        #expect(response.statusCode == 418)
    }

    @Test func aFetcherWithoutAPositiveIdleDurationTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = URLSessionAppLinkFetcher(idleTimeout: .zero)
        }
    }

    @Test func cachedEntriesExpireAfterADurationTimeToLive() async throws {
        let inner = GatedResolver()
        let clock = ManualClock()
        let cache = CachingAppLinkResolver(wrapping: inner, timeToLive: .seconds(60), clock: clock.read)
        #expect(cache.timeToLive == 60)
        let url = URL(string: "http://a.example.com/")!
        _ = cache.appLink(from: url, platform: .ios)
        inner.succeed(0)
        clock.advance(59)
        #expect(try await cache.appLink(from: url, platform: .ios).value.webURL == URL(string: "http://call/0"))
        #expect(inner.calls.count == 1)
        clock.advance(2)
        let refreshed = cache.appLink(from: url, platform: .ios)
        #expect(inner.calls.count == 2)
        inner.succeed(1)
        #expect(try await refreshed.value.webURL == URL(string: "http://call/1"))
    }

    @Test func anOpenersLaunchDurationIsKeptInSeconds() {
        let opener = XDGAppLinkURLOpener(environment: ["PATH": "/nonexistent"], launchTimeout: .milliseconds(1500))
        #expect(opener.launchTimeout == 1.5)
        #expect(opener.environment == ["PATH": "/nonexistent"])
        // Without the tools nothing opens, whatever the timeout.
        #expect(!opener.open(URL(string: "x-bolts-test://a")!))
    }
}
