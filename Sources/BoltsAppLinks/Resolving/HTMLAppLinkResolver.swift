import Bolts
import Foundation

/// A page fetched for its App Link metadata.
public struct AppLinkPage: Sendable, Hashable {
    /// The URL that was asked for.
    public var sourceURL: URL
    /// The URL that answered, after redirects; relative URLs in the tags resolve against it.
    public var finalURL: URL
    /// The App Link tags of the page, in document order.
    public var metaTags: [AppLinkMetaTag]
    /// The character encoding the page was decoded with.
    public var encoding: HTMLTextDecoding.Encoding

    /// Creates a page.
    public init(sourceURL: URL, finalURL: URL, metaTags: [AppLinkMetaTag], encoding: HTMLTextDecoding.Encoding) {
        self.sourceURL = sourceURL
        self.finalURL = finalURL
        self.metaTags = metaTags
        self.encoding = encoding
    }

    /// The link these tags describe for `platform`.
    public func appLink(for platform: AppLinkPlatform) -> AppLink {
        AppLink(metaTags: metaTags, sourceURL: sourceURL, baseURL: finalURL, platform: platform)
    }
}

/// The default resolver: it loads the page over HTTP and reads its `<meta property="al:…">` tags.
///
/// Requests carry `Prefer-Html-Meta-Tags: al`. Redirects (3xx with `Location`, relative or absolute) are followed
/// up to ``Configuration/maximumRedirects``; a redirect back to a URL already visited faults at once with
/// ``AppLinkResolutionError/redirectLoop(url:chain:)``. The whole resolution, redirects included, must finish
/// within ``Configuration/timeout`` seconds, and no body may exceed ``Configuration/maximumResponseSize`` bytes.
/// A 4xx or 5xx status faults with ``AppLinkResolutionError/httpStatus(url:statusCode:)``. The body is decoded
/// with its declared charset (see ``HTMLTextDecoding``). `data:` URLs are decoded in memory; other schemes fault
/// with ``AppLinkResolutionError/unsupportedScheme(url:)``.
///
/// ## Egress policy
/// Before each request (the first and every redirect) the resolver finds the addresses of the URL's host (an
/// address literal as it is, a name through its ``hostResolver``) and checks every one against
/// ``Configuration/egressPolicy``; a refused address faults the resolution with
/// ``AppLinkResolutionError/refusedAddress(url:refusal:)`` before anything connects. By default loopback, private,
/// link-local and the other special-purpose blocks are refused (see ``AppLinkEgressPolicy``).
///
/// The checked addresses travel with the request (``AppLinkHTTPRequest/connectAddresses``). A fetcher that
/// connects only to them closes the DNS-rebinding window (a name that answers a public address to the check and a
/// private one to the connection). ``URLSessionAppLinkFetcher`` cannot: `URLSession` looks the name up again
/// itself, so a host whose DNS changes its answer between the two lookups can still reach a refused address
/// through it. Servers that resolve hostile URLs should plug in a fetcher that pins the checked address, such as
/// `NIOAppLinkFetcher` of the library `BoltsAppLinksNIO`.
///
/// ## Cancellation
/// Cancelling the token given to ``appLink(from:platform:cancellationToken:)`` or ``page(from:cancellationToken:)``
/// ends the task cancelled at once and cancels the fetch in flight (see the fetcher for how it stops its transfer).
///
/// The task completes on the fetcher's completion thread (for the default fetcher, a `URLSession` delegate queue),
/// or on the cancelling thread when it is cancelled.
public struct HTMLAppLinkResolver: AppLinkResolving {
    /// Limits, headers and egress policy of a resolver.
    public struct Configuration: Sendable, Hashable {
        /// The most redirects followed in one resolution. Default 10.
        public var maximumRedirects: Int
        /// Seconds one resolution may take, redirects included. Default 30.
        public var timeout: Double
        /// The largest response body accepted, in bytes. Default 2 MiB.
        public var maximumResponseSize: Int
        /// Extra request headers (for example `User-Agent`); `Prefer-Html-Meta-Tags: al` is always sent.
        public var additionalHeaders: [String: String]
        /// The addresses requests may go to. Default ``AppLinkEgressPolicy/default`` (public addresses only).
        public var egressPolicy: AppLinkEgressPolicy

        /// Creates a configuration.
        public init(
            maximumRedirects: Int = 10,
            timeout: Double = 30,
            maximumResponseSize: Int = 2 * 1024 * 1024,
            additionalHeaders: [String: String] = [:],
            egressPolicy: AppLinkEgressPolicy = .default
        ) {
            self.maximumRedirects = maximumRedirects
            self.timeout = timeout
            self.maximumResponseSize = maximumResponseSize
            self.additionalHeaders = additionalHeaders
            self.egressPolicy = egressPolicy
        }
    }

