import Bolts
import Foundation

/// A resolver that remembers what another resolver found.
///
/// - **One fetch per URL at a time**: concurrent resolutions of the same URL and platform share one task, so the
///   wrapped resolver runs once however many callers ask while it works.
/// - **TTL**: a link is served for ``timeToLive`` seconds after it was resolved, then resolved again.
/// - **Bounded**: at most ``maximumEntries`` links are kept; the least recently used goes first.
/// - **Failures are not kept**: a faulted or cancelled resolution is forgotten as soon as it ends, so the next
///   caller tries again (its waiting callers still see the failure).
public final class CachingAppLinkResolver: AppLinkResolving {
    /// The resolver that does the work.
    public let resolver: any AppLinkResolving
    /// The most links kept.
    public let maximumEntries: Int
    /// Seconds a resolved link stays fresh.
    public let timeToLive: Double

    private let clock: @Sendable () -> Double
    private let cache: Locked<LRUTable>

    /// Wraps `resolver`. `clock` returns seconds on a monotonic scale; tests pass their own to control time.
    public init(
        wrapping resolver: any AppLinkResolving,
        maximumEntries: Int = 1024,
        timeToLive: Double = 300,
        clock: (@Sendable () -> Double)? = nil
    ) {
        precondition(maximumEntries > 0, "CachingAppLinkResolver needs room for at least one entry")
        self.resolver = resolver
        self.maximumEntries = maximumEntries
        self.timeToLive = timeToLive
        self.clock = clock ?? { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        self.cache = Locked(LRUTable())
    }

    /// The cached or shared task for `url` and `platform`, starting a resolution when there is none.
    public func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink> {
        appLink(from: url, platform: platform, cancellationToken: nil)
    }

    /// The cached or shared task for `url` and `platform`, starting a resolution when there is none; cancelling
    /// `cancellationToken` ends this caller's task cancelled at once.
    ///
    /// Callers of one shared resolution leave it one by one: the resolution (and its fetch) is cancelled when the
    /// last caller still waiting cancels, never before, and never while a caller without a token waits (it cannot
    /// leave). A caller that arrives after the resolution was cancelled starts a new one. A link already cached is
    /// returned as it is.
    public func appLink(from url: URL, platform: AppLinkPlatform, cancellationToken: CancellationToken?)
        -> Task<AppLink>
    {
        if cancellationToken?.isCancellationRequested == true { return .cancelledTask() }
        let key = CacheKey(url: url.absoluteString, platform: platform)
        let now = clock()
        let cancellable = cancellationToken != nil
        let (flight, isNew) = cache.withLock { table -> (Flight, Bool) in
            if let entry = table.touch(key) {
                if !entry.flight.task.isCompleted, entry.flight.join(cancellable: cancellable) {
                    return (entry.flight, false)
                }
                if entry.flight.task.isCompleted, let expiry = entry.expiresAt, expiry > now,
                    entry.flight.task.result != nil
                {
                    return (entry.flight, false)
                }
                table.remove(key)
            }
            let flight = Flight()
            _ = flight.join(cancellable: cancellable)
            table.insert(key, CacheEntry(flight: flight, expiresAt: nil), limit: maximumEntries)
            return (flight, true)
        }
        if isNew { start(flight, key: key, url: url, platform: platform) }
        let shared = flight.task
        guard let cancellationToken, !shared.isCompleted else { return shared }
        // Registered before the caller's own task is derived, so that on cancel the caller leaves the flight
        // before its task ends; disposed once the shared task ends (the caller has nothing left to leave then).
        let registration = cancellationToken.register { [weak self] in
            guard flight.leave() else { return }
            self?.forget(flight, key: key)
            flight.stopResolution()
        }
        shared.continueWith(.immediate) { _ in registration.dispose() }
        return shared.continueWithTask(.immediate, cancellationToken: cancellationToken) { $0 }
    }

    /// Runs the wrapped resolver for a new flight and publishes its outcome to the flight's callers.
    private func start(_ flight: Flight, key: CacheKey, url: URL, platform: AppLinkPlatform) {
        let resolved = resolver.appLink(from: url, platform: platform, cancellationToken: flight.stopToken)
        resolved.continueWith { [cache, clock, timeToLive] finished in
            cache.withLock { table in
                guard table.entry(key)?.flight === flight else { return }
                if finished.result != nil {
                    table.setExpiry(key, clock() + timeToLive)
                } else {
                    table.remove(key)
                }
            }
            flight.finish(with: finished)
        }
    }

    /// Drops `flight`'s entry if it is still the one cached for `key`.
    private func forget(_ flight: Flight, key: CacheKey) {
        cache.withLock { table in
            if table.entry(key)?.flight === flight { table.remove(key) }
        }
    }

    /// Forgets the links cached for `url` (every platform).
    public func removeCachedLinks(for url: URL) {
        cache.withLock { table in
            for platform in AppLinkPlatform.allCases {
                table.remove(CacheKey(url: url.absoluteString, platform: platform))
            }
        }
    }

    /// Forgets every cached link. Resolutions in flight still complete for their callers.
    public func removeAllCachedLinks() {
        cache.withLock { $0 = LRUTable() }
    }

    /// How many links (resolved or in flight) are held.
    public var count: Int {
        cache.withLock { $0.count }
    }
}

private struct CacheKey: Hashable {
    var url: String
    var platform: AppLinkPlatform
}

private struct CacheEntry {
    var flight: Flight
    /// Set when the link resolved; nil while in flight.
    var expiresAt: Double?
}

/// One resolution shared by the callers of one URL and platform, and who still waits for it.
private final class Flight: Sendable {
    private let source = TaskCompletionSource<AppLink>()
    /// Cancelled when the last caller leaves: stops the wrapped resolver.
    private let stop = CancellationTokenSource()
    private let waiting = Locked(Waiting())

