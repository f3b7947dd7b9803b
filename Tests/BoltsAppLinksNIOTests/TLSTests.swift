import Bolts
import BoltsAppLinksNIO
import BoltsAppLinksTestSupport
import Foundation
import NIOSSL
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import BoltsAppLinks

/// HTTPS against a loopback TLS server whose certificate, for `applinks.test` only, comes from a test CA (see
/// `Fixtures/`). The URLs name `applinks.test`, which no DNS knows: every request is pinned to the server's address,
/// and the certificate is checked against the URL's name, never against the address connected to.
@Suite("NIO fetcher: HTTPS")
struct TLSTests {
    let html = page(withTags: [("al:android:package", "org.bolts.tls"), ("al:android:url", "tls://secure")])

    /// A fetcher that trusts the test CA besides the system's roots.
    func trustingFetcher() throws -> NIOAppLinkFetcher {
        try NIOAppLinkFetcher(configuration: .trusting([Fixtures.certificateAuthority()]))
    }

    @Test func theCertificateIsVerifiedAgainstTheURLsNameAtThePinnedAddress() async throws {
        let server = try await TestTLSServer.start(page: html)
        defer { server.stop() }
        let url = URL(string: "https://applinks.test:\(server.port)/secure?x=1")!
        let response = try await trustingFetcher().fetch(request(url, connectAddresses: ["127.0.0.1"])).value
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == html)
        #expect(response.header("content-type") == "text/html; charset=utf-8")
        let sent = try #require(server.requests.first)
        #expect(sent.path == "/secure?x=1")
        #expect(sent.headers["host"] == "applinks.test:\(server.port)")
    }

    @Test func anUntrustedCertificateFailsTheHandshake() async throws {
        // The default configuration trusts the system's roots only, which do not include the test CA.
        let server = try await TestTLSServer.start(page: html)
        defer { server.stop() }
        let url = URL(string: "https://applinks.test:\(server.port)/")!
        let underlying = await networkFailure(of: nioFetcher.fetch(request(url, connectAddresses: ["127.0.0.1"])))
        #expect(underlying is NIOSSLError, "\(String(describing: underlying))")
        #expect(server.requests.isEmpty, "nothing is sent before the server is verified")
    }

    @Test func aCertificateForAnotherNameFailsTheHandshake() async throws {
        // Trusted issuer, right address, wrong name: the URL says `other.test`, the certificate `applinks.test`.
        let server = try await TestTLSServer.start(page: html)
        defer { server.stop() }
        let url = URL(string: "https://other.test:\(server.port)/")!
        let underlying = await networkFailure(
            of: try trustingFetcher().fetch(request(url, connectAddresses: ["127.0.0.1"])))
        let isTLSFailure = underlying is NIOSSLError || underlying is NIOSSLExtraError
        #expect(isTLSFailure, "\(String(describing: underlying))")
        #expect("\(String(describing: underlying))".contains("other.test"), "the name checked is the URL's")
        #expect(server.requests.isEmpty)
    }

    @Test func anAddressLiteralURLIsCheckedAgainstTheAddress() async throws {
        // `https://127.0.0.1/` sends no server name and needs a certificate for 127.0.0.1, which this one is not.
        let server = try await TestTLSServer.start(page: html)
        defer { server.stop() }
        let url = URL(string: "https://127.0.0.1:\(server.port)/")!
        let underlying = await networkFailure(of: try trustingFetcher().fetch(request(url)))
        let isTLSFailure = underlying is NIOSSLError || underlying is NIOSSLExtraError
        #expect(isTLSFailure, "\(String(describing: underlying))")
        #expect(server.requests.isEmpty)
    }

    @Test(.enabled(if: ipv6LoopbackWorks(), "the machine has no IPv6 loopback"))
    func anIPv6CheckedAddressIsConnectedTo() async throws {
        let server = try await TestTLSServer.start(address: "::1", page: html)
        defer { server.stop() }
        let url = URL(string: "https://applinks.test:\(server.port)/six")!
        let response = try await trustingFetcher().fetch(request(url, connectAddresses: ["::1"])).value
        #expect(response.statusCode == 200)
        #expect(server.requests.first?.headers["host"] == "applinks.test:\(server.port)")
    }

    @Test func theResolverResolvesOverHTTPSThroughThePinnedFetcher() async throws {
        let server = try await TestTLSServer.start(address: "127.0.0.2", page: html)
        defer { server.stop() }
        let hosts = StubHostResolver(["applinks.test": ["127.0.0.2"]])
        let resolver = HTMLAppLinkResolver(
            fetcher: try trustingFetcher(), configuration: .init(timeout: 600, egressPolicy: .testLoopback),
            hostResolver: hosts)
        let link = try await resolver.appLink(
            from: URL(string: "https://applinks.test:\(server.port)/item")!, platform: .android
        ).value
        #expect(link.targets == [AppLinkTarget(url: URL(string: "tls://secure"), package: "org.bolts.tls")])
        #expect(server.requests.map(\.path) == ["/item"])
        #expect(server.requests.first?.headers["prefer-html-meta-tags"] == "al")
    }
}

/// Whether a socket can listen on ::1 (some containers have IPv6 turned off).
func ipv6LoopbackWorks() -> Bool {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    }
    return bound == 0 && listen(fd, 1) == 0
}
