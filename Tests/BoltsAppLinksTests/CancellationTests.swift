import Bolts
import BoltsAppLinksTestSupport
import BoltsTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

/// A resolver that keeps its resolutions pending and records whether each one's token was cancelled.
final class TokenRecordingResolver: AppLinkResolving {
    private let calls = Locked<[(source: TaskCompletionSource<AppLink>, token: CancellationToken?)]>([])

    var callCount: Int { calls.current.count }

    func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink> {
        appLink(from: url, platform: platform, cancellationToken: nil)
    }

    func appLink(from url: URL, platform: AppLinkPlatform, cancellationToken: CancellationToken?) -> Task<AppLink> {
        let source = TaskCompletionSource<AppLink>()
        calls.withLock { $0.append((source, cancellationToken)) }
        cancellationToken?.register { source.tryCancel() }
        return source.task
    }

    func wasCancelled(_ index: Int) -> Bool {
        calls.current[index].token?.isCancellationRequested == true
    }

    func succeed(_ index: Int, url: URL) {
        calls.current[index].source.trySet(result: AppLink(sourceURL: url, webURL: url))
    }
}

/// When a task completed, read on the completing thread (an `await` may resume much later in a loaded run).
func completionTime<T>(of task: Task<T>) -> Task<Date> {
    task.continueWith(.immediate) { _ in Date() }
}

/// A loopback resolver whose timeout (10 minutes) is far past any stall of a loaded test run, so that in the tests
/// below a resolution ends only when it is cancelled. In a full run an async test can be suspended for tens of
/// seconds between two statements; the servers below therefore hold their responses open rather than finish
/// them on a timer that such a stall could outlast.
func patientLoopbackResolver() -> HTMLAppLinkResolver {
    loopbackResolver(.init(timeout: 600), fetcher: patientFetcher)
}

/// A fetcher whose session lets a transfer idle as long as the patient resolver's deadline: with the default 60 s, a
/// held response failed these tests whenever other suites' synchronous tests kept the cooperative threads (and so
/// the test's cancel) busy for a minute.
let patientFetcher = URLSessionAppLinkFetcher(idleTimeout: 600)

extension TestHTTPServer.Response {
    /// A page whose head and first 16 KiB arrive at once and whose body then never ends: the connection stays open
    /// until the client hangs up or the server stops.
    static let endlessPage = TestHTTPServer.Response(
        headers: [("Content-Type", "text/html")], streamedBodySize: 16 * 1024, chunkSize: 4096, keptOpen: true)
}

@Suite("Cancellation of resolutions")
struct CancellationTests {
    let html = page(withTags: [("al:ios:url", "cancel://x")])

    @Test func anAlreadyCancelledTokenStartsNothing() async throws {
        let server = try TestHTTPServer { [html] _ in .html(html) }
        defer { server.stop() }
        let source = CancellationTokenSource()
        source.cancel()
        let task = loopbackResolver().appLink(from: server.url("/x"), platform: .ios, cancellationToken: source.token)
        #expect(task.isCancelled)
        try await _Concurrency.Task.sleep(nanoseconds: 100_000_000)
        #expect(server.requests.isEmpty)
    }

    @Test func cancellingBeforeTheResponseEndsTheTaskAtOnceAndStopsTheTransferWhenItsHeadArrives() async throws {
        let server = try TestHTTPServer { _ in
            var response = TestHTTPServer.Response.endlessPage
            response.heldUntilReleased = true  // the head comes when the test says, after the cancel
            return response
        }
        defer { server.stop() }
        let source = CancellationTokenSource()
        let task = patientLoopbackResolver().page(from: server.url("/slow"), cancellationToken: source.token)
        #expect(await eventually(within: 5) { server.requests.count == 1 })
        let ended = completionTime(of: task)
        let cancelling = Date()
        source.cancel()
        let cancelled = Date()
        #expect(task.isCancelled, "cancelled before cancel() returns")
        let endedAt = try await ended.value
        #expect(endedAt >= cancelling && endedAt <= cancelled, "the task ended inside cancel()")
        // The head could still have been a redirect, so the transfer was only abandoned, not stopped…
        try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
        #expect(server.hangUps == 0)
        // …until the head shows a page: then the fetcher stops it (the body would never end).
        server.release()
        #expect(await eventually(within: 6) { server.hangUps == 1 })
    }

