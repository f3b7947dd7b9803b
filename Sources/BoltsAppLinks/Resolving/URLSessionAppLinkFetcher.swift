import Bolts
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``AppLinkHTTPFetching`` client, on Foundation's `URLSession`.
///
/// It never follows redirects and stops reading as soon as the body, or its announced `Content-Length`, passes
/// the request's limit. Completions arrive on the session's delegate queue; the returned task completes there (or
/// on the thread that cancels it, or on the timer's thread at the timeout).
///
/// ## Cancellation and timeouts
/// Cancelling the token, or reaching the request's timeout, ends the task at once. The transfer itself is stopped
/// only when that is safe: FoundationNetworking on Linux traps when a cancel (or its own timeout) lands while it
/// waits for the answer to a redirect callback ("Received callback for HTTP redirection, but we're not waiting for
/// it"), and a response still on its way may turn out to be a redirect. So a transfer whose response head has
/// arrived with a status that is not a redirect is cancelled at once; one still waiting for its head is abandoned
/// (nothing more of it is read) and cancelled when its head arrives, if that is not a redirect; a redirect's
/// transfer is complete by the time the delegate sees it. A server that never answers therefore keeps its
/// connection until the session's idle timeout (``init(idleTimeout:)-(Double)``, 60 s by default), after the task
/// ended.
///
/// ## Egress
/// `URLSession` looks host names up itself and cannot be told which address to connect to, so this fetcher
/// ignores ``AppLinkHTTPRequest/connectAddresses``: the resolver's egress check runs on its own lookup, and a
/// name whose DNS answers differently to the two lookups (DNS rebinding) is not caught. Resolving hostile URLs
/// with full protection needs a fetcher that connects to the checked address: `NIOAppLinkFetcher`, in the library
/// `BoltsAppLinksNIO`, does (see <doc:ResolvingUntrustedURLs>).
public final class URLSessionAppLinkFetcher: AppLinkHTTPFetching {
    /// A fetcher shared by every resolver that is not given one.
    public static let shared = URLSessionAppLinkFetcher()

    private let session: URLSession
    private let delegate: URLSessionFetchDelegate

    /// Creates a fetcher with its own ephemeral session (no cookies or cache kept on disk).
    ///
    /// - Parameter idleTimeout: Seconds a transfer may receive nothing before the session fails it (default 60).
    ///   FoundationNetworking applies this to every transfer of the session, whatever the request's own timeout
    ///   says (checked on Linux: a response held back for 75 s failed at 60.0 s with the default, and arrived with
    ///   a longer setting), so keep it above the longest ``AppLinkHTTPRequest/timeout`` you use, or a quiet server
    ///   fails the fetch before its deadline. It also bounds how long a transfer abandoned while it waits for its
    ///   head keeps its connection (see "Cancellation and timeouts" above).
    /// - Precondition: `idleTimeout` is positive.
    public init(idleTimeout: Double = 60) {
        precondition(idleTimeout > 0, "URLSessionAppLinkFetcher(idleTimeout:) needs a positive timeout, not \(idleTimeout)")
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = idleTimeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        delegate = URLSessionFetchDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Starts a GET for `request`; see ``AppLinkHTTPFetching`` for how the task ends.
    public func fetch(_ request: AppLinkHTTPRequest) -> Task<AppLinkHTTPResponse> {
        fetch(request, cancellationToken: nil)
    }

    /// Starts a GET for `request`; cancelling `cancellationToken` ends the task cancelled at once and stops the
    /// transfer as soon as that is safe (see the type's documentation).
    public func fetch(_ request: AppLinkHTTPRequest, cancellationToken: CancellationToken?)
        -> Task<AppLinkHTTPResponse>
    {
        if cancellationToken?.isCancellationRequested == true { return .cancelledTask() }
        let source = TaskCompletionSource<AppLinkHTTPResponse>()
        var urlRequest = URLRequest(
            url: request.url,
            cachePolicy: .reloadIgnoringLocalCacheData,
            // Well past our own deadline (below), which is what fails the task on time. FoundationNetworking on
            // Linux traps when its own timeout (or a cancel) lands while a redirect callback is in flight, so
            // neither may race the redirect refusal (see the type's documentation). On Linux it goes by the
            // session's idle timeout instead of this one (see `init(idleTimeout:)`).
            timeoutInterval: max(request.timeout, 0.001) * 2 + 30
        )
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        let dataTask = session.dataTask(with: urlRequest)
        let identifier = dataTask.taskIdentifier
        delegate.register(identifier, task: dataTask, request: request, source: source)
        // Weak captures: a finished transfer is not kept alive until its deadline or by a long-lived token.
        appLinkTimerQueue.asyncAfter(deadline: .now() + max(request.timeout, 0)) { [weak delegate] in
            delegate?.abandon(identifier, outcome: .failure(.timedOut(url: request.url, seconds: request.timeout)))
        }
        if let cancellationToken {
            let registration = cancellationToken.register { [weak delegate] in
                delegate?.abandon(identifier, outcome: .cancelled)
            }
            source.task.continueWith(.immediate) { _ in registration.dispose() }
        }
        dataTask.resume()
        return source.task
    }
}

/// The per-transfer state of ``URLSessionAppLinkFetcher``.
private struct FetchState {
    let request: AppLinkHTTPRequest
    let source: TaskCompletionSource<AppLinkHTTPResponse>
    let task: URLSessionDataTask
    var response: HTTPURLResponse?
    var body = Data()
    /// The task has ended (cancelled, timed out, oversize); the transfer is to be stopped once that is safe.
    var abandoned = false

