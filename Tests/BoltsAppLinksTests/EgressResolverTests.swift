import Bolts
import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

/// The egress policy inside the resolver. Every connection here goes to the loopback test server; refused
/// destinations are loopback addresses the policy refuses, or names that a test-controlled resolver maps to them.
@Suite("Egress policy in the resolver")
struct EgressResolverTests {
    let html = page(withTags: [("al:ios:url", "egress://ok")])

    @Test func loopbackIsRefusedByDefaultBeforeAnythingIsSent() async throws {
        let server = try TestHTTPServer { [html] _ in .html(html) }
        defer { server.stop() }
        let url = server.url("/private")
        let error = await resolutionError(of: HTMLAppLinkResolver().appLink(from: url))
        guard case .refusedAddress(let refusedURL, let refusal) = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(refusedURL == url)
        #expect(refusal.address == AppLinkIPAddress("127.0.0.1"))
        #expect(refusal.category == .loopback)
        #expect(refusal.range == "127.0.0.0/8")
        let text = error?.description ?? ""
        #expect(text.contains(url.absoluteString) && text.contains("127.0.0.1"), "\(text)")
        #expect(error?.url == url)
        #expect(server.requests.isEmpty)
    }

    @Test func ipv6LoopbackLiteralIsRefusedByDefault() async throws {
        let url = URL(string: "http://[::1]:9/x")!
        let error = await resolutionError(of: HTMLAppLinkResolver().appLink(from: url))
        guard case .refusedAddress(_, let refusal) = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(refusal.address == AppLinkIPAddress("::1"))
    }

    @Test func loopbackIsReachedWhenAllowed() async throws {
        let server = try TestHTTPServer { [html] _ in .html(html) }
        defer { server.stop() }
        let allowed = HTMLAppLinkResolver(configuration: .init(egressPolicy: .default.allowing(["127.0.0.1/32"])))
        let link = try await allowed.appLink(from: server.url("/a")).value
        #expect(link.targets.first?.url == URL(string: "egress://ok"))
        let everything = HTMLAppLinkResolver(configuration: .init(egressPolicy: .allowAll))
        _ = try await everything.appLink(from: server.url("/b")).value
        #expect(server.requests.map(\.path) == ["/a", "/b"])
    }

    @Test func aPublicLookingNameThatResolvesToLoopbackIsRefused() async throws {
        let server = try TestHTTPServer { [html] _ in .html(html) }
        defer { server.stop() }
        let hosts = StubHostResolver(["links.example.com": ["93.184.215.14", "127.0.0.1"]])
        let resolver = HTMLAppLinkResolver(hostResolver: hosts)
        let url = URL(string: "http://links.example.com:\(server.port)/page")!
        let error = await resolutionError(of: resolver.appLink(from: url))
        guard case .refusedAddress(let refusedURL, let refusal) = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(refusedURL == url)
        #expect(refusal.address == AppLinkIPAddress("127.0.0.1"), "one refused address refuses the name")
        #expect(hosts.lookups == ["links.example.com"])
        #expect(server.requests.isEmpty)
    }

    @Test func theSystemLookupReadsShorthandIPv4AsTheClientWould() async throws {
        // Numeric forms only: getaddrinfo parses them itself and sends no query.
        let error = await resolutionError(of: HTMLAppLinkResolver().appLink(from: URL(string: "http://127.1:9/")!))
        guard case .refusedAddress(_, let refusal) = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(refusal.address == AppLinkIPAddress("127.0.0.1"))
        let system = SystemAppLinkHostResolver()
        #expect(
            try await system.addresses(forHost: "0x7f.0.0.1", cancellationToken: nil).value == [
                AppLinkIPAddress("127.0.0.1")!
            ])
        #expect(
            try await system.addresses(forHost: "2130706433", cancellationToken: nil).value == [
                AppLinkIPAddress("127.0.0.1")!
            ])
        #expect(try await system.addresses(forHost: "::1", cancellationToken: nil).value == [AppLinkIPAddress("::1")!])
    }

    @Test func aRedirectFromAnAllowedAddressToARefusedOneIsRefused() async throws {
        let server = try TestHTTPServer { request in
            // 127.0.0.2 is loopback too, but outside the one address the test allows.
            request.path == "/start" ? .redirect(to: "http://127.0.0.2:\(9)/next") : .html("")
        }
        defer { server.stop() }
        let resolver = HTMLAppLinkResolver(configuration: .init(egressPolicy: .default.allowing(["127.0.0.1/32"])))
        let error = await resolutionError(of: resolver.appLink(from: server.url("/start")))
        guard case .refusedAddress(let url, let refusal) = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(url == URL(string: "http://127.0.0.2:9/next"))
        #expect(refusal.address == AppLinkIPAddress("127.0.0.2"))
        #expect(server.requests.map(\.path) == ["/start"])
    }

    @Test func aRedirectToANameThatResolvesToARefusedAddressIsRefused() async throws {
        // No sockets: a canned client answers the first hop, the test's resolver maps the names.
        let start = URL(string: "https://public.example/start")!
        let fetcher = CannedFetcher([
            start.absoluteString: .success(
                AppLinkHTTPResponse(
                    url: start, statusCode: 302, headers: ["Location": "http://rebind.example/meta-data"], body: Data())
            )
        ])
        let hosts = StubHostResolver(["public.example": ["8.8.4.4"], "rebind.example": ["::ffff:169.254.169.254"]])
        let resolver = HTMLAppLinkResolver(fetcher: fetcher, hostResolver: hosts)
        let error = await resolutionError(of: resolver.appLink(from: start))
        guard case .refusedAddress(let url, let refusal) = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(url.host == "rebind.example")
        #expect(refusal.category == .linkLocal)
        #expect(hosts.lookups == ["public.example", "rebind.example"])
        #expect(fetcher.requests.map(\.url) == [start])
        #expect(fetcher.requests.first?.connectAddresses == [AppLinkIPAddress("8.8.4.4")!])
    }

    @Test func aNameThatDoesNotResolveFaultsAsANetworkFailure() async throws {
        let resolver = HTMLAppLinkResolver(fetcher: CannedFetcher([:]), hostResolver: StubHostResolver([:]))
        let url = URL(string: "http://nowhere.example/")!
        let error = await resolutionError(of: resolver.appLink(from: url))
        guard case .network(let failed, let underlying) = error else {
            Issue.record("expected a network failure, got \(String(describing: error))")
            return
        }
        #expect(failed == url)
        #expect((underlying as? AppLinkHostLookupError)?.host == "nowhere.example")
    }

    @Test func allowAllLooksNothingUp() async throws {
        let url = URL(string: "https://anything.example/")!
        let fetcher = CannedFetcher([
            url.absoluteString: .success(AppLinkHTTPResponse(url: url, statusCode: 200, headers: [:], body: Data()))
        ])
        let hosts = StubHostResolver([:])
        let resolver = HTMLAppLinkResolver(
            fetcher: fetcher, configuration: .init(egressPolicy: .allowAll), hostResolver: hosts)
        _ = try await resolver.appLink(from: url).value
        #expect(hosts.lookups.isEmpty)
        #expect(fetcher.requests.first?.connectAddresses == [])
    }
}
