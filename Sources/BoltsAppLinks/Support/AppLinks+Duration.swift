// Bolts: the types extended here are declared in files that import it, and Fuzz/run.sh builds
// the parsers from the files that do not; this file must be left out with them.
import Bolts
import Foundation

// The `Duration` forms of the App Links initializers that take seconds. Each converts its
// durations to seconds as a `Double` (`duration / .seconds(1)`: exact to the nanosecond up to
// about three weeks) and hands them to the seconds form, so the two behave alike, checks
// included; the stored properties stay in seconds, as the Bolts originals count them.

extension AppLinkHTTPRequest {
    /// Creates a request whose whole exchange may take `timeout` (stored in ``timeout`` as
    /// seconds).
    public init(
        url: URL, headers: [String: String], timeout: Duration, maximumBodySize: Int,
        connectAddresses: [AppLinkIPAddress] = []
    ) {
        self.init(
            url: url, headers: headers, timeout: timeout / .seconds(1), maximumBodySize: maximumBodySize,
            connectAddresses: connectAddresses
        )
    }
}

extension HTMLAppLinkResolver.Configuration {
    /// Creates a configuration in which one resolution, redirects included, may take `timeout`
    /// (stored in ``timeout`` as seconds).
    public init(
        maximumRedirects: Int = 10,
        timeout: Duration,
        maximumResponseSize: Int = 2 * 1024 * 1024,
        additionalHeaders: [String: String] = [:],
        egressPolicy: AppLinkEgressPolicy = .default
    ) {
        self.init(
            maximumRedirects: maximumRedirects,
            timeout: timeout / .seconds(1),
            maximumResponseSize: maximumResponseSize,
            additionalHeaders: additionalHeaders,
            egressPolicy: egressPolicy
        )
    }
}

extension URLSessionAppLinkFetcher {
    /// Creates a fetcher whose transfers may receive nothing for `idleTimeout` before the
    /// session fails them. See ``init(idleTimeout:)-(Double)`` for how that bounds every
    /// transfer of the session.
    ///
    /// - Precondition: `idleTimeout` is positive.
    public convenience init(idleTimeout: Duration) {
        self.init(idleTimeout: idleTimeout / .seconds(1))
    }
}

extension CachingAppLinkResolver {
    /// Wraps `resolver`, serving a resolved link for `timeToLive` (stored in ``timeToLive`` as
    /// seconds). `clock` returns seconds on a monotonic scale; tests pass their own to control
    /// time.
    public convenience init(
        wrapping resolver: any AppLinkResolving,
        maximumEntries: Int = 1024,
        timeToLive: Duration,
        clock: (@Sendable () -> Double)? = nil
    ) {
        self.init(
            wrapping: resolver, maximumEntries: maximumEntries, timeToLive: timeToLive / .seconds(1), clock: clock
        )
    }
}

extension XDGAppLinkURLOpener {
    /// Creates an opener that counts a URL as opened when `xdg-open` still runs after
    /// `launchTimeout` (stored in ``launchTimeout`` as seconds); pass `environment` to point
    /// the tools at other `XDG_*` directories.
    public init(environment: [String: String]? = nil, launchTimeout: Duration) {
        self.init(environment: environment, launchTimeout: launchTimeout / .seconds(1))
    }
}