    /// Whether `task.cancel()` cannot race a redirect callback: the response head arrived and is not one of the
    /// statuses FoundationNetworking redirects on (it reports those to the delegate only after the transfer ended).
    var canCancelTransfer: Bool {
        guard let status = response?.statusCode else { return false }
        return ![301, 302, 303, 305, 306, 307, 308].contains(status)
    }
}

/// How an abandoned fetch ends.
private enum AbandonOutcome {
    case cancelled
    case failure(AppLinkResolutionError)
}

/// Session delegate for ``URLSessionAppLinkFetcher``.
///
/// Safety (why `@unchecked Sendable` holds): its only stored property is `states`, a `Locked` dictionary; every
/// read and write of a transfer's state happens inside `states.withLock`. Completion sources are `Sendable` and are
/// completed, and transfers cancelled, outside the lock. `NSObject` is what keeps the compiler from inferring the
/// conformance.
private final class URLSessionFetchDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let states = Locked<[Int: FetchState]>([:])

    func register(
        _ identifier: Int, task: URLSessionDataTask, request: AppLinkHTTPRequest,
        source: TaskCompletionSource<AppLinkHTTPResponse>
    ) {
        states.withLock { $0[identifier] = FetchState(request: request, source: source, task: task) }
    }

    /// Ends a transfer's task with `outcome` and stops the transfer now if that is safe, else marks it to be
    /// stopped when its response head arrives. Does nothing when the task had already ended.
    func abandon(_ identifier: Int, outcome: AbandonOutcome) {
        let action = states.withLock { states -> (FetchState, cancelNow: Bool)? in
            guard var state = states[identifier], !state.abandoned else { return nil }
            if state.canCancelTransfer {
                states.removeValue(forKey: identifier)
                return (state, true)
            }
            state.abandoned = true
            states[identifier] = state
            return (state, false)
        }
        guard let (state, cancelNow) = action else { return }
        switch outcome {
        case .cancelled: state.source.tryCancel()
        case .failure(let error): state.source.trySet(error: error)
        }
        if cancelNow { state.task.cancel() }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // FoundationNetworking ignores the disposition (it cannot pause libcurl); stopping is done by `cancel()`.
        completionHandler(.allow)
        let identifier = dataTask.taskIdentifier
        enum Next {
            case read
            case stop(FetchState)
            case tooLarge(AppLinkResolutionError)
        }
        let next = states.withLock { states -> Next in
            guard var state = states[identifier] else { return .read }
            state.response = response as? HTTPURLResponse
            if state.abandoned, state.canCancelTransfer {
                states.removeValue(forKey: identifier)
                return .stop(state)
            }
            states[identifier] = state
            let limit = state.request.maximumBodySize
            if !state.abandoned, response.expectedContentLength > Int64(limit) {
                return .tooLarge(.responseTooLarge(url: state.request.url, limit: limit))
            }
            return .read
        }
        switch next {
        case .read: break
        case .stop(let state): state.task.cancel()
        case .tooLarge(let error): abandon(identifier, outcome: .failure(error))
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let identifier = dataTask.taskIdentifier
        let tooLarge = states.withLock { states -> AppLinkResolutionError? in
            guard var state = states[identifier], !state.abandoned else { return nil }
            let limit = state.request.maximumBodySize
            if state.body.count + data.count > limit {
                return .responseTooLarge(url: state.request.url, limit: limit)
            }
            state.body.append(data)
            states[identifier] = state
            return nil
        }
        if let tooLarge {
            abandon(identifier, outcome: .failure(tooLarge))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = states.withLock({ $0.removeValue(forKey: task.taskIdentifier) }), !state.abandoned else {
            return
        }
        let url = state.request.url
        if let error {
            if (error as? URLError)?.code == .timedOut {
                state.source.trySet(error: AppLinkResolutionError.timedOut(url: url, seconds: state.request.timeout))
            } else {
                state.source.trySet(error: AppLinkResolutionError.network(url: url, underlying: error))
            }
            return
        }
        guard let response = state.response ?? task.response as? HTTPURLResponse else {
            let missing = URLError(.badServerResponse)
            state.source.trySet(error: AppLinkResolutionError.network(url: url, underlying: missing))
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        let result = AppLinkHTTPResponse(url: url, statusCode: response.statusCode, headers: headers, body: state.body)
        state.source.trySet(result: result)
    }
}
