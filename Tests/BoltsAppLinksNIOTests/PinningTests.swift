import Bolts
import BoltsAppLinksNIO
import BoltsAppLinksTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import BoltsAppLinks

/// Two loopback servers on the same port: the pinned one on 127.0.0.2, the decoy on 127.0.0.1, where the system's
/// lookup of `localhost` leads. A fetch of `http://localhost:<port>/` that reaches the pinned server connected to
/// its checked address, not to what the name resolves to.
struct PinnedAndDecoy {
    let pinned: TestHTTPServer
    let decoy: TestHTTPServer
    var port: UInt16 { pinned.port }

    init(pinned handler: @escaping @Sendable (TestHTTPServer.Request) -> TestHTTPServer.Response) throws {
        var lastError: (any Error)?
        for _ in 0..<20 {
            let pinned = try TestHTTPServer(address: "127.0.0.2", handler: handler)
            do {
                decoy = try TestHTTPServer(address: "127.0.0.1", port: pinned.port) { _ in .html("decoy") }
                self.pinned = pinned
                return
            } catch {
                // Someone else has this port on 127.0.0.1: try another one.
                lastError = error
                pinned.stop()
            }
        }
        throw lastError!
    }

    func stop() {
        pinned.stop()
        decoy.stop()
    }
}

/// The fetcher connects only to the addresses the request carries: never to what the URL's name resolves to.
/// Everything here is loopback: 127.0.0.1, 127.0.0.2 and 127.0.0.3 (on which nothing listens).
@Suite("NIO fetcher: pinning")
struct PinningTests {
    @Test func aPinnedRequestGoesToItsAddressNotToTheName() async throws {
        let servers = try PinnedAndDecoy { _ in .html("pinned") }
        defer { servers.stop() }
        let url = URL(string: "http://localhost:\(servers.port)/where")!
        let response = try await nioFetcher.fetch(request(url, connectAddresses: ["127.0.0.2"])).value
        #expect(String(decoding: response.body, as: UTF8.self) == "pinned")
        #expect(servers.pinned.requests.map(\.path) == ["/where"])
        #expect(servers.pinned.requests.first?.headers["host"] == "localhost:\(servers.port)", "the URL's name")
        #expect(servers.decoy.requests.isEmpty)
    }

    @Test func withoutCheckedAddressesTheNameIsLookedUp() async throws {
        // The contrast to the test above: the same URL, nothing pinned, lands on the decoy.
        let servers = try PinnedAndDecoy { _ in .html("pinned") }
        defer { servers.stop() }
        let url = URL(string: "http://localhost:\(servers.port)/where")!
        let response = try await nioFetcher.fetch(request(url)).value
        #expect(String(decoding: response.body, as: UTF8.self) == "decoy")
        #expect(servers.pinned.requests.isEmpty)
    }

    @Test func aNameThatResolvesNowhereIsNeverLookedUp() async throws {
        // `rebind.test` has no address (`.test` is reserved): any lookup would fail the fetch.
        let server = try TestHTTPServer(address: "127.0.0.2") { _ in .html("pinned") }
        defer { server.stop() }
        let url = URL(string: "http://rebind.test:\(server.port)/")!
        let response = try await nioFetcher.fetch(request(url, connectAddresses: ["127.0.0.2"])).value
        #expect(response.statusCode == 200)
        #expect(server.requests.first?.headers["host"] == "rebind.test:\(server.port)")
    }

    @Test func theNextCheckedAddressIsTriedWhenOneRefuses() async throws {
        // Nothing listens on 127.0.0.3 at this port (the server's bind to 127.0.0.2 would have failed had anything
        // held the port on every address).
        let server = try TestHTTPServer(address: "127.0.0.2") { _ in .html("second") }
        defer { server.stop() }
        let url = URL(string: "http://rebind.test:\(server.port)/")!
        let response = try await nioFetcher.fetch(
            request(url, connectAddresses: ["127.0.0.3", "127.0.0.2"])
        ).value
        #expect(String(decoding: response.body, as: UTF8.self) == "second")
        #expect(server.requests.count == 1)
    }