    /// The HTTP client.
    public let fetcher: any AppLinkHTTPFetching
    /// The limits.
    public let configuration: Configuration
    /// How host names are turned into the addresses the egress policy checks.
    public let hostResolver: any AppLinkHostResolving

    /// Creates a resolver over `fetcher` (the shared `URLSession` client by default), looking names up with
    /// `hostResolver` (the system's `getaddrinfo` by default).
    public init(
        fetcher: any AppLinkHTTPFetching = URLSessionAppLinkFetcher.shared,
        configuration: Configuration = .init(),
        hostResolver: any AppLinkHostResolving = SystemAppLinkHostResolver()
    ) {
        self.fetcher = fetcher
        self.configuration = configuration
        self.hostResolver = hostResolver
    }

    /// Loads `url` and builds its link for `platform`.
    public func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink> {
        appLink(from: url, platform: platform, cancellationToken: nil)
    }

    /// Loads `url` and builds its link for `platform`; cancelling `cancellationToken` ends the task cancelled at
    /// once and stops the fetch.
    public func appLink(from url: URL, platform: AppLinkPlatform, cancellationToken: CancellationToken?)
        -> Task<AppLink>
    {
        page(from: url, cancellationToken: cancellationToken).continueOnSuccessWith { page in
            page.appLink(for: platform)
        }
    }

