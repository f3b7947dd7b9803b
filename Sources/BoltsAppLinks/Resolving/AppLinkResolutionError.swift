import Foundation

/// Why resolving a URL to an App Link failed. Each case names the URL it concerns and says what went wrong in
/// its ``description``, so that a server can log it and decide whether to retry.
public enum AppLinkResolutionError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The request could not be sent or the response not read (connection refused, DNS failure, reset…).
    case network(url: URL, underlying: any Error)
    /// No complete response arrived within the resolver's timeout (redirects included).
    case timedOut(url: URL, seconds: Double)
    /// The response body is larger than the resolver accepts.
    case responseTooLarge(url: URL, limit: Int)
    /// The server answered with a 4xx or 5xx status; error pages are never read as App Link metadata.
    case httpStatus(url: URL, statusCode: Int)
    /// A redirect leads back to a URL already visited in the same resolution.
    case redirectLoop(url: URL, chain: [URL])
    /// More redirects than the resolver allows.
    case tooManyRedirects(url: URL, limit: Int)
    /// A 3xx response without a usable `Location` header.
    case invalidRedirect(url: URL, statusCode: Int, location: String?)
    /// The URL's scheme is neither `http`, `https` nor `data`.
    case unsupportedScheme(url: URL)
    /// A `data:` URL that does not follow RFC 2397.
    case malformedDataURL(url: URL)
    /// The egress policy refused an address of the URL's host (the first request or a redirect): nothing was sent
    /// to it. `refusal` names the address, the refused block and its category.
    case refusedAddress(url: URL, refusal: AppLinkEgressPolicy.Refusal)

    /// The URL the failure concerns.
    public var url: URL {
        switch self {
        case .network(let url, _), .timedOut(let url, _), .responseTooLarge(let url, _), .httpStatus(let url, _),
            .redirectLoop(let url, _), .tooManyRedirects(let url, _), .invalidRedirect(let url, _, _),
            .unsupportedScheme(let url), .malformedDataURL(let url), .refusedAddress(let url, _):
            return url
        }
    }

    /// A sentence describing the failure, naming the URL.
    public var description: String {
        switch self {
        case .network(let url, let underlying):
            return "Network failure while loading \(url.absoluteString): \(underlying)"
        case .timedOut(let url, let seconds):
            return "Timed out after \(seconds) s while loading \(url.absoluteString)"
        case .responseTooLarge(let url, let limit):
            return "The response from \(url.absoluteString) is larger than the limit of \(limit) bytes"
        case .httpStatus(let url, let statusCode):
            return "HTTP status \(statusCode) from \(url.absoluteString)"
        case .redirectLoop(let url, let chain):
            let path = chain.map(\.absoluteString).joined(separator: " -> ")
            return "Redirect loop at \(url.absoluteString): \(path)"
        case .tooManyRedirects(let url, let limit):
            return "More than \(limit) redirects while loading \(url.absoluteString)"
        case .invalidRedirect(let url, let statusCode, let location):
            let shown = location.map { "\"\($0)\"" } ?? "no Location header"
            return "HTTP status \(statusCode) from \(url.absoluteString) with an unusable redirect (\(shown))"
        case .unsupportedScheme(let url):
            return "Cannot resolve \(url.absoluteString): only http, https and data URLs are supported"
        case .malformedDataURL(let url):
            return "Malformed data URL: \(url.absoluteString.prefix(200))"
        case .refusedAddress(let url, let refusal):
            return "Refused to connect to \(refusal) for \(url.absoluteString): the egress policy does not allow it"
        }
    }

    /// The same as ``description``.
    public var errorDescription: String? {
        description
    }
}
