import Bolts
import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

/// A fetcher that answers from a table, for resolver tests without sockets.
final class CannedFetcher: AppLinkHTTPFetching {
    let answers: [String: Result<AppLinkHTTPResponse, any Error>]
    private let log = Locked<[AppLinkHTTPRequest]>([])

    init(_ answers: [String: Result<AppLinkHTTPResponse, any Error>]) {
        self.answers = answers
    }

    var requests: [AppLinkHTTPRequest] { log.current }

    func fetch(_ request: AppLinkHTTPRequest) -> Task<AppLinkHTTPResponse> {
        log.withLock { $0.append(request) }
        switch answers[request.url.absoluteString] {
        case .success(let response): return Task(response)
        case .failure(let error): return Task(error: error)
        case nil: return Task(error: URLError(.cannotFindHost))
        }
    }
}

private struct CustomClientError: Error {}

/// `example.com` as a public address, for resolvers over canned fetchers (nothing connects to it).
let exampleHosts = StubHostResolver(["example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]])

@Suite("Fetchers")
struct FetcherTests {
    @Test func resolverWorksWithAPluggedInClient() async throws {
        let start = URL(string: "https://example.com/a")!
        let html = Data(page(withTags: [("al:android:package", "com.example"), ("al:android:url", "ex://a")]).utf8)
        let fetcher = CannedFetcher([
            "https://example.com/a": .success(
                AppLinkHTTPResponse(url: start, statusCode: 308, headers: ["LOCATION": "b"], body: Data())),
            "https://example.com/b": .success(
                AppLinkHTTPResponse(
                    url: URL(string: "https://example.com/b")!, statusCode: 200,
                    headers: ["Content-Type": "text/html"], body: html)),
        ])
        let resolver = HTMLAppLinkResolver(
            fetcher: fetcher,
            configuration: .init(timeout: 7, maximumResponseSize: 1000, additionalHeaders: ["X-A": "1"]),
            hostResolver: exampleHosts)
        let link = try await resolver.appLink(from: start, platform: .android).value
        #expect(link.targets == [AppLinkTarget(url: URL(string: "ex://a"), package: "com.example")])
        #expect(fetcher.requests.map(\.url.path) == ["/a", "/b"])
        #expect(fetcher.requests.allSatisfy { $0.headers == ["X-A": "1", "Prefer-Html-Meta-Tags": "al"] })
        #expect(fetcher.requests.allSatisfy { $0.maximumBodySize == 1000 && $0.timeout <= 7 && $0.timeout > 0 })
        #expect(fetcher.requests.allSatisfy { $0.connectAddresses == exampleHosts.table["example.com"] })
    }

    @Test func foreignErrorsFromAClientBecomeNetworkFailures() async throws {
        let url = URL(string: "https://example.com/x")!
        let fetcher = CannedFetcher([url.absoluteString: .failure(CustomClientError())])
        let error = await resolutionError(
            of: HTMLAppLinkResolver(fetcher: fetcher, hostResolver: exampleHosts).appLink(from: url))
        guard case .network(let failed, let underlying) = error else {
            Issue.record("expected a network failure, got \(String(describing: error))")
            return
        }
        #expect(failed == url)
        #expect(underlying is CustomClientError)
    }

    @Test func oversizeBodyFromAClientThatIgnoresTheLimitIsStillRefused() async throws {
        let url = URL(string: "https://example.com/big")!
        let fetcher = CannedFetcher([
            url.absoluteString: .success(
                AppLinkHTTPResponse(url: url, statusCode: 200, headers: [:], body: Data(count: 5000)))
        ])
        let resolver = HTMLAppLinkResolver(
            fetcher: fetcher, configuration: .init(maximumResponseSize: 4096), hostResolver: exampleHosts)
        guard case .responseTooLarge(_, 4096) = await resolutionError(of: resolver.appLink(from: url)) else {
            Issue.record("expected the 4096-byte limit to apply")
            return
        }
    }

    // The URLSession tests' timeouts are a safety net, not what they test: beside the
    // CPU-bound stress suites of a full `swift test` on 2 CPUs, a loopback exchange has
    // waited over 5 s for a CPU (the timeout then won the race; a `.ci/run` failed so).
    @Test func urlSessionFetcherDoesNotFollowRedirects() async throws {
        let server = try TestHTTPServer { request in
            request.path == "/from" ? .redirect(to: "/to", status: 301) : .html("target")
        }
        defer { server.stop() }
        let request = AppLinkHTTPRequest(
            url: server.url("/from"), headers: ["Prefer-Html-Meta-Tags": "al"], timeout: 60, maximumBodySize: 1000)
        let response = try await URLSessionAppLinkFetcher.shared.fetch(request).value
        #expect(response.statusCode == 301)
        #expect(response.header("Location") == "/to")
        #expect(response.url == server.url("/from"))
        #expect(server.requests.map(\.path) == ["/from"])
    }

    @Test func urlSessionFetcherReturnsErrorStatusesWithTheirBodies() async throws {
        let server = try TestHTTPServer { _ in .status(418, body: "teapot") }
        defer { server.stop() }
        let request = AppLinkHTTPRequest(url: server.url("/t"), headers: [:], timeout: 60, maximumBodySize: 1000)
        let response = try await URLSessionAppLinkFetcher.shared.fetch(request).value
        #expect(response.statusCode == 418)
        #expect(String(decoding: response.body, as: UTF8.self) == "teapot")
        #expect(response.header("content-type") == "text/html")
    }

    @Test func navigationHelpersMatchTheInstanceForms() {
        let link = AppLink(
            sourceURL: URL(string: "http://e.com/")!, targets: [AppLinkTarget(url: URL(string: "x://"))], webURL: nil)
        #expect(AppLinkNavigation.navigationType(for: link, using: RecordingAppLinkURLOpener()) == .app)
        #expect(
            AppLinkNavigation.navigationType(for: link, using: RecordingAppLinkURLOpener(openableSchemes: []))
                == .failure)
        let data = AppLinkNavigation.callbackAppLinkData(forAppWithName: "Me", url: URL(string: "me://back")!)
        #expect(data == ["referer_app_link": .object(["app_name": "Me", "url": "me://back"])])
        #expect(AppLinkReferer(inboundURL: URL(string: "me://plain?x=1")!) == nil)
    }
}
