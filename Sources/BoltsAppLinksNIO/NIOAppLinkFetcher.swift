import Bolts
import BoltsAppLinks
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// An ``/BoltsAppLinks/AppLinkHTTPFetching`` client on SwiftNIO that connects only to the addresses the resolver's
/// egress policy checked, which closes the DNS-rebinding window that ``/BoltsAppLinks/URLSessionAppLinkFetcher``
/// leaves open.
///
/// ```swift
/// let resolver = HTMLAppLinkResolver(fetcher: try NIOAppLinkFetcher())
/// let link = try await resolver.appLink(from: url, platform: .android).value
/// ```
///
/// ## Where it connects
/// - When the request carries ``/BoltsAppLinks/AppLinkHTTPRequest/connectAddresses`` (every request of an
///   ``/BoltsAppLinks/HTMLAppLinkResolver`` whose policy is not ``/BoltsAppLinks/AppLinkEgressPolicy/allowAll``), it
///   connects to those addresses only, in their order, moving to the next one when a connection cannot be made. It
///   never looks the URL's host up itself then: the name serves only for the `Host` header, TLS's server name
///   indication and the certificate check.
/// - When the list is empty and the URL's host is an address literal (`http://203.0.113.7/`, `https://[2001:db8::1]/`),
///   it connects to that address.
/// - When the list is empty and the host is a name, it looks the name up with the system resolver (through SwiftNIO,
///   trying the answers with Happy Eyeballs), as any HTTP client would: nothing was checked, so there is nothing to
///   pin. A server that must never connect to an address its policy did not see sets
///   ``Configuration/requirePinnedAddresses``; such a request then faults with
///   ``NIOAppLinkFetcherError/unpinnedHost(_:)`` before anything connects.
///
/// ## HTTPS
/// TLS runs through SwiftNIO SSL with ``Configuration/tlsConfiguration`` (by default full certificate verification
/// against the system's trust roots). The server name sent (SNI) and the name the certificate must carry are the
/// URL's host, never the address connected to; a URL whose host is an address literal sends no server name and
/// needs a certificate for that address.
///
/// ## The exchange
/// One `GET` per fetch over a connection of its own (`Connection: close`), with a `Host` header (and the port when it
/// is not the scheme's default) and the request's headers. Redirects are not followed: a 3xx is returned like any
/// other response. Bodies may be delimited by `Content-Length`, chunked or end with the connection. A body past
/// ``/BoltsAppLinks/AppLinkHTTPRequest/maximumBodySize``, or a `Content-Length` that announces one, faults with
/// ``/BoltsAppLinks/AppLinkResolutionError/responseTooLarge(url:limit:)`` and the connection is closed at once; the
/// whole exchange, connecting included, must end within ``/BoltsAppLinks/AppLinkHTTPRequest/timeout`` seconds or it
/// faults with ``/BoltsAppLinks/AppLinkResolutionError/timedOut(url:seconds:)``. Any other failure (no address
/// reachable, reset, a TLS error, a malformed response) faults with
/// ``/BoltsAppLinks/AppLinkResolutionError/network(url:underlying:)``. Nothing is asked in a compressed form, so
/// bodies arrive as the server stores them.
///
/// ## Cancellation
/// Cancelling the token passed to ``fetch(_:cancellationToken:)`` ends the task cancelled before `cancel()` returns,
/// and closes the connection (or abandons the connection attempt) on the event loop right after.
///
/// ## Threads and the event loop group
/// The fetcher borrows ``eventLoopGroup`` (SwiftNIO's process-wide singleton by default): it neither starts nor
/// shuts the group down, and a caller that passes a group of its own must keep it running while fetches are in
/// flight. All network work runs on the group's event loops. The task completes on
/// ``Configuration/completionExecutor`` (the shared Bolts pool by default) rather than on the event loop, because
/// what follows a fetch, the resolver's decoding and HTML scanning, must not hold up an event loop; it completes on
/// the cancelling thread when it is cancelled.
///
/// The fetcher is a value holding only `Sendable` parts (the group, the configuration and SwiftNIO SSL's context);
/// it may be shared freely between threads and resolvers.
public struct NIOAppLinkFetcher: AppLinkHTTPFetching {
    /// What a ``NIOAppLinkFetcher`` trusts and how strict it is about pinning.
    public struct Configuration: Sendable {
        /// The TLS settings of `https` requests. Default `TLSConfiguration.makeClientConfiguration()`: the system's
        /// trust roots and full certificate verification, the name checked being the URL's host. Add trust roots
        /// (a private CA) through its `additionalTrustRoots`; weakening `certificateVerification` is possible only
        /// by setting it here explicitly.
        public var tlsConfiguration: TLSConfiguration
        /// Whether a request whose ``/BoltsAppLinks/AppLinkHTTPRequest/connectAddresses`` is empty and whose host is a
        /// name (not an address literal) is refused with ``NIOAppLinkFetcherError/unpinnedHost(_:)`` instead of
        /// being looked up by the fetcher. Default `false`: with the resolver's
        /// ``/BoltsAppLinks/AppLinkEgressPolicy/allowAll`` policy, or when called directly, the fetcher behaves as
        /// any HTTP client. Set it when every fetch must go to an address an egress policy checked.
        public var requirePinnedAddresses: Bool
        /// Where the returned tasks complete, and so where continuations added with Bolts' default executor run.
        /// Default the shared Bolts pool, off the event loops. `.immediate` completes them on the event loop
        /// itself: only for continuations that never block and do little.
        public var completionExecutor: Executor

