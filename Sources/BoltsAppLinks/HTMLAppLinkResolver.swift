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
/// The task completes on the fetcher's completion thread (for the default fetcher, a `URLSession` delegate queue).
public struct HTMLAppLinkResolver: AppLinkResolving {
    /// Limits and headers of a resolver.
    public struct Configuration: Sendable, Hashable {
        /// The most redirects followed in one resolution. Default 10.
        public var maximumRedirects: Int
        /// Seconds one resolution may take, redirects included. Default 30.
        public var timeout: Double
        /// The largest response body accepted, in bytes. Default 2 MiB.
        public var maximumResponseSize: Int
        /// Extra request headers (for example `User-Agent`); `Prefer-Html-Meta-Tags: al` is always sent.
        public var additionalHeaders: [String: String]

        /// Creates a configuration.
        public init(
            maximumRedirects: Int = 10,
            timeout: Double = 30,
            maximumResponseSize: Int = 2 * 1024 * 1024,
            additionalHeaders: [String: String] = [:]
        ) {
            self.maximumRedirects = maximumRedirects
            self.timeout = timeout
            self.maximumResponseSize = maximumResponseSize
            self.additionalHeaders = additionalHeaders
        }
    }

    /// The HTTP client.
    public let fetcher: any AppLinkHTTPFetching
    /// The limits.
    public let configuration: Configuration

    /// Creates a resolver over `fetcher` (the shared `URLSession` client by default).
    public init(
        fetcher: any AppLinkHTTPFetching = URLSessionAppLinkFetcher.shared, configuration: Configuration = .init()
    ) {
        self.fetcher = fetcher
        self.configuration = configuration
    }

    /// Loads `url` and builds its link for `platform`.
    public func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink> {
        page(from: url).continueOnSuccessWith { page in page.appLink(for: platform) }
    }

    /// Loads `url` and reads its App Link tags, without choosing a platform.
    public func page(from url: URL) -> Task<AppLinkPage> {
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
            resolution?.source.trySet(
                error: AppLinkResolutionError.timedOut(url: url, seconds: configuration.timeout))
        }
        let task = resolution.source.task
        follow(url, sourceURL: url, chain: [url], deadline: deadline, resolution: resolution)
        return task
    }

    /// Fetches one hop of a resolution and either follows its redirect or finishes.
    private func follow(
        _ url: URL,
        sourceURL: URL,
        chain: [URL],
        deadline: UInt64,
        resolution: PendingResolution
    ) {
        let source = resolution.source
        let now = DispatchTime.now().uptimeNanoseconds
        guard now < deadline, !source.task.completed else {
            source.trySet(error: AppLinkResolutionError.timedOut(url: sourceURL, seconds: configuration.timeout))
            return
        }
        var headers = configuration.additionalHeaders
        headers["Prefer-Html-Meta-Tags"] = "al"
        let request = AppLinkHTTPRequest(
            url: url,
            headers: headers,
            timeout: Double(deadline - now) / 1e9,
            maximumBodySize: configuration.maximumResponseSize
        )
        fetcher.fetch(request).continueWith { task in
            if task.cancelled {
                source.tryCancel()
                return
            }
            if let error = task.error {
                source.trySet(error: error as? AppLinkResolutionError ?? .network(url: url, underlying: error))
                return
            }
            guard let response = task.result else { return }
            do {
                if let next = try redirectTarget(of: response, chain: chain) {
                    follow(next, sourceURL: sourceURL, chain: chain + [next], deadline: deadline, resolution: resolution)
                } else {
                    source.trySet(result: try page(from: response, sourceURL: sourceURL))
                }
            } catch {
                source.trySet(error: error)
            }
        }
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
}

/// Where resolution deadlines fire: a queue of our own rather than `DispatchQueue.global()`, whose few threads
/// can all be busy (or blocked) in a loaded server, which would postpone a timeout by as long as they stay busy.
/// Queues made with a label get a thread even when the global pool is saturated.
let appLinkTimerQueue = DispatchQueue(label: "bolts.applinks.timers", attributes: .concurrent)
