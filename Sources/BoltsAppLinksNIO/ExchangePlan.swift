import BoltsAppLinks
import Foundation
import NIOCore
import NIOHTTP1

/// Everything a fetch needs to know before it connects, worked out from the request on the caller's thread: where
/// to connect, what to send, and the names TLS checks.
struct ExchangePlan: Sendable {
    /// Where the connection goes.
    enum Destination: Sendable {
        /// These addresses, in order (the checked ones, or the host's address literal).
        case addresses([AppLinkIPAddress], port: Int)
        /// The host name, looked up by SwiftNIO (nothing was checked and pinning is not required).
        case name(String, port: Int)
    }

    let request: AppLinkHTTPRequest
    let isTLS: Bool
    let destination: Destination
    /// The name for SNI and the certificate check: the URL's host, or nil when it is an address literal (the
    /// certificate is then checked against the address).
    let serverName: String?
    /// The request head: `GET <path?query>`, `Host`, the request's headers, `Connection: close`.
    let head: HTTPRequestHead
    /// The whole exchange's time limit.
    let timeout: TimeAmount

    init(request: AppLinkHTTPRequest, requirePinnedAddresses: Bool) throws {
        let url = request.url
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw NIOAppLinkFetcherError.invalidHost(url: url)
        }
        switch components.scheme?.lowercased() {
        case "http": isTLS = false
        case "https": isTLS = true
        default: throw AppLinkResolutionError.unsupportedScheme(url: url)
        }
        // `URLComponents` gives IPv6 literals with or without their brackets depending on the Foundation; strip them.
        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == "@" || $0.isWhitespace }) else {
            throw NIOAppLinkFetcherError.invalidHost(url: url)
        }
        let defaultPort = isTLS ? 443 : 80
        let port = components.port ?? defaultPort
        guard (1...65_535).contains(port) else { throw NIOAppLinkFetcherError.invalidHost(url: url) }
        let literal = AppLinkIPAddress(host)
        if !request.connectAddresses.isEmpty {
            destination = .addresses(request.connectAddresses, port: port)
        } else if let literal {
            destination = .addresses([literal], port: port)
        } else if requirePinnedAddresses {
            throw NIOAppLinkFetcherError.unpinnedHost(host)
        } else {
            destination = .name(host, port: port)
        }
        serverName = literal == nil ? host : nil

        var hostHeader = literal?.family == .ipv6 ? "[\(host)]" : host
        if port != defaultPort { hostHeader += ":\(port)" }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: hostHeader)
        // Sorted, so that what goes on the wire does not depend on the dictionary's order.
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            switch name.lowercased() {
            case "host", "connection", "content-length", "transfer-encoding":
                continue  // the fetcher's own, or meaningless for a GET without a body
            default:
                headers.add(name: name, value: value)
            }
        }
        headers.add(name: "Connection", value: "close")
        var target = components.percentEncodedPath
        if target.isEmpty { target = "/" }
        if let query = components.percentEncodedQuery { target += "?" + query }
        head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)

        self.request = request
        let seconds = request.timeout.isNaN ? 0 : min(max(request.timeout, 0), 100 * 365 * 86_400)
        timeout = .nanoseconds(Int64(seconds * 1e9))
    }
}