    @Test func cancellingDuringTheBodyStopsTheTransfer() async throws {
        let server = try TestHTTPServer { _ in .endlessPage }
        defer { server.stop() }
        let source = CancellationTokenSource()
        let task = patientLoopbackResolver().page(from: server.url("/stream"), cancellationToken: source.token)
        #expect(await eventually(within: 5) { server.requests.count == 1 })
        try await _Concurrency.Task.sleep(nanoseconds: 300_000_000)  // some of the body is on its way
        source.cancel()
        #expect(task.isCancelled)
        // The body never ends; only the client hanging up ends the response.
        #expect(await eventually(within: 5) { server.hangUps == 1 })
    }

    @Test func theTimeoutAlsoStopsTheTransfer() async throws {
        let server = try TestHTTPServer { _ in .endlessPage }
        defer { server.stop() }
        let error = await resolutionError(of: loopbackResolver(.init(timeout: 0.5)).page(from: server.url("/stream")))
        guard case .timedOut = error else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            return
        }
        #expect(await eventually(within: 5) { server.hangUps == 1 })
    }

    @Test func cancellingDuringARedirectNeitherCrashesNorFollowsIt() async throws {
        // The client traps if a transfer is cancelled while its redirect callback is in flight; cancel at many
        // points around the redirect to make sure the fetcher never does that.
        let server = try TestHTTPServer { request in
            if request.path.hasPrefix("/hop") || request.path == "/slowhop" {
                var response = TestHTTPServer.Response.redirect(to: "/next" + request.path)
                response.delay = 0.05
                response.heldUntilReleased = request.path == "/slowhop"
                return response
            }
            // The redirects' targets never answer: only a cancel ends a resolution that got that far.
            var response = TestHTTPServer.Response.html("<meta property='al:ios:url' content='x://y'>")
            response.delay = .infinity
            return response
        }
        defer { server.stop() }
        let resolver = patientLoopbackResolver()
        // Cancelled with no suspension in between; its redirect is held back until after the cancel.
        let early = CancellationTokenSource()
        let slow = resolver.page(from: server.url("/slowhop"), cancellationToken: early.token)
        early.cancel()
        #expect(slow.isCancelled)
        var tasks: [Task<AppLinkPage>] = []
        for attempt in 0..<12 {
            let source = CancellationTokenSource()
            let task = resolver.page(from: server.url("/hop\(attempt)"), cancellationToken: source.token)
            try await _Concurrency.Task.sleep(nanoseconds: UInt64(attempt) * 10_000_000)
            source.cancel()
            #expect(task.isCancelled)
            tasks.append(task)
        }
        // A resolution cancelled before its redirect arrived never asks for the redirect's target.
        server.release()
        #expect(await eventually(within: 5) { server.answeredPaths.contains("/slowhop") })
        try await _Concurrency.Task.sleep(nanoseconds: 500_000_000)  // time to follow it, were it followed
        #expect(!server.requests.map(\.path).contains("/next/slowhop"))
        #expect(tasks.allSatisfy { $0.isCancelled })
    }

    @Test func cancellingWhileTheRedirectTargetLoadsEndsTheTaskAtOnce() async throws {
        let server = try TestHTTPServer { request in
            if request.path == "/start" { return .redirect(to: "/target") }
            var response = TestHTTPServer.Response.html("")
            response.delay = .infinity  // the target never answers
            return response
        }
        defer { server.stop() }
        let source = CancellationTokenSource()
        let task = patientLoopbackResolver().page(from: server.url("/start"), cancellationToken: source.token)
        #expect(await eventually(within: 5) { server.requests.map(\.path) == ["/start", "/target"] })
        source.cancel()
        #expect(task.isCancelled)
    }

    @Test func twoWaitersShareOneFetchAndOnlyTheLastCancelStopsIt() async throws {
        let server = try TestHTTPServer { _ in .endlessPage }
        defer { server.stop() }
        let cache = CachingAppLinkResolver(wrapping: patientLoopbackResolver())
        let url = server.url("/shared")
        let first = CancellationTokenSource()
        let second = CancellationTokenSource()
        let a = cache.appLink(from: url, platform: .ios, cancellationToken: first.token)
        let b = cache.appLink(from: url, platform: .ios, cancellationToken: second.token)
        #expect(await eventually(within: 5) { server.requests.count == 1 })
        first.cancel()
        #expect(a.isCancelled)
        #expect(!b.isCompleted)
        try await _Concurrency.Task.sleep(nanoseconds: 300_000_000)
        #expect(server.hangUps == 0, "the other waiter still wants the page")
        second.cancel()
        #expect(b.isCancelled)
        #expect(await eventually(within: 5) { server.hangUps == 1 })
        #expect(server.requests.count == 1)
        #expect(cache.count == 0)
    }

    @Test func oneWaitersCancelLeavesTheOtherItsResult() async throws {
        let inner = TokenRecordingResolver()
        let cache = CachingAppLinkResolver(wrapping: inner)
        let url = URL(string: "http://shared.example/")!
        let source = CancellationTokenSource()
        let leaving = cache.appLink(from: url, platform: .ios, cancellationToken: source.token)
        let staying = cache.appLink(from: url, platform: .ios, cancellationToken: CancellationTokenSource().token)
        source.cancel()
        #expect(leaving.isCancelled)
        #expect(!inner.wasCancelled(0))
        inner.succeed(0, url: url)
        #expect(try await staying.value.webURL == url)
        #expect(inner.callCount == 1)
    }

    @Test func aWaiterWithoutATokenKeepsTheResolutionGoing() {
        let inner = TokenRecordingResolver()
        let cache = CachingAppLinkResolver(wrapping: inner)
        let url = URL(string: "http://pinned.example/")!
        let source = CancellationTokenSource()
        let cancellable = cache.appLink(from: url, platform: .ios, cancellationToken: source.token)
        let plain = cache.appLink(from: url, platform: .ios)
        source.cancel()
        #expect(cancellable.isCancelled)
        #expect(!inner.wasCancelled(0))
        #expect(!plain.isCompleted)
    }

    @Test func theLastWaitersCancelStopsTheResolutionAndTheNextCallerStartsAgain() async throws {
        let inner = TokenRecordingResolver()
        let cache = CachingAppLinkResolver(wrapping: inner)
        let url = URL(string: "http://again.example/")!
        let sources = [CancellationTokenSource(), CancellationTokenSource()]
        let tasks = sources.map { cache.appLink(from: url, platform: .ios, cancellationToken: $0.token) }
        sources[1].cancel()
        #expect(!inner.wasCancelled(0))
        sources[0].cancel()
        #expect(inner.wasCancelled(0))
        #expect(tasks.allSatisfy { $0.isCancelled })
        let next = cache.appLink(from: url, platform: .ios)
        #expect(inner.callCount == 2)
        inner.succeed(1, url: url)
        #expect(try await next.value.sourceURL == url)
    }

    @Test func theDefaultImplementationEndsTheTaskAtOnce() {
        let inner = GatedResolver()  // implements only appLink(from:platform:)
        let source = CancellationTokenSource()
        let task = inner.appLink(
            from: URL(string: "http://gated.example/")!, platform: .ios, cancellationToken: source.token)
        #expect(!task.isCompleted)
        source.cancel()
        #expect(task.isCancelled)
        inner.succeed(0)  // the work finishes unobserved
        #expect(task.isCancelled)
    }

    @Test func navigationCancelledBeforeTheLinkResolvesOpensNothing() async throws {
        let inner = TokenRecordingResolver()
        let opener = RecordingAppLinkURLOpener()
        let source = CancellationTokenSource()
        let url = URL(string: "http://navigate.example/")!
        let marker = uniqueMarker()
        let navigation = AppLinkNavigation.navigate(
            to: url.appendingPathComponent(marker), resolver: inner, opener: opener, cancellationToken: source.token)
        let posted = events(mentioning: marker) {
            source.cancel()
        }
        #expect(navigation.isCancelled)
        #expect(inner.wasCancelled(0))
        #expect(opener.attemptedURLs.isEmpty)
        #expect(posted.isEmpty)
        let resolved = AppLinkNavigation.resolveAppLink(url, resolver: inner, cancellationToken: source.token)
        #expect(resolved.isCancelled)
    }
}
