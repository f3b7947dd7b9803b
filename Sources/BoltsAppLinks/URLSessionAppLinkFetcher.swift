import Bolts
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``AppLinkHTTPFetching`` client, on Foundation's `URLSession`.
///
/// It never follows redirects, stops reading (and cancels the transfer) as soon as the body, or its announced
/// `Content-Length`, passes the request's limit, and fails the task at the request's timeout (the transfer itself
/// is left to end on its own: cancelling it can crash FoundationNetworking on Linux mid-redirect). Completions
/// arrive on the session's delegate queue; the returned task completes there.
public final class URLSessionAppLinkFetcher: AppLinkHTTPFetching {
    /// A fetcher shared by every resolver that is not given one.
    public static let shared = URLSessionAppLinkFetcher()

    private let session: URLSession
    private let delegate: URLSessionFetchDelegate

    /// Creates a fetcher with its own ephemeral session (no cookies or cache kept on disk).
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
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
        let source = TaskCompletionSource<AppLinkHTTPResponse>()
        var urlRequest = URLRequest(
            url: request.url,
            cachePolicy: .reloadIgnoringLocalCacheData,
            // Well past our own deadline (below), which is what fails the task on time. FoundationNetworking on
            // Linux traps when its own timeout (or a cancel) lands while a redirect callback is in flight
            // ("Received callback for HTTP redirection, but we're not waiting for it"), so neither may race
            // the redirect refusal; the transfer is only left to end on its own, later.
            timeoutInterval: max(request.timeout, 0.001) * 2 + 30
        )
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        let dataTask = session.dataTask(with: urlRequest)
        let identifier = dataTask.taskIdentifier
        delegate.register(identifier, request: request, source: source)
        // At the deadline the task fails; the transfer is not cancelled (see `timeoutInterval` above for why).
        // Weak capture: a finished transfer is not kept alive until its deadline.
        appLinkTimerQueue.asyncAfter(deadline: .now() + max(request.timeout, 0)) { [weak delegate] in
            delegate?.fail(identifier, with: .timedOut(url: request.url, seconds: request.timeout))
        }
        dataTask.resume()
        return source.task
    }
}

/// The per-transfer state of ``URLSessionAppLinkFetcher``: body so far, response, and an early failure.
private struct FetchState {
    let request: AppLinkHTTPRequest
    let source: TaskCompletionSource<AppLinkHTTPResponse>
    var response: HTTPURLResponse?
    var body = Data()
}

/// Session delegate for ``URLSessionAppLinkFetcher``.
///
/// Safety (why `@unchecked Sendable` holds): its only stored property is `states`, a `Locked` dictionary; every
/// read and write of a transfer's state happens inside `states.withLock`. Completion sources are `Sendable` and are
/// completed outside the lock. `NSObject` is what keeps the compiler from inferring the conformance.
private final class URLSessionFetchDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let states = Locked<[Int: FetchState]>([:])

    func register(_ identifier: Int, request: AppLinkHTTPRequest, source: TaskCompletionSource<AppLinkHTTPResponse>) {
        states.withLock { $0[identifier] = FetchState(request: request, source: source) }
    }

    /// Fails a transfer that is still running; returns false when it had already ended.
    @discardableResult
    func fail(_ identifier: Int, with error: AppLinkResolutionError) -> Bool {
        guard let state = states.withLock({ $0.removeValue(forKey: identifier) }) else { return false }
        return state.source.trySet(error: error)
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
        let identifier = dataTask.taskIdentifier
        let tooLarge = states.withLock { states -> AppLinkResolutionError? in
            guard var state = states[identifier] else { return nil }
            let limit = state.request.maximumBodySize
            if response.expectedContentLength > Int64(limit) {
                return .responseTooLarge(url: state.request.url, limit: limit)
            }
            state.response = response as? HTTPURLResponse
            states[identifier] = state
            return nil
        }
        if let tooLarge {
            fail(identifier, with: tooLarge)
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let identifier = dataTask.taskIdentifier
        let tooLarge = states.withLock { states -> AppLinkResolutionError? in
            guard var state = states[identifier] else { return nil }
            let limit = state.request.maximumBodySize
            if state.body.count + data.count > limit {
                return .responseTooLarge(url: state.request.url, limit: limit)
            }
            state.body.append(data)
            states[identifier] = state
            return nil
        }
        if let tooLarge, fail(identifier, with: tooLarge) {
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = states.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
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