        /// Creates a configuration; see each property for its default.
        public init(
            tlsConfiguration: TLSConfiguration = .makeClientConfiguration(),
            requirePinnedAddresses: Bool = false,
            completionExecutor: Executor = .pool(.shared)
        ) {
            self.tlsConfiguration = tlsConfiguration
            self.requirePinnedAddresses = requirePinnedAddresses
            self.completionExecutor = completionExecutor
        }

        /// The default configuration with `certificates` trusted as roots in addition to the system's (for a
        /// private certificate authority, or a test one).
        public static func trusting(_ certificates: [NIOSSLCertificate]) -> Configuration {
            var configuration = Configuration()
            configuration.tlsConfiguration.additionalTrustRoots.append(.certificates(certificates))
            return configuration
        }
    }

    /// The event loops the connections run on; borrowed, never shut down by the fetcher.
    public let eventLoopGroup: any EventLoopGroup
    /// The TLS settings, pinning strictness and completion executor.
    public let configuration: Configuration
    /// Built once from ``Configuration/tlsConfiguration`` (loading trust roots is costly), shared by every
    /// connection.
    private let sslContext: NIOSSLContext

    /// Creates a fetcher on `eventLoopGroup` (by default SwiftNIO's singleton group, which lives as long as the
    /// process).
    ///
    /// - Throws: ``NIOAppLinkFetcherError/unsupportedEventLoopGroup`` when the group's loops cannot run sockets (it
    ///   must be a `MultiThreadedEventLoopGroup` of NIOPosix, or one of its loops); SwiftNIO SSL's error when
    ///   ``Configuration/tlsConfiguration`` cannot be turned into a TLS context (for example a trust-root file that
    ///   cannot be read).
    public init(
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        configuration: Configuration = .init()
    ) throws {
        guard ClientBootstrap(validatingGroup: eventLoopGroup) != nil else {
            throw NIOAppLinkFetcherError.unsupportedEventLoopGroup
        }
        self.eventLoopGroup = eventLoopGroup
        self.configuration = configuration
        self.sslContext = try NIOSSLContext(configuration: configuration.tlsConfiguration)
    }

    /// Starts a GET for `request`; see the type's documentation for where it connects and how the task ends.
    public func fetch(_ request: AppLinkHTTPRequest) -> Task<AppLinkHTTPResponse> {
        fetch(request, cancellationToken: nil)
    }

    /// Starts a GET for `request`; cancelling `cancellationToken` ends the task cancelled at once and closes the
    /// connection. A token that is already cancelled starts nothing.
    public func fetch(_ request: AppLinkHTTPRequest, cancellationToken: CancellationToken?)
        -> Task<AppLinkHTTPResponse>
    {
        if cancellationToken?.isCancellationRequested == true { return .cancelledTask() }
        let plan: ExchangePlan
        do {
            plan = try ExchangePlan(request: request, requirePinnedAddresses: configuration.requirePinnedAddresses)
        } catch let error as AppLinkResolutionError {
            return Task(error: error)
        } catch {
            return Task(error: AppLinkResolutionError.network(url: request.url, underlying: error))
        }
        let deadline = NIODeadline.now() + plan.timeout
        let source = TaskCompletionSource<AppLinkHTTPResponse>()
        if let cancellationToken {
            let registration = cancellationToken.register { source.tryCancel() }
            source.task.continueWith(.immediate) { _ in registration.dispose() }
        }
        let loop = eventLoopGroup.next()
        let context = plan.isTLS ? sslContext : nil
        let executor = configuration.completionExecutor
        loop.execute {
            let exchange = PinnedExchange(
                plan: plan, loop: loop, sslContext: context, source: source, completionExecutor: executor)
            let bound = NIOLoopBound(exchange, eventLoop: loop)
            // A cancelled task has ended before the exchange knows: close its connection (or drop the attempt).
            // The other outcomes are the exchange's own, which closes the connection as it ends the task.
            source.task.continueWith(.immediate) { task in
                if task.isCancelled { loop.execute { bound.value.abandon() } }
            }
            exchange.start(deadline: deadline)
        }
        return source.task
    }
}

/// Why a ``NIOAppLinkFetcher`` could not complete an exchange; it reaches callers as the `underlying` error of
/// ``/BoltsAppLinks/AppLinkResolutionError/network(url:underlying:)``.
public enum NIOAppLinkFetcherError: Error, Sendable, CustomStringConvertible {
    /// The URL has no host, or one that cannot be a host.
    case invalidHost(url: URL)
    /// The request carried no ``/BoltsAppLinks/AppLinkHTTPRequest/connectAddresses``, its host is a name and the
    /// fetcher's ``NIOAppLinkFetcher/Configuration/requirePinnedAddresses`` is set: nothing was looked up or sent.
    case unpinnedHost(String)
    /// No connection could be made to any of `addresses` (tried in this order); `underlying` is the last attempt's
    /// error.
    case couldNotConnect(addresses: [AppLinkIPAddress], underlying: any Error)
    /// The connection ended before the response did.
    case connectionClosedEarly
    /// The event loop group given to ``NIOAppLinkFetcher/init(eventLoopGroup:configuration:)`` cannot run the
    /// fetcher's sockets (it is not NIOPosix's).
    case unsupportedEventLoopGroup

    /// A sentence describing the failure.
    public var description: String {
        switch self {
        case .invalidHost(let url):
            return "No usable host in \(url.absoluteString)"
        case .unpinnedHost(let host):
            return "Refused to look up \"\(host)\": the request has no checked addresses and pinning is required"
        case .couldNotConnect(let addresses, let underlying):
            let tried = addresses.map(\.description).joined(separator: ", ")
            return "Could not connect to any checked address (\(tried)): \(underlying)"
        case .connectionClosedEarly:
            return "The connection closed before the response was complete"
        case .unsupportedEventLoopGroup:
            return "The event loop group cannot run NIOPosix sockets"
        }
    }
}
