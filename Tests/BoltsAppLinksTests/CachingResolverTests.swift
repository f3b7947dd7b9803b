import Bolts
import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

/// A resolver whose resolutions stay pending until the test completes them.
final class GatedResolver: AppLinkResolving {
    private let pending = Locked<[(url: URL, platform: AppLinkPlatform, source: TaskCompletionSource<AppLink>)]>([])

    var calls: [(url: URL, platform: AppLinkPlatform)] {
        pending.current.map { ($0.url, $0.platform) }
    }

    func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink> {
        let source = TaskCompletionSource<AppLink>()
        pending.withLock { $0.append((url, platform, source)) }
        return source.task
    }

    /// Completes call number `index` with a link whose web URL names the call.
    func succeed(_ index: Int) {
        let call = pending.current[index]
        call.source.set(result: AppLink(sourceURL: call.url, webURL: URL(string: "http://call/\(index)")))
    }

    func fail(_ index: Int) {
        pending.current[index].source.set(
            error: AppLinkResolutionError.httpStatus(url: pending.current[index].url, statusCode: 503))
    }
}

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let now = Locked(1000.0)
    var read: @Sendable () -> Double { { [now] in now.current } }
    func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
}

@Suite("Caching resolver")
struct CachingResolverTests {
    let a = URL(string: "http://a.example.com/")!
    let b = URL(string: "http://b.example.com/")!
    let c = URL(string: "http://c.example.com/")!

    @Test func concurrentResolvesShareOneResolution() async throws {
        let inner = GatedResolver()
        let cache = CachingAppLinkResolver(wrapping: inner)
        let tasks = (0..<10).map { _ in cache.appLink(from: a, platform: .ios) }
        #expect(inner.calls.count == 1)
        #expect(tasks.allSatisfy { !$0.isCompleted })
        inner.succeed(0)
        for task in tasks {
            #expect(try await task.value.webURL == URL(string: "http://call/0"))
        }
        _ = cache.appLink(from: a, platform: .ios)
        #expect(inner.calls.count == 1)
    }

    @Test func platformsAreCachedSeparately() {
        let inner = GatedResolver()
        let cache = CachingAppLinkResolver(wrapping: inner)
        _ = cache.appLink(from: a, platform: .iphone)
        _ = cache.appLink(from: a, platform: .android)
        _ = cache.appLink(from: a, platform: .iphone)
        #expect(inner.calls.map(\.platform) == [.iphone, .android])
    }

    @Test func entriesExpireAfterTheirTimeToLive() async throws {
        let inner = GatedResolver()
        let clock = ManualClock()
        let cache = CachingAppLinkResolver(wrapping: inner, timeToLive: 60, clock: clock.read)
        _ = cache.appLink(from: a, platform: .ios)
        clock.advance(100)  // pending entries never expire
        _ = cache.appLink(from: a, platform: .ios)
        #expect(inner.calls.count == 1)
        inner.succeed(0)
        clock.advance(59)
        #expect(try await cache.appLink(from: a, platform: .ios).value.webURL == URL(string: "http://call/0"))
        #expect(inner.calls.count == 1)
        clock.advance(2)
        let refreshed = cache.appLink(from: a, platform: .ios)
        #expect(inner.calls.count == 2)
        inner.succeed(1)
        #expect(try await refreshed.value.webURL == URL(string: "http://call/1"))
    }

    @Test func leastRecentlyUsedEntryIsEvicted() {
        let inner = GatedResolver()
        let cache = CachingAppLinkResolver(wrapping: inner, maximumEntries: 2)
        _ = cache.appLink(from: a, platform: .ios)
        _ = cache.appLink(from: b, platform: .ios)
        _ = cache.appLink(from: a, platform: .ios)  // a is now the most recently used
        _ = cache.appLink(from: c, platform: .ios)  // evicts b
        #expect(cache.count == 2)
        #expect(inner.calls.count == 3)
        _ = cache.appLink(from: a, platform: .ios)
        #expect(inner.calls.count == 3)
        _ = cache.appLink(from: b, platform: .ios)
        #expect(inner.calls.map(\.url) == [a, b, c, b])
    }

    @Test func failuresReachWaitersButAreNotKept() async throws {
        let inner = GatedResolver()
        let cache = CachingAppLinkResolver(wrapping: inner)
        let first = cache.appLink(from: a, platform: .ios)
        let second = cache.appLink(from: a, platform: .ios)
        inner.fail(0)
        for task in [first, second] {
            guard case .httpStatus(_, 503) = await resolutionError(of: task) else {
                Issue.record("expected the 503 to reach every waiter")
                continue
            }
        }
        #expect(cache.count == 0)
        _ = cache.appLink(from: a, platform: .ios)
        #expect(inner.calls.count == 2)
    }

    @Test func removingEntriesForcesANewResolution() {
        let inner = GatedResolver()
        let cache = CachingAppLinkResolver(wrapping: inner)
        _ = cache.appLink(from: a, platform: .ios)
        _ = cache.appLink(from: b, platform: .ios)
        cache.removeCachedLinks(for: a)
        _ = cache.appLink(from: a, platform: .ios)
        _ = cache.appLink(from: b, platform: .ios)
        #expect(inner.calls.count == 3)
        cache.removeAllCachedLinks()
        #expect(cache.count == 0)
        // A completion for an entry that was removed must not resurrect it.
        inner.succeed(0)
        #expect(cache.count == 0)
    }

    @Test func oneHTTPFetchServesManyConcurrentCallers() async throws {
        let html = page(withTags: [("al:ios:url", "shared://x")])
        let server = try TestHTTPServer { _ in
            var response = TestHTTPServer.Response.html(html)
            response.delay = 0.3
            return response
        }
        defer { server.stop() }
        let cache = CachingAppLinkResolver(wrapping: loopbackResolver())
        let url = server.url("/shared")
        let tasks = (0..<20).map { _ in cache.appLink(from: url) }
        for task in tasks {
            #expect(try await task.value.targets.first?.url == URL(string: "shared://x"))
        }
        #expect(server.requests.count == 1)
    }

    @Test func manyThreadsHammeringTheCacheStayConsistent() async throws {
        let resolver = FixedResolver { url, _ in AppLink(sourceURL: url, webURL: url) }
        let cache = CachingAppLinkResolver(wrapping: resolver, maximumEntries: 8)
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 2000) { index in
            let url = URL(string: "http://host/\(index % 16)")!
            let task = cache.appLink(from: url, platform: .ios)
            task.waitUntilCompleted()  // another thread may still be starting the shared resolution
            if task.result?.sourceURL != url {
                mismatches.withLock { $0 += 1 }
            }
        }
        #expect(mismatches.current == 0)
        #expect(cache.count == 8)
        #expect(resolver.callCount >= 16)
    }
}