    private struct Waiting {
        /// Callers with a token that have not cancelled yet.
        var cancellable = 0
        /// A caller without a token joined: the flight can no longer be abandoned.
        var pinned = false
        /// The last caller left; nobody may join any more.
        var abandoned = false
    }

    /// The task every caller shares.
    var task: Task<AppLink> { source.task }
    /// The token handed to the wrapped resolver.
    var stopToken: CancellationToken { stop.token }

    /// Adds a caller; false when the flight was abandoned (the caller must start a new one).
    func join(cancellable: Bool) -> Bool {
        waiting.withLock { waiting in
            if waiting.abandoned { return false }
            if cancellable { waiting.cancellable += 1 } else { waiting.pinned = true }
            return true
        }
    }

    /// Removes a caller that cancelled; true when it was the last one (the flight is then abandoned).
    func leave() -> Bool {
        waiting.withLock { waiting in
            waiting.cancellable -= 1
            guard waiting.cancellable == 0, !waiting.pinned, !waiting.abandoned, !source.task.isCompleted else {
                return false
            }
            waiting.abandoned = true
            return true
        }
    }

    /// Ends the shared task cancelled and stops the wrapped resolver.
    func stopResolution() {
        source.tryCancel()
        stop.cancel()
    }

    /// Publishes the wrapped resolver's outcome (unless the flight was already cancelled).
    func finish(with finished: Task<AppLink>) {
        if let value = finished.result {
            source.trySet(result: value)
        } else if let error = finished.error {
            source.trySet(error: error)
        } else {
            source.tryCancel()
        }
    }
}

/// A table with least-recently-used eviction: a dictionary of nodes linked in use order, O(1) per operation.
private struct LRUTable {
    private struct Node {
        var entry: CacheEntry
        var newer: CacheKey?
        var older: CacheKey?
    }

    private var nodes: [CacheKey: Node] = [:]
    private var newest: CacheKey?
    private var oldest: CacheKey?

    var count: Int { nodes.count }

    func entry(_ key: CacheKey) -> CacheEntry? {
        nodes[key]?.entry
    }

    /// The entry for `key`, marked as most recently used.
    mutating func touch(_ key: CacheKey) -> CacheEntry? {
        guard let node = nodes[key] else { return nil }
        unlink(key)
        link(key, node.entry)
        return node.entry
    }

    mutating func insert(_ key: CacheKey, _ entry: CacheEntry, limit: Int) {
        if nodes[key] != nil { unlink(key) }
        link(key, entry)
        while nodes.count > limit, let victim = oldest {
            unlink(victim)
        }
    }

    mutating func setExpiry(_ key: CacheKey, _ expiry: Double) {
        nodes[key]?.entry.expiresAt = expiry
    }

    mutating func remove(_ key: CacheKey) {
        if nodes[key] != nil { unlink(key) }
    }

    private mutating func link(_ key: CacheKey, _ entry: CacheEntry) {
        nodes[key] = Node(entry: entry, newer: nil, older: newest)
        if let newest { nodes[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    private mutating func unlink(_ key: CacheKey) {
        guard let node = nodes.removeValue(forKey: key) else { return }
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newest = node.older }
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldest = node.newer }
    }
}