    /// Loads `url` and reads its App Link tags, without choosing a platform.
    ///
    /// Cancelling `cancellationToken` ends the task cancelled at once (a token already cancelled gives a cancelled
    /// task and starts nothing) and cancels the host lookup and fetch in flight.
    public func page(from url: URL, cancellationToken: CancellationToken? = nil) -> Task<AppLinkPage> {
        if cancellationToken?.isCancellationRequested == true { return .cancelledTask() }
        switch url.scheme?.lowercased() {
        case "data":
            guard let data = DataURL(url) else {
                return Task(error: AppLinkResolutionError.malformedDataURL(url: url))
            }
            return Task(Self.page(sourceURL: url, finalURL: url, body: data.body, contentType: data.contentType))
        case "http", "https":
            break
        default:
            return Task(error: AppLinkResolutionError.unsupportedScheme(url: url))
        }
        let resolution = PendingResolution()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(configuration.timeout, 0) * 1e9)
        // The timer holds the resolution weakly: once the chain of fetches ends and lets go of it, nothing is kept
        // alive until the deadline.
        appLinkTimerQueue.asyncAfter(deadline: .now() + max(configuration.timeout, 0)) {
            [weak resolution, configuration] in
            resolution?.end(error: AppLinkResolutionError.timedOut(url: url, seconds: configuration.timeout))
        }
        let task = resolution.source.task
        if let cancellationToken {
            let registration = cancellationToken.register { [resolution] in resolution.cancel() }
            task.continueWith(.immediate) { _ in registration.dispose() }
        }
        follow(url, sourceURL: url, chain: [url], deadline: deadline, resolution: resolution)
        return task
    }

    /// Checks one hop's destination against the egress policy, fetches it, and either follows its redirect or
    /// finishes.
    private func follow(
        _ url: URL,
        sourceURL: URL,
        chain: [URL],
        deadline: UInt64,
        resolution: PendingResolution
    ) {
        let source = resolution.source
        guard !source.task.isCompleted else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now < deadline else {
            resolution.end(error: AppLinkResolutionError.timedOut(url: sourceURL, seconds: configuration.timeout))
            return
        }
        let stop = resolution.stop.token
        checkedAddresses(of: url, cancellationToken: stop).continueWithTask { check -> Task<AppLinkHTTPResponse> in
            if check.isCancelled { return .cancelledTask() }
            if let error = check.error { throw error }
            let addresses = check.result ?? []
            var headers = configuration.additionalHeaders
            headers["Prefer-Html-Meta-Tags"] = "al"
            let request = AppLinkHTTPRequest(
                url: url,
                headers: headers,
                timeout: Double(deadline - min(deadline, DispatchTime.now().uptimeNanoseconds)) / 1e9,
                maximumBodySize: configuration.maximumResponseSize,
                connectAddresses: addresses
            )
            return fetcher.fetch(request, cancellationToken: stop)
        }.continueWith { task in
            if task.isCancelled {
                source.tryCancel()
                return
            }
            if let error = task.error {
                resolution.end(error: error as? AppLinkResolutionError ?? .network(url: url, underlying: error))
                return
            }
            guard let response = task.result else { return }
            do {
                if let next = try redirectTarget(of: response, chain: chain) {
                    follow(
                        next, sourceURL: sourceURL, chain: chain + [next], deadline: deadline, resolution: resolution)
                } else {
                    resolution.end(result: try page(from: response, sourceURL: sourceURL))
                }
            } catch {
                resolution.end(error: error)
            }
        }
    }

    /// The addresses of `url`'s host, every one allowed by the egress policy; faults with
    /// ``AppLinkResolutionError/refusedAddress(url:refusal:)`` when one is refused. Empty when the policy allows
    /// everything (nothing is looked up then).
    private func checkedAddresses(of url: URL, cancellationToken: CancellationToken) -> Task<[AppLinkIPAddress]> {
        let policy = configuration.egressPolicy
        if policy.allowsAllAddresses { return Task([]) }
        guard let host = url.host(percentEncoded: false), !host.isEmpty else {
            let missing = AppLinkHostLookupError(host: "", reason: "the URL has no host")
            return Task(error: AppLinkResolutionError.network(url: url, underlying: missing))
        }
        let judge: @Sendable ([AppLinkIPAddress]) throws -> [AppLinkIPAddress] = { addresses in
            guard !addresses.isEmpty else {
                throw AppLinkHostLookupError(host: host, reason: "no IPv4 or IPv6 address")
            }
            for address in addresses {
                if let refusal = policy.refusal(for: address) {
                    throw AppLinkResolutionError.refusedAddress(url: url, refusal: refusal)
                }
            }
            return addresses
        }
        if let literal = AppLinkIPAddress(host) {
            do {
                return Task(try judge([literal]))
            } catch {
                return Task(error: error)
            }
        }
        return hostResolver.addresses(forHost: host, cancellationToken: cancellationToken)
            .continueOnSuccessWith(cancellationToken: cancellationToken) { try judge($0) }
    }

    /// The next URL when `response` is a redirect, nil when it is a page; throws for unusable redirects.
    private func redirectTarget(of response: AppLinkHTTPResponse, chain: [URL]) throws -> URL? {
        guard (300..<400).contains(response.statusCode) else { return nil }
        let location = response.header("location")
        guard let location, !location.isEmpty,
            let next = URL(string: location, relativeTo: response.url)?.absoluteURL,
            ["http", "https"].contains(next.scheme?.lowercased() ?? "")
        else {
            throw AppLinkResolutionError.invalidRedirect(
                url: response.url, statusCode: response.statusCode, location: location)
        }
        if chain.contains(where: { $0.absoluteString == next.absoluteString }) {
            throw AppLinkResolutionError.redirectLoop(url: chain[0], chain: chain + [next])
        }
        if chain.count > configuration.maximumRedirects {
            throw AppLinkResolutionError.tooManyRedirects(url: chain[0], limit: configuration.maximumRedirects)
        }
        return next
    }

    private func page(from response: AppLinkHTTPResponse, sourceURL: URL) throws -> AppLinkPage {
        if response.statusCode >= 400 {
            throw AppLinkResolutionError.httpStatus(url: response.url, statusCode: response.statusCode)
        }
        if response.body.count > configuration.maximumResponseSize {
            throw AppLinkResolutionError.responseTooLarge(url: response.url, limit: configuration.maximumResponseSize)
        }
        return Self.page(
            sourceURL: sourceURL, finalURL: response.url, body: response.body,
            contentType: response.header("content-type"))
    }

    private static func page(sourceURL: URL, finalURL: URL, body: Data, contentType: String?) -> AppLinkPage {
        let decoded = HTMLTextDecoding.decode(body, contentType: contentType)
        return AppLinkPage(
            sourceURL: sourceURL,
            finalURL: finalURL,
            metaTags: AppLinkMetaTag.tags(inHTML: decoded.text),
            encoding: decoded.encoding
        )
    }
}

/// The completion source of one resolution, in a class so that the timeout timer can hold it weakly while the
/// chain of fetches holds it strongly.
private final class PendingResolution: Sendable {
    let source = TaskCompletionSource<AppLinkPage>()
    /// Cancelled when the resolution ends early (cancelled or timed out): it stops the lookup or fetch in flight.
    let stop = CancellationTokenSource()

    /// Ends the resolution with a page.
    func end(result: AppLinkPage) {
        source.trySet(result: result)
    }

    /// Ends the resolution with an error and stops what is still running (a timeout).
    func end(error: any Error) {
        if source.trySet(error: error) { stop.cancel() }
    }

    /// Ends the resolution cancelled at once and stops what is still running.
    func cancel() {
        if source.tryCancel() { stop.cancel() }
    }
}

/// Where resolution deadlines fire: a queue of our own rather than `DispatchQueue.global()`, whose few threads
/// can all be busy (or blocked) in a loaded server, which would postpone a timeout by as long as they stay busy.
/// Queues made with a label get a thread even when the global pool is saturated.
let appLinkTimerQueue = DispatchQueue(label: "bolts.applinks.timers", attributes: .concurrent)
