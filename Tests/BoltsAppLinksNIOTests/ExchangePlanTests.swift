import Foundation
import NIOHTTP1
import Testing

@testable import BoltsAppLinks
@testable import BoltsAppLinksNIO

/// What the fetcher decides before it connects: where to, what `Host` and request line to send, which name TLS
/// checks. No sockets.
@Suite("NIO fetcher: the plan of an exchange")
struct ExchangePlanTests {
    func plan(
        _ url: String, headers: [String: String] = [:], connectAddresses: [String] = [], requirePinned: Bool = false
    ) throws -> ExchangePlan {
        try ExchangePlan(
            request: AppLinkHTTPRequest(
                url: try #require(URL(string: url)), headers: headers, timeout: 5, maximumBodySize: 100,
                connectAddresses: connectAddresses.map { AppLinkIPAddress($0)! }),
            requirePinnedAddresses: requirePinned)
    }

    func addresses(of plan: ExchangePlan) -> ([String], Int)? {
        guard case .addresses(let addresses, let port) = plan.destination else { return nil }
        return (addresses.map(\.description), port)
    }

    @Test func checkedAddressesWinOverTheNameAndTheNameIsKeptForHostAndTLS() throws {
        let https = try plan("https://Links.Example:8443/a/b?c=d#e", connectAddresses: ["203.0.113.9", "2001:db8::9"])
        #expect(addresses(of: https)?.0 == ["203.0.113.9", "2001:db8::9"])
        #expect(addresses(of: https)?.1 == 8443)
        #expect(https.isTLS)
        #expect(https.serverName?.lowercased() == "links.example")
        #expect(https.head.headers["Host"].first?.lowercased() == "links.example:8443")
        #expect(https.head.uri == "/a/b?c=d")
        #expect(https.head.method == .GET)
    }

    @Test func theDefaultPortIsLeftOutOfTheHostHeader() throws {
        #expect(try plan("http://example.com/").head.headers["Host"] == ["example.com"])
        #expect(try plan("https://example.com").head.headers["Host"] == ["example.com"])
        #expect(try plan("https://example.com").head.uri == "/")
        #expect(try plan("http://example.com:80/x").head.headers["Host"] == ["example.com"])
        #expect(try plan("http://example.com:443/x").head.headers["Host"] == ["example.com:443"])
    }

    @Test func anIPv6LiteralIsConnectedToAndBracketedInTheHostHeader() throws {
        let literal = try plan("http://[::1]:8080/x")
        #expect(addresses(of: literal)?.0 == ["::1"])
        #expect(literal.head.headers["Host"] == ["[::1]:8080"])
        #expect(literal.serverName == nil, "no SNI for an address: the certificate is checked against it")
    }

    @Test func anUncheckedNameIsLookedUpUnlessPinningIsRequired() throws {
        guard case .name(let host, 80) = try plan("http://example.com/").destination else {
            Issue.record("expected a lookup")
            return
        }
        #expect(host == "example.com")
        #expect(throws: NIOAppLinkFetcherError.self) { try plan("http://example.com/", requirePinned: true) }
        #expect(addresses(of: try plan("http://192.0.2.1/", requirePinned: true))?.0 == ["192.0.2.1"])
    }

    @Test func theCallersHeadersAreSentButNotTheFetchersOwn() throws {
        let head = try plan(
            "http://example.com/",
            headers: ["Prefer-Html-Meta-Tags": "al", "host": "evil.example", "Connection": "keep-alive", "X-A": "1"]
        ).head
        #expect(head.headers["Host"] == ["example.com"])
        #expect(head.headers["Connection"] == ["close"])
        #expect(head.headers["Prefer-Html-Meta-Tags"] == ["al"])
        #expect(head.headers["X-A"] == ["1"])
    }

    @Test func otherSchemesAndHostlessURLsAreRefused() {
        #expect(throws: AppLinkResolutionError.self) { try plan("ftp://example.com/") }
        #expect(throws: NIOAppLinkFetcherError.self) { try plan("http:no-host") }
    }
}
