import Bolts
import Foundation

/// One HTTP GET a resolver wants made.
public struct AppLinkHTTPRequest: Sendable, Hashable {
    /// The URL to get (`http` or `https`).
    public var url: URL
    /// Headers to send, including `Prefer-Html-Meta-Tags: al`.
    public var headers: [String: String]
    /// Seconds the whole exchange may take; past it the fetch must fault with
    /// ``AppLinkResolutionError/timedOut(url:seconds:)``.
    public var timeout: Double
    /// The largest body accepted; a larger one must fault with
    /// ``AppLinkResolutionError/responseTooLarge(url:limit:)`` without reading it all.
    public var maximumBodySize: Int
    /// The addresses of the URL's host that the resolver's egress policy checked and allowed. A fetcher that can
    /// choose where it connects should connect only to one of these (rather than look the name up again), which
    /// closes the DNS-rebinding window between check and connection. Empty when nothing was checked (the policy
    /// allows everything, or the request did not come from a resolver).
    public var connectAddresses: [AppLinkIPAddress]

    /// Creates a request.
    public init(
        url: URL, headers: [String: String], timeout: Double, maximumBodySize: Int,
        connectAddresses: [AppLinkIPAddress] = []
    ) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maximumBodySize = maximumBodySize
        self.connectAddresses = connectAddresses
    }
}

/// A response to an ``AppLinkHTTPRequest``, redirects not followed.
public struct AppLinkHTTPResponse: Sendable, Hashable {
    /// The URL that answered (the request's URL).
    public var url: URL
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers, names lowercased.
    public var headers: [String: String]
    /// The body, at most the request's ``AppLinkHTTPRequest/maximumBodySize`` bytes.
    public var body: Data

    /// Creates a response; header names are lowercased.
    public init(url: URL, statusCode: Int, headers: [String: String], body: Data) {
        self.url = url
        self.statusCode = statusCode
        self.headers = Dictionary(
            headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// The value of the header called `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}

/// The HTTP client a resolver uses: one GET per call, **without following redirects** (the resolver follows them
/// itself, to count them and detect loops).
///
/// A server can plug in its own client (SwiftNIO, AsyncHTTPClient…) by conforming to this protocol. The task
/// must succeed with the response whatever its status, and fault with an ``AppLinkResolutionError`` for timeouts
/// (``AppLinkResolutionError/timedOut(url:seconds:)``), oversize bodies
/// (``AppLinkResolutionError/responseTooLarge(url:limit:)``) and transport failures
/// (``AppLinkResolutionError/network(url:underlying:)``); any other error is reported as a network failure.
///
/// Cancellation: the resolver passes a token with each fetch. A fetcher should end its task cancelled as soon as
/// the token is cancelled and stop its transfer; one that implements only ``fetch(_:)`` gets a default that ends
/// the task cancelled at once and leaves the transfer to finish unobserved.
public protocol AppLinkHTTPFetching: Sendable {
    /// Starts the request and returns a task for its response.
    func fetch(_ request: AppLinkHTTPRequest) -> Task<AppLinkHTTPResponse>

    /// Starts the request; cancelling `cancellationToken` ends the task cancelled at once and stops the transfer
    /// as far as the client allows.
    func fetch(_ request: AppLinkHTTPRequest, cancellationToken: CancellationToken?) -> Task<AppLinkHTTPResponse>
}

extension AppLinkHTTPFetching {
    /// The default for clients that cannot stop a transfer: ``fetch(_:)``, with a task that ends cancelled at once
    /// when the token is cancelled (the transfer itself runs on and its outcome is dropped). A token that is
    /// already cancelled starts nothing.
    public func fetch(_ request: AppLinkHTTPRequest, cancellationToken: CancellationToken?)
        -> Task<AppLinkHTTPResponse>
    {
        guard let cancellationToken else { return fetch(request) }
        if cancellationToken.isCancellationRequested { return .cancelledTask() }
        return fetch(request).continueWithTask(.immediate, cancellationToken: cancellationToken) { $0 }
    }
}