    @Test func whenNoCheckedAddressIsReachableTheFailureNamesThemAll() async throws {
        let (socket, port) = try refusingPort()
        defer { close(socket) }
        let url = URL(string: "http://rebind.test:\(port)/")!
        let underlying = await networkFailure(
            of: nioFetcher.fetch(request(url, connectAddresses: ["127.0.0.1", "127.0.0.1"])))
        guard case .couldNotConnect(let addresses, _) = underlying as? NIOAppLinkFetcherError else {
            Issue.record("expected couldNotConnect, got \(String(describing: underlying))")
            return
        }
        #expect(addresses.map(\.description) == ["127.0.0.1", "127.0.0.1"])
    }

    @Test func requiringPinnedAddressesRefusesAnUncheckedName() async throws {
        let server = try TestHTTPServer { _ in .html("never") }
        defer { server.stop() }
        let strict = try NIOAppLinkFetcher(configuration: .init(requirePinnedAddresses: true))
        let url = URL(string: "http://localhost:\(server.port)/")!
        let underlying = await networkFailure(of: strict.fetch(request(url)))
        guard case .unpinnedHost("localhost") = underlying as? NIOAppLinkFetcherError else {
            Issue.record("expected unpinnedHost, got \(String(describing: underlying))")
            return
        }
        // An address literal needs no lookup, so it is still fetched.
        let response = try await strict.fetch(request(server.url("/literal"))).value
        #expect(String(decoding: response.body, as: UTF8.self) == "never")
        #expect(server.requests.map(\.path) == ["/literal"])
    }

    @Test func theResolverPinsEveryHopToTheAddressItChecked() async throws {
        // The resolver's lookup (a stub) says 127.0.0.2 for both names; the system says 127.0.0.1 (the decoy) for
        // `localhost` and nothing for `rebind.test`. Both hops reach the pinned server.
        let html = page(withTags: [("al:ios:url", "pinned://ok"), ("al:ios:app_name", "Pinned")])
        let portBox = Locked<UInt16>(0)
        let servers = try PinnedAndDecoy { request in
            request.path == "/start"
                ? .redirect(to: "http://rebind.test:\(portBox.current)/page")
                : .html(html)
        }
        defer { servers.stop() }
        portBox.withLock { $0 = servers.port }
        let hosts = StubHostResolver(["localhost": ["127.0.0.2"], "rebind.test": ["127.0.0.2"]])
        let resolver = HTMLAppLinkResolver(
            fetcher: nioFetcher, configuration: .init(timeout: 600, egressPolicy: .testLoopback), hostResolver: hosts)
        let link = try await resolver.appLink(
            from: URL(string: "http://localhost:\(servers.port)/start")!, platform: .ios
        ).value
        #expect(link.targets == [AppLinkTarget(url: URL(string: "pinned://ok"), appName: "Pinned")])
        #expect(hosts.lookups == ["localhost", "rebind.test"])
        #expect(servers.pinned.requests.map(\.path) == ["/start", "/page"])
        #expect(
            servers.pinned.requests.map { $0.headers["host"] } == [
                "localhost:\(servers.port)", "rebind.test:\(servers.port)",
            ])
        #expect(servers.decoy.requests.isEmpty)
    }

    @Test func theResolverStillRefusesBeforeTheFetcherConnects() async throws {
        // The default policy refuses loopback: the fetcher is never asked.
        let servers = try PinnedAndDecoy { _ in .html("pinned") }
        defer { servers.stop() }
        let hosts = StubHostResolver(["localhost": ["127.0.0.2"]])
        let resolver = HTMLAppLinkResolver(fetcher: nioFetcher, hostResolver: hosts)
        let error = await resolutionError(
            of: resolver.appLink(from: URL(string: "http://localhost:\(servers.port)/")!))
        guard case .refusedAddress(_, let refusal) = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(refusal.address == AppLinkIPAddress("127.0.0.2"))
        #expect(servers.pinned.requests.isEmpty && servers.decoy.requests.isEmpty)
    }
}
