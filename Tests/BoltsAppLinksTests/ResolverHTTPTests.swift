import Bolts
import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

@Suite("HTML resolver against a loopback HTTP server")
struct ResolverHTTPTests {
    let iosTags: [(String, String?)] = [
        ("al:ios:url", "applinks://docs"),
        ("al:ios:app_store_id", "12345"),
        ("al:ios:app_name", "App Links"),
    ]

    @Test func resolvesTagsAndSendsThePreferHeader() async throws {
        let html = page(withTags: iosTags)
        let server = try TestHTTPServer { _ in .html(html) }
        defer { server.stop() }
        let url = server.url("/docs")
        let link = try await loopbackResolver().appLink(from: url, platform: .ios).value
        #expect(link.sourceURL == url)
        #expect(link.webURL == url)
        #expect(
            link.targets == [
                AppLinkTarget(url: URL(string: "applinks://docs"), appStoreId: "12345", appName: "App Links")
            ])
        let request = try #require(server.requests.first)
        #expect(request.headers["prefer-html-meta-tags"] == "al")
        #expect(request.method == "GET")
    }

    @Test func pageWithoutTagsResolvesToNoTargetsWithThePageAsFallback() async throws {
        let server = try TestHTTPServer { _ in .html("<html><body>nothing here</body></html>") }
        defer { server.stop() }
        let url = server.url("/plain")
        let link = try await loopbackResolver().appLink(from: url).value
        #expect(link.targets.isEmpty)
        #expect(link.webURL == url)
    }

    @Test func followsRedirectsAndResolvesRelativeURLsAgainstTheFinalPage() async throws {
        let html = page(withTags: [("al:ios:url", "applinks://x"), ("al:web:url", "/web/page")])
        let server = try TestHTTPServer { request in
            switch request.path {
            case "/start": return .redirect(to: "/middle", status: 301)
            case "/middle": return .redirect(to: "http://\(request.headers["host"] ?? "")/final/", status: 307)
            default: return .html(html)
            }
        }
        defer { server.stop() }
        let start = server.url("/start")
        let link = try await loopbackResolver().appLink(from: start).value
        #expect(link.sourceURL == start)
        #expect(link.webURL == server.url("/web/page"))
        #expect(server.requests.map(\.path) == ["/start", "/middle", "/final/"])
        #expect(server.requests.allSatisfy { $0.headers["prefer-html-meta-tags"] == "al" })
    }

    @Test func redirectLoopFaultsWithRedirectLoop() async throws {
        let server = try TestHTTPServer { request in
            request.path == "/a" ? .redirect(to: "/b") : .redirect(to: "/a")
        }
        defer { server.stop() }
        let error = await resolutionError(of: loopbackResolver().appLink(from: server.url("/a")))
        guard case .redirectLoop(let url, let chain) = error else {
            Issue.record("expected a redirect loop, got \(String(describing: error))")
            return
        }
        #expect(url == server.url("/a"))
        #expect(chain.map(\.path) == ["/a", "/b", "/a"])
        #expect(error?.description.contains("Redirect loop") == true)
    }

    @Test func tooManyRedirectsFaultsWithTheLimit() async throws {
        let server = try TestHTTPServer { request in
            let step = Int(request.path.dropFirst()) ?? 0
            return .redirect(to: "/\(step + 1)")
        }
        defer { server.stop() }
        let resolver = loopbackResolver(.init(maximumRedirects: 3))
        let error = await resolutionError(of: resolver.appLink(from: server.url("/0")))
        guard case .tooManyRedirects(_, let limit) = error else {
            Issue.record("expected too many redirects, got \(String(describing: error))")
            return
        }
        #expect(limit == 3)
        #expect(server.requests.count == 4)
    }

    @Test func redirectWithoutLocationFaults() async throws {
        let server = try TestHTTPServer { _ in TestHTTPServer.Response(status: 302, reason: "Found") }
        defer { server.stop() }
        let error = await resolutionError(of: loopbackResolver().appLink(from: server.url("/x")))
        guard case .invalidRedirect(_, let status, let location) = error else {
            Issue.record("expected an invalid redirect, got \(String(describing: error))")
            return
        }
        #expect(status == 302)
        #expect(location == nil)
    }

    @Test(arguments: [404, 410, 500, 503])
    func errorStatusFaultsWithTheStatus(status: Int) async throws {
        let html = page(withTags: iosTags)
        let server = try TestHTTPServer { _ in .status(status, body: html) }
        defer { server.stop() }
        let error = await resolutionError(of: loopbackResolver().appLink(from: server.url("/missing")))
        guard case .httpStatus(_, let code) = error else {
            Issue.record("expected an HTTP status error, got \(String(describing: error))")
            return
        }
        #expect(code == status)
        #expect(error?.description.contains("\(status)") == true)
    }

    @Test func slowServerFaultsWithTimeout() async throws {
        let server = try TestHTTPServer { _ in
            var response = TestHTTPServer.Response.html("<meta property='al:ios:url' content='x://y'>")
            response.delay = 3
            return response
        }
        defer { server.stop() }
        let resolver = loopbackResolver(.init(timeout: 0.5))
        let started = Date()
        let resolution = resolver.appLink(from: server.url("/slow"))
        // Time the task's completion itself, not the await's resumption: in a parallel test run the awaiting
        // Swift task may wait for a cooperative thread long after the resolution ended.
        let ended = resolution.continueWith(.immediate) { _ in Date() }
        let error = await resolutionError(of: resolution)
        let elapsed = try await ended.value.timeIntervalSince(started)
        guard case .timedOut(_, let seconds) = error else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            return
        }
        #expect(seconds == 0.5)
        #expect(elapsed < 2.5)
    }

    @Test func slowRedirectChainTimesOutAsAWhole() async throws {
        let server = try TestHTTPServer { request in
            var response = TestHTTPServer.Response.redirect(to: request.path + "x")
            response.delay = 0.3
            return response
        }
        defer { server.stop() }
        let resolver = loopbackResolver(.init(maximumRedirects: 50, timeout: 1))
        let error = await resolutionError(of: resolver.appLink(from: server.url("/r")))
        guard case .timedOut = error else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            return
        }
        #expect(server.requests.count < 6)
    }

    @Test func hugeStreamedBodyFaultsAsOversize() async throws {
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(headers: [("Content-Type", "text/html")], streamedBodySize: 64 * 1024 * 1024)
        }
        defer { server.stop() }
        let resolver = loopbackResolver(.init(maximumResponseSize: 256 * 1024))
        let error = await resolutionError(of: resolver.appLink(from: server.url("/huge")))
        guard case .responseTooLarge(_, let limit) = error else {
            Issue.record("expected an oversize error, got \(String(describing: error))")
            return
        }
        #expect(limit == 256 * 1024)
    }

    @Test func announcedOversizeBodyFaultsBeforeReading() async throws {
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(
                headers: [("Content-Type", "text/html"), ("Content-Length", "\(512 * 1024 * 1024)")],
                streamedBodySize: 1024 * 1024)
        }
        defer { server.stop() }
        let resolver = loopbackResolver(.init(maximumResponseSize: 1024))
        let error = await resolutionError(of: resolver.appLink(from: server.url("/announced")))
        guard case .responseTooLarge = error else {
            Issue.record("expected an oversize error, got \(String(describing: error))")
            return
        }
    }

    @Test func connectionRefusedFaultsAsNetworkFailure() async throws {
        let server = try TestHTTPServer { _ in .html("") }
        let url = server.url("/gone")
        server.stop()
        // A generous timeout: the refusal is immediate, but beside the CPU-bound stress suites
        // of a full `swift test` on 2 CPUs it has waited over 5 s for a CPU.
        let error = await resolutionError(of: loopbackResolver(.init(timeout: 60)).appLink(from: url))
        guard case .network(let failed, _) = error else {
            Issue.record("expected a network failure, got \(String(describing: error))")
            return
        }
        #expect(failed == url)
    }

    @Test func unsupportedSchemeFaults() async throws {
        let error = await resolutionError(of: loopbackResolver().appLink(from: URL(string: "file:///etc/passwd")!))
        guard case .unsupportedScheme = error else {
            Issue.record("expected an unsupported scheme error, got \(String(describing: error))")
            return
        }
    }

    @Test func distinctFailuresHaveDistinctDescriptions() {
        let url = URL(string: "http://example.com/")!
        let errors: [AppLinkResolutionError] = [
            .network(url: url, underlying: URLError(.cannotConnectToHost)),
            .timedOut(url: url, seconds: 1),
            .responseTooLarge(url: url, limit: 10),
            .httpStatus(url: url, statusCode: 500),
            .redirectLoop(url: url, chain: [url, url]),
            .tooManyRedirects(url: url, limit: 2),
            .invalidRedirect(url: url, statusCode: 302, location: nil),
            .unsupportedScheme(url: url),
            .malformedDataURL(url: url),
        ]
        #expect(Set(errors.map(\.description)).count == errors.count)
        #expect(errors.allSatisfy { $0.description.contains("example.com") })
        #expect(errors.allSatisfy { $0.url == url })
        #expect(errors.allSatisfy { $0.localizedDescription == $0.description })
    }
}
